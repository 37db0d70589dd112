package lru

// Len returns the number of entries in cpu's LRU. Safe to call from any
// goroutine.
//
// Precondition: 0 <= cpu < CPUs(), else it panics. O(1).
func (c *Cache[K, E]) Len(cpu int) int {
	p := &c.cpus[cpu]
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.n
}

// Entries returns a copy of cpu's entries in slot order, most recent first, for
// tests and explanations; it allocates. Safe to call from any goroutine.
//
// Precondition: 0 <= cpu < CPUs(), else it panics. O(Size()).
func (c *Cache[K, E]) Entries(cpu int) []E {
	p := &c.cpus[cpu]
	p.lock.Lock()
	defer p.lock.Unlock()
	out := make([]E, p.n)
	for i := range out {
		out[i] = p.slots[i].e
	}
	return out
}

// Holds returns how many CPUs' LRUs hold e, hence how many references the cache
// owns on it: an entry's reference count must be at least Holds(e) (b_count >=
// holds). Safe to call from any goroutine; the answer is exact only while no
// CPU is being driven. O(CPUs() × Size()).
func (c *Cache[K, E]) Holds(e E) int {
	holds := 0
	for i := range c.cpus {
		if c.holds(&c.cpus[i], e) {
			holds++
		}
	}
	return holds
}

// holds reports whether p's LRU holds e.
func (c *Cache[K, E]) holds(p *cpuLRU[K, E], e E) bool {
	p.lock.Lock()
	defer p.lock.Unlock()
	for _, s := range p.slots[:p.n] {
		if s.e == e {
			return true
		}
	}
	return false
}
