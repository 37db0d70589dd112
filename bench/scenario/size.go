package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseDDSize parses a byte count as dd's bs= spells it: a positive number
// with an optional K, M, G, T or P suffix (powers of 1024). The error says
// what is accepted.
func ParseDDSize(s string) (uint64, error) {
	num, shift := s, uint(0)
	if n := len(s); n > 0 {
		for _, u := range ddUnits {
			if strings.EqualFold(s[n-1:], u.suffix) {
				num, shift = s[:n-1], u.shift
			}
		}
	}
	v, err := strconv.ParseUint(num, 10, 64)
	if err != nil || v == 0 || v > (1<<63)>>shift {
		return 0, fmt.Errorf("scenario: invalid size %q (a positive number of bytes with an optional K, M, G, T or P suffix: 4500K, 1M)", s)
	}
	return v << shift, nil
}

// FormatDDSize renders a byte count as dd's bs= would: with the largest
// suffix that divides it ("4500K", "1M", "1000").
func FormatDDSize(n uint64) string {
	for _, u := range ddUnits {
		if n != 0 && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.suffix)
		}
	}
	return strconv.FormatUint(n, 10)
}

// ddUnits are dd's size suffixes, largest first.
var ddUnits = []struct {
	suffix string
	shift  uint
}{{"P", 50}, {"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}}
