package scenario

import "strings"

// RWBS is a block I/O's rwbs field, parsed: as the kernel's block
// tracepoints print it (blk_fill_rwbs, v6.18: an optional F for a
// preflush, the operation — R, W, WZ for write zeroes, D, DE for a secure
// erase, F for a flush request, N, or a zone operation ZA, ZR, ZRA, ZO, ZC,
// ZF — then F, A, S, M and U for FUA, readahead, sync, meta and atomic), and
// as blkparse prints it (the same letters for R, W, D and N, and old
// blkparse's barrier B). Each reader of a trace format checks the parts its
// format may hold.
type RWBS struct {
	// Op is the operation's letter: 'R', 'W', 'D', 'F' (a flush request),
	// 'N' (no data) or 'Z' (a zone operation, named by Zone).
	Op byte
	// Zone is a zone operation's letters after the Z: "A" (append), "R"
	// (reset), "RA" (reset all), "O" (open), "C" (close) or "F" (finish).
	Zone string
	// Preflush is a leading F: a flush before the I/O.
	Preflush bool
	// Zeroes is a write of zeroes (WZ); Secure a secure erase (DE).
	Zeroes, Secure bool
	// FUA, Ahead, Sync, Meta and Atomic are the flags after the operation.
	FUA, Ahead, Sync, Meta, Atomic bool
	// Barrier is old blkparse's B: a flush before and FUA after.
	Barrier bool
}

// ZoneWrite reports whether r's zone operation is a write by the kernel's
// op_is_write (an odd REQ_OP number): append, reset, reset all and close
// are; open and finish are not.
func (r RWBS) ZoneWrite() bool {
	return r.Op == 'Z' && r.Zone != "O" && r.Zone != "F"
}

// ParseRWBS parses an rwbs field. It reports false for anything else: an
// empty field, an unknown operation or flag letter, a Z without its zone
// operation. Where the format is ambiguous it reads what the kernel makes:
// FF… as a preflush and a flush request (not a flush with FUA), ZRA as a
// reset of all zones (not a reset with readahead). O(len(s)), no
// allocation.
func ParseRWBS(s string) (RWBS, bool) {
	var r RWBS
	i := 0
	if len(s) >= 2 && s[0] == 'F' && strings.IndexByte("RWDFNZ", s[1]) >= 0 {
		r.Preflush, i = true, 1
	}
	if i >= len(s) {
		return r, false
	}
	r.Op = s[i]
	i++
	next := func(c byte) bool {
		if i < len(s) && s[i] == c {
			i++
			return true
		}
		return false
	}
	switch r.Op {
	case 'R', 'F', 'N':
	case 'W':
		r.Zeroes = next('Z')
	case 'D':
		r.Secure = next('E')
	case 'Z':
		if i >= len(s) || strings.IndexByte("AROCF", s[i]) < 0 {
			return r, false
		}
		r.Zone = s[i : i+1]
		i++
		if r.Zone == "R" && next('A') {
			r.Zone = "RA"
		}
	default:
		return r, false
	}
	for ; i < len(s); i++ {
		switch s[i] {
		case 'F':
			r.FUA = true
		case 'A':
			r.Ahead = true
		case 'S':
			r.Sync = true
		case 'M':
			r.Meta = true
		case 'U':
			r.Atomic = true
		case 'B':
			r.Barrier = true
		default:
			return r, false
		}
	}
	return r, true
}
