package blocksize

import (
	"fmt"

	"github.com/bhsim/bhsim/internal/enum"
)

// MaxBlockSize is BLK_MAX_BLOCK_SIZE (include/linux/blkdev.h, v6.15+): the
// largest block size blk_validate_block_size accepts, 64 KiB, whatever
// PAGE_SIZE is. Blocks larger than a page live in large folios of the
// device's page cache (MinFolioOrder).
const MaxBlockSize = 65536

// Rules is a version of set_blocksize's rules: which block sizes a block
// device's page cache accepts, and what a change does to the mapping.
type Rules uint8

const (
	// RulesPageSize is set_blocksize up to v6.14 (fs/block_dev.c v5.10,
	// block/bdev.c v5.15–v6.14): a power of two from 512 to PAGE_SIZE and at
	// least the logical block size; a change writes the device back, sets
	// i_blkbits and truncates the page cache (kill_bdev). The mapping holds
	// order-0 folios only.
	RulesPageSize Rules = iota
	// RulesLarge is set_blocksize from v6.15 (Luis Chamberlain's "block:
	// enable large block sizes" series, 3c20917120ce and its neighbours):
	// bdev_validate_blocksize accepts a power of two from 512 to
	// MaxBlockSize (64 KiB, so above PAGE_SIZE on 4 KiB pages) and at least
	// the logical block size; a change writes back, truncates, sets
	// i_blkbits and the mapping's minimum folio order (mapping_set_folio_min_order
	// with get_order(size)) and truncates again. The device's mapping has
	// large folios (order MinFolioOrder up to MAX_PAGECACHE_ORDER);
	// set_init_blocksize sets the minimum order too, 0 for the sizes it picks.
	RulesLarge
)

// rulesNames names the rule sets for String and ParseRules.
var rulesNames = enum.New[Rules]("Rules", []string{RulesPageSize: "page-size", RulesLarge: "large"}...).
	WithError(ErrUnknownRules)

// String returns "page-size" or "large" ("Rules(n)" for another value).
func (r Rules) String() string { return rulesNames.String(r) }

// ParseRules returns the rule set whose String is s. Errors: ErrUnknownRules,
// wrapped with s and the valid names. O(number of rule sets).
func ParseRules(s string) (Rules, error) { return rulesNames.Parse(s) }

// MaxSize returns the largest block size r accepts on a kernel with the given
// PAGE_SIZE: PAGE_SIZE for RulesPageSize, MaxBlockSize for RulesLarge (the
// larger of the two, should PAGE_SIZE itself exceed 64 KiB, which the model
// does not allow). O(1).
func (r Rules) MaxSize(pageSize uint32) uint32 {
	if r == RulesLarge {
		return max(MaxBlockSize, pageSize)
	}
	return pageSize
}

// Validate models the checks set_blocksize makes before it changes anything,
// under rule set r: ValidateBlocksize for RulesPageSize;
// bdev_validate_blocksize (block/bdev.c, v6.15+: blk_validate_block_size,
// then the logical block size) for RulesLarge. The kernel answers -EINVAL to
// every failure.
//
// It returns nil or a *SizeError with Op "set_blocksize" wrapping exactly one
// sentinel, the first failing check: ErrNotPowerOfTwo, ErrBelowMinimum,
// ErrAbovePageSize (RulesPageSize, Limit pageSize) or ErrAboveMaximum
// (RulesLarge, Limit MaxBlockSize), ErrBelowLogical (Limit logical);
// ErrUnknownRules (wrapped, no *SizeError) for an r outside the constants.
// O(1), no allocation on success.
func (r Rules) Validate(size, logical, pageSize uint32) error {
	switch r {
	case RulesPageSize:
		return ValidateBlocksize(size, logical, pageSize)
	case RulesLarge:
		switch limit := r.MaxSize(pageSize); {
		case !IsPowerOfTwo(size):
			return &SizeError{Op: "set_blocksize", Size: size, Err: ErrNotPowerOfTwo}
		case size < SectorSize:
			return &SizeError{Op: "set_blocksize", Size: size, Limit: SectorSize, Err: ErrBelowMinimum}
		case size > limit:
			return &SizeError{Op: "set_blocksize", Size: size, Limit: limit, Err: ErrAboveMaximum}
		case size < logical:
			return &SizeError{Op: "set_blocksize", Size: size, Limit: logical, Err: ErrBelowLogical}
		}
		return nil
	}
	return fmt.Errorf("%w: %v", ErrUnknownRules, r)
}

// MinFolioOrder returns get_order(size) on a kernel with the given PAGE_SIZE:
// the order of the smallest folio that holds a block of size bytes, which
// set_blocksize (v6.15+) makes the mapping's minimum folio order
// (mapping_set_folio_min_order): 0 up to PAGE_SIZE, 1 for 8 KiB on 4 KiB
// pages, 4 for 64 KiB. size and pageSize must be powers of two (callers
// validate). O(1).
func MinFolioOrder(size, pageSize uint32) uint8 {
	if size <= pageSize {
		return 0
	}
	return uint8(Log2(size) - Log2(pageSize))
}
