package lru

// Disable models lru_cache_disable (mm/swap.c, 5.13+; used around page migration
// and CMA allocation): it raises the disable count, so that Install does nothing
// on any CPU, then drains every CPU's LRU as InvalidateAll does (the kernel
// drains through lru_add_and_bh_lrus_drain on each CPU). Calls nest; each must be
// matched by an Enable. When Disable returns, no CPU holds an entry and none can
// gain one until the count is back to zero. Lookups still run and hit nothing.
// Safe to call from any goroutine. O(CPUs() + entries released).
//
// To model a kernel before 5.13, which had no such check, do not call Disable.
func (c *Cache[K, E]) Disable() {
	c.disabled.Add(1)
	c.InvalidateAll()
}

// Enable models lru_cache_enable (mm/swap.c, 5.13+): it lowers the disable
// count raised by Disable. It returns ErrNotDisabled, and changes nothing, when
// the count is already zero (the kernel would let it go negative). Safe to call
// from any goroutine. O(1) without contention.
func (c *Cache[K, E]) Enable() error {
	for {
		d := c.disabled.Load()
		if d == 0 {
			return ErrNotDisabled
		}
		if c.disabled.CompareAndSwap(d, d-1) {
			return nil
		}
	}
}

// Disabled reports whether the disable count is above zero (lru_cache_disabled,
// 5.13+). O(1).
func (c *Cache[K, E]) Disabled() bool { return c.disabled.Load() > 0 }
