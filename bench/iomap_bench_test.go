package bench

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/speedtest"
)

// iomapOpBytes is what one op of the iomap benchmarks writes.
const iomapOpBytes = 64 << 20

// iomapWriter returns a function that writes iomapOpBytes with Xu Yang's dd
// pattern (write(2)s of bs bytes at consecutive positions from one reused
// user buffer, really touched by the pre-fault) through kernel k's write
// path onto a metadata-only page cache over his SSD model, and the run. The
// page cache holds 1024 folios and writeback starts at 256 dirty ones, so a
// long benchmark keeps bounded memory and recycles folios and buffers (the
// steady state of a long dd) while its working set stays in the CPU's caches.
func iomapWriter(tb testing.TB, k WritePreset, bs uint64) (func(), *DDRun) {
	dd := XuYangDD(k, bs, 1)
	dd.DiskBytes = 1 << 40 // room for many ops
	dd.PageCacheLimit, dd.DirtyLimit = 1024, 256
	run, err := dd.Start()
	require.NoError(tb, err)
	blocks := (iomapOpBytes + bs - 1) / bs
	return func() {
		for range blocks {
			if err := run.Block(); err != nil {
				tb.Fatal(err)
			}
		}
	}, run
}

// BenchmarkIomapWrite is Xu Yang's dd sweep (seed 002) in both clocks: per
// op 64 MiB written as dd does, for each kernel of his table and each bs. Go's
// throughput (SetBytes) falls with bs for 6.6 as the pre-fault touches more
// user pages per page written; sim-MB/s is the model's figure under the
// uncalibrated XuYangBoard profile (writeback is finished off the clock).
func BenchmarkIomapWrite(b *testing.B) {
	p := XuYangBoard()
	for _, k := range WritePresets() {
		for _, bs := range XuYangBS() {
			b.Run(fmt.Sprintf("kernel=%s/bs=%dK", k.Name, bs>>10), func(b *testing.B) {
				write, run := iomapWriter(b, k, bs)
				b.SetBytes(iomapOpBytes)
				for b.Loop() {
					write()
				}
				b.StopTimer()
				r, err := run.Close()
				require.NoError(b, err)
				b.ReportMetric(r.FaultInPerPage(), "faultin-pages/page")
				b.ReportMetric(r.MBps(p), "sim-MB/s")
				b.ReportMetric(float64(r.CPU[0][bufcache.EvBioSubmit]+r.CPU[1][bufcache.EvBioSubmit])/r.Pages(), "bios/page")
			})
		}
	}
}

// TestIomapWriteCostVsBlockSize measures, in the same run, real Go time per MiB
// written at bs=4500K against bs=400K: for 6.6 the pre-fault of up to 2 MiB
// per page makes it at least 1.5× slower; the revert and the fix stay within
// ±20 %.
func TestIomapWriteCostVsBlockSize(t *testing.T) {
	speedtest.Require(t)
	for _, tc := range []struct {
		kernel   string
		min, max float64
	}{
		{"6.6", 1.5, 100},
		{"6.6-revert", 0.8, 1.2},
		{"6.6-fix", 0.8, 1.2},
	} {
		k, err := WritePresetByName(tc.kernel)
		require.NoError(t, err)
		big, _ := iomapWriter(t, k, 4500<<10)
		small, _ := iomapWriter(t, k, 400<<10)
		big() // warm up
		small()
		ratio, bigNS, smallNS := speedtest.Ratio(big, small, 1, 7)
		t.Logf("%s: %.0f ns/MiB at 4500K, %.0f at 400K: ratio %.2f", tc.kernel, bigNS/64, smallNS/64, ratio)
		if ratio < tc.min || ratio > tc.max {
			t.Errorf("%s: real time per MiB at 4500K / 400K = %.2f, want in [%.2f, %.2f]", tc.kernel, ratio, tc.min, tc.max)
		}
	}
}
