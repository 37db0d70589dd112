package lru

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"
)

// DefaultSize is BH_LRU_SIZE from v3.18 on: the number of buffer_heads each
// CPU's LRU holds ("fs/buffer.c: increase the buffer-head per-CPU LRU size",
// Sebastien Buisson).
const DefaultSize = 16

// OldSize is BH_LRU_SIZE before v3.18.
const OldSize = 8

// Hooks are the reference operations the cache performs on its entries. For
// buffer_heads, Hold is get_bh (b_count++) and Release is brelse (b_count--).
//
// Hold is called with the CPU's lock held; Release is called with it held by
// the invalidations (their kernel counterpart runs in the IPI handler, with
// interrupts off) and after it is dropped by Install. Neither may call back
// into the Cache, block or panic: the lock is not reentrant, and the hot paths
// do not defer its release. Both may run on any goroutine that invalidates, so
// when entries are shared between CPUs their counts must be safe for
// concurrent use (the kernel's b_count is an atomic_t).
type Hooks[E any] struct {
	// Hold takes one reference on the entry (get_bh).
	Hold func(E)
	// Release drops one reference on the entry (brelse / put_bh).
	Release func(E)
}

// Cache models the kernel's per-CPU buffer_head LRU (fs/buffer.c: bh_lrus) as a
// set of per-CPU LRUs of Size slots each, generic in the lookup key K and the
// entry E. For buffer_heads K is (bdev, blocknr, size), the triple the kernel
// compares, and E is the *BufferHead.
//
// Concurrency: each simulated CPU must be driven (Lookup, Install) by one
// goroutine at a time; different CPUs may be driven in parallel. InvalidateAll,
// InvalidateCPU, Disable, Enable, SetIsolated, the inspection methods and Check
// may be called from any goroutine at any time. Every method that takes a cpu
// requires 0 <= cpu < CPUs() and panics otherwise: a simulated CPU passes its
// own number, as the kernel uses smp_processor_id().
//
// Reference counting (which bufcache's Machine.Check verifies): the cache
// holds one reference, taken with Hooks.Hold, on every entry in every CPU's
// LRU, and drops it with Hooks.Release when the entry leaves that LRU. So an
// entry's count equals the callers' references plus Holds(e).
type Cache[K comparable, E comparable] struct {
	cpus     []cpuLRU[K, E]
	size     int
	hooks    Hooks[E]
	disabled atomic.Int32 // lru_disable_count (5.13+)
}

// New returns a cache of cpus per-CPU LRUs of size slots each, all empty, not
// disabled and with no CPU isolated. Use DefaultSize to model v3.18 and later,
// OldSize for earlier kernels; any size >= 1 is allowed for experiments.
//
// Errors: ErrCPUs if cpus < 1; ErrSize if size < 1, or if all CPUs' slots
// would take more than 2^47 bytes (the int range on 32-bit platforms); ErrHooks
// if hooks.Hold or hooks.Release is nil. Each is wrapped with the offending
// values. Complexity: O(cpus × size) time and memory.
func New[K comparable, E comparable](cpus, size int, hooks Hooks[E]) (*Cache[K, E], error) {
	if cpus < 1 {
		return nil, fmt.Errorf("%w: got %d", ErrCPUs, cpus)
	}
	if size < 1 {
		return nil, fmt.Errorf("%w: got %d", ErrSize, size)
	}
	if hooks.Hold == nil || hooks.Release == nil {
		return nil, fmt.Errorf("%w: Hold set %t, Release set %t", ErrHooks, hooks.Hold != nil, hooks.Release != nil)
	}
	var s slot[K, E]
	slotBytes := unsafe.Sizeof(s)
	pad, maxSlots := padSlots(slotBytes), math.MaxInt
	if slotBytes > 0 {
		maxSlots = int(maxSlotBytes / slotBytes)
	}
	if size > maxSlots/cpus-pad {
		return nil, fmt.Errorf("%w: %d CPUs × %d slots of %d bytes is too many", ErrSize, cpus, size, slotBytes)
	}
	c := &Cache[K, E]{
		cpus:  newCPULRUs[K, E](cpus, size, size+pad),
		size:  size,
		hooks: hooks,
	}
	return c, nil
}

// Size returns the number of slots in each CPU's LRU (BH_LRU_SIZE). O(1).
func (c *Cache[K, E]) Size() int { return c.size }

// CPUs returns the number of simulated CPUs. O(1).
func (c *Cache[K, E]) CPUs() int { return len(c.cpus) }
