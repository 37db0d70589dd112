package iomap

import (
	"fmt"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/enum"
)

// WritePath selects the buffered write blkdev_write_iter calls.
type WritePath uint8

const (
	// PathIomap is v6.6 and later: blkdev_buffered_write →
	// iomap_file_buffered_write with blkdev_iomap_ops (487c607df790, "block:
	// use iomap for writes to block devices").
	PathIomap WritePath = iota
	// PathBufferHead is v6.5 and earlier, or v6.6 with 487c607df790
	// reverted: generic_perform_write through buffer_heads
	// (bufcache.BlockDevice.Write).
	PathBufferHead
)

// pathNames names the write paths for String.
var pathNames = enum.New[WritePath]("path", []string{PathIomap: "iomap", PathBufferHead: "buffer_head"}...)

// String returns "iomap" or "buffer_head" ("path(n)" for another value).
func (p WritePath) String() string { return pathNames.String(p) }

// Options are the kernel variants of a buffered write to a block device. The
// zero value is v6.6 as released on a kernel with transparent huge pages (x86-64,
// or arm64 with 4 KiB pages as on Xu Yang's boards): the iomap path with a
// PAGE_SIZE << MAX_PAGECACHE_ORDER chunk (2 MiB) and the original EOF check.
// Xu Yang's table's columns are Options{} (6.6), Options{Path:
// PathBufferHead} (487c607df790 reverted) and Options{Chunk:
// ChunkMappingMaxFolioSize} (with 4e527d5841e2).
type Options struct {
	// Path selects generic_perform_write or iomap.
	Path WritePath
	// Chunk is iomap_write_iter's chunk policy.
	Chunk ChunkPolicy
	// EOF is blkdev_iomap_begin's end-of-device check.
	EOF EOFCheck
	// NoTHP models a kernel without CONFIG_TRANSPARENT_HUGEPAGE
	// (MAX_PAGECACHE_ORDER 8).
	NoTHP bool
	// XASCap caps MAX_PAGECACHE_ORDER at 11 (099d90642a71, 2024).
	XASCap bool
}

// ChunkSize returns iomap_write_iter's initial chunk under o on a machine
// with PAGE_SIZE pageSize: 2 MiB for the zero Options on 4 KiB pages, 4 KiB
// with ChunkMappingMaxFolioSize. Errors: as MaxPagecacheOrder and
// ChunkPolicy.Chunk. O(1).
func (o Options) ChunkSize(pageSize uint32) (uint64, error) {
	order, err := MaxPagecacheOrder(pageSize, !o.NoTHP, o.XASCap)
	if err != nil {
		return 0, err
	}
	return o.Chunk.Chunk(pageSize, order)
}

// Linux618 is the write of Linux 6.18's block devices: iomap with the fixed
// chunk (mapping_max_folio_size, 2 MiB on the large-folio mapping of 4 KiB
// pages), the raw EOF check, and MAX_PAGECACHE_ORDER capped by
// MAX_XAS_ORDER. Use it with bufcache.Linux618's machine, whose mapping has
// large folios.
var Linux618 = Options{Path: PathIomap, Chunk: ChunkMappingMaxFolioSize, EOF: EOFRaw, XASCap: true}

// Writer returns blkdev_write_iter in the kernel opts selects, as a
// bufcache.WriteIterFunc for bufcache.Config.WriteIter (File.Pwrite):
// BlkdevWrite with opts.
func Writer(opts Options) bufcache.WriteIterFunc {
	return func(cpu *bufcache.CPU, d *bufcache.BlockDevice, pos uint64, it *bufcache.IovIter) (uint64, error) {
		return BlkdevWrite(cpu, d, pos, it, opts)
	}
}

// BlkdevWrite models a buffered write(2) to the block device node d at byte
// position pos, from it, in the kernel opts selects: blkdev_write_iter
// (block/fops.c) — -EPERM on a read-only device, nothing for an empty write,
// -ENOSPC at or past the end, the write shortened to the end of the device
// (and the iterator re-expanded afterwards) — then generic_perform_write
// (PathBufferHead: exactly bufcache.BlockDevice.Write) or
// iomap_file_buffered_write with blkdev_iomap_ops (PathIomap). Writeback is
// the same buffer_head writeback for both. It returns the bytes written.
//
// Errors: ErrBadOption for unknown variants; bufcache.ErrReadOnly,
// bufcache.ErrNoSpace, bufcache.ErrFault (nothing readable where the write
// starts; a write that stops at an unreadable byte later returns what it
// wrote), bufcache.ErrIO (a partly covered block could not be read first).
// Cost: as FileBufferedWrite, or bufcache's Write.
func BlkdevWrite(cpu *bufcache.CPU, d *bufcache.BlockDevice, pos uint64, it *bufcache.IovIter, opts Options) (uint64, error) {
	switch opts.Path {
	case PathBufferHead:
		return d.Write(cpu, pos, it)
	case PathIomap:
	default:
		return 0, fmt.Errorf("%w: write path %v", ErrBadOption, opts.Path)
	}
	if opts.EOF != EOFAligned && opts.EOF != EOFRaw {
		return 0, fmt.Errorf("%w: EOF check %v", ErrBadOption, opts.EOF)
	}
	chunk, err := opts.ChunkSize(d.Machine().PageSize())
	if err != nil {
		return 0, err
	}
	if opts.Chunk == ChunkMappingMaxFolioSize {
		chunk <<= d.MaxFolioOrder() // mapping_max_folio_size: PAGE_SIZE << MAX_PAGECACHE_ORDER with large folios
	}
	switch size := d.Size(); {
	case d.ReadOnly():
		return 0, fmt.Errorf("%w: %s", bufcache.ErrReadOnly, d.Name())
	case it.Count() == 0:
		return 0, nil
	case pos >= size:
		return 0, fmt.Errorf("%w: position %d on %s of %d bytes", bufcache.ErrNoSpace, pos, d.Name(), size)
	}
	cut := it.Truncate(d.Size() - pos)
	defer d.DebugCheck()
	n, err := FileBufferedWrite(cpu, d, pos, it, BlkdevOps(opts.EOF), chunk)
	it.Reexpand(cut)
	return n, err
}
