package workload_test

import (
	"context"
	"fmt"

	"github.com/bhsim/bhsim/bench/engine"
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

// A Helios4 dd on RAID6 on the engine's clock: 64 MiB written at 512-byte
// buffers (5.10.10) and at 4096-byte buffers (the revert). 64 MiB stays
// below the background threshold, so the last close writes it all back,
// raid5d handling the stripes.
func ExampleDD_OnClock() {
	for _, k := range []string{"5.10.10", "5.10.10+revert"} {
		d := workload.Helios4DD(workload.LayoutRaid6, engine.MustKernel(k), false)
		d.Count = 64
		r, err := d.OnClock(context.Background(), timing.Helios4(), nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s, %.1f MB/s, the close %.0f ms\n", k, r.Array, r.MBps, r.LastCloseNS/1e6)
	}
	// Output:
	// 5.10.10: raid6 of 4 disks, 512 KiB chunks, 49.9 MB/s, the close 1099 ms
	// 5.10.10+revert: raid6 of 4 disks, 512 KiB chunks, 124.1 MB/s, the close 325 ms
}
