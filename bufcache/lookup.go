package bufcache

import (
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/lru"
)

// FindGetBlockSlow models __find_get_block_slow (v4.x–v6.15; its atomic form
// from v6.16): find the buffer of block in the page cache without the LRU.
// The page index comes from i_blkbits; the folio spanning it is looked up
// lock-free and marked accessed (FGP_ACCESSED); under private_lock the ring
// is walked from its head for a mapped buffer whose b_blocknr is block, which
// gets a reference. It returns nil if the folio is absent, has no buffers, or
// holds no such mapped buffer; the last case, when every buffer was mapped,
// is the kernel's "failed" diagnostic and counts EvFindSlowFailed. The
// buffer's size is not compared: the caller gets whatever buffer of the
// current block size carries that number.
//
// Cost: one index lookup (levels grow with the page index on an xarray), two
// folio reference operations, one private_lock round trip and a ring walk of at
// most folio_size/blocksize steps. It does not allocate.
func (d *BlockDevice) FindGetBlockSlow(cpu *CPU, block uint64) *BufferHead {
	return d.findGetBlockSlow(cpu, block, true)
}

// FindGetBlockSlowNonatomic models __find_get_block_slow(bdev, block, false)
// (v6.16+): FindGetBlockSlow serialised with try_to_free_buffers by the folio
// lock (folio_lock, EvFolioLock, which may sleep: it waits for a holder)
// instead of private_lock. Cost: as FindGetBlockSlow, with a folio lock round
// trip in place of the spin lock's. The caller must not hold the lock of the
// folio holding block.
func (d *BlockDevice) FindGetBlockSlowNonatomic(cpu *CPU, block uint64) *BufferHead {
	return d.findGetBlockSlow(cpu, block, false)
}

// findGetBlockSlow is __find_get_block_slow with its v6.16 atomic argument.
func (d *BlockDevice) findGetBlockSlow(cpu *CPU, block uint64, atomic bool) *BufferHead {
	m := &d.mapping
	// __filemap_get_folio(FGP_ACCESSED): the lock-free lookup and
	// folio_mark_accessed, without getFolio's creating and locking branches
	// (the hot path of every LRU miss).
	f := m.lookup(cpu, uint64(d.Geometry().PageIndex(blocksize.Block(block))))
	if f == nil {
		return nil
	}
	f.markAccessed(cpu)
	var found *BufferHead
	allMapped := true
	if atomic {
		cpu.count(EvPrivateLock)
		m.privateLock.Lock()
	} else {
		f.lockFolio(cpu)
	}
	if head := f.private; head != nil {
		found = head.find(cpu, func(bh *BufferHead) bool {
			if !bh.Has(BHMapped) {
				allMapped = false
				return false
			}
			return bh.BlockNr() == block
		})
		if found != nil {
			found.get(cpu)
		} else if allMapped {
			cpu.count(EvFindSlowFailed)
		}
	}
	if atomic {
		m.privateLock.Unlock()
	} else {
		f.unlockFolio()
	}
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
	return d.findGetBlock(cpu, block, size, true)
}

// FindGetBlockNonatomic models __find_get_block_nonatomic (v6.16+), the lookup
// for callers that may sleep: FindGetBlock with FindGetBlockSlowNonatomic as
// its slow path (find_get_block_common with atomic false). The LRU part is
// the same.
func (d *BlockDevice) FindGetBlockNonatomic(cpu *CPU, block uint64, size uint32) *BufferHead {
	return d.findGetBlock(cpu, block, size, false)
}

// findGetBlockBlocking is the lookup bdev_getblk and __getblk_slow make with
// a gfp that may sleep: __find_get_block up to v6.15,
// __find_get_block_nonatomic with LookupNonatomic.
func (d *BlockDevice) findGetBlockBlocking(cpu *CPU, block uint64, size uint32) *BufferHead {
	return d.findGetBlock(cpu, block, size, d.m.cfg.Lookup != LookupNonatomic)
}

// findGetBlock models find_get_block_common (v6.16; __find_get_block before).
func (d *BlockDevice) findGetBlock(cpu *CPU, block uint64, size uint32, atomic bool) *BufferHead {
	c := d.m.lru
	if c == nil {
		return d.findGetBlockSlow(cpu, block, atomic)
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
	bh = d.findGetBlockSlow(cpu, block, atomic)
	if bh != nil {
		d.lruInstall(cpu, bh)
	}
	return bh
}

// lruInstall models bh_lru_install for a buffer the caller holds, counting the
// cascade, the LRU's own reference and any eviction.
func (d *BlockDevice) lruInstall(cpu *CPU, bh *BufferHead) {
	cpu.count(EvLRUInstall)
	r, steps := d.m.lru.Install(cpu.id, lruKey{d, bh.BlockNr(), bh.size}, bh)
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
