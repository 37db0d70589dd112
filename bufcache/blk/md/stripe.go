package md

import (
	"math/bits"
	"slices"
	"sync"

	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/freelist"
)

// sectorsPerUnit is the number of 512-byte sectors in a stripe unit
// (STRIPE_SECTORS).
const sectorsPerUnit = pageSize >> blk.SectorShift

// fullUnit is the coverage bitmap of a wholly overwritten unit: every sector.
const fullUnit = 1<<sectorsPerUnit - 1

// stripeHead models struct stripe_head (drivers/md/raid5.h, v5.10) as a RAID6
// write uses it: the PAGE_SIZE-wide unit at one member offset on every member
// of a stripe row, the writes attached to it and, with data, its pages. It
// lives from the first write attached to it until it has been handled; then it
// returns to the free list.
type stripeHead struct {
	row, unit uint64
	next      *stripeHead // hash chain (stripe_hashtbl)
	// list is the pending list the stripe waits on, or nil while a batch
	// handles it; b is that batch.
	list *stripeList
	b    *batch
	data bool // the attached writes carry data (all of them, or none)
	// cover is, per data unit, a bitmap of the 512-byte sectors the attached
	// writes overwrite; fullUnit is add_stripe_bio's R5_OVERWRITE.
	cover []uint8
	// writes are the attached bio pieces in the order they came: the data
	// units' towrite lists.
	writes []stripeWrite
	pages  []byte // with data: one page per member (the r5devs' pages)

	// Handling state, owned by b.
	rmw  bool  // read-modify-write; otherwise reconstruct-write
	step step  // where the handling is
	err  error // the first member error, guarded by b.mu
}

// stripeWrite is one piece of a bio attached to a stripe: bytes [lo, hi) of
// data unit k, which come from offset off of the bio's payload.
type stripeWrite struct {
	r      *request
	k      uint32
	lo, hi uint32
	off    uint32
}

// page returns sh's page for member dev, or nil for a metadata-only stripe.
func (sh *stripeHead) page(dev int) []byte {
	if !sh.data {
		return nil
	}
	o := dev * pageSize
	return sh.pages[o : o+pageSize : o+pageSize]
}

// stripeList holds the stripe_heads a submitter attached writes to and has not
// yet released for handling: struct raid5_plug_cb's list when registered on a
// plug, or the list an unplugged Submit handles once it has attached its bio.
type stripeList struct {
	a       *Array
	stripes []*stripeHead // in the order of their first attachment
	plugged bool          // registered on a plug; otherwise an unplugged Submit's
}

// Unplug implements blk.PlugCallback: raid5_unplug (v5.10), which releases
// the plug's stripes to raid5d, and raid5d handling them (see Array.unplug).
func (l *stripeList) Unplug(*blk.Plug) { l.a.unplug(l) }

// newStripeList is the constructor the array gives blk.Plug.CheckPlugged: a
// list from the free list of the array key.
func newStripeList(key any) blk.PlugCallback { return key.(*Array).takeList(true) }

// stripeCache models r5conf's stripe cache (v5.10): at most size stripe_heads,
// found by a hash of their position, recycled through a free list (the
// inactive list).
type stripeCache struct {
	// mu is conf->device_lock and the hash locks in one: it guards everything
	// below, and every stripe_head's list, b, data, cover and writes.
	mu sync.Mutex
	// wait is signalled when stripe_heads are released: wait_for_stripe and
	// wait_for_overlap.
	wait     sync.Cond
	size     int  // stripe_cache_size
	made     int  // stripe_heads allocated so far (grow_stripes, on demand)
	unitBits uint // log2 of the units in a chunk

	hash    []*stripeHead             // chains by position; a power of two ≥ size
	free    freelist.List[stripeHead] // handled stripe_heads, ready for reuse
	plugged []*stripeList             // the lists registered on plugs
	lists   freelist.List[stripeList] // free lists
	batches freelist.List[batch]      // free batches
}

// init sizes the cache for size stripe_heads of a chunk of 1<<unitBits units.
func (c *stripeCache) init(size int, unitBits uint) {
	c.wait.L = &c.mu
	c.size, c.unitBits = size, unitBits
	c.hash = make([]*stripeHead, 1<<bits.Len(uint(size-1)))
}

// bucket returns the hash chain of position (row, unit): stripe_hash.
func (c *stripeCache) bucket(row, unit uint64) **stripeHead {
	return &c.hash[(row<<c.unitBits|unit)&uint64(len(c.hash)-1)]
}

// find returns the stripe_head in use at (row, unit), or nil: __find_stripe.
// O(chain).
func (c *stripeCache) find(row, unit uint64) *stripeHead {
	for sh := *c.bucket(row, unit); sh != nil; sh = sh.next {
		if sh.row == row && sh.unit == unit {
			return sh
		}
	}
	return nil
}

// alloc takes a stripe_head for (row, unit) from the free list, or makes one
// while fewer than size exist, and hashes it (get_free_stripe, init_stripe).
// It returns nil when all size are in use. nd is the number of data units.
func (c *stripeCache) alloc(row, unit uint64, nd int) *stripeHead {
	sh := c.free.Get()
	if sh == nil {
		if c.made >= c.size {
			return nil
		}
		c.made++
		sh = &stripeHead{cover: make([]uint8, nd)}
	}
	sh.row, sh.unit = row, unit
	b := c.bucket(row, unit)
	sh.next, *b = *b, sh
	return sh
}

// release unhashes a handled stripe_head and returns it to the free list,
// empty. The model keeps no data in free stripe_heads (see the package doc).
func (c *stripeCache) release(sh *stripeHead) {
	p := c.bucket(sh.row, sh.unit)
	for *p != sh {
		p = &(*p).next
	}
	*p = sh.next
	clear(sh.cover)
	clear(sh.writes)
	sh.next, sh.list, sh.b, sh.err, sh.step, sh.writes = nil, nil, nil, nil, stepNew, sh.writes[:0]
	c.free.Put(sh)
}

// takeList returns an empty stripe list from the free list or a new one,
// registered as a plug's if plugged.
func (a *Array) takeList(plugged bool) *stripeList {
	c := &a.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.lists.Get()
	if l == nil {
		l = &stripeList{a: a}
	}
	l.plugged = plugged
	if plugged {
		c.plugged = append(c.plugged, l)
	}
	return l
}

// writeStripes models raid5_make_request for a write (v5.10): it attaches r's
// bio to the stripe_head of every PAGE_SIZE unit it touches, in array order
// (one add_stripe_bio per unit), then releases the stripes: into the started
// plug p, whose flush hands them to the handler, or, with no plug, to the
// handler at once. O(units touched) plus the handling.
func (a *Array) writeStripes(p *blk.Plug, r *request) {
	r.pending.Store(1)
	nd := a.dataDisks()
	unitMask := uint64(a.ChunkSize()) - 1
	var own *stripeList // the unplugged submission's list
	for off := r.start &^ (pageSize - 1); off < r.end; off += pageSize {
		c := off >> a.chunkShift
		w := stripeWrite{r: r, k: uint32(c % nd), lo: uint32(max(r.start, off) - off), hi: uint32(min(r.end, off+pageSize) - off)}
		w.off = uint32(off + uint64(w.lo) - r.start)
		own = a.addStripeBio(p, own, c/nd, off&unitMask>>pageShift, w)
	}
	if own != nil {
		a.unplug(own)
	}
	r.done(nil)
}

// addStripeBio attaches w to the stripe_head of position (row, unit):
// raid5_get_active_stripe, add_stripe_bio and release_stripe_plug (v5.10). The
// stripe waits on the array's list registered on p, or, with p nil or not
// started, on own, the unplugged submission's list, which it makes if own is
// nil; it returns own as it now is. When the attachment must wait it first
// does what the kernel's sleeping submitter would cause:
//
//   - no free stripe_head (raid5_get_active_stripe sleeps): release the
//     submitter's own stripes (its plug is flushed), or, if it has none, handle
//     the stripes waiting in another plug, or wait for a stripe to be freed;
//   - w overlaps a write waiting in the stripe, or mixes data and
//     metadata-only writes in it (add_stripe_bio's overlap, then schedule()):
//     flush the submitter's plug, which handles the stripe;
//   - the stripe waits in another plug: handle it first;
//   - the stripe is being handled, or waits in another unplugged Submit that
//     is still attaching: wait until it is freed, after handling the
//     submitter's own unplugged stripes, so that two submitters never wait for
//     each other.
//
// O(1) per attachment apart from that.
func (a *Array) addStripeBio(p *blk.Plug, own *stripeList, row, unit uint64, w stripeWrite) *stripeList {
	c := &a.cache
	n := (w.hi - w.lo) >> blk.SectorShift
	sectors := uint8(fullUnit>>(sectorsPerUnit-n)) << (w.lo >> blk.SectorShift)
	for {
		l := own
		if cb := p.CheckPlugged(a, newStripeList); cb != nil {
			l = cb.(*stripeList)
		} else if l == nil {
			l = a.takeList(false)
			own = l
		}
		c.mu.Lock()
		sh := c.find(row, unit)
		if sh == nil {
			if sh = c.alloc(row, unit, int(a.dataDisks())); sh != nil {
				sh.data, sh.list = w.r.data, l
				l.stripes = append(l.stripes, sh)
			}
		}
		switch {
		case sh == nil:
			if len(l.stripes) > 0 {
				c.mu.Unlock()
				own = a.release(p, l)
			} else if v := c.victim(); v != nil {
				b := a.newBatch()
				for _, vs := range v.stripes {
					b.adopt(vs)
				}
				clear(v.stripes)
				v.stripes = v.stripes[:0]
				c.mu.Unlock()
				b.run()
			} else {
				a.waitForStripes()
				c.mu.Unlock()
			}
		case sh.b != nil || sh.list != l && !sh.list.plugged:
			if !l.plugged && len(l.stripes) > 0 {
				c.mu.Unlock()
				own = a.release(p, l)
			} else {
				a.waitForStripes()
				c.mu.Unlock()
			}
		case sh.list != l:
			v := sh.list
			i := slices.Index(v.stripes, sh)
			v.stripes = slices.Delete(v.stripes, i, i+1)
			b := a.newBatch()
			b.adopt(sh)
			c.mu.Unlock()
			b.run()
		case sh.data != w.r.data || sh.cover[w.k]&sectors != 0:
			c.mu.Unlock()
			own = a.release(p, l)
		default:
			sh.cover[w.k] |= sectors
			sh.writes = append(sh.writes, w)
			w.r.pending.Add(1)
			w.r.t.StripeAttach++
			c.mu.Unlock()
			return own
		}
	}
}

// waitForStripes waits, with the cache's mu held, until another goroutine
// releases stripe_heads (wait_for_stripe, wait_for_overlap). A confined
// array has no other goroutine, so it panics instead of waiting for ever.
func (a *Array) waitForStripes() {
	if a.confined {
		panic("md: a confined array must wait for stripe_heads only another goroutine holds")
	}
	a.cache.wait.Wait()
}

// victim returns a plug's list holding stripes, or nil. c.mu is held.
func (c *stripeCache) victim() *stripeList {
	for _, l := range c.plugged {
		if len(l.stripes) > 0 {
			return l
		}
	}
	return nil
}

// release hands the submitter's own waiting stripes, l, to the handler, as a
// sleeping task does: a plug's by flushing p (the whole plug, as schedule()
// does), an unplugged Submit's by handling l. It returns the unplugged
// submission's list as it now is: none.
func (a *Array) release(p *blk.Plug, l *stripeList) *stripeList {
	if l.plugged {
		p.Flush()
	} else {
		a.unplug(l)
	}
	return nil
}

// unplug models raid5_unplug (v5.10) and the raid5d pass that follows: the
// stripes waiting on l are handed to the handler and handled in one batch, in
// the order they were first attached to; l returns to the free list.
func (a *Array) unplug(l *stripeList) {
	c := &a.cache
	c.mu.Lock()
	b := a.newBatch()
	for _, sh := range l.stripes {
		b.adopt(sh)
	}
	clear(l.stripes)
	l.stripes = l.stripes[:0]
	if l.plugged {
		i := slices.Index(c.plugged, l)
		c.plugged = slices.Delete(c.plugged, i, i+1)
	}
	c.lists.Put(l)
	c.mu.Unlock()
	b.run()
}
