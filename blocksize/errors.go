package blocksize

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every validation failure is returned as a *SizeError whose
// Unwrap gives exactly one of the size sentinels, so callers can test with
// errors.Is and read the offending value with errors.As.
var (
	// ErrNotPowerOfTwo: the size is not a power of two (set_blocksize and
	// blksize_bits both require one).
	ErrNotPowerOfTwo = errors.New("blocksize: not a power of two")
	// ErrBelowMinimum: the size is below SectorSize (512 bytes).
	ErrBelowMinimum = errors.New("blocksize: below 512 bytes")
	// ErrAbovePageSize: the size exceeds PAGE_SIZE (the limit up to v6.14).
	ErrAbovePageSize = errors.New("blocksize: above PAGE_SIZE")
	// ErrAboveMaximum: the size exceeds MaxBlockSize, BLK_MAX_BLOCK_SIZE (the
	// limit from v6.15, RulesLarge).
	ErrAboveMaximum = errors.New("blocksize: above BLK_MAX_BLOCK_SIZE")
	// ErrBelowLogical: the block size is smaller than the device's logical
	// block size.
	ErrBelowLogical = errors.New("blocksize: below the logical block size")
	// ErrBadPageSize: the page size is not a power of two in
	// [DefaultPageSize, MaxPageSize].
	ErrBadPageSize = errors.New("blocksize: invalid PAGE_SIZE")
	// ErrUnknownPolicy: a Policy value or name that is not one of Policies().
	// It is returned wrapped (with the offending value and, from ParsePolicy,
	// the valid names), not as a *SizeError.
	ErrUnknownPolicy = errors.New("blocksize: unknown policy")
	// ErrUnknownRules: a Rules value or name that is not one of the
	// constants, returned wrapped like ErrUnknownPolicy.
	ErrUnknownRules = errors.New("blocksize: unknown set_blocksize rules")
)

// SizeError says which value failed which check. Op names the kernel
// operation or quantity being checked ("set_blocksize", "blksize_bits",
// "logical_block_size", "PAGE_SIZE"), Size is the rejected value, Limit the
// bound it crossed (0 when the check has no bound, as for ErrNotPowerOfTwo)
// and Err the sentinel.
type SizeError struct {
	Op          string
	Size, Limit uint32
	Err         error
}

// Error reads like "blocksize: set_blocksize(1000): not a power of two" or
// "blocksize: set_blocksize(8192): above PAGE_SIZE (8192 > 4096)".
func (e *SizeError) Error() string {
	reason := "invalid size"
	if e.Err != nil {
		reason = strings.TrimPrefix(e.Err.Error(), "blocksize: ")
	}
	if e.Limit == 0 {
		return fmt.Sprintf("blocksize: %s(%d): %s", e.Op, e.Size, reason)
	}
	rel := ">"
	if e.Size < e.Limit {
		rel = "<"
	}
	return fmt.Sprintf("blocksize: %s(%d): %s (%d %s %d)", e.Op, e.Size, reason, e.Size, rel, e.Limit)
}

// Unwrap returns the sentinel, for errors.Is.
func (e *SizeError) Unwrap() error { return e.Err }
