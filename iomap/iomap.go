package iomap

import (
	"errors"
	"fmt"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/enum"
)

// Errors of the package. Each is wrapped with the details; test with errors.Is.
var (
	// ErrPastEnd is blkdev_iomap_begin's -EIO: a mapping asked for at or past
	// the end of the device. It wraps bufcache.ErrIO.
	ErrPastEnd = fmt.Errorf("iomap: offset at or past the end of the device: %w", bufcache.ErrIO)
	// ErrInvalidMapping: an Ops returned a mapping the iteration cannot use —
	// empty, or not covering the position being written (the kernel WARNs and
	// loops, or BUGs).
	ErrInvalidMapping = errors.New("iomap: invalid mapping")
	// ErrNotModelled: a mapping type or flag combination whose write path is not
	// modelled (anything but IOMAP_MAPPED with IOMAP_F_BUFFER_HEAD, identity
	// mapped, as the block device's mapping is).
	ErrNotModelled = errors.New("iomap: mapping not modelled")
	// ErrBadOption: an unknown variant or an invalid chunk size.
	ErrBadOption = errors.New("iomap: invalid option")
)

// Type is struct iomap's type (IOMAP_HOLE ... IOMAP_INLINE,
// include/linux/iomap.h, v6.6).
type Type uint8

// The mapping types.
const (
	// Hole (IOMAP_HOLE): no blocks allocated; a write must allocate them.
	Hole Type = iota
	// Delalloc (IOMAP_DELALLOC): blocks reserved by delayed allocation.
	Delalloc
	// Mapped (IOMAP_MAPPED): blocks allocated at Addr. The block device's
	// mapping is always this, identity mapped.
	Mapped
	// Unwritten (IOMAP_UNWRITTEN): blocks allocated at Addr but reading as
	// zeros until written.
	Unwritten
	// Inline (IOMAP_INLINE): data inline in the inode (file systems only).
	Inline
)

// typeNames names the mapping types for String.
var typeNames = enum.New[Type]("type", []string{Hole: "hole", Delalloc: "delalloc", Mapped: "mapped",
	Unwritten: "unwritten", Inline: "inline"}...)

// String returns the type's name, e.g. "mapped" ("type(n)" for another
// value).
func (t Type) String() string { return typeNames.String(t) }

// Flags are struct iomap's flags (IOMAP_F_*, v6.6).
type Flags uint16

// The mapping flags the model knows.
const (
	// FNew (IOMAP_F_NEW): the blocks were just allocated; iomap_to_bh marks
	// the buffers new, so partial writes zero the rest of the block instead of
	// reading it.
	FNew Flags = 1 << iota
	// FDirty (IOMAP_F_DIRTY): the inode has metadata to sync for O_DSYNC; not
	// consulted by the buffered write.
	FDirty
	// FShared (IOMAP_F_SHARED): the blocks are shared (reflink); not consulted.
	FShared
	// FMerged (IOMAP_F_MERGED): the mapping merged several extents (fiemap);
	// not consulted.
	FMerged
	// FBufferHead (IOMAP_F_BUFFER_HEAD, CONFIG_BUFFER_HEAD): the mapping's
	// folios use buffer_heads, so iomap_write_begin calls
	// __block_write_begin_int. blkdev_iomap_begin sets it.
	FBufferHead
)

// flagNames names the flags for String, in bit order.
var flagNames = enum.NewFlags[Flags]("new", "dirty", "shared", "merged", "buffer_head")

// String lists the set flags, e.g. "new|buffer_head", or "0" (flags without
// a name in hexadecimal).
func (f Flags) String() string { return flagNames.String(f) }

// IOMap models struct iomap: one extent of the inode — here the block
// device's own inode, so the disk is the device itself (iomap->bdev is not
// kept) — and where it lives on the disk.
type IOMap struct {
	// Offset is the inode offset of the first byte of the mapping.
	Offset uint64
	// Length is the mapping's length in bytes; never 0 for a valid mapping.
	Length uint64
	// Addr is the disk offset, in bytes, that Offset maps to.
	Addr uint64
	// Type is the kind of mapping.
	Type Type
	// Flags are the IOMAP_F_* flags.
	Flags Flags
}

// String describes the mapping, e.g. "mapped [0, +4096) at 0 flags=buffer_head".
func (m IOMap) String() string {
	return fmt.Sprintf("%s [%d, +%d) at %d flags=%s", m.Type, m.Offset, m.Length, m.Addr, m.Flags)
}

// IterFlags are the operation flags iomap_iter passes to iomap_begin
// (IOMAP_WRITE, ...). Only the buffered write is modelled.
type IterFlags uint8

// IterWrite (IOMAP_WRITE): the mapping is for a write.
const IterWrite IterFlags = 1

// Ops models struct iomap_ops: how a file system (here the block device)
// maps a range of its inode. Implementations must be safe to call from the
// goroutine driving cpu.
type Ops interface {
	// Begin models ->iomap_begin(inode, pos, length, flags, iomap, srcmap):
	// return the mapping of d's inode that contains pos; length is how many
	// bytes from pos the caller wants (the mapping may be shorter or longer).
	// A mapping must start at or before pos, end after it and not be empty;
	// the iteration counts a WARN for the first two and fails for an empty one.
	Begin(cpu *bufcache.CPU, d *bufcache.BlockDevice, pos, length uint64, flags IterFlags) (IOMap, error)
	// End models ->iomap_end(inode, pos, length, written, flags, iomap),
	// called after the caller processed the mapping m: length is what was
	// offered (iomap_length), written what was done. Its error ends the
	// iteration only if nothing was processed. Ops without an iomap_end
	// return nil.
	End(cpu *bufcache.CPU, d *bufcache.BlockDevice, pos, length, written uint64, flags IterFlags, m IOMap) error
}
