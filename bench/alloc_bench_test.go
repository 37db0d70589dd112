package bench

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
)

// allocOpBytes is what one op of BenchmarkAllocExperiment writes or reads.
const allocOpBytes = 64 << 20

// BenchmarkAllocExperiment is Sean Fu's writetest (seed 003) in both clocks:
// per op 64 MiB written (write(2)s of 1 MiB into a file of 1 KiB blocks, its
// indirect blocks allocated as it grows) or read from a cold cache (readahead
// and the indirect blocks by bread), with each alloc_page_buffers variant.
// ns/op and MB/s are Go's time for the model's work (the write's includes the
// writeback the writer's goroutine does for the flusher); sim-ns/page is the
// program's CPU under the uncalibrated x86-2017 profile, the buffer-head path
// alone without ext3's unmodelled work (ReproduceAlloc fits that); ring-walks
// and rings per page are the counts the variants differ by. The page cache
// holds 1024 folios and writeback starts at 256 dirty ones, so a long run
// keeps bounded memory (reclaim's walks over the rings it frees add to both
// variants' ring-walks alike); the file restarts at 4 GiB. The raw ring build
// is bufcache's BenchmarkAllocPageBuffers.
func BenchmarkAllocExperiment(b *testing.B) {
	p := X86Desktop2017()
	for _, v := range []bufcache.AllocVariant{bufcache.AllocLinear, bufcache.AllocCircular} {
		for _, op := range []string{"write", "read"} {
			b.Run(fmt.Sprintf("variant=%s/op=%s", v, op), func(b *testing.B) {
				w := SeanFuWriteTest(v, 1)
				w.Bytes, w.PageCacheLimit, w.DirtyLimit = 4<<30, 1024, 256
				run, err := w.Start()
				require.NoError(b, err)
				b.SetBytes(allocOpBytes)
				var ev bufcache.Counters
				ops := 0
				for b.Loop() {
					if run.Pos()+allocOpBytes > w.Bytes {
						run.Rewind()
					}
					before := run.Events()
					if op == "write" {
						err = run.Write(allocOpBytes)
					} else {
						err = run.Read(allocOpBytes, true)
					}
					if err != nil {
						b.Fatal(err)
					}
					ev = ev.Add(run.Events().Sub(before))
					ops++
				}
				ph := Phase{Bytes: uint64(ops) * allocOpBytes, Events: ev, BuffersPerPage: 4}
				b.ReportMetric(p.SimNS(ev, 0)/ph.Pages(), "sim-ns/page")
				b.ReportMetric(ph.PerPage(bufcache.EvRingWalk), "ring-walks/page")
				b.ReportMetric(ph.Rings()/ph.Pages(), "rings/page")
			})
		}
	}
}
