package enum

import (
	"fmt"
	"strings"
)

// Find returns the item of items whose name (by name) is s: the one way
// bhsim looks a registered thing up by name (a kernel preset, a profile, a
// thread, an operation). Errors: for any other s, "<prefix>: unknown <what>
// "s" (valid: a, b, c)", the names in items' order. O(items).
func Find[T any](prefix, what string, items []T, name func(T) string, s string) (T, error) {
	names := make([]string, len(items))
	for i, it := range items {
		if names[i] = name(it); names[i] == s {
			return it, nil
		}
	}
	var zero T
	return zero, fmt.Errorf("%s: unknown %s %q (valid: %s)", prefix, what, s, strings.Join(names, ", "))
}
