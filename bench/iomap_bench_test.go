package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/threads"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/speedtest"
)

// iomapFixedBytes is what the simulated figures of IomapWrite write: 256 MiB
// of dd at the sub-benchmark's bs.
const iomapFixedBytes = 256 << 20

// iomapDD returns Xu Yang's dd for kernel k and bs onto a metadata-only page
// cache over his SSD model, with a disk large enough for a long benchmark.
// The page cache holds 1024 folios and writeback starts at 256 dirty ones, so
// a long benchmark keeps bounded memory and recycles folios and buffers (the
// steady state of a long dd) while its working set stays in the CPU's caches.
func iomapDD(k engine.Kernel, bs uint64) workload.DD {
	dd := workload.IMX8BoardDD(k, bs, 1)
	dd.DiskBytes = 1 << 40
	dd.PageCacheLimit, dd.DirtyLimit = 1024, 256
	return dd
}

// BenchmarkIomapWrite is the iomap thread's dd sweep in both clocks, for
// each kernel of Xu Yang's table and each bs. One op is one write(2) of bs
// bytes, as dd does, from one reused user buffer that the pre-fault really
// touches: Go's throughput (MB/s) falls with bs for 6.6 as the pre-fault
// touches more user pages per page written. The simulated figures come from
// a separate dd of iomapFixedBytes at that bs on his board's own page
// cache (not iomapDD's small one), run once per process on the clock and
// closed by dd's sync: user pages pre-faulted per page written, sim-MB/s
// under the uncalibrated IMX8Board profile, bios per page.
func BenchmarkIomapWrite(b *testing.B) {
	p := timing.IMX8Board()
	for _, name := range []string{"6.6", "6.6-revert", "6.6-fix"} {
		for _, bs := range threads.IomapBS() {
			b.Run(fmt.Sprintf("kernel=%s/bs=%s", name, scenario.FormatDDSize(bs)), func(b *testing.B) {
				dd := iomapDD(engine.MustKernel(name), bs)
				run, err := dd.Start()
				require.NoError(b, err)
				b.SetBytes(int64(bs))
				for b.Loop() {
					if err := run.Block(); err != nil {
						b.Fatal(err)
					}
				}
				reportFixed(b, "IomapWrite/"+name+"/"+scenario.FormatDDSize(bs), func() ([]metric, error) {
					fixed := workload.IMX8BoardDD(engine.MustKernel(name), bs, 1) // his board's page cache, not the loop's small one
					fixed.Count = (iomapFixedBytes + bs - 1) / bs
					r, err := fixed.OnClock(context.Background(), p, nil)
					if err != nil {
						return nil, err
					}
					return []metric{{r.PerPage(timing.Ev(bufcache.EvFaultInPage)), "faultin-pages/page"}, {r.MBps, "sim-MB/s"},
						{r.PerPage(timing.Ev(bufcache.EvBioSubmit)), "bios/page"}}, nil
				})
			})
		}
	}
}

// iomapWriter returns a function that writes 16 MiB or a little more (whole
// blocks of bs) with Xu Yang's dd pattern through kernel k's write path
// (iomapDD), and the bytes each call writes.
func iomapWriter(tb testing.TB, k engine.Kernel, bs uint64) (func(), float64) {
	run, err := iomapDD(k, bs).Start()
	require.NoError(tb, err)
	blocks := (16<<20 + bs - 1) / bs
	return func() {
		for range blocks {
			if err := run.Block(); err != nil {
				tb.Fatal(err)
			}
		}
	}, float64(blocks * bs)
}

// TestIomapWriteCostVsBlockSize measures, in the same run, real Go time per
// byte written at bs=4500K against bs=400K: for 6.6 the pre-fault of up to
// 2 MiB per page makes it at least 1.15× slower; the revert and the fix stay
// within ±10 %. The ratio is the median of 29 rounds of 16 MiB a side, each
// side's time divided by the bytes it wrote (4500K blocks write 18 MiB).
//
// Until 2026-12-03 the test took 7 rounds of 64 MiB a side and compared time
// per call, so 4500K's 66 MiB stood against 400K's 64 and every ratio came
// out 3 % high; the bound for 6.6 was 1.3, set on a VM whose write path ran
// at about 235 µs/MiB, where 6.6 measured 1.40–1.52. On 2026-12-03 the same
// VM ran it at 350–460 µs/MiB for minutes at a time: the pre-fault's cost
// stayed, the rest of the write path (page cache, buffers, bios) slowed, and
// single 64 MiB rounds ranged 0.95–1.58, so the median of seven fell to
// 1.24–1.31 and failed CI. With the rounds above the same VM measured, three
// runs: 6.6 1.26, 1.28, 1.28 (quartiles 1.24–1.32), revert 1.00, 1.00, 1.01,
// fix 1.01, 1.00, 0.99.
func TestIomapWriteCostVsBlockSize(t *testing.T) {
	speedtest.Require(t)
	for _, tc := range []struct {
		kernel   string
		min, max float64
	}{
		{"6.6", 1.15, 100},
		{"6.6-revert", 0.9, 1.1},
		{"6.6-fix", 0.9, 1.1},
	} {
		k := engine.MustKernel(tc.kernel)
		big, bigBytes := iomapWriter(t, k, 4500<<10)
		small, smallBytes := iomapWriter(t, k, 400<<10)
		big() // warm up
		small()
		perCall, bigNS, smallNS := speedtest.Ratio(big, small, 1, 29)
		ratio := perCall * smallBytes / bigBytes
		t.Logf("%s: %.0f ns/MiB at 4500K, %.0f at 400K: ratio %.2f", tc.kernel, bigNS/bigBytes*(1<<20), smallNS/smallBytes*(1<<20), ratio)
		if ratio < tc.min || ratio > tc.max {
			t.Errorf("%s: real time per byte at 4500K / 400K = %.2f, want in [%.2f, %.2f]", tc.kernel, ratio, tc.min, tc.max)
		}
	}
}
