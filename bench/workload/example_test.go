package workload_test

import (
	"fmt"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/bufcache"
)

// Tosatti's module on the model: the loop device has 4 KiB blocks, so asking
// for (bdev, 1, 512) never hits the LRU.
func ExampleLookupModule_Run() {
	s := workload.PostedLookupModule()
	s.Loops = 1000
	r, _ := s.Run()
	p := timing.X86Server()
	fmt.Printf("block size %d; __find_get_block found %d, LRU hits %d, %.1f sim-ns/call\n",
		r.BlockSize, r.Find.Found, r.Find.Events[bufcache.EvLRUHit], p.SimNS(r.Find.Events, 0)/1000)
	fmt.Printf("__find_get_block_slow found %d, %.1f sim-ns/call\n",
		r.Slow.Found, p.SimNS(r.Slow.Events, 0)/1000)
	// Output:
	// block size 4096; __find_get_block found 1000, LRU hits 0, 69.0 sim-ns/call
	// __find_get_block_slow found 1000, 38.5 sim-ns/call
}
