package bufcache

import (
	"fmt"
	"sync"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// bioMaxPages is BIO_MAX_VECS (BIO_MAX_PAGES before 5.12): the most pages
// mpage_readahead puts in one bio.
const bioMaxPages = 256

// Read models a buffered read(2) from the block device node: blkdev_read_iter
// → filemap_read, made as through one file opened with the device (a File
// has a readahead state of its own). Reads at or past the end return 0;
// reads crossing it are shortened. A folio that is not cached is brought in
// by on-demand readahead (see readOnDemand): a synchronous window sized by
// the read, asynchronous windows that follow a sequential reader, read
// with multi-page bios and no buffer heads — which is why read throughput
// does not depend on the block size. A cached folio that is not uptodate is
// read under its lock (filemap_update_page → filemap_read_folio): one bio a
// buffer that is not uptodate if it has buffers (block_read_full_folio's
// async reads), one bio for the folio if not; if
// it left the page cache while the reader waited for that lock (truncated,
// reclaimed), the page is looked up again (AOP_TRUNCATED_PAGE). It returns
// the bytes read; ErrIO if a read failed (after what was read before it).
func (d *BlockDevice) Read(cpu *CPU, pos uint64, dst []byte) (uint64, error) {
	// Concurrent readers of one struct file share f_ra without a lock in
	// the kernel, each working on what it read of it; the model copies the
	// state in and out under raMu, so that they trample each other's windows
	// the same way without a data race.
	d.raMu.Lock()
	ra := d.ra
	d.raMu.Unlock()
	n, err := d.readOnDemand(cpu, &ra, pos, dst)
	d.raMu.Lock()
	d.ra = ra
	d.raMu.Unlock()
	return n, err
}

// copyOut copies from folio f, from byte position pos of the device to the
// end of f or of dst, into dst (copy_folio_to_iter; nothing is stored on a
// metadata-only device) and returns the bytes copied (EvCopyByte each).
func (d *BlockDevice) copyOut(cpu *CPU, f *Folio, pos uint64, dst []byte) uint64 {
	off := pos - f.index<<d.m.pageShift
	chunk := min(uint64(d.m.cfg.PageSize)<<f.order-off, uint64(len(dst)))
	if f.data != nil {
		copy(dst[:chunk], (*f.data)[off:off+chunk])
	}
	cpu.countN(EvCopyByte, int(chunk))
	return chunk
}

// readLocked reads a locked folio of the page cache unless it is uptodate
// and unlocks it: filemap_read_folio. It returns the folio, or drops the
// caller's reference and returns ErrIO if the read failed.
func (d *BlockDevice) readLocked(cpu *CPU, f *Folio) (*Folio, error) {
	if !f.Has(FolioUptodate) {
		d.readFolio(cpu, f)
	}
	f.unlockFolio()
	if !f.Has(FolioUptodate) {
		index := f.index // not after the put: the frame may be reused
		f.put(cpu)
		return nil, fmt.Errorf("%w: read of page %d on %s", ErrIO, index, d.Name())
	}
	return f, nil
}

// readFolio brings a locked folio uptodate and returns it locked:
// block_read_full_folio for a folio with buffers, mpage for one without.
// block_read_full_folio maps each buffer that is not uptodate, zeroes one
// past the end of the device (and makes it uptodate), locks the others and
// marks them for an async read (mark_buffer_async_read), then submits them,
// one bio each; the last completion (endBufferAsyncRead) ends the read and
// unlocks the folio, uptodate if every buffer is. v5.10 marks every buffer
// before submitting the first; the rework of December 2024 submits each
// after marking the next; both keep a buffer marked until the submissions
// are done, so no completion ends the read early, and the model, whose
// completions may run inside a submission, marks them all first. A buffer
// found uptodate once locked (another task read or wrote it while this one
// waited) is unlocked and left alone, as the rework does; v5.10 finishes it
// with end_buffer_async_read instead, two bit operations more. A folio whose
// buffers need no read is uptodate at once. Where the folio was unlocked by
// a completion, it is locked again for the caller (v5.10's read path takes
// the lock again; v6.x only waits for the unlock), as the mpage path does.
func (d *BlockDevice) readFolio(cpu *CPU, f *Folio) {
	head := f.private
	if head == nil {
		d.submitReadahead(cpu, []*Folio{f}, false, 0)
		f.lockFolio(cpu) // the completion unlocked it
		return
	}
	g := blocksize.Geometry{PageShift: d.m.pageShift, BlkBits: uint8(blocksize.Log2(head.size))}
	last := blocksize.DivRoundUp(d.size, uint64(head.size))     // a block straddling the end is read
	block := uint64(g.FirstBlock(blocksize.PageIndex(f.index))) // folio_pos / b_size
	async := cpu.scratch[:0]
	for bh := range head.ring(cpu) {
		switch {
		case bh.Has(BHUptodate):
		case block >= last: // past the end: zeroes
			if data := bh.Data(); data != nil {
				clear(data)
			}
			bh.setBit(cpu, BHUptodate)
		default:
			if !bh.Has(BHMapped) {
				d.getBlock(cpu, bh, block)
			}
			LockBuffer(cpu, bh)
			if bh.Has(BHUptodate) { // read by someone else meanwhile
				UnlockBuffer(cpu, bh)
				break
			}
			bh.endIO = endAsyncRead // mark_buffer_async_read
			bh.setBit(cpu, BHAsyncRead)
			async = append(async, bh)
		}
		block++
	}
	if len(async) == 0 {
		f.flags.Set(FolioUptodate) // folio_end_read(folio, true), less the unlock
		cpu.scratch = async
		return
	}
	for _, bh := range async {
		submitBH(cpu, blk.OpRead, 0, bh)
	}
	clear(async)
	cpu.scratch = async[:0]
	f.lockFolio(cpu) // the last completion unlocked it
}

// endBufferAsyncRead models end_buffer_async_read: the buffer is uptodate, or
// not (a failed read, "async page read"); its async-read bit is cleared and
// it is unlocked; if no other buffer of the folio is still under an async
// read, the read ends (folio_end_read): the folio becomes uptodate if every
// buffer is, and is unlocked. As for end_buffer_async_write, the folio's
// buffers complete on the CPU that submitted them, so the ring scan needs no
// b_uptodate_lock here.
func endBufferAsyncRead(cpu *CPU, bh *BufferHead, ok bool) {
	f := bh.folio
	if ok {
		bh.setBit(cpu, BHUptodate)
	} else {
		cpu.count(EvWarning)
		bh.clearBit(cpu, BHUptodate)
	}
	bh.clearBit(cpu, BHAsyncRead)
	UnlockBuffer(cpu, bh)
	uptodate := true
	busy := bh.thisPage.find(nil, func(b *BufferHead) bool {
		uptodate = uptodate && b.Has(BHUptodate)
		return b == bh || b.Has(BHAsyncRead)
	}) != bh
	if busy {
		return
	}
	if uptodate {
		f.flags.Set(FolioUptodate)
	}
	f.unlockFolio()
}

// raBio is one mpage bio and the folios it fills.
type raBio struct {
	bio    blk.Bio
	folios []*Folio
	cpu    *CPU
}

var raPool = sync.Pool{New: func() any { return new(raBio) }}

// submitReadahead sends one bio for a run of consecutive locked folios
// (do_mpage_readpage for each, mpage_bio_submit), one segment per folio
// (bio_add_folio): each folio's tail past the end of the device is zeroed and
// not read. With dropRef the caller's folio references are dropped once the
// folios are in the bio (readahead_folio). flags are the bio's: REQ_RAHEAD
// for readahead, none for a folio read alone (mpage_read_folio). It returns
// run emptied.
func (d *BlockDevice) submitReadahead(cpu *CPU, run []*Folio, dropRef bool, flags blk.BioFlags) []*Folio {
	if len(run) == 0 {
		return run
	}
	ps := uint64(d.m.cfg.PageSize)
	rb := raPool.Get().(*raBio)
	rb.cpu = cpu
	rb.bio.Reset(blk.OpRead, run[0].index*ps>>blk.SectorShift)
	rb.bio.Flags = flags
	for _, f := range run {
		cpu.count(EvReadaheadPage)
		n := min(ps<<f.order, d.size-f.index*ps)
		var data []byte
		if f.data != nil {
			data = (*f.data)[:n]
			clear((*f.data)[n:])
		}
		if !rb.bio.AddPage(data, uint32(n), f.pfn, 0) { // at most bioMaxPages folios of at most 2 MiB
			panic("bufcache: a readahead bio past 4 GiB")
		}
		rb.folios = append(rb.folios, f)
		if dropRef {
			f.put(cpu)
		}
	}
	rb.bio.EndIO = endReadahead
	rb.bio.Private = rb
	cpu.count(EvBioSubmit)
	d.submitBio(cpu, &rb.bio)
	clear(run)
	return run[:0]
}

// endReadahead models mpage_end_io for reads: every folio of the bio becomes
// uptodate (or gets PG_error) and is unlocked.
func endReadahead(b *blk.Bio) {
	rb := b.Private.(*raBio)
	rb.cpu.count(EvBioComplete)
	for i, f := range rb.folios {
		if b.Err == nil {
			f.flags.Set(FolioUptodate)
		} else {
			f.flags.Set(FolioError)
		}
		f.unlockFolio()
		rb.folios[i] = nil
	}
	rb.folios, rb.cpu = rb.folios[:0], nil
	b.Reset(blk.OpRead, 0)
	raPool.Put(rb)
}
