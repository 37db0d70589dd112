package workload

import (
	"context"
	"testing"
)

// BenchmarkRun1MRandomWrite runs the workload: a million random
// 4 KiB writes on 4 CPUs over a 1 GiB device, each iteration the whole
// run. The simulated figures are the same every iteration.
func BenchmarkRun1MRandomWrite(b *testing.B) {
	g, err := ParseGenerator("random:dev=1G,n=1000000,size=4K,cpus=4,seed=7")
	if err != nil {
		b.Fatal(err)
	}
	w, err := GenWorkload(g)
	if err != nil {
		b.Fatal(err)
	}
	var r *RunResult
	b.ReportAllocs()
	for b.Loop() {
		if r, err = Run(context.Background(), w, RunOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(r.MBps, "sim-MB/s")
	lat, _ := r.Kind("write")
	b.ReportMetric(float64(lat.Latency.P99NS), "sim-p99-ns")
}
