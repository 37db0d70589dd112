package bufcache

import (
	"github.com/bhsim/bhsim/internal/conc"
)

// reclaimBatch is how many folios one reclaim pass tries to free
// (SWAP_CLUSTER_MAX).
const reclaimBatch = 32

// folioLRU is the machine's reclaim order, kept only when the page cache has a
// limit: cached folios oldest first, a simplified inactive LRU list. An entry
// records the folio's generation; a folio freed and reused since (a new
// generation) makes the old entry stale, and reclaim drops it.
//
// The list is a ring of entries whose length is a power of two: push writes
// after the newest, pop takes the oldest and clears its slot, and a full ring
// doubles. Nothing is moved or cleared but the entries themselves (a slice
// consumed from its front had to be compacted, copied and cleared again).
type folioLRU struct {
	mu   conc.Mutex
	q    []lruEntry // len(q) is 0 or a power of two
	head int        // index of the oldest entry
	n    int        // entries, stale ones included
}

type lruEntry struct {
	f   *Folio
	gen uint64
}

// minLRU is the ring's first length.
const minLRU = 1024

// push appends f, the newest folio.
func (l *folioLRU) push(f *Folio) {
	l.mu.Lock()
	l.pushLocked(f)
	l.mu.Unlock()
}

// pushLocked is push for a caller holding l.mu.
func (l *folioLRU) pushLocked(f *Folio) {
	if l.n == len(l.q) {
		l.grow()
	}
	l.q[(l.head+l.n)&(len(l.q)-1)] = lruEntry{f, f.gen.Load()}
	l.n++
}

// grow doubles the full ring (or makes its first), oldest entry first.
func (l *folioLRU) grow() {
	q := make([]lruEntry, max(2*len(l.q), minLRU))
	k := copy(q, l.q[l.head:])
	copy(q[k:], l.q[:l.head])
	l.q, l.head = q, 0
}

// popLocked returns the oldest folio whose entry is current, or nil. The
// caller holds l.mu.
func (l *folioLRU) popLocked() *Folio {
	for l.n > 0 {
		e := l.q[l.head]
		l.q[l.head] = lruEntry{}
		l.head, l.n = (l.head+1)&(len(l.q)-1), l.n-1
		if e.f.gen.Load() == e.gen {
			return e.f
		}
	}
	return nil
}

// reclaimFor reclaims a batch for an allocation on cpu that found the page
// cache full: on kswapd's CPU with Config.Kswapd, else on cpu (direct
// reclaim).
func (m *Machine) reclaimFor(cpu *CPU) {
	if !m.cfg.Kswapd {
		m.reclaim(cpu, reclaimBatch)
		return
	}
	m.kswapdMu.Lock()
	k := m.cpus[m.cfg.KswapdCPU]
	m.reclaim(k, reclaimBatch)
	k.handOver(cpu)
	m.kswapdMu.Unlock()
}

// reclaim models reclaim of the page cache (shrink_folio_list on the
// inactive list, simplified): walk the folios oldest first, give referenced
// ones a second chance, skip locked, dirty, under-writeback or otherwise
// referenced ones, and free the rest — their buffers through
// try_to_free_buffers, then the folio. If the pass freed fewer than wanted,
// start writeback of the devices whose dirty folios it met (the kernel wakes
// the flusher; reclaimWriteback, which never waits for a folio lock) and
// make one more pass. It runs on cpu — the allocating CPU,
// or kswapd's (reclaimFor) — and returns the folios freed.
//
// A pass holds the list's lock throughout: one acquisition per pass instead of
// two per folio (the kernel, too, isolates a batch under one lru_lock hold).
// Nothing a pass calls takes the list's lock; another CPU that creates a folio
// meanwhile waits for the pass to end to add it.
func (m *Machine) reclaim(cpu *CPU, want int) int {
	freed := 0
	var devs [4]*BlockDevice
	l := &m.folios
	for pass := 0; pass < 2 && freed < want; pass++ {
		dirty := devs[:0]
		l.mu.Lock()
		for scan := l.n; scan > 0 && freed < want; scan-- {
			f := l.popLocked()
			if f == nil {
				break
			}
			mp := f.mapping.Load()
			if mp == nil || !f.tryGet(cpu) {
				continue // left the page cache: drop it from the list
			}
			switch d := mp.dev; {
			case f.mapping.Load() != mp:
				f.put(cpu)
				continue
			case f.flags.TestAndClear(FolioReferenced):
				l.pushLocked(f) // second chance
			case f.Has(FolioDirty) || f.Has(FolioWriteback):
				if f.Has(FolioDirty) && !containsDev(dirty, d) {
					dirty = append(dirty, d)
				}
				l.pushLocked(f)
			case !f.tryLockFolio():
				l.pushLocked(f)
			case d.evictFolio(cpu, f): // freed: no unlock, no put
				freed++
				continue
			default:
				l.pushLocked(f)
				f.unlockFolio()
			}
			f.put(cpu)
		}
		l.mu.Unlock()
		for _, d := range dirty {
			d.reclaimWriteback(cpu)
		}
	}
	return freed
}

func containsDev(ds []*BlockDevice, d *BlockDevice) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

// evictFolio removes a locked, clean folio that the caller holds one reference
// to from the page cache and frees it, if nobody else uses it: its buffers
// must be freeable and its only other references the page cache's and the
// ring's. It reports whether it did; the caller then neither unlocks nor puts
// the folio, which is gone.
//
// As __remove_mapping does, it freezes the count (folio_ref_freeze: from the
// two expected references to zero, in one compare-and-swap, counted as one
// EvFolioPut when it succeeds) before it takes the folio out of the index: a
// lock-free lookup that comes in between cannot take a reference
// (folio_try_get fails on zero) and looks again, so nobody ever holds a folio
// reclaim removed.
func (d *BlockDevice) evictFolio(cpu *CPU, f *Folio) bool {
	want := int32(2) // the page cache's and ours
	if f.private != nil {
		want++
	}
	if f.Has(FolioDirty) || f.Has(FolioWriteback) || f.ref.Load() != want || f.mapping.Load() != &d.mapping {
		return false
	}
	if d.tryToFreeBuffers(cpu, f) != nil {
		return false
	}
	if !f.ref.CompareAndSwap(2, 0) {
		return false // referenced since the check: keep it, without its buffers
	}
	cpu.count(EvFolioPut)
	// The kernel re-tests PG_dirty after the freeze, under xa_lock. Here
	// nothing can dirty the folio: it is locked, has no buffers, and its
	// count is zero.
	if !d.mapping.unlink(cpu, f) {
		panic("bufcache: a locked folio of the mapping is not in its index")
	}
	f.unlockFolio()
	cpu.freeFolio(f)
	return true
}
