package bufcache

import "fmt"

// TruncateRange models truncate_bdev_range (block/bdev.c) as BLKDISCARD,
// BLKZEROOUT and fallocate's hole punching call it before they touch the
// device: truncate_inode_pages_range over bytes [start, end) of the device's
// page cache. A folio wholly inside the range is removed as truncation
// removes one (its writeback waited for, its buffers discarded and freed);
// a folio the range covers in part (truncate_inode_partial_folio) has that
// part zeroed and the buffers wholly inside it discarded, and, if it is
// larger than the mapping's minimum order, is split into folios of that
// order (split_folio), whose pieces inside the range then go. A split needs
// the folio's buffers freed first and nobody else holding it: a folio with
// dirty or referenced buffers stays whole, as the kernel keeps a dirty folio
// it could not split. (6.16's non-uniform try_folio_split, which keeps the
// pieces around the range's edge larger, is not modelled; nor is the
// exclusive claim truncate_bdev_range takes.)
//
// Errors: ErrInvalid (-EINVAL) unless start < end ≤ the device's size and
// both are multiples of the logical block size, as the ioctls require.
// O(folios in the range + pages split).
func (d *BlockDevice) TruncateRange(cpu *CPU, start, end uint64) error {
	lbs := uint64(d.logical)
	if start >= end || end > d.size || start%lbs != 0 || end%lbs != 0 {
		return fmt.Errorf("%w: truncate [%d, %d) of %s (%d bytes, logical block %d)", ErrInvalid, start, end, d.Name(), d.size, lbs)
	}
	m := &d.mapping
	shift := d.m.pageShift
	last := (end - 1) >> shift
	for index := start >> shift; index <= last; {
		f := m.getFolio(cpu, index, fgpLock)
		if f == nil {
			next, _, ok := m.index.Next(index)
			if !ok || next > last {
				break
			}
			index = next
			continue
		}
		waitOnWriteback(cpu, f)
		fpos, fsize := d.FolioPos(f), d.FolioSize(f)
		from, to := max(start, fpos)-fpos, min(end, fpos+fsize)-fpos
		next := f.index + f.NrPages()
		wrapped := next == 0 // the folio ends the index space
		if from == 0 && to == fsize {
			d.invalidateFolio(cpu, f)
			m.remove(cpu, f)
		} else {
			if f.data != nil {
				clear((*f.data)[from:to]) // folio_zero_range
			}
			d.invalidateRange(cpu, f, from, to)
			if f.order > m.minFolioOrder() && d.splitFolio(cpu, f) {
				next, wrapped = index, false // look again: its pieces inside the range go
			}
		}
		f.unlockFolio()
		f.put(cpu)
		if wrapped {
			break
		}
		index = next
	}
	d.debugCheck()
	return nil
}

// splitFolio models split_folio for a locked folio the caller holds one
// reference to: its buffers are freed (filemap_release_folio), its count
// frozen at the page cache's and the caller's references (folio_ref_freeze:
// a lock-free lookup meanwhile fails to take one and looks again), and the
// folio becomes 1 << (order − min) folios of the mapping's minimum order
// over the same memory and page frames, each with the flags and index marks
// it had (xas_split). f itself becomes the first piece and stays locked and
// referenced; the others hold only the page cache's reference. It reports
// whether it split; it does not under writeback, with busy buffers or with
// another reference held.
func (d *BlockDevice) splitFolio(cpu *CPU, f *Folio) bool {
	m := &d.mapping
	if f.Has(FolioWriteback) || (f.private != nil && d.tryToFreeBuffers(cpu, f) != nil) {
		return false
	}
	if !f.ref.CompareAndSwap(2, 0) {
		return false // someone else holds it (can_split_folio)
	}
	newOrder := m.minFolioOrder()
	n := 1 << (f.order - newOrder)
	step := d.m.cfg.PageSize << newOrder
	pieces := make([]*Folio, n) // a rare path: the struct pages exist in the kernel, here they are made
	pieces[0] = f
	flags := f.flags.Load() &^ FolioLocked
	for k := 1; k < n; k++ {
		p := &Folio{index: f.index + uint64(k)<<newOrder, pfn: f.pfn + uint64(k)<<newOrder, order: newOrder}
		d.m.confineFolio(p)
		if f.data != nil {
			piece := (*f.data)[k*int(step) : (k+1)*int(step) : (k+1)*int(step)]
			p.data = &piece
		}
		p.flags.Store(flags)
		p.ref.Store(1) // the page cache's
		p.mapping.Store(m, d.m.cfg.OneGoroutine)
		pieces[k] = p
	}
	if !m.index.Split(f.index, f, f.order, newOrder, func(k int) *Folio { return pieces[k] }) {
		panic("bufcache: a locked folio of the mapping is not in its index")
	}
	f.order = newOrder
	if f.data != nil {
		whole := (*f.data)[:step:step]
		f.data = &whole
	}
	if d.m.cfg.PageCacheLimit > 0 {
		for _, p := range pieces[1:] {
			d.m.folios.push(p)
		}
	}
	f.ref.Store(2) // folio_ref_unfreeze
	return true
}
