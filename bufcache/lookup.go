package bufcache

import "github.com/bhsim/bhsim/lru"

// FindGetBlockSlow models __find_get_block_slow (v4.x–v6.14): find the buffer
// of block in the page cache without the LRU. The page index comes from
// i_blkbits; the folio is looked up lock-free and marked accessed
// (FGP_ACCESSED); under private_lock the ring is walked from its head for a
// mapped buffer whose b_blocknr is block, which gets a reference. It returns nil
// if the folio is absent, has no buffers, or holds no such mapped buffer; the
// last case, when every buffer was mapped, is the kernel's "failed" diagnostic
// and counts EvFindSlowFailed. The buffer's size is not compared: the caller
// gets whatever buffer of the current block size carries that number.
//
// Cost: one index lookup (levels grow with the page index on an xarray), two
// folio reference operations, one private_lock round trip and a ring walk of at
// most PAGE_SIZE/blocksize steps. It does not allocate.
func (d *BlockDevice) FindGetBlockSlow(cpu *CPU, block uint64) *BufferHead {
	m := &d.mapping
	f := m.getFolio(cpu, d.Geometry().PageIndex(block), fgpAccessed)
	if f == nil {
		return nil
	}
	var found *BufferHead
	allMapped := true
	cpu.count(EvPrivateLock)
	m.privateLock.Lock()
	if head := f.private; head != nil {
		found = head.find(cpu, func(bh *BufferHead) bool {
			if !bh.Has(BHMapped) {
				allMapped = false
				return false
			}
			return bh.blocknr == block
		})
		if found != nil {
			found.get(cpu)
		} else if allMapped {
			cpu.count(EvFindSlowFailed)
		}
	}
	m.privateLock.Unlock()
	f.put(cpu)
	return found
}

// FindGetBlock models __find_get_block: look block up in this CPU's bh LRU by
// (device, block, size); on a hit mark its folio accessed (touch_buffer); on a
// miss take the slow path and, if it found a buffer, install that buffer in the
// LRU. The result carries a reference the caller drops with Brelse. With
// LRURemoved it is FindGetBlockSlow alone (Tosatti's patch). On a CPU isolated
// with Machine.SetIsolated (6.6+), the LRU is neither searched nor filled.
//
// The LRU compares (device, block, size) as the kernel does, with the device
// read from the buffer at lookup time: a buffer discarded by a truncate that
// raced with an install (b_bdev cleared) stays pinned in that LRU until the next
// invalidation but no longer matches.
//
// Note, as in the kernel, that the LRU matches size but the slow path does not:
// asking for a size other than the device's block size misses the LRU every
// time and still returns a buffer of the device's block size.
func (d *BlockDevice) FindGetBlock(cpu *CPU, block uint64, size uint32) *BufferHead {
	c := d.m.lru
	if c == nil {
		return d.FindGetBlockSlow(cpu, block)
	}
	cpu.count(EvLRULookup)
	bh, hit, scanned := c.Lookup(cpu.id, lruKey{d, block, size})
	cpu.countN(EvLRUSlot, scanned)
	if hit {
		cpu.count(EvBHGet)
		if bh.bdev.Load() == d { // a discarded buffer (b_bdev cleared) no longer matches
			cpu.count(EvLRUHit)
			bh.folio.markAccessed(cpu)
			return bh
		}
		Brelse(cpu, bh)
	}
	bh = d.FindGetBlockSlow(cpu, block)
	if bh != nil {
		d.lruInstall(cpu, bh)
	}
	return bh
}

// lruInstall models bh_lru_install for a buffer the caller holds, counting the
// cascade, the LRU's own reference and any eviction.
func (d *BlockDevice) lruInstall(cpu *CPU, bh *BufferHead) {
	cpu.count(EvLRUInstall)
	r, steps := d.m.lru.Install(cpu.id, lruKey{d, bh.blocknr, bh.size}, bh)
	cpu.countN(EvLRUStep, steps)
	switch r {
	case lru.InstallInserted:
		cpu.count(EvBHGet)
	case lru.InstallInsertedEvicted:
		cpu.count(EvBHGet)
		cpu.count(EvLRUEvict)
		cpu.count(EvBHPut)
	}
}
