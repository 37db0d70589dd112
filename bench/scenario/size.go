package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
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
		return 0, fmt.Errorf("scenario: invalid size %s (a positive number of bytes with an optional K, M, G, T or P suffix: 4500K, 1M)", QuoteToken(s))
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

// MaxEchoedToken bounds, in bytes, a word of the input that an error
// message repeats: a longer word (or one whose quoted form is longer) is cut
// (QuoteToken), so that a bad 10 MB token costs a line of stderr, not 10 MB.
const MaxEchoedToken = 64

// echoedHead is how many bytes of a cut word's quoted form an error keeps.
const echoedHead = 48

// QuoteToken quotes a word of the input for an error message, as %q does,
// or, when it or its quoted form is longer than MaxEchoedToken bytes, its
// first characters (at most echoedHead bytes quoted) with an ellipsis and
// the word's length: "pwritepwrite…" (10485760 bytes). O(MaxEchoedToken).
func QuoteToken(s string) string {
	if len(s) <= MaxEchoedToken {
		if q := strconv.Quote(s); len(q) <= MaxEchoedToken+2 {
			return q
		}
	}
	n, quoted := 0, 0
	for n < len(s) {
		_, w := utf8.DecodeRuneInString(s[n:])
		if quoted += len(strconv.Quote(s[n:n+w])) - 2; quoted > echoedHead {
			break
		}
		n += w
	}
	return strconv.Quote(s[:n]+"…") + fmt.Sprintf(" (%d bytes)", len(s))
}

// echoToken is QuoteToken without the quotes, for a value shown after its
// key (fill=0x1…): the word itself, or its first bytes (cut at a UTF-8
// character's boundary), an ellipsis and its length. O(MaxEchoedToken).
func echoToken(s string) string {
	if len(s) <= MaxEchoedToken {
		return s
	}
	n := echoedHead
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:n], len(s))
}
