package iomap

import (
	"fmt"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/enum"
)

// EOFCheck selects blkdev_iomap_begin's end-of-device check.
type EOFCheck uint8

const (
	// EOFAligned is the original check of 487c607df790 ("block: use iomap for
	// writes to block devices", v6.6): the offset is aligned down to the
	// logical block size first, and -EIO only if that is at or past i_size.
	// On a device whose size is not a multiple of its logical block size, an
	// offset at or just past i_size in its last logical block gets a mapping
	// ending at or before the offset: iomap_iter WARNs and the write fails
	// oddly (the syzbot report behind the fix).
	EOFAligned EOFCheck = iota
	// EOFRaw is 0c12028aec83 ("block: refine the EOF check in
	// blkdev_iomap_begin", May 2024, v6.10; CVE-2024-38604, backported to
	// stable): -EIO if the raw offset is at or past i_size.
	EOFRaw
)

// eofNames names the checks for String.
var eofNames = enum.New[EOFCheck]("eof", []string{EOFAligned: "aligned", EOFRaw: "raw"}...)

// String returns "aligned" or "raw" ("eof(n)" for another value).
func (c EOFCheck) String() string { return eofNames.String(c) }

// BlkdevIomapBegin models blkdev_iomap_begin (block/fops.c, v6.6, with the
// EOF check selected by check) for a device of isize bytes (i_size) and the
// given logical block size: the mapping starts at offset aligned down to the
// logical block size, is identity mapped (Addr = Offset), runs to the end of
// the device (so one mapping normally serves a whole write(2)), has type
// Mapped and the FBufferHead flag.
//
// Errors: ErrPastEnd (-EIO) when the checked offset is at or past isize;
// ErrBadOption for an unknown check or a logical block size that is not a
// power of two. O(1), no allocation on success.
func BlkdevIomapBegin(check EOFCheck, isize uint64, logical uint32, offset uint64) (IOMap, error) {
	if !blocksize.IsPowerOfTwo(logical) {
		return IOMap{}, fmt.Errorf("%w: logical block size %d", ErrBadOption, logical)
	}
	start := blocksize.AlignDown(offset, uint64(logical))
	checked := start
	switch check {
	case EOFAligned:
	case EOFRaw:
		checked = offset
	default:
		return IOMap{}, fmt.Errorf("%w: EOF check %v", ErrBadOption, check)
	}
	if checked >= isize {
		return IOMap{}, fmt.Errorf("%w: offset %d (checked %d) on a %d-byte device", ErrPastEnd, offset, checked, isize)
	}
	return IOMap{Offset: start, Length: isize - start, Addr: start, Type: Mapped, Flags: FBufferHead}, nil
}

// BlkdevOps is blkdev_iomap_ops with the EOF check selected by its value:
// Begin is BlkdevIomapBegin on the device's size and logical block size; there
// is no iomap_end (End does nothing).
type BlkdevOps EOFCheck

// Begin implements Ops with BlkdevIomapBegin; length and flags are not
// consulted, as in the kernel.
func (o BlkdevOps) Begin(_ *bufcache.CPU, d *bufcache.BlockDevice, pos, _ uint64, _ IterFlags) (IOMap, error) {
	return BlkdevIomapBegin(EOFCheck(o), d.Size(), d.LogicalBlockSize(), pos)
}

// End implements Ops: blkdev_iomap_ops has no iomap_end.
func (BlkdevOps) End(*bufcache.CPU, *bufcache.BlockDevice, uint64, uint64, uint64, IterFlags, IOMap) error {
	return nil
}
