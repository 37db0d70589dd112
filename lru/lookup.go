package lru

// Lookup models lookup_bh_lru (fs/buffer.c; the isolated-CPU test is 6.6+) on
// cpu: it looks for key in that CPU's LRU and, on a hit, moves the entry to
// slot 0 and takes the caller's reference on it.
//
// Under the CPU's lock: if the CPU is isolated, the lookup misses without
// looking (scanned = 0). Otherwise slots are examined from 0 upwards; a slot
// matches iff it is occupied and holds key. On a hit at slot i > 0 the entry
// moves to slot 0 and slots 0..i-1 move down one (a true move-to-front), and
// Hooks.Hold(e) is called before the lock is dropped: the caller's reference
// must exist before an invalidation on another goroutine can drop the LRU's.
// The caller owns that reference and must Release it.
//
// Returns the entry (the zero E on a miss), whether it hit, and the number of
// slots examined: i+1 on a hit at slot i, Size() on a miss, because the
// kernel's loop visits every slot, empty or not, before giving up.
//
// Precondition: 0 <= cpu < CPUs(), else it panics. O(Size()); allocates nothing.
func (c *Cache[K, E]) Lookup(cpu int, key K) (e E, hit bool, scanned int) {
	p := &c.cpus[cpu]
	p.lock.Lock()
	if p.isolated {
		p.lock.Unlock()
		return e, false, 0
	}
	s := p.slots[:p.n]
	for i := range s {
		if s[i].key != key {
			continue
		}
		found := s[i]
		if i > 0 {
			copy(s[1:i+1], s[:i])
			s[0] = found
		}
		c.hooks.Hold(found.e)
		p.lock.Unlock()
		return found.e, true, i + 1
	}
	p.lock.Unlock()
	return e, false, c.size
}
