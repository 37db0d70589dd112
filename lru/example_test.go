package lru_test

import (
	"fmt"

	"github.com/bhsim/bhsim/lru"
)

// key is what lookup_bh_lru compares: (bdev, blocknr, size).
type key struct {
	dev   string
	block int64
	size  int
}

// buffer stands for a buffer_head with its b_count.
type buffer struct {
	key   key
	count int
}

// Two CPUs; CPU 0 finds block 1 by the slow path, installs it, then hits it.
// CPU 1 never holds anything, so invalidation interrupts only CPU 0.
func Example() {
	hooks := lru.Hooks[*buffer]{
		Hold:    func(b *buffer) { b.count++ }, // get_bh
		Release: func(b *buffer) { b.count-- }, // brelse
	}
	c, err := lru.New[key](2, lru.DefaultSize, hooks)
	if err != nil {
		fmt.Println(err)
		return
	}
	bh := &buffer{key: key{dev: "loop0", block: 1, size: 512}}

	_, hit, scanned := c.Lookup(0, bh.key)
	fmt.Printf("cpu 0 lookup: hit=%t scanned=%d\n", hit, scanned)
	bh.count++ // __find_get_block_slow found it and took the caller's reference
	r, steps := c.Install(0, bh.key, bh)
	fmt.Printf("install: %v steps=%d count=%d\n", r, steps, bh.count)
	hooks.Release(bh) // the caller is done with it

	e, hit, scanned := c.Lookup(0, bh.key)
	fmt.Printf("cpu 0 lookup: hit=%t scanned=%d count=%d\n", hit, scanned, e.count)
	hooks.Release(e)

	_, hit, _ = c.Lookup(1, bh.key)
	fmt.Printf("cpu 1 lookup: hit=%t\n", hit)

	cpus, released := c.InvalidateAll()
	fmt.Printf("invalidate: cpus interrupted=%d released=%d count=%d\n", cpus, released, bh.count)
	// Output:
	// cpu 0 lookup: hit=false scanned=16
	// install: inserted steps=16 count=2
	// cpu 0 lookup: hit=true scanned=1 count=2
	// cpu 1 lookup: hit=false
	// invalidate: cpus interrupted=1 released=1 count=0
}
