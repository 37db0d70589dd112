package blocksize

import "math"

// Size constants of the model.
const (
	// SectorSize is SECTOR_SIZE, the 512-byte unit of block-layer addressing;
	// it is also the smallest block size set_blocksize accepts.
	SectorSize = 512
	// SectorShift is log2(SectorSize) (SECTOR_SHIFT).
	SectorShift = 9
	// DefaultPageSize is PAGE_SIZE on x86-64, ARMv7 (the Helios4) and arm64
	// with 4 KiB pages. It is also the smallest page size the model accepts.
	DefaultPageSize = 4096
	// MaxPageSize is PAGE_SIZE on arm64 with 64 KiB pages, the largest page
	// size the model accepts.
	MaxPageSize = 65536
	// MaxLFSFileSize is MAX_LFS_FILESIZE on 64-bit kernels (LLONG_MAX): the
	// largest byte offset the page cache can address.
	MaxLFSFileSize = math.MaxInt64
)

// BlksizeBits returns log2 of a block size. It models blksize_bits()
// (include/linux/blkdev.h, v5.10; the ≈6.2 order_base_2 form gives the same
// results): 512 → 9, 1024 → 10, 2048 → 11, 4096 → 12, and so on for larger
// powers of two.
//
// Errors (as *SizeError with Op "blksize_bits"): ErrNotPowerOfTwo if size is
// not a power of two, ErrBelowMinimum if it is below 512. O(1), no
// allocation on success.
func BlksizeBits(size uint32) (uint8, error) {
	// blksize_bits has no upper bound: no uint32 exceeds math.MaxUint32.
	if err := checkSize("blksize_bits", size, math.MaxUint32); err != nil {
		return 0, err
	}
	return uint8(Log2(size)), nil
}

// ValidatePageSize checks that pageSize is a PAGE_SIZE the model supports: a
// power of two in [DefaultPageSize, MaxPageSize] (4 KiB, 16 KiB and 64 KiB
// pages of x86-64/ARMv7/arm64 and everything in between). It has no kernel
// counterpart: PAGE_SIZE is a compile-time constant there.
//
// Errors: a *SizeError with Op "PAGE_SIZE" wrapping ErrBadPageSize; Limit is
// the bound crossed, 0 when pageSize is not a power of two. O(1).
func ValidatePageSize(pageSize uint32) error {
	switch {
	case !IsPowerOfTwo(pageSize):
		return &SizeError{Op: "PAGE_SIZE", Size: pageSize, Err: ErrBadPageSize}
	case pageSize < DefaultPageSize:
		return &SizeError{Op: "PAGE_SIZE", Size: pageSize, Limit: DefaultPageSize, Err: ErrBadPageSize}
	case pageSize > MaxPageSize:
		return &SizeError{Op: "PAGE_SIZE", Size: pageSize, Limit: MaxPageSize, Err: ErrBadPageSize}
	}
	return nil
}

// ValidateBlocksize models the checks set_blocksize() makes before it changes
// anything (fs/block_dev.c v5.10, block/bdev.c up to v6.14): the size must be
// a power of two, at least 512, at most PAGE_SIZE and at least the device's
// logical block size. The kernel answers -EINVAL to all four.
//
// It returns nil or a *SizeError with Op "set_blocksize" wrapping exactly one
// sentinel, the first failing check in this order: ErrNotPowerOfTwo,
// ErrBelowMinimum, ErrAbovePageSize (Limit pageSize), ErrBelowLogical (Limit
// logical). logical and pageSize are taken as given, as the kernel takes the
// queue limit and PAGE_SIZE; check them with ValidateLogical and
// ValidatePageSize. Not modelled: the v6.15 form, which allows sizes up to
// 64 KiB above PAGE_SIZE. O(1), no allocation on success.
func ValidateBlocksize(size, logical, pageSize uint32) error {
	if err := checkSize("set_blocksize", size, pageSize); err != nil {
		return err
	}
	if size < logical {
		return &SizeError{Op: "set_blocksize", Size: size, Limit: logical, Err: ErrBelowLogical}
	}
	return nil
}

// ValidateLogical checks a device's logical block size
// (queue_logical_block_size): a power of two in [512, pageSize]. The kernel
// trusts the driver's queue limit and has no single function for this check;
// the model makes it so that a bad device description is an error.
//
// Errors: a *SizeError with Op "logical_block_size" wrapping
// ErrNotPowerOfTwo, ErrBelowMinimum or ErrAbovePageSize (first failing check
// in that order). pageSize is taken as given (see ValidatePageSize). O(1).
func ValidateLogical(logical, pageSize uint32) error {
	return checkSize("logical_block_size", logical, pageSize)
}

// checkSize makes the three range checks that block sizes and logical block
// sizes share, reporting failures under op.
func checkSize(op string, size, pageSize uint32) error {
	switch {
	case !IsPowerOfTwo(size):
		return &SizeError{Op: op, Size: size, Err: ErrNotPowerOfTwo}
	case size < SectorSize:
		return &SizeError{Op: op, Size: size, Limit: SectorSize, Err: ErrBelowMinimum}
	case size > pageSize:
		return &SizeError{Op: op, Size: size, Limit: pageSize, Err: ErrAbovePageSize}
	}
	return nil
}
