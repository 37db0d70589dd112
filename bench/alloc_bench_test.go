package bench

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/bufcache"
)

// allocFixedBytes is the file the simulated figures of AllocExperiment
// write and read back cold: 64 MiB.
const allocFixedBytes = 64 << 20

// allocWriteTest returns the thread's writetest on kernel k with bounded
// memory: the page cache holds 1024 folios and writeback starts at 256 dirty
// ones (reclaim's walks over the rings it frees add to both variants'
// ring-walks alike).
func allocWriteTest(k engine.Kernel, bytes uint64) workload.WriteTest {
	w := workload.PostedWriteTest(k, 1)
	w.Bytes, w.PageCacheLimit, w.DirtyLimit = bytes, 1024, 256
	return w
}

// BenchmarkAllocExperiment is the alloc_page_buffers thread's writetest in
// both clocks, with each variant of alloc_page_buffers (kernel 4.12: the
// linear list its callers close; 4.12-circular: Sean Fu's patch). One op is
// one of writetest's 1 MiB write(2)s into a file of 1 KiB blocks (its
// indirect blocks allocated as it grows), or one 1 MiB read(2) from a cold
// cache (readahead and the indirect blocks by bread, from a metadata-only
// disk that need not have been written); ns/op and MB/s are Go's
// time for the model's work (the write's includes the writeback the writer's
// goroutine does for the flusher); the file restarts at 4 GiB. The simulated
// figures come from a separate writetest of allocFixedBytes, run once per
// process: sim-ns/page is the program's CPU under the uncalibrated x86-2017
// profile, the buffer-head path alone without ext3's unmodelled work (the
// thread fits that); ring-walks and rings per page are the counts the
// variants differ by. The raw ring build is bufcache's
// BenchmarkAllocPageBuffers.
func BenchmarkAllocExperiment(b *testing.B) {
	p := timing.X86Desktop2017()
	for _, kernel := range []string{"4.12", "4.12-circular"} {
		for _, op := range []string{"write", "read"} {
			b.Run(fmt.Sprintf("kernel=%s/op=%s", kernel, op), func(b *testing.B) {
				k := engine.MustKernel(kernel)
				w := allocWriteTest(k, 4<<30)
				run, err := w.Start()
				require.NoError(b, err)
				b.SetBytes(int64(w.IOSize))
				for b.Loop() {
					if run.Pos()+w.IOSize > w.Bytes {
						run.Rewind()
					}
					if op == "write" {
						err = run.Write(w.IOSize)
					} else {
						err = run.Read(w.IOSize, true)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				reportFixed(b, "AllocExperiment/"+kernel+"/"+op, func() ([]metric, error) {
					r, err := allocWriteTest(k, allocFixedBytes).Run()
					if err != nil {
						return nil, err
					}
					ph := r.Write
					if op == "read" {
						ph = r.ReadCold
					}
					return []metric{{p.SimNS(ph.Events, 0) / ph.Pages(), "sim-ns/page"},
						{ph.PerPage(bufcache.EvRingWalk), "ring-walks/page"}, {ph.Rings() / ph.Pages(), "rings/page"}}, nil
				})
			})
		}
	}
}
