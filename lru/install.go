package lru

import "github.com/bhsim/bhsim/internal/enum"

// InstallResult says what Install did.
type InstallResult uint8

// The outcomes of Install.
const (
	// InstallInserted: the entry was not in the LRU and now holds slot 0; a
	// free slot absorbed the shift, nothing was evicted.
	InstallInserted InstallResult = iota
	// InstallInsertedEvicted: as InstallInserted, but the LRU was full and the
	// entry in the last slot was pushed out and released.
	InstallInsertedEvicted
	// InstallMoved: the entry was already in the LRU and moved to slot 0; no
	// reference changed.
	InstallMoved
	// InstallSkippedDisabled: nothing done, the cache is disabled
	// (lru_cache_disabled, 5.13+).
	InstallSkippedDisabled
	// InstallSkippedIsolated: nothing done, the CPU is isolated (6.6+).
	InstallSkippedIsolated
)

// installResultNames names the results for String.
var installResultNames = enum.New[InstallResult]("InstallResult", []string{
	InstallInserted:        "inserted",
	InstallInsertedEvicted: "inserted+evicted",
	InstallMoved:           "moved",
	InstallSkippedDisabled: "skipped-disabled",
	InstallSkippedIsolated: "skipped-isolated",
}...)

// String returns a short lower-case name such as "inserted+evicted", or
// "InstallResult(n)" for a value outside the constants.
func (r InstallResult) String() string { return installResultNames.String(r) }

// Install models bh_lru_install (fs/buffer.c; the lru_cache_disabled test is
// 5.13+, the isolated-CPU test 6.6+): it makes e, found under key, the most
// recent entry of cpu's LRU. The kernel calls it only after a lookup missed the
// LRU and __find_get_block_slow found the buffer in the page cache.
//
// Under the CPU's lock: if the cache is disabled, or else the CPU is isolated,
// nothing happens (steps = 0). Otherwise the swap cascade runs: the kernel
// carries e from slot to slot, swapping it with each slot's content, until it
// meets e again or runs off the end. Its effect, which this method produces by
// shifting slots directly:
//   - e already in slot i (compared by identity, ==): e moves to slot 0, slots
//     0..i-1 move down one, no reference changes; steps = i+1.
//   - e absent: e takes slot 0, every occupied slot moves down one, and
//     Hooks.Hold(e) takes the LRU's reference before the lock is dropped; if the
//     LRU was full, the entry pushed out of the last slot is released with
//     Hooks.Release after the lock is dropped (brelse outside the
//     interrupts-off region); steps = Size(), as the kernel's loop visits every
//     slot.
//
// Precondition: key is e's key at install time. The cache keeps that key, while
// the kernel reads (b_bdev, b_blocknr, b_size) from the buffer at every lookup:
// a buffer discarded by a truncate that raced with its install keeps its slot
// with b_bdev cleared and stops matching. So a key may appear twice on a CPU —
// the stale entry and, in front of it, the block's new entry — and Lookup
// returns the front-most match; a caller whose keys can go stale validates the
// entry it gets back. Precondition: 0 <= cpu < CPUs(), else it panics.
// O(Size()); allocates nothing.
func (c *Cache[K, E]) Install(cpu int, key K, e E) (r InstallResult, steps int) {
	r, steps, evicted := c.cascade(&c.cpus[cpu], key, e)
	if r == InstallInsertedEvicted {
		c.hooks.Release(evicted)
	}
	return r, steps
}

// cascade is the locked part of Install; it returns the evicted entry for the
// caller to release once the lock is dropped. Like Lookup, it unlocks by hand
// rather than with defer: these are the hot paths.
func (c *Cache[K, E]) cascade(p *cpuLRU[K, E], key K, e E) (r InstallResult, steps int, evicted E) {
	p.lock.Lock()
	switch {
	case c.disabled.Load() > 0:
		p.lock.Unlock()
		return InstallSkippedDisabled, 0, evicted
	case p.isolated:
		p.lock.Unlock()
		return InstallSkippedIsolated, 0, evicted
	}
	s := p.slots
	for i := range p.n {
		if s[i].e == e {
			copy(s[1:i+1], s[:i])
			s[0] = slot[K, E]{key, e}
			p.lock.Unlock()
			return InstallMoved, i + 1, evicted
		}
	}
	r, shifted := InstallInserted, p.n
	if shifted == len(s) {
		shifted--
		evicted = s[shifted].e
		r = InstallInsertedEvicted
	} else {
		p.n++
	}
	copy(s[1:shifted+1], s[:shifted])
	s[0] = slot[K, E]{key, e}
	c.hooks.Hold(e)
	p.lock.Unlock()
	return r, len(s), evicted
}
