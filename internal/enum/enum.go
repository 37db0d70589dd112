// Package enum is bhsim's one way to name the values of a small enumeration
// and to parse those names back, so that every String and Parse pair of the
// module prints, falls back and fails alike:
//
//	// policyNames names the policies for String and ParsePolicy.
//	var policyNames = enum.New[Policy]("Policy", "grow", "logical").WithError(ErrUnknownPolicy)
//
//	func (p Policy) String() string { return policyNames.String(p) }
//
//	func ParsePolicy(s string) (Policy, error) { return policyNames.Parse(s) }
//
// Names covers enumerations whose values are 0, 1, ..., n-1 (iota
// constants), with one name each: String(2) is the third name, and a value
// outside the table prints as kind(7) with the kind the caller chose.
// Parse takes exactly those names (case and spaces matter); any other
// string gives an error wrapping the sentinel given to WithError, whose
// text names the string and lists the valid names:
//
//	blocksize: unknown policy "simplified" (valid: grow, logical)
//
// so the package prefix and the wording of the failure are the sentinel's
// (test for it with errors.Is); a table without a sentinel says
// "unknown <kind> ..." instead. Lookup is the same search without the error,
// for parsers that try several tables in turn; List gives the valid names
// for their own message.
//
// Flags names the bits of a flag set instead, one name per bit: String
// joins the names of the set bits with "|", prints bits without a name in
// hexadecimal after them, and prints "0" for the empty set.
//
// Tables are built once, at package initialisation, and are read-only
// afterwards: safe for concurrent use. Building one panics on an empty or
// repeated name, a programming error found when the program starts. String
// does not allocate for a named value; Parse and Lookup are O(number of
// names), which is small by construction.
package enum

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Integer is the underlying type of an enumeration.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// Names is the table of names of an enumeration T whose values are 0 to
// n-1, n names. Build it with New.
type Names[T Integer] struct {
	kind    string
	unknown error // nil: Parse fails with "unknown <kind>"
	names   []string
}

// New returns the table in which names[i] is the name of T(i). kind is the
// word String prints for a value outside the table, as kind(7), and Parse's
// error for a name outside it, "unknown <kind> "s" (valid: ...)", unless
// WithError gives the table a sentinel. A keyed slice literal
// ([]string{EvA: "a", EvB: "b"}) keeps names and constants together; a gap
// in it is an empty name. New panics if a name is empty or repeated.
func New[T Integer](kind string, names ...string) *Names[T] {
	checkNames(names)
	return &Names[T]{kind: kind, names: slices.Clone(names)}
}

// WithError returns a copy of the table whose Parse wraps the sentinel
// unknown: "<unknown> "s" (valid: ...)". The sentinel's text should say
// which package failed on what ("blocksize: unknown policy").
func (t *Names[T]) WithError(unknown error) *Names[T] {
	c := *t
	c.unknown = unknown
	return &c
}

// checkNames panics on an empty or repeated name.
func checkNames(names []string) {
	for i, n := range names {
		if n == "" || slices.Index(names, n) != i {
			panic(fmt.Sprintf("enum: name %d %q is empty or repeated", i, n))
		}
	}
}

// Valid reports whether v has a name. O(1).
func (t *Names[T]) Valid(v T) bool { return v >= 0 && uint64(v) < uint64(len(t.names)) }

// String returns v's name, or kind(v) for a value outside the table (which
// allocates). O(1).
func (t *Names[T]) String(v T) string {
	if t.Valid(v) {
		return t.names[v]
	}
	return t.kind + "(" + format(v) + ")"
}

// format prints v in decimal, signed or not as T is.
func format[T Integer](v T) string {
	if v < 0 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatUint(uint64(v), 10)
}

// Lookup returns the value named s and true, or 0 and false if no value has
// that name. O(names).
func (t *Names[T]) Lookup(s string) (T, bool) {
	if i := slices.Index(t.names, s); i >= 0 {
		return T(i), true
	}
	return 0, false
}

// Parse returns the value named s. Errors: for any other s, an error
// wrapping the table's sentinel, "<sentinel> "s" (valid: a, b, c)". O(names).
func (t *Names[T]) Parse(s string) (T, error) {
	if v, ok := t.Lookup(s); ok {
		return v, nil
	}
	if t.unknown == nil {
		return 0, fmt.Errorf("unknown %s %q (valid: %s)", t.kind, s, t.List())
	}
	return 0, fmt.Errorf("%w %q (valid: %s)", t.unknown, s, t.List())
}

// Values returns every named value in order, in a new slice. O(names).
func (t *Names[T]) Values() []T {
	vs := make([]T, len(t.names))
	for i := range vs {
		vs[i] = T(i)
	}
	return vs
}

// List returns the names in value order, separated by ", ", as Parse's error
// lists them. O(names).
func (t *Names[T]) List() string { return strings.Join(t.names, ", ") }

// Unsigned is the underlying type of a flag set.
type Unsigned interface {
	~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// Flags is the table of names of the bits of a flag set T. Build it with
// NewFlags.
type Flags[T Unsigned] struct {
	names []string
}

// NewFlags returns the table in which names[i] is the name of bit 1<<i. It
// panics if a name is empty or repeated, or if T has fewer bits than names.
func NewFlags[T Unsigned](names ...string) *Flags[T] {
	checkNames(names)
	if len(names) > 0 && T(1)<<(len(names)-1) == 0 {
		panic(fmt.Sprintf("enum: %d flag names do not fit the type", len(names)))
	}
	return &Flags[T]{names: slices.Clone(names)}
}

// String lists the names of the bits set in v, lowest bit first, joined by
// "|" ("uptodate|mapped"); bits without a name follow as one hexadecimal
// number ("dirty|0x300"); the empty set is "0". O(bits); it allocates.
func (t *Flags[T]) String(v T) string {
	var sb strings.Builder
	for i, n := range t.names {
		if v&(T(1)<<i) != 0 {
			if sb.Len() > 0 {
				sb.WriteByte('|')
			}
			sb.WriteString(n)
		}
	}
	if rest := v &^ (T(1)<<len(t.names) - 1); rest != 0 {
		if sb.Len() > 0 {
			sb.WriteByte('|')
		}
		sb.WriteString("0x" + strconv.FormatUint(uint64(rest), 16))
	}
	if sb.Len() == 0 {
		return "0"
	}
	return sb.String()
}
