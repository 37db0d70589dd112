package blocksize

import (
	"fmt"

	"github.com/bhsim/bhsim/internal/enum"
)

// Policy is a variant of set_init_blocksize, the function that picks a block
// device's block size (i_blkbits) when it is first opened.
type Policy uint8

const (
	// PolicyGrow is the variant before v5.9 and again from 8dc932d3e8af
	// (Maxim Mikityanskiy's revert, v5.11-rc6; 5.10.13 in stable) to today:
	// start at the logical block size and double while the result is below
	// PAGE_SIZE and the device size is a multiple of the doubled size.
	PolicyGrow Policy = iota
	// PolicyLogical is "block: simplify set_init_blocksize", 5ff9f19231a0
	// (Christoph Hellwig, v5.9 to 5.10.12): the logical block size, whatever
	// the device size.
	PolicyLogical
)

// policyNames are the String forms, indexed by Policy.
var policyNames = enum.New[Policy]("Policy", []string{PolicyGrow: "grow", PolicyLogical: "logical"}...).
	WithError(ErrUnknownPolicy)

// String returns "grow" or "logical", or "Policy(n)" for a value that is not
// a known policy.
func (p Policy) String() string { return policyNames.String(p) }

// ParsePolicy returns the policy whose String form is s (exact match).
//
// Errors: ErrUnknownPolicy, wrapped with s and the valid names. O(number of
// policies).
func ParsePolicy(s string) (Policy, error) { return policyNames.Parse(s) }

// Policies returns every policy, oldest behaviour first. The slice is new on
// each call; the caller may modify it.
func Policies() []Policy { return policyNames.Values() }

// InitBlocksize models set_init_blocksize(): PolicyGrow as in fs/block_dev.c
// v5.0–v5.8 and v5.10.13 (block/bdev.c from v5.15 on, same loop),
// PolicyLogical as in fs/block_dev.c v5.9–5.10.12. It returns the block size
// a device of deviceBytes bytes with the given logical block size gets at its
// first open, on a kernel with the given PAGE_SIZE.
//
// PolicyLogical returns logical. PolicyGrow returns the largest power of two
// p with logical <= p <= pageSize that divides the device size. The kernel
// finds it by doubling from logical and testing one bit of the size per step,
// so it only ever looks at bits from logical upwards: a size that is not a
// multiple of logical (which real devices never have) is treated as if
// rounded down to one. A size of 0 is divisible by everything and gets
// pageSize. The result here comes from the lowest set bit of that rounded
// size, in O(1) instead of the kernel's O(log(pageSize/logical)) loop.
//
// Errors: the *SizeError of ValidatePageSize (pageSize invalid) or of
// ValidateLogical (logical not a power of two, below 512 or above pageSize),
// checked in that order, then ErrUnknownPolicy (wrapped) for a p outside
// Policies(). No allocation on success.
func (p Policy) InitBlocksize(deviceBytes uint64, logical, pageSize uint32) (uint32, error) {
	if err := ValidatePageSize(pageSize); err != nil {
		return 0, err
	}
	if err := ValidateLogical(logical, pageSize); err != nil {
		return 0, err
	}
	switch p {
	case PolicyGrow:
		whole := AlignDown(deviceBytes, uint64(logical))
		lowest := whole & -whole // 0 when whole == 0
		if lowest == 0 || lowest > uint64(pageSize) {
			return pageSize, nil
		}
		return uint32(lowest), nil
	case PolicyLogical:
		return logical, nil
	}
	return 0, fmt.Errorf("%w: %v", ErrUnknownPolicy, p)
}
