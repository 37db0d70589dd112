package iomap

import (
	"fmt"
	"sync"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
)

// FileBufferedWrite models iomap_file_buffered_write (fs/iomap/buffered-io.c,
// v6.6) on the block device d: from's bytes are written at pos one mapping at
// a time (Iter over ops), each mapping by writeIter with the given initial
// chunk (ChunkPolicy.Chunk: a power of two, at least PAGE_SIZE). It returns
// the bytes written; an error only if nothing was written. Data stays dirty in
// the page cache until writeback, which is bufcache's buffer_head writeback.
//
// The caller has made the entry checks (BlkdevWrite does): nothing here stops
// a write at the end of the device except ops. An empty write returns 0 (all
// kernel callers return before calling it).
//
// Errors: ErrBadOption for an invalid chunk; bufcache.ErrFault when the user
// buffer is unreadable where the write starts; ops' errors (ErrPastEnd for
// BlkdevOps); ErrInvalidMapping or ErrNotModelled for mappings the write
// path cannot take; bufcache.ErrIO when a partly written block could not be
// read first.
//
// Cost: per page written, the page-cache work of one write_begin/write_end
// plus the user pages pre-faulted — one or two with a PAGE_SIZE chunk, up to
// chunk/PAGE_SIZE with a larger one. The write path allocates nothing.
func FileBufferedWrite(cpu *bufcache.CPU, d *bufcache.BlockDevice, pos uint64, from *bufcache.IovIter, ops Ops, chunk uint64) (uint64, error) {
	ps := uint64(d.Machine().PageSize())
	if chunk < ps || !blocksize.IsPowerOfTwo(chunk) {
		return 0, fmt.Errorf("%w: chunk %d is not a power of two of at least PAGE_SIZE (%d)", ErrBadOption, chunk, ps)
	}
	if from.Count() == 0 {
		return 0, nil
	}
	it := NewIter(cpu, d, ops, pos, from.Count(), IterWrite)
	for it.Next() {
		it.SetProcessed(writeIter(&it, from, chunk))
	}
	if it.pos == pos {
		return 0, it.err
	}
	return it.pos - pos, nil
}

// writeIter models iomap_write_iter (v6.6 as released, with 3ac974796e5d's
// retry label, "iomap: fix short copy in iomap_write_iter()", v6.6-rc7) for
// the current mapping of it, copying from i. Per iteration:
//
//  1. offset = pos & (chunk−1); bytes = min(chunk − offset, bytes left in i);
//     balance_dirty_pages; bytes = min(bytes, mapping length left);
//  2. fault in `bytes` of the user buffer — up to a whole chunk — and fail
//     with -EFAULT if none of it is readable;
//  3. iomap_write_begin, which for a mapping without large folios writes at
//     most the rest of one page, and on one with large folios (v6.15+) gets
//     a folio sized by the write (up to the chunk, aligned);
//  4. copy at most the rest of that folio; iomap_write_end;
//  5. a copy write_end refused (short, into a folio that is not uptodate)
//     halves the chunk, down to PAGE_SIZE, and retries at the same position
//     with bytes = what was copied; otherwise pos advances. (In the model a
//     short copy only comes from an unreadable byte, which also ends the
//     write, so the halved chunk is never used again.)
//
// So with a 2 MiB chunk each 4 KiB page written costs a pre-fault of up to
// 2 MiB of user pages: the regression of the iomap-vs-buffer_head thread. It returns the bytes
// written, or 0 and the error that stopped it.
func writeIter(it *Iter, i *bufcache.IovIter, chunk uint64) (uint64, error) {
	cpu, d := it.cpu, it.dev
	ps := uint64(d.Machine().PageSize())
	length := it.Length()
	pos := it.pos
	mapper := mappers.Get().(*toBH)
	*mapper = toBH(it.iomap)
	defer mappers.Put(mapper)
	var written uint64
	for {
		bytes := i.Count()
	retry:
		offset := pos & (chunk - 1)
		bytes = min(chunk-offset, bytes)
		d.BalanceDirtyPages(cpu)
		bytes = min(bytes, length)
		cpu.CountEvent(bufcache.EvWriteIter)
		if i.FaultInReadable(cpu, bytes) == bytes {
			return progress(written, fmt.Errorf("%w: write at %d", bufcache.ErrFault, pos))
		}
		f, err := writeBegin(cpu, d, mapper, pos, bytes)
		if err != nil {
			return progress(written, err)
		}
		offset = pos - d.FolioPos(f)
		bytes = min(bytes, d.FolioSize(f)-offset)
		copied := i.CopyToFolio(cpu, f, offset, bytes)
		status := d.WriteEnd(cpu, f, pos, bytes, copied)
		if copied != status {
			i.Revert(copied - status)
		}
		if status == 0 {
			if chunk > ps {
				chunk /= 2
			}
			if copied > 0 {
				bytes = copied
				goto retry
			}
		} else {
			pos += status
			written += status
			length -= status
		}
		if i.Count() == 0 || length == 0 {
			return written, nil
		}
	}
}

// progress is iomap_write_iter's "written ? written : status".
func progress(written uint64, err error) (uint64, error) {
	if written > 0 {
		return written, nil
	}
	return 0, err
}

// writeBegin models iomap_write_begin (v6.6; its large-folio path as v6.18
// has it) for a buffer_head mapping m: the range must lie inside the mapping
// (BUG_ON); a mapping without large folios writes at most the rest of the
// page; the folio comes locked from the page cache (__iomap_get_folio, a new
// one sized by the write: fgf_set_order(n)), the write is trimmed to it
// (iomap_trim_folio_range), and __block_write_begin_int prepares its buffers
// with iomap_to_bh as get_block. There is no folio_ops validity check for a
// block device, and a fatal signal cannot be pending in the model. On error
// the folio is released.
func writeBegin(cpu *bufcache.CPU, d *bufcache.BlockDevice, m *toBH, pos, n uint64) (*bufcache.Folio, error) {
	switch {
	case pos+n > m.Offset+m.Length:
		return nil, fmt.Errorf("%w: write [%d, +%d) outside %v", ErrInvalidMapping, pos, n, IOMap(*m))
	case m.Type == Inline || m.Flags&FBufferHead == 0:
		return nil, fmt.Errorf("%w: %v (only buffer_head mappings are modelled)", ErrNotModelled, IOMap(*m))
	}
	if !d.LargeFolios() {
		ps := uint64(d.Machine().PageSize())
		n = min(n, ps-pos&(ps-1))
	}
	f := d.GetWriteFolio(cpu, pos, n)
	n = min(n, d.FolioPos(f)+d.FolioSize(f)-pos) // iomap_trim_folio_range
	if err := d.BlockWriteBegin(cpu, f, pos, n, m); err != nil {
		return nil, err
	}
	return f, nil
}

// toBH is a copy of the current mapping in the role of
// __block_write_begin_int's get_block step.
type toBH IOMap

// mappers recycles the toBH copies: handed to bufcache as an interface, a
// mapping escapes to the heap, and a fresh one per write(2) would allocate.
var mappers = sync.Pool{New: func() any { return new(toBH) }}

// MapBlock models iomap_to_bh (fs/buffer.c, v6.6) for the block device's
// mapping: the buffer's inode offset must not lie past the mapping's end
// (BUG_ON); a Mapped extent maps it to (Addr + offset − Offset) >> i_blkbits
// and marks it new if the mapping has FNew or the offset is at or past
// i_size. The buffer may start before the mapping: blkdev_iomap_begin aligns
// to the logical block size, which can be smaller than the block size (a
// 4 KiB buffer over 512-byte sectors), and the identity mapping still gives
// the right block. Holes, delayed allocation and unwritten extents need a
// file system's writeback and are not modelled; neither is a mapping other
// than the identity, which the block device's own page cache requires.
func (m *toBH) MapBlock(cpu *bufcache.CPU, d *bufcache.BlockDevice, bh *bufcache.BufferHead, block uint64) error {
	bits := d.Geometry().BlkBits
	offset := block << bits
	switch {
	case offset >= m.Offset+m.Length:
		return fmt.Errorf("%w: block %d past %v", ErrInvalidMapping, block, IOMap(*m))
	case m.Type != Mapped:
		return fmt.Errorf("%w: iomap_to_bh of a %v extent", ErrNotModelled, m.Type)
	}
	blocknr := (m.Addr + offset - m.Offset) >> bits
	if blocknr != block {
		return fmt.Errorf("%w: block %d mapped to %d, not the identity", ErrNotModelled, block, blocknr)
	}
	if m.Flags&FNew != 0 || offset >= d.Size() {
		bh.SetNew(cpu)
	}
	bufcache.MapBH(cpu, bh, d, blocknr)
	return nil
}
