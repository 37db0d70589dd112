package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/bhsim/bhsim/bench/source"
)

// benchGenerator runs the generator spec, each iteration the whole run,
// and returns the last run's result. The simulated figures are the same
// every iteration.
func benchGenerator(b *testing.B, spec string) *RunResult {
	g, err := source.ParseGenerator(spec)
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
	return r
}

// BenchmarkRun1MRandomWrite runs the workload: a million random
// 4 KiB writes on 4 CPUs over a 1 GiB device.
func BenchmarkRun1MRandomWrite(b *testing.B) {
	r := benchGenerator(b, "random:dev=1G,n=1000000,size=4K,cpus=4,seed=7")
	lat, _ := r.Kind("write")
	b.ReportMetric(float64(lat.Latency.P99NS), "sim-p99-ns")
}

// BenchmarkRun1MRandomMix is the workload of the 1M-record CSV
// trace: a million random 4 KiB records, 30 % of them reads, on 4 CPUs
// over a 1 GiB device. A CPU whose read waits for the disk gathers records
// while the others run on.
func BenchmarkRun1MRandomMix(b *testing.B) {
	benchGenerator(b, "random:dev=1G,n=1000000,size=4K,reads=0.3,cpus=4,seed=7")
}

// BenchmarkRun1MRandomWriteCSV is BenchmarkRun1MRandomWrite's workload
// read from a CSV trace as it streams out of the generator (through a
// pipe): the trace readers' cost on top of the run.
func BenchmarkRun1MRandomWriteCSV(b *testing.B) {
	g, err := source.ParseGenerator("random:dev=1G,n=1000000,size=4K,cpus=4,seed=7")
	if err != nil {
		b.Fatal(err)
	}
	w := Workload{Name: "gen.csv", Kind: "trace (csv)", DeviceSize: 1 << 30, CPUs: 4, Open: func() (source.IOReader, error) {
		pr, pw := io.Pipe()
		gen, err := source.NewGenerator(g)
		if err != nil {
			return nil, err
		}
		go func() {
			_, err := source.WriteCSV(pw, gen)
			pw.CloseWithError(err)
		}()
		return source.NewCSVReader(pr), nil
	}}
	var r *RunResult
	b.ReportAllocs()
	for b.Loop() {
		if r, err = Run(context.Background(), w, RunOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(r.MBps, "sim-MB/s")
}

// BenchmarkTraceWorkloadCSV is TraceWorkload's pass over CSV traces of
// 100,000 and 1,000,000 random 4 KiB records (written by WriteCSV to a
// file): the parsing, and the summing and holding of the records. The
// larger is read in parts at once (source.OpenTraceParts) on a machine of
// two CPUs or more.
func BenchmarkTraceWorkloadCSV(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			g, err := source.ParseGenerator(fmt.Sprintf("random:dev=1G,n=%d,size=4K,reads=0.3,cpus=4,seed=7", n))
			if err != nil {
				b.Fatal(err)
			}
			gen, err := source.NewGenerator(g)
			if err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(b.TempDir(), "t.csv")
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := source.WriteCSV(f, gen); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				w, err := TraceWorkload(path, TraceDevice{Size: 1 << 30})
				if err != nil {
					b.Fatal(err)
				}
				if w.Records != uint64(n) {
					b.Fatalf("%d records", w.Records)
				}
			}
		})
	}
}
