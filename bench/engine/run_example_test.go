package engine_test

import (
	"context"
	"fmt"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/source"
)

// Run a seeded generator on four CPUs and read its distributions: the
// header names the seed and the profile; the same seed gives the same
// figures on every machine.
func ExampleRun() {
	g, err := source.ParseGenerator("random:dev=64M,n=20000,size=4K,reads=0.5,cpus=4,seed=7")
	if err != nil {
		panic(err)
	}
	w, err := engine.GenWorkload(g)
	if err != nil {
		panic(err)
	}
	r, err := engine.Run(context.Background(), w, engine.RunOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Print(r.Header())
	rd, _ := r.Kind("read")
	fmt.Printf("%d reads: p50 %.1f µs, p99 %.1f µs, %.2f requests each\n", rd.Ops,
		float64(rd.Latency.P50NS)/1e3, float64(rd.Latency.P99NS)/1e3, rd.RequestsPerOp)
	fmt.Printf("bound: %s\n", r.Bound.Resource)
	// Output:
	// workload random:dev=64M,n=20000,size=4K,align=4K,reads=0.5,cpus=4,qd=1,seed=7 (gen), seed 7
	// model: kernel 6.18, 4 CPUs + flusher and kswapd, queue depth 1, access auto, 64M device (logical blocks of 512 bytes, block size 4096), 2G of memory
	// timing: profile x86-server, built-in costs (CPU events); disk ssd (requests) served in order; writers paced by balance_dirty_pages
	// 9979 reads: p50 9.7 µs, p99 499.7 µs, 0.67 requests each
	// bound: disk (ssd)
}
