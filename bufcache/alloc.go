package bufcache

import "github.com/bhsim/bhsim/blocksize"

// allocPageBuffers models alloc_page_buffers / folio_alloc_buffers: one buffer
// head per size bytes of the folio (folio_size/size of them, for a folio of
// any order), built from the highest offset down so that the result starts
// at offset 0. Every buffer has b_blocknr NoBlock and count 0.
//
// With AllocLinear (mainline) the result is a NULL-terminated list and state is
// ignored: the caller closes the ring and sets the state in later passes. With
// AllocCircular (Sean Fu, 2017) the ring is closed here and every buffer gets
// state as it is built.
//
// size must be a power of two from 512 up to the folio's size (callers
// validate). Cost: folio_size/size allocations and links, plus one closing
// link when circular.
func (c *CPU) allocPageBuffers(f *Folio, size uint32, state BHState) *BufferHead {
	circular := c.m.cfg.Alloc == AllocCircular
	var head, tail *BufferHead
	for off := int64(c.m.cfg.PageSize)<<f.order - int64(size); off >= 0; off -= int64(size) {
		bh := c.allocBH(f, off)
		bh.thisPage = head
		c.count(EvRingLink)
		bh.setBlockNr(NoBlock)
		bh.size = size
		bh.folio = f
		bh.offset = uint32(off)
		if circular && state != 0 {
			bh.state.Set(state)
		}
		if tail == nil {
			tail = bh
		}
		head = bh
	}
	if circular {
		tail.thisPage = head
		c.count(EvRingLink)
	}
	return head
}

// closeRing is the tail walk every mainline caller of alloc_page_buffers makes
// (link_dev_buffers; create_empty_buffers' first pass, which also ORs state into
// each buffer): follow the list to its last buffer and point it back at head. On
// an AllocCircular machine the ring is already closed and nothing is walked.
func (c *CPU) closeRing(head *BufferHead, state BHState) {
	if c.m.cfg.Alloc == AllocCircular {
		return
	}
	bh := head // a NULL-terminated list, not yet a ring: BufferHead.ring does not apply
	for {
		c.count(EvRingWalk)
		if state != 0 {
			bh.state.Set(state)
		}
		if bh.thisPage == nil {
			break
		}
		bh = bh.thisPage
	}
	bh.thisPage = head
	c.count(EvRingLink)
}

// attachBuffers models attach_page_private / folio_attach_private: the ring
// becomes folio->private, PG_private is set and the ring holds a folio
// reference. The caller holds private_lock and the folio lock.
func (c *CPU) attachBuffers(f *Folio, head *BufferHead) {
	f.get(c)
	f.flags.Set(FolioPrivate)
	f.private = head
}

// linkDevBuffers models link_dev_buffers: close the ring and attach it. The
// caller holds private_lock.
func (c *CPU) linkDevBuffers(f *Folio, head *BufferHead) {
	c.closeRing(head, 0)
	c.attachBuffers(f, head)
}

// initPageBuffers models init_page_buffers (folio_init_buffers from 6.7): give
// every unmapped buffer of the ring, in ring order, the device and the block
// numbers from the folio's first, folio_pos / size; make it Uptodate if the
// folio is; and map it only if its block lies before the device's end for
// this size (blkdev_max_block). Buffers already mapped are left alone. It
// returns that end block. The caller holds the folio lock (and private_lock
// when the ring is new).
func (d *BlockDevice) initPageBuffers(cpu *CPU, f *Folio, head *BufferHead, size uint32) uint64 {
	end := d.endBlock(size)
	uptodate := f.Has(FolioUptodate)
	block := blocksize.Geometry{PageShift: d.m.pageShift, BlkBits: uint8(blocksize.Log2(size))}.FirstBlock(blocksize.PageIndex(f.index))
	for bh := range head.ring(cpu) {
		if !bh.Has(BHMapped) {
			cpu.count(EvBHInit)
			bh.endIO = endNone
			bh.bdev.Store(d, d.m.cfg.OneGoroutine)
			bh.setBlockNr(uint64(block))
			if uptodate {
				bh.setBit(cpu, BHUptodate)
			}
			if uint64(block) < end {
				bh.setBit(cpu, BHMapped)
			}
		}
		block++
	}
	return end
}

// endBlock models blkdev_max_block: the first block number at or past the end
// of the device for blocks of size bytes.
func (d *BlockDevice) endBlock(size uint32) uint64 {
	g := blocksize.Geometry{PageShift: d.m.pageShift, BlkBits: uint8(blocksize.Log2(size))}
	return uint64(g.EndBlock(d.size))
}
