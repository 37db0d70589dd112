package bufcache

import "fmt"

// tryToFreeBuffers models try_to_free_buffers + drop_buffers for a locked folio:
// fail if the folio is under writeback or any buffer is busy (b_count ≠ 0, Dirty
// or Locked); otherwise detach the ring under private_lock, cancel the folio's
// stale dirty bit and free every buffer head. A folio without buffers succeeds
// trivially. Note that a buffer held by any CPU's bh LRU has b_count ≥ 1: the
// LRU pins its page until invalidate_bh_lrus.
func (d *BlockDevice) tryToFreeBuffers(cpu *CPU, f *Folio) error {
	if f.Has(FolioWriteback) {
		return fmt.Errorf("%w: page %d is under writeback", ErrBuffersBusy, f.index)
	}
	m := &d.mapping
	cpu.count(EvPrivateLock)
	m.privateLock.Lock()
	head := f.private
	if head == nil {
		m.privateLock.Unlock()
		return nil
	}
	if busy := head.find(cpu, func(bh *BufferHead) bool { return bh.count.Load() != 0 || bh.state.Any(BHDirty|BHLock) }); busy != nil {
		m.privateLock.Unlock()
		return fmt.Errorf("%w: page %d: %v", ErrBuffersBusy, f.index, busy)
	}
	f.private = nil
	f.flags.Clear(FolioPrivate)
	m.cancelDirty(f)
	m.privateLock.Unlock()
	f.put(cpu)
	for bh := range head.ring(nil) { // drop_buffers' frees are not priced as walks
		cpu.freeBH(bh)
	}
	return nil
}

// TryToFreeBuffers models reclaim's try_to_release_folio on the cached folio at
// page index: lock it and free its buffer ring if nothing uses it. Errors:
// ErrNotCached if no folio is cached there, ErrNoBuffers if it has no buffers,
// ErrBuffersBusy (wrapped, naming the busy buffer) if a buffer is referenced —
// by a caller or by a CPU's bh LRU — dirty or locked, or the folio is under
// writeback.
func (d *BlockDevice) TryToFreeBuffers(cpu *CPU, index uint64) error {
	f := d.mapping.getFolio(cpu, index, fgpLock)
	if f == nil {
		return fmt.Errorf("%w: page %d of %s", ErrNotCached, index, d.Name())
	}
	var err error
	if f.private == nil {
		err = fmt.Errorf("%w: page %d of %s", ErrNoBuffers, index, d.Name())
	} else {
		err = d.tryToFreeBuffers(cpu, f)
	}
	f.unlockFolio()
	f.put(cpu)
	d.debugCheck()
	return err
}
