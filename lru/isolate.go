package lru

// SetIsolated marks cpu isolated or not, as cpu_is_isolated reports (6.6+,
// "fs/buffer.c: disable per-CPU buffer_head cache for isolated CPUs"): a CPU
// given to nohz_full or isolcpus, or in an isolated cpuset partition. On an
// isolated CPU Lookup always misses and Install does nothing, so no
// invalidate_bh_lrus IPI ever needs to disturb it — the point of Tosatti's
// change for real-time guests.
//
// Isolating a CPU also empties its LRU, releasing every entry: in the kernel a
// CPU is isolated before it runs the workload, so it never holds entries, and
// the model reaches that state however it was set up. Safe to call from any
// goroutine. To model a kernel before 6.6, do not isolate any CPU.
//
// Precondition: 0 <= cpu < CPUs(), else it panics. O(entries released).
func (c *Cache[K, E]) SetIsolated(cpu int, isolated bool) {
	p := &c.cpus[cpu]
	p.lock.Lock()
	defer p.lock.Unlock()
	p.isolated = isolated
	if isolated {
		c.drainLocked(p)
	}
}

// Isolated reports whether cpu is isolated (see SetIsolated). Safe to call from
// any goroutine.
//
// Precondition: 0 <= cpu < CPUs(), else it panics. O(1).
func (c *Cache[K, E]) Isolated(cpu int) bool {
	p := &c.cpus[cpu]
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.isolated
}
