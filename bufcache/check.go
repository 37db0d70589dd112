package bufcache

import (
	"errors"
	"fmt"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/internal/pageindex"
)

// Check verifies the page cache's invariants on every folio in the device's
// page cache and returns every violation found, joined:
//   - a folio has PG_private exactly when a ring is attached;
//   - a folio's order lies between the mapping's minimum and maximum, its
//     index is a multiple of its page count, its data is folio_size bytes,
//     and nrpages is the sum of the folios' pages;
//   - the ring holds folio_size/b_size buffers of one size, in ascending
//     offset order from the head at offset 0, each pointing back at the
//     folio;
//   - the folio's own buffer head (its frame's spare) is in use only as the
//     head of its ring, so no two rings share a buffer;
//   - the k-th buffer of the folio at index p, once mapped, has block number
//     p·PAGE_SIZE/b_size + k and starts before the device's end;
//   - counts are never negative and at least the number of CPUs whose LRU holds
//     the buffer;
//   - a dirty buffer is mapped, Async_* bits only appear on locked buffers, and
//     a dirty buffer's folio is dirty;
//   - a dirty folio is tagged dirty (a clean one may keep a stale tag until
//     writeback starts, as in the kernel), and the writeback flag and tag agree;
//   - the dirty and writeback pages accounted (DirtyPages, WritebackPages) are
//     those of the folios with the flags.
//
// Call it at a quiescent point: concurrent operations can show it transient
// states. It takes private_lock folio by folio.
func (d *BlockDevice) Check() error {
	var errs []error
	m := &d.mapping
	var pages, dirty, writeback int64
	for start := uint64(0); ; {
		index, f, ok := m.index.Next(start)
		if !ok {
			break
		}
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s page %d: %s", d.Name(), index, fmt.Sprintf(format, args...)))
		}
		if f.index != index || f.mapping.Load() != m {
			bad("folio records index %d, mapping ok %v", f.index, f.mapping.Load() == m)
		}
		if min := m.minFolioOrder(); f.order < min || f.order > max(m.maxOrder, min) || f.index&(f.NrPages()-1) != 0 {
			bad("folio of order %d at index %d (mapping orders %d to %d)", f.order, f.index, min, m.maxOrder)
		}
		if f.data != nil && uint64(len(f.bytes())) != d.FolioSize(f) {
			bad("folio of order %d holds %d bytes", f.order, len(f.bytes()))
		}
		pages += int64(f.NrPages())
		if f.Has(FolioDirty) {
			dirty += int64(f.NrPages())
		}
		if f.Has(FolioWriteback) {
			writeback += int64(f.NrPages())
		}
		if f.Has(FolioDirty) && !m.index.Marked(index, pageindex.MarkDirty) {
			bad("dirty but not tagged dirty: writeback would miss it")
		}
		if f.Has(FolioWriteback) != m.index.Marked(index, pageindex.MarkWriteback) {
			bad("writeback flag %v but writeback tag %v", f.Has(FolioWriteback), !f.Has(FolioWriteback))
		}
		m.privateLock.Lock()
		head := f.private
		if (head != nil) != f.Has(FolioPrivate) {
			bad("PG_private %v with ring %v", f.Has(FolioPrivate), head != nil)
		}
		if head != nil {
			d.checkRing(f, head, bad)
		}
		if f.spare.folio != nil && head != &f.spare {
			bad("the folio's own buffer head is in use, but not as its ring's head")
		}
		m.privateLock.Unlock()
		last := f.index + (f.NrPages() - 1)
		if f.index != index || last == ^uint64(0) {
			break
		}
		start = last + 1
	}
	if n := m.pages(); n != pages {
		errs = append(errs, fmt.Errorf("%s: nrpages %d, folios hold %d pages", d.Name(), n, pages))
	}
	if n := m.dirtyPages.Load(); n != dirty {
		errs = append(errs, fmt.Errorf("%s: %d dirty pages accounted, dirty folios hold %d", d.Name(), n, dirty))
	}
	if n := m.writebackPages.Load(); n != writeback {
		errs = append(errs, fmt.Errorf("%s: %d writeback pages accounted, folios under writeback hold %d", d.Name(), n, writeback))
	}
	return errors.Join(errs...)
}

// checkRing verifies one attached ring (invariants 2, 3, 5, 8, 10).
func (d *BlockDevice) checkRing(f *Folio, head *BufferHead, bad func(string, ...any)) {
	size := head.size
	fsize := d.FolioSize(f)
	if size == 0 || fsize%uint64(size) != 0 {
		bad("ring head has size %d", size)
		return
	}
	want := uint32(fsize / uint64(size))
	first := blocksize.Geometry{PageShift: d.m.pageShift, BlkBits: uint8(blocksize.Log2(size))}.FirstBlock(blocksize.PageIndex(f.index))
	end := blocksize.DivRoundUp(d.size, uint64(size)) // the write path maps a block straddling the end
	n := uint32(0)
	broken := head.find(nil, func(bh *BufferHead) bool {
		if n >= want {
			bad("ring longer than %d buffers or not closed", want)
			return true
		}
		if bh.folio != f || bh.size != size || bh.offset != n*size {
			bad("buffer %d: folio ok %v, size %d, offset %d", n, bh.folio == f, bh.size, bh.offset)
		}
		block := uint64(first) + uint64(n)
		st := bh.State()
		if st&BHMapped != 0 && (bh.BlockNr() != block || block >= end || bh.bdev.Load() != d) {
			bad("buffer %d mapped to block %d, want %d (end %d)", n, bh.BlockNr(), block, end)
		}
		if c := bh.count.Load(); c < 0 {
			bad("buffer %d has count %d", n, c)
		} else if d.m.lru != nil {
			if holds := d.m.lru.Holds(bh); int(c) < holds {
				bad("buffer %d has count %d but %d LRUs hold it", n, c, holds)
			}
		}
		if st&BHDirty != 0 && (st&BHMapped == 0 || !f.Has(FolioDirty)) {
			bad("buffer %d dirty but mapped %v, folio dirty %v", n, st&BHMapped != 0, f.Has(FolioDirty))
		}
		if st&(BHAsyncRead|BHAsyncWrite) != 0 && st&BHLock == 0 {
			bad("buffer %d has async I/O bits without the lock: %v", n, st)
		}
		n++
		if bh.thisPage == nil { // the walk must not follow a nil link
			bad("ring not closed after %d buffers", n)
			return true
		}
		return false
	})
	if broken == nil && n != want {
		bad("ring has %d buffers, want %d", n, want)
	}
}

// debugCheck runs Check when the machine was configured with Check and panics
// on a violation: an invariant of the model itself is broken.
func (d *BlockDevice) debugCheck() {
	if !d.m.cfg.Check {
		return
	}
	if err := d.Check(); err != nil {
		panic(err)
	}
	if d.m.lru != nil {
		if err := d.m.lru.Check(); err != nil {
			panic(err)
		}
	}
}
