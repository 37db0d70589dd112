package lru

// InvalidateAll models invalidate_bh_lrus (fs/buffer.c; its callers are
// kill_bdev — hence set_blocksize and the last close of a block device —
// invalidate_bdev and buffer migration): it empties the LRU of every CPU that
// holds at least one entry and releases every entry it removes.
//
// The kernel runs on_each_cpu_cond(has_bh_in_lru, invalidate_bh_lru, …, wait):
// the condition is evaluated for each CPU on the calling CPU, and only the CPUs
// for which it holds get a synchronous IPI whose handler brelse's every slot
// with interrupts off. Here the condition and the handler run together under
// each CPU's lock, entries are released with the lock held, and an empty CPU
// is left alone.
//
// Returns the number of CPUs that would have been interrupted (IPIs sent) and
// the number of entries released. Safe to call from any goroutine, concurrently
// with Lookup and Install on any CPU. O(CPUs() + entries released).
func (c *Cache[K, E]) InvalidateAll() (cpusInterrupted, released int) {
	for i := range c.cpus {
		if n := c.drain(&c.cpus[i]); n > 0 {
			cpusInterrupted++
			released += n
		}
	}
	return cpusInterrupted, released
}

// InvalidateCPU models invalidate_bh_lrus_cpu (5.13+, called from the
// lru_add_drain_all / lru_cache_disable drain) and buffer_exit_cpu_dead (the
// CPU hot-unplug drain): it empties cpu's LRU, releasing every entry, and
// returns how many it released. Safe to call from any goroutine.
//
// Precondition: 0 <= cpu < CPUs(), else it panics. O(entries released).
func (c *Cache[K, E]) InvalidateCPU(cpu int) (released int) {
	return c.drain(&c.cpus[cpu])
}

// drain empties p under its lock and returns the number of entries released.
func (c *Cache[K, E]) drain(p *cpuLRU[K, E]) int {
	p.lock.Lock()
	defer p.lock.Unlock()
	return c.drainLocked(p)
}

// drainLocked releases and clears p's occupied slots; p's lock is held. The
// slots are zeroed so that the cache keeps no dropped entry reachable.
func (c *Cache[K, E]) drainLocked(p *cpuLRU[K, E]) int {
	n := p.n
	for i := range n {
		c.hooks.Release(p.slots[i].e)
	}
	clear(p.slots[:n])
	p.n = 0
	return n
}
