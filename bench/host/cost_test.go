package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/speedtest"
	"github.com/bhsim/bhsim/iomap"
)

// ddVsKernel are the scenarios of the model-against-kernel speed comparison:
// dd's stream of 4 KiB pwrites into pages not yet cached, then fsync, on a
// 64 MiB loop device whose block size is set to 4K and to 512 (data mode:
// the bytes are copied and stored).
var ddVsKernel = []string{"dd-bs4k", "dd-bs512"}

// ddCost is one scenario ready to run on the model: the scenario, its
// recorded kernel result and its pwrite line.
type ddCost struct {
	s        *scenario.Scenario
	recorded *scenario.Result
	write    scenario.Write
}

func loadDDCost(tb testing.TB, name string) ddCost {
	tb.Helper()
	s, err := scenario.ParseFile(filepath.Join(scenarioDir, name+".scn"))
	require.NoError(tb, err)
	rec, err := scenario.ReadResultFile(filepath.Join(kernelDir, name+".json"))
	require.NoError(tb, err)
	require.Len(tb, s.Ops, 6, "open, blkbszset, blkbszget, pwrite, fsync, close")
	w, ok := s.Ops[3].(scenario.Write)
	require.True(tb, ok, "operation 4 is the pwrite stream")
	_, ok = s.Ops[4].(scenario.Fsync)
	require.True(tb, ok, "operation 5 is the fsync")
	return ddCost{s: s, recorded: rec, write: w}
}

// pages is the number of 4 KiB pages the pwrite stream writes.
func (c ddCost) pages() float64 { return float64(c.write.Len*int64(c.write.Repeat)) / 4096 }

// kernelNSPerPage is the calling thread's CPU time of the pwrite calls and
// the fsync of result r, per page written.
func (c ddCost) kernelNSPerPage(tb testing.TB, r *scenario.Result) float64 {
	tb.Helper()
	w, f := r.Ops[3].CPU, r.Ops[4].CPU
	require.NotNil(tb, w, "the result carries the pwrites' CPU time")
	require.NotNil(tb, f, "the result carries the fsync's CPU time")
	return (w.MeanNs*float64(r.Ops[3].Calls) + f.MeanNs) / c.pages()
}

// modelDD is the scenario's device on a fresh 6.18 machine, opened and set
// to the scenario's block size, before the pwrites.
type modelDD struct {
	cpu *bufcache.CPU
	f   *bufcache.File
	buf *bufcache.UserBuf
	it  bufcache.IovIter
}

// newModelDD builds the machine: a loop queue with the recorded limits over a
// memory disk, the file opened read-write and the block size set.
func (c ddCost) newModelDD(tb testing.TB) *modelDD {
	tb.Helper()
	q := c.recorded.Queue
	lim, err := blk.LoopLimitsFrom(engine.QueueAttrs(q))
	require.NoError(tb, err)
	mem, err := blk.NewMemDisk("loop8", uint64(c.s.Device.Size), lim.LogicalBlockSize)
	require.NoError(tb, err)
	queue, err := blk.NewQueue("loop8", mem, blk.Null{}, lim)
	require.NoError(tb, err)
	m, err := bufcache.NewMachine(bufcache.Linux618(bufcache.Config{WriteIter: iomap.Writer(iomap.Linux618), OneGoroutine: true}))
	require.NoError(tb, err)
	d, err := m.AddDisk(queue, bufcache.DeviceOptions{ReadAheadKB: uint32(q.ReadAheadKB)})
	require.NoError(tb, err)
	cpu := m.CPU(0)
	f, err := d.Open(cpu, bufcache.ORdWr)
	require.NoError(tb, err)
	require.NoError(tb, f.SetBlocksize(cpu, int(c.s.Ops[1].(scenario.SetBlockSize).Size)))
	data := make([]byte, c.write.Len)
	for i := range data {
		data[i] = c.write.Fill
	}
	return &modelDD{cpu: cpu, f: f, buf: bufcache.NewUserBuf(data, 0, m.PageSize())}
}

// writeSync makes the scenario's pwrites and its fsync.
func (d *modelDD) writeSync(tb testing.TB, w scenario.Write) {
	for i := range w.Repeat {
		if err := d.it.Reset(d.buf, 0, uint64(w.Len)); err != nil {
			tb.Fatal(err)
		}
		if _, err := d.f.Pwrite(d.cpu, uint64(w.Off+int64(i)*w.Len), &d.it); err != nil {
			tb.Fatal(err)
		}
	}
	if err := d.f.Fsync(d.cpu); err != nil {
		tb.Fatal(err)
	}
}

// dropCaches empties the page cache of the device (BLKFLSBUF: everything
// is clean after the fsync), so that the next pwrites find no page cached,
// as on the kernel's fresh device, while the machine's free lists stay warm,
// as the kernel's page allocator is.
func (d *modelDD) dropCaches(tb testing.TB) {
	if err := d.f.FlushBuffers(d.cpu); err != nil {
		tb.Fatal(err)
	}
}

// timedWriteSync drops the caches, then returns the Go time of the pwrites
// and the fsync.
func (d *modelDD) timedWriteSync(tb testing.TB, w scenario.Write) time.Duration {
	d.dropCaches(tb)
	start := time.Now()
	d.writeSync(tb, w)
	return time.Since(start)
}

// modelNSPerPage is the median, over rounds, of the Go time of the pwrites
// and the fsync per page, on one machine warmed by one round.
func (c ddCost) modelNSPerPage(tb testing.TB, rounds int) float64 {
	tb.Helper()
	d := c.newModelDD(tb)
	d.writeSync(tb, c.write)
	var ns []float64
	for range rounds {
		ns = append(ns, float64(d.timedWriteSync(tb, c.write).Nanoseconds())/c.pages())
	}
	slices.Sort(ns)
	return ns[len(ns)/2]
}

// TestDDWriteVsKernelSameWork checks that the measured rounds do the
// scenario's work: the events of the pwrites and the fsync on a warm machine
// whose caches were dropped are those on a fresh machine, for both block
// sizes.
func TestDDWriteVsKernelSameWork(t *testing.T) {
	for _, name := range ddVsKernel {
		t.Run(name, func(t *testing.T) {
			c := loadDDCost(t, name)
			fresh := c.newModelDD(t)
			setup := fresh.cpu.Events() // the device's open and BLKBSZSET
			fresh.writeSync(t, c.write)
			want := fresh.cpu.Events().Sub(setup)
			require.NotZero(t, want[bufcache.EvBioSubmit])
			warm := c.newModelDD(t)
			warm.writeSync(t, c.write)
			for range 3 {
				warm.dropCaches(t)
				before := warm.cpu.Events()
				warm.writeSync(t, c.write)
				assert.Equal(t, want, warm.cpu.Events().Sub(before), "a warm round's events")
			}
		})
	}
}

// TestDDWriteCostVsKernel compares, per page, the model's Go time for dd's
// pwrite stream and fsync (ddVsKernel) with the kernel's CPU time for the
// same scenario: the recording in testdata/kernel/6.18 always, and the host
// kernel's, measured in the same run through Run, when BHSIM_KERNEL=1 and
// the host runner can run. The model runs warm (modelNSPerPage;
// TestDDWriteVsKernelSameWork checks a warm round does a fresh machine's
// work) and includes its disk's copy of the data, which the kernel's thread
// time does not (the loop worker writes the backing file). Issue 17 aims at
// a ratio of at most 0.5; the bound asserted leaves room for a busy machine
// (the model's median over 31 rounds against a kernel mean). Only the
// same-run ratio is asserted: the recorded kernel ran on another day, and
// this VM's speed moves 2–3× between hours (dd-bs512's model measured 2727
// and 8179 ns/page on 2026-12-03, an hour apart, with nothing else running),
// so the recorded ratio is reported, not judged.
func TestDDWriteCostVsKernel(t *testing.T) {
	speedtest.Require(t)
	const bound = 0.75
	live := os.Getenv("BHSIM_KERNEL") == "1" && Check() == nil
	for _, name := range ddVsKernel {
		t.Run(name, func(t *testing.T) {
			c := loadDDCost(t, name)
			recorded := c.kernelNSPerPage(t, c.recorded)
			model := c.modelNSPerPage(t, 31)
			t.Logf("%s: model %.0f ns/page, recorded kernel (%s) %.0f ns/page: ratio %.2f",
				name, model, c.recorded.Kernel, recorded, model/recorded)
			if !live {
				t.Skip("host kernel not measured: set BHSIM_KERNEL=1 as root for the same-run ratio")
			}
			r, err := Run(context.Background(), c.s, Options{Runs: 5, NoSignalHandler: true})
			require.NoError(t, err)
			host := c.kernelNSPerPage(t, r)
			model = c.modelNSPerPage(t, 31)
			t.Logf("%s: model %.0f ns/page, host kernel (%s) %.0f ns/page, same run: ratio %.2f",
				name, model, r.Kernel, host, model/host)
			assert.LessOrEqual(t, model/host, bound, "model against the host kernel")
		})
	}
}

// BenchmarkDDWriteVsKernel runs dd's pwrite stream and fsync of ddVsKernel
// on one model machine, its caches dropped before each op: ns/page is Go's
// time per page written and synced (the drop excluded; ns/op includes it), kernel-ns/page the recorded kernel's CPU
// time for the same scenario (testdata/kernel/6.18), vs-kernel their ratio.
func BenchmarkDDWriteVsKernel(b *testing.B) {
	for _, name := range ddVsKernel {
		b.Run(fmt.Sprintf("scenario=%s", name), func(b *testing.B) {
			c := loadDDCost(b, name)
			recorded := c.kernelNSPerPage(b, c.recorded)
			b.SetBytes(c.write.Len * int64(c.write.Repeat))
			b.ReportAllocs()
			var elapsed time.Duration
			d := c.newModelDD(b)
			d.writeSync(b, c.write)
			for b.Loop() {
				elapsed += d.timedWriteSync(b, c.write)
			}
			perPage := float64(elapsed.Nanoseconds()) / float64(b.N) / c.pages()
			b.ReportMetric(perPage, "ns/page")
			b.ReportMetric(recorded, "kernel-ns/page")
			b.ReportMetric(perPage/recorded, "vs-kernel")
		})
	}
}
