package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/blocksize"
)

// updateGolden rewrites the step mode's golden files.
var updateGolden = flag.Bool("update", false, "rewrite testdata/step/*.golden")

// csvWorkload is a CSV trace text as a workload on a device of dev bytes
// with lbs-byte logical blocks.
func csvWorkload(name, text string, dev uint64, lbs uint32, cpus int) Workload {
	return Workload{Name: name, Kind: "trace (csv)", DeviceSize: dev, LogicalBlockSize: lbs, CPUs: cpus,
		Open: func() (source.IOReader, error) { return source.NewCSVReader(strings.NewReader(text)), nil }}
}

// genWorkload parses a generator spec into a workload.
func genWorkload(t testing.TB, spec string) Workload {
	t.Helper()
	g, err := source.ParseGenerator(spec)
	require.NoError(t, err)
	w, err := GenWorkload(g)
	require.NoError(t, err)
	return w
}

// runJSON runs w and returns the result's JSON.
func runJSON(t *testing.T, w Workload, o RunOptions) []byte {
	t.Helper()
	r, err := Run(context.Background(), w, o)
	require.NoError(t, err)
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return b
}

func TestRunDeterministic(t *testing.T) {
	for _, spec := range []string{
		"random:dev=64M,n=20000,size=4K,reads=0.3,cpus=4,fsync=500,seed=7",
		"zipf:dev=16M,n=5000,size=512-8K,cpus=3,qd=4,seed=11",
		"hotcold:dev=8M,n=5000,size=4K,reads=0.5,cpus=2,cpumode=percpu,seed=3",
	} {
		t.Run(spec, func(t *testing.T) {
			w := genWorkload(t, spec)
			o := RunOptions{Access: AccessBuffers, MRCSizes: []int{1, 4, 64}}
			first := runJSON(t, w, o)
			prev := runtime.GOMAXPROCS(1) // the curve's runs, one at a time
			again := runJSON(t, w, o)
			runtime.GOMAXPROCS(prev)
			assert.Equal(t, string(first), string(again), "same seed, same bytes")
			other := w
			g, _ := source.ParseGenerator(spec)
			other, _ = GenWorkload(g.WithSeed(g.Seed + 1))
			assert.NotEqual(t, string(first), string(runJSON(t, other, o)), "another seed, another run")
		})
	}
}

func TestRunHeaderNamesSeedAndProfile(t *testing.T) {
	r, err := Run(context.Background(), genWorkload(t, "seq:dev=1M,n=10,seed=42"), RunOptions{})
	require.NoError(t, err)
	require.NotNil(t, r.Seed)
	assert.Equal(t, uint64(42), *r.Seed)
	h := r.Header()
	assert.Contains(t, h, "seed 42")
	assert.Contains(t, h, "profile x86-server, built-in costs")
	assert.Contains(t, h, "disk ssd")
	r, err = Run(context.Background(), csvWorkload("t.csv", "write,0,4K\n", 1<<20, 1024, 1), RunOptions{})
	require.NoError(t, err)
	assert.Nil(t, r.Seed)
	assert.Contains(t, r.Header(), "seed none")
	assert.Contains(t, r.Header(), "1M device (logical blocks of 1024 bytes, block size 4096)", "which size is which")
	assert.Equal(t, uint32(1024), r.LogicalBlockSize)
}

// TestRunReplayTiming: a trace's clock starts at its first record; no
// stall ignores the stamps, a scale multiplies the time between them.
func TestRunReplayTiming(t *testing.T) {
	// Two writes a second apart, 186,704 s into the traced system's day.
	text := "write,0,4K,0,186704s\nwrite,4K,4K,0,186705s\nwrite,8K,4K,0,186703s\n"
	tests := []struct {
		name   string
		o      RunOptions
		lo, hi float64 // the duration's bounds, in seconds
	}{
		{"the trace's clock", RunOptions{}, 1, 1.01},
		{"twice as slow", RunOptions{ReplayTimeScale: 2}, 2, 2.01},
		{"ten times as fast", RunOptions{ReplayTimeScale: 0.1}, 0.1, 0.11},
		{"no stall", RunOptions{ReplayNoStall: true, ReplayTimeScale: 2}, 0, 0.001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Disk = Disk{Name: "null"}
			r, err := Run(context.Background(), csvWorkload("t.csv", text, 1<<20, 512, 1), tt.o)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, r.DurationNS, tt.lo*1e9)
			assert.Less(t, r.DurationNS, tt.hi*1e9)
			assert.Equal(t, uint64(3), r.Ops, "a record stamped before the first runs at once")
			assert.Positive(t, r.IOPS)
		})
	}
	for _, bad := range []float64{-1, math.Inf(1), math.NaN()} {
		_, err := Run(context.Background(), csvWorkload("t.csv", text, 1<<20, 512, 1), RunOptions{ReplayTimeScale: bad})
		assert.ErrorIs(t, err, ErrRunOptions, "%v", bad)
	}
}

// TestRunStreamedTrace runs a trace read from standard input: in one pass,
// with the device's size given, on the CPUs given.
func TestRunStreamedTrace(t *testing.T) {
	stdin := func(text string) {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		saved := os.Stdin
		os.Stdin = r
		t.Cleanup(func() { os.Stdin = saved; r.Close() })
		go func() { w.Write([]byte(text)); w.Close() }()
	}
	const text = "write,0,4K,0\nwrite,4K,4K,1\nfsync,,,1\n"
	stdin(text)
	_, err := TraceWorkload(source.StdinName, TraceDevice{})
	assert.ErrorContains(t, err, "-: is read in one pass (standard input, a pipe or a FIFO), so its device size cannot come from a first pass over it: give the device's size (TraceDevice.Size)")

	stdin(text)
	w, err := TraceWorkload(source.StdinName, TraceDevice{Size: 1 << 20})
	require.NoError(t, err)
	assert.True(t, w.Streamed)
	_, err = Run(context.Background(), w, RunOptions{MRCSizes: []int{4}})
	assert.ErrorContains(t, err, "a miss-ratio curve reruns the workload")
	_, err = Run(context.Background(), w, RunOptions{})
	assert.ErrorContains(t, err, "-:2: a record of CPU 1, but a trace read in one pass runs on 1 CPU unless told how many")
	_, err = Run(context.Background(), w, RunOptions{CPUs: 2})
	assert.ErrorContains(t, err, "is read in one pass, and it was read already")

	stdin(text)
	w, err = TraceWorkload(source.StdinName, TraceDevice{Size: 1 << 20})
	require.NoError(t, err)
	r, err := Run(context.Background(), w, RunOptions{CPUs: 2})
	require.NoError(t, err)
	assert.Equal(t, uint64(3), r.Ops)
	assert.Equal(t, 2, r.CPUs)
}

// stepLines runs text on cpus CPUs in step mode and returns the first line
// of each operation's block.
func stepLines(t *testing.T, text string, cpus, qd int) []string {
	t.Helper()
	var b bytes.Buffer
	_, err := Run(context.Background(), csvWorkload("t.csv", text, 1<<20, 512, cpus),
		RunOptions{QueueDepth: qd, Disk: Disk{Name: "null"}, Step: &StepOptions{W: &b}})
	require.NoError(t, err)
	var firsts []string
	for _, l := range strings.Split(b.String(), "\n") {
		if len(l) > 0 && l[0] >= '1' && l[0] <= '9' {
			_, rest, _ := strings.Cut(l, ". ")
			cpu, _, _ := strings.Cut(rest, " at ")
			_, what, _ := strings.Cut(rest, ": ")
			firsts = append(firsts, cpu+" "+strings.Fields(what)[0]+" "+strings.Fields(what)[3])
		}
	}
	return firsts
}

func TestRunInterleavesBySimulatedTime(t *testing.T) {
	tests := []struct {
		name, text string
		cpus       int
		want       []string
	}{
		{"time stamps order the CPUs", "write,0,4K,1,0\nwrite,4K,4K,0,50us\nwrite,8K,4K,1,20us\n", 2,
			[]string{"cpu1 write 0", "cpu1 write 8192", "cpu0 write 4096"}},
		{"ties go to the lower CPU", "write,0,4K,1,0\nwrite,4K,4K,0,0\n", 2,
			[]string{"cpu0 write 4096", "cpu1 write 0"}},
		{"records keep their CPU's order", "write,8K,4K,0,0\nwrite,0,4K,0,0\n", 2,
			[]string{"cpu0 write 8192", "cpu0 write 0"}},
		{"CPU numbers wrap onto the CPUs", "write,0,4K,3,0\nwrite,4K,4K,2,0\n", 2,
			[]string{"cpu0 write 4096", "cpu1 write 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, stepLines(t, tc.text, tc.cpus, 1))
		})
	}
}

func TestRunBadRecordNamesLine(t *testing.T) {
	tests := []struct {
		name, text string
		line       int
	}{
		{"unknown op", "write,0,4K\nwrite,4K,4K\nrd,0,4K\n", 3},
		{"past the device's end", "write,0,4K\nwrite,1M,4K\n", 2},
		{"bad length", "# c\nread,0,-1\n", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), csvWorkload("t.csv", tc.text, 1<<20, 512, 1), RunOptions{})
			require.Error(t, err)
			var te *source.TraceError
			require.True(t, errors.As(err, &te), "%v", err)
			assert.Equal(t, tc.line, te.Line)
		})
	}
}

// TestRunRefusesInvalidRecords: a reader of one's own may give records no
// built-in reader would; Run refuses each, naming its line, instead of
// panicking or running it as something else.
func TestRunRefusesInvalidRecords(t *testing.T) {
	tests := []struct {
		name string
		rec  source.IO
		want string
	}{
		{"unknown kind", source.IO{Kind: 99, Length: 4096, Line: 7}, "invalid kind 99"},
		{"no kind", source.IO{Length: 10, Line: 7}, "invalid kind 0"},
		{"negative CPU", source.IO{Kind: source.IOWrite, Length: 4096, CPU: -1, Line: 7}, "cpu -1 is outside"},
		{"CPU past the bound", source.IO{Kind: source.IORead, Length: 4096, CPU: source.MaxTraceCPU + 1, Line: 7}, "cpu 4096 is outside 0..4095"},
		{"empty write", source.IO{Kind: source.IOWrite, Line: 7}, "a write of 0 bytes"},
		{"fsync with a range", source.IO{Kind: source.IOFsync, Offset: 4096, Length: 4096, Line: 7}, "a fsync with offset 4096 and length 4096 (want 0 and 0)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := Workload{Name: "mine", DeviceSize: 1 << 20, CPUs: 2, Open: func() (source.IOReader, error) {
				return &source.SliceReader{Records: []source.IO{{Kind: source.IOWrite, Length: 4096, Line: 6}, tc.rec}}, nil
			}}
			_, err := Run(context.Background(), w, RunOptions{})
			require.Error(t, err)
			var te *source.TraceError
			require.True(t, errors.As(err, &te), "%v", err)
			assert.Equal(t, 7, te.Line)
			assert.ErrorContains(t, err, "mine:7: invalid record: "+tc.want)
		})
	}
}

// TestRunDiscard: a discard drops its range's cached pages and sends
// blkdev_issue_discard's bios, split into requests at the disk's discard
// limits and priced by its prior; one not aligned to the logical block size
// fails with EINVAL, as BLKDISCARD does, and on a disk without discard with
// EOPNOTSUPP, and the run goes on.
func TestRunDiscard(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name, text string
		dev        uint64
		disk       string
		bios, reqs float64 // per discard that succeeded
		errnos     map[string]uint64
		diskNS     float64 // the disk's busy time from discards; 0: not checked
	}{
		{"small, and one unaligned", "write,0,8K\ndiscard,100,1000\ndiscard,0,4K\n", 64 << 10, "ssd", 1, 1, map[string]uint64{"EINVAL": 1}, 0},
		// 4 GiB from 0 on brd's limits: two bios, the first of 2^32-4096
		// bytes (a bio's most at 4 KiB granularity), the second of the
		// 4096 left, each one request.
		{"4 GiB on null", "discard,0,4G\n", 4 * gib, "null", 2, 2, nil, 0},
		// On the ssd (512-byte granularity): a bio of 2^32-512 bytes, cut
		// into requests of at most 4194240 sectors (three), and one of 512.
		{"4 GiB on ssd", "discard,0,4G\n", 4 * gib, "ssd", 2, 4, nil, 4*200e3 + 4*gib*0.005},
		{"hdd has no discard", "write,0,4K\ndiscard,0,4K\n", 1 << 20, "hdd", 0, 0, map[string]uint64{"EOPNOTSUPP": 1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(context.Background(), csvWorkload("d.csv", tt.text, tt.dev, 512, 1), RunOptions{Disk: Disk{Name: tt.disk}})
			require.NoError(t, err)
			d, ok := r.Kind("discard")
			require.True(t, ok)
			assert.Equal(t, tt.errnos, d.Errnos)
			good := float64(d.Ops - d.Errors)
			assert.InDelta(t, tt.bios*good/float64(d.Ops), d.BiosPerOp, 1e-9, "bios")
			assert.InDelta(t, tt.reqs*good/float64(d.Ops), d.RequestsPerOp, 1e-9, "requests")
			if tt.diskNS > 0 {
				assert.InDelta(t, tt.diskNS, r.Resources[len(r.Resources)-1].BusyNS, 1, "the disk's busy time is the prior's")
				assert.GreaterOrEqual(t, d.Latency.MaxNS, uint64(tt.diskNS), "the discard waits for its requests")
			}
			// Each request is a part's pass through blk_mq_submit_bio and
			// a request on the submitting CPU: a dearer pass and request
			// cost the CPU that much more per request.
			const dr, db = 1000, 300
			p := timing.X86Server()
			p.Set(timing.ParamRequest, p.NS[timing.ParamRequest]+dr, "test")
			p.Set(timing.ParamMQBio, p.NS[timing.ParamMQBio]+db, "test")
			dearer, err := Run(context.Background(), csvWorkload("d.csv", tt.text, tt.dev, 512, 1), RunOptions{Disk: Disk{Name: tt.disk}, Profile: p})
			require.NoError(t, err)
			assert.InDelta(t, r.Resources[0].BusyNS+tt.reqs*good*(dr+db), dearer.Resources[0].BusyNS, 1e-6, "cpu0's busy time")
		})
	}
}

// TestDiscardPieces counts bios and requests against the kernel's rules:
// a bio ends at a granularity boundary when it starts off one, a request
// at most max_discard_sectors, cut back to a boundary.
func TestDiscardPieces(t *testing.T) {
	tests := []struct {
		name            string
		sector, sectors uint64
		lim             DiscardModel
		lbs             uint64
		bios, reqs      uint64
	}{
		{"one small", 0, 8, DiscardModel{MaxSectors: 4194240, Granularity: 512}, 512, 1, 1},
		{"at the request limit", 0, 4194240, DiscardModel{MaxSectors: 4194240, Granularity: 512}, 512, 1, 1},
		{"one past it", 0, 4194241, DiscardModel{MaxSectors: 4194240, Granularity: 512}, 512, 1, 2},
		{"off the granularity: a short first bio", 1, 16, DiscardModel{MaxSectors: 1 << 20, Granularity: 4096}, 512, 2, 2},
		{"4 GiB at 4K granularity", 0, 1 << 23, DiscardModel{MaxSectors: 1<<23 - 1, Granularity: 4096}, 512, 2, 2},
		{"4 GiB at 512 granularity", 0, 1 << 23, DiscardModel{MaxSectors: 4194240, Granularity: 512}, 512, 2, 4},
		{"granularity 0: the logical block", 0, 1 << 23, DiscardModel{MaxSectors: 1 << 30}, 4096, 2, 2},
		{"cut back to the granularity", 0, 20, DiscardModel{MaxSectors: 10, Granularity: 4096}, 512, 1, 3},
		{"no request limit below a bio's", 0, 1 << 20, DiscardModel{MaxSectors: 1 << 40, Granularity: 512}, 512, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen uint64
			bios, reqs := discardPieces(tt.sector, tt.sectors, tt.lim, tt.lbs, func(_, n uint64) { seen += n })
			assert.Equal(t, tt.bios, bios, "bios")
			assert.Equal(t, tt.reqs, reqs, "requests")
			assert.Equal(t, tt.sectors, seen, "the bios cover the range")
		})
	}
}

// TestRunEmptyWorkload: a workload without a record is an error naming it,
// not a silent run of nothing.
func TestRunEmptyWorkload(t *testing.T) {
	for _, text := range []string{"", "# only a comment\n"} {
		_, err := Run(context.Background(), csvWorkload("empty.csv", text, 1<<20, 512, 1), RunOptions{})
		assert.ErrorContains(t, err, "empty.csv: no records", "%q", text)
		assert.ErrorIs(t, err, source.ErrNoRecords)
	}
}

func TestRunTraceFile(t *testing.T) {
	w, err := TraceWorkload(filepath.Join(tracesDir, "sample.csv"), TraceDevice{Size: 64 << 10, LogicalBlockSize: 1024})
	require.NoError(t, err)
	assert.Equal(t, 2, w.CPUs, "the trace's CPUs")
	assert.Equal(t, uint64(7), w.Records)
	r, err := Run(context.Background(), w, RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, uint64(7), r.Ops)
	wr, ok := r.Kind("write")
	require.True(t, ok)
	assert.Equal(t, uint64(4), wr.Ops)
	fs, ok := r.Kind("fsync")
	require.True(t, ok)
	assert.GreaterOrEqual(t, fs.BiosPerOp, 2.0, "fsync writes the dirty blocks and flushes")
	_, err = TraceWorkload(filepath.Join(tracesDir, "sample.csv"), TraceDevice{Size: 1000, LogicalBlockSize: 512})
	assert.ErrorIs(t, err, ErrRunOptions)
	w, err = TraceWorkload(filepath.Join(tracesDir, "sample.blkparse"), TraceDevice{})
	require.NoError(t, err)
	assert.Positive(t, w.DeviceSize)
	r, err = Run(context.Background(), w, RunOptions{})
	require.NoError(t, err)
	assert.Positive(t, r.LRU.Lookups, "the blkparse sample's REQ_META records go through buffer heads")
}

func TestRunLRUAndMissRatioCurve(t *testing.T) {
	w := genWorkload(t, "zipf:dev=4M,n=20000,size=1K,theta=1.1,cpus=2,seed=5")
	w.LogicalBlockSize = 1024
	r, err := Run(context.Background(), w, RunOptions{Access: AccessBuffers, Kernel: MustKernel("5.10.10"), MRCSizes: []int{1, 2, 4, 8, 32, 128}})
	require.NoError(t, err)
	require.Len(t, r.MRC, 7, "six sizes and the kernel's 16")
	assert.Equal(t, 16, r.LRU.Size)
	assert.Positive(t, r.LRU.HitRatio)
	for i, p := range r.MRC {
		assert.Equal(t, r.LRU.Lookups, p.Lookups, "every size sees the same lookups")
		if i > 0 {
			assert.Greater(t, p.Size, r.MRC[i-1].Size)
			assert.LessOrEqual(t, p.MissRatio, r.MRC[i-1].MissRatio, "a larger LRU misses less (LRU is a stack algorithm)")
		}
		if p.Size == 16 {
			assert.InDelta(t, 1-r.LRU.HitRatio, p.MissRatio, 1e-12)
		}
	}
	assert.Less(t, r.MRC[len(r.MRC)-1].MissRatio, r.MRC[0].MissRatio)
	var perCPU uint64
	for _, c := range r.PerCPU {
		perCPU += c.LRULookups
		assert.Positive(t, c.LRULookups, "each CPU has its own LRU")
	}
	assert.Equal(t, r.LRU.Lookups, perCPU)
}

func TestRunDistributions(t *testing.T) {
	r, err := Run(context.Background(), genWorkload(t, "random:dev=64M,n=30000,size=4K,reads=0.5,cpus=4,fsync=1000,seed=9"), RunOptions{})
	require.NoError(t, err)
	for _, k := range r.Kinds {
		l := k.Latency
		assert.LessOrEqual(t, l.MinNS, l.P50NS, k.Kind)
		assert.LessOrEqual(t, l.P50NS, l.P90NS, k.Kind)
		assert.LessOrEqual(t, l.P90NS, l.P99NS, k.Kind)
		assert.LessOrEqual(t, l.P99NS, l.P999NS, k.Kind)
		assert.LessOrEqual(t, l.P999NS, l.MaxNS, k.Kind)
		assert.InDelta(t, 1, l.CDF[len(l.CDF)-1].Fraction, 1e-12)
	}
	rd, _ := r.Kind("read")
	fs, _ := r.Kind("fsync")
	assert.Greater(t, rd.RequestsPerOp, 0.5, "random reads of a cold 64M device mostly miss")
	assert.Greater(t, fs.Latency.MeanNS, rd.Latency.MeanNS, "an fsync waits for its writeback")
	var sum float64
	for _, b := range r.Throughput {
		sum += b.Bytes
	}
	assert.InDelta(t, float64(r.Bytes), sum, 1, "the timeline holds every byte")
	assert.LessOrEqual(t, len(r.Throughput), timelineBins)
	i := slices.IndexFunc(r.Resources, func(res Resource) bool { return res.Name == "disk (ssd)" })
	require.GreaterOrEqual(t, i, 0, "the disk is a resource")
	disk := r.Resources[i]
	assert.Greater(t, disk.Utilisation, 0.5)
	assert.LessOrEqual(t, disk.Utilisation, 1.0)
	assert.LessOrEqual(t, r.MBps, r.Bound.MBps*(1+1e-9), "the bottleneck bound is an upper bound")
}

func TestRunQueueDepth(t *testing.T) {
	w := genWorkload(t, "random:dev=64M,n=4000,size=4K,reads=1,seed=2")
	one, err := Run(context.Background(), w, RunOptions{QueueDepth: 1, Disk: Disk{Name: "hdd"}})
	require.NoError(t, err)
	_, err = Run(context.Background(), w, RunOptions{QueueDepth: 8})
	require.NoError(t, err)
	deep, err := Run(context.Background(), w, RunOptions{QueueDepth: 8, Disk: Disk{Name: "hdd"}})
	require.NoError(t, err)
	assert.Equal(t, "hdd", deep.Disk)
	assert.LessOrEqual(t, deep.DurationNS, one.DurationNS, "more in flight never takes longer on one FCFS disk")
}

func TestRunCancelAndProgress(t *testing.T) {
	w := genWorkload(t, "random:dev=16M,n=200000,seed=1")
	ctx, cancel := context.WithCancel(context.Background())
	var calls int
	_, err := Run(ctx, w, RunOptions{Progress: func(done, total uint64) {
		calls++
		assert.Equal(t, uint64(200000), total)
		cancel()
	}})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls)
	var last uint64
	_, err = Run(context.Background(), genWorkload(t, "seq:dev=1M,n=100,seed=1"), RunOptions{Progress: func(done, _ uint64) { last = done }})
	require.NoError(t, err)
	assert.Equal(t, uint64(100), last, "the last call reports every record")
}

func TestRunOptionErrors(t *testing.T) {
	w := genWorkload(t, "seq:dev=1M,n=10,seed=1")
	for _, o := range []RunOptions{{CPUs: -1}, {CPUs: source.MaxGenCPUs + 1}, {QueueDepth: -2}, {MRCSizes: []int{0}},
		{MRCSizes: []int{2000}}, {MemoryBytes: 100}, {Access: 9}, {Step: &StepOptions{}}, {Kernel: Kernel{Name: "bogus"}},
		{Kernel: Kernel{InitBlocksize: blocksize.PolicyLogical}}} {
		_, err := Run(context.Background(), w, o)
		assert.ErrorIs(t, err, ErrRunOptions, "%+v", o)
	}
	_, err := Run(context.Background(), Workload{}, RunOptions{})
	assert.ErrorIs(t, err, ErrRunOptions)
}

// TestRunKernelByName: a Kernel that holds only a name runs as the preset
// of that name (5.10.10's logical policy gives 512-byte blocks on a
// 512-byte device; a zero-variant kernel under that label would grow them).
func TestRunKernelByName(t *testing.T) {
	w := genWorkload(t, "seq:dev=1M,n=10,seed=1")
	want, err := Run(context.Background(), w, RunOptions{Kernel: MustKernel("5.10.10")})
	require.NoError(t, err)
	got, err := Run(context.Background(), w, RunOptions{Kernel: Kernel{Name: "5.10.10"}})
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, uint32(512), got.BlockSize)
}

// TestRunStepGolden pins step mode's output for the shipped class problem
// and a fresh seeded quiz; go test -run StepGolden -update rewrites them.
func TestRunStepGolden(t *testing.T) {
	tw, err := TraceWorkload(filepath.Join(tracesDir, "sample.csv"), TraceDevice{Size: 64 << 10, LogicalBlockSize: 1024})
	require.NoError(t, err)
	tw.Name = "sample.csv"
	quiz := genWorkload(t, "random:dev=64K,n=8,size=512-4K,sizestep=512,reads=0.3,fsync=3,cpus=2,seed=3")
	tests := []struct {
		golden string
		w      Workload
		o      StepOptions
		k      string
	}{
		{"sample-csv.golden", tw, StepOptions{}, "6.18"},
		{"sample-csv-5.10.10.golden", tw, StepOptions{}, "5.10.10"},
		{"quiz-seed3.golden", quiz, StepOptions{Quiz: true}, "6.18"},
		{"quiz-seed3-show.golden", quiz, StepOptions{Quiz: true, Show: true}, "6.18"},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			var b bytes.Buffer
			o := tc.o
			o.W = &b
			_, err := Run(context.Background(), tc.w, RunOptions{Kernel: MustKernel(tc.k), Step: &o})
			require.NoError(t, err)
			path := filepath.Join("testdata", "step", tc.golden)
			if *updateGolden {
				require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), b.String())
		})
	}
}

func TestStepQuizHidesAnswers(t *testing.T) {
	quiz, err := os.ReadFile(filepath.Join("testdata", "step", "quiz-seed3.golden"))
	require.NoError(t, err)
	show, err := os.ReadFile(filepath.Join("testdata", "step", "quiz-seed3-show.golden"))
	require.NoError(t, err)
	assert.Contains(t, string(quiz), "Cost:   ?")
	assert.Contains(t, string(quiz), "Bios:   ?")
	assert.NotContains(t, string(quiz), "HIT")
	assert.NotContains(t, string(show), "?")
	q, s := strings.Split(string(quiz), "\n"), strings.Split(string(show), "\n")
	require.Equal(t, len(q), len(s))
	for i := range q {
		if !strings.Contains(q[i], "?") {
			assert.Equal(t, s[i], q[i], "only the answers differ")
		}
	}
}

// TestRunKswapdReclaims: a write stream four times the page cache has
// kswapd, not the stream's CPU, do the reclaim, and the flusher the
// writeback (a 16 MiB machine's dirty limits are a few MiB): their
// resources are busy, the stream's CPU time is what it is with the cache
// large enough to hold everything, and the all-CPU bound shares the three
// loads between the two CPUs.
func TestRunKswapdReclaims(t *testing.T) {
	w := genWorkload(t, "sequential:dev=256M,n=1024,size=64K,reads=0,seed=1")
	busy := func(r *RunResult) map[string]float64 {
		m := map[string]float64{}
		for _, res := range r.Resources {
			m[res.Name] = res.BusyNS
		}
		return m
	}
	small, err := Run(context.Background(), w, RunOptions{MemoryBytes: 16 << 20})
	require.NoError(t, err)
	large, err := Run(context.Background(), w, RunOptions{MemoryBytes: 2 << 30})
	require.NoError(t, err)
	s, l := busy(small), busy(large)
	require.Contains(t, s, "kswapd0")
	assert.Zero(t, l["kswapd0"], "nothing to reclaim in 2 GiB")
	assert.Positive(t, s["kswapd0"], "kswapd reclaimed the 52 MiB that passed a 12 MiB cache")
	assert.Positive(t, s["cpu1 (flusher)"], "the flusher wrote them back")
	assert.Zero(t, l["cpu1 (flusher)"], "2 GiB holds the 64 MiB under its background threshold")
	assert.InEpsilon(t, l["cpu0"], s["cpu0"], 0.05, "the stream's CPU did no reclaim")
	assert.InEpsilon(t, (s["cpu0"]+s["cpu1 (flusher)"]+s["kswapd0"])/2, s["all 2 CPUs"], 1e-9)
}

// tracesDir holds the trace samples package source ships with its tests.
const tracesDir = "../source/testdata/traces"

// traceSeeds adds the shipped trace samples of the given extensions to f.
func traceSeeds(f *testing.F, exts ...string) {
	for _, ext := range exts {
		paths, _ := filepath.Glob(filepath.Join(tracesDir, "*"+ext))
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil && len(b) < 16<<10 {
				f.Add(string(b))
			}
		}
	}
}

// TestScenarioWorkloadAppliesRules: a scenario run as a workload keeps
// its device's rules on the one clock. Its fsync of 4 MiB written at 4 KiB
// takes what the rule allows — at wbps=8M half a second less the first
// slice's burst, at wiops=2000 (1024 bios) half a second less its burst —
// where the unthrottled SSD takes milliseconds; and a strict 1 MiB dirty
// limit makes the writes themselves wait for the disk: 8 MiB at 8 MiB/s
// take from (8 − 1 − 0.8) / 8 s (less what the limit holds at the end and
// the first slice's burst) to a second, and the fsync writes back what
// the limit held: the 1 MiB share and what the writer dirtied past it
// between two looks, in all less than twice the share (0.25 s).
func TestScenarioWorkloadAppliesRules(t *testing.T) {
	run := func(rules, io string) (write, fsync KindResult) {
		t.Helper()
		s, err := scenario.Parse("r.scn", "device size=64M "+rules+"\nopen a rdwr\n"+io+"fsync a\n")
		require.NoError(t, err)
		w, err := ScenarioWorkload(s)
		require.NoError(t, err)
		r, err := Run(context.Background(), w, RunOptions{})
		require.NoError(t, err)
		write, _ = r.Kind("write")
		fsync, _ = r.Kind("fsync")
		return write, fsync
	}
	const io4M = "pwrite a off=0 len=4K repeat=1024\n"
	for _, tc := range []struct {
		rules    string
		min, max float64 // the fsync's latency, ms
	}{
		{"", 0, 20},
		{"wbps=8M", 400, 510},
		{"wiops=2000", 400, 510},
	} {
		_, fsync := run(tc.rules, io4M)
		ms := float64(fsync.Latency.MaxNS) / 1e6
		assert.True(t, ms >= tc.min && ms <= tc.max, "%q: fsync %.1f ms, want %v..%v", tc.rules, ms, tc.min, tc.max)
	}
	write, fsync := run("wbps=8M max_bytes=1M strict_limit=1", "pwrite a off=0 len=64K repeat=128\n")
	writes := float64(write.Latency.MeanNS) * float64(write.Ops) / 1e9
	assert.True(t, writes >= 0.775 && writes <= 1, "8 MiB of writes paced at 8 MiB/s: %.3f s", writes)
	assert.Less(t, float64(fsync.Latency.MaxNS)/1e9, 0.25, "what is left for the fsync is about the 1 MiB limit")
}

// TestScenarioWorkloadBlockSize runs scenarios as workloads: the lines
// before the first I/O run first, as RunModel runs them, so the records
// run at the block size they set (and a BLKBSZSET the kernel refuses, or
// that another opener's claim blocks, leaves it); one after the first I/O
// is refused.
func TestScenarioWorkloadBlockSize(t *testing.T) {
	const io = "pwrite a off=0 len=4K repeat=4\nfsync a\n"
	for _, tt := range []struct {
		name, lines string
		blockSize   uint32
		err         string
	}{
		{"the kernel's at open", "open a rdwr\n", 4096, ""},
		{"set through a holder", "open h rdwr excl\nblkbszset h 512\nopen a rdwr\n", 512, ""},
		{"set on the descriptor", "open a rdwr\nblkbszset a 1K\n", 1024, ""},
		{"the last of several", "open a rdwr\nblkbszset a 1K\nblkbszset a 2K\n", 2048, ""},
		{"a refused size leaves it", "open a rdwr\nblkbszset a 3000\n", 4096, ""},
		{"another's claim blocks it", "open h rdwr excl\nopen a rdwr\nblkbszset a 512\n", 4096, ""},
		{"after the first I/O", "open a rdwr\npwrite a off=0 len=4K\nblkbszset a 512\n", 0,
			"op 3 (blkbszset a 512) changes the block size after the first I/O (op 2, pwrite a off=0 len=4K)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Parse("b.scn", "device size=1M\n"+tt.lines+io)
			require.NoError(t, err)
			w, err := ScenarioWorkload(s)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			r, err := Run(context.Background(), w, RunOptions{Disk: Disk{Name: "null"}})
			require.NoError(t, err)
			assert.Equal(t, tt.blockSize, r.BlockSize)
			assert.Equal(t, uint64(5), r.Ops, "the I/O records, not the setup")
		})
	}
}

// TestRunProgressOfSlowRecords: records slow enough that 65536 of them
// take long still get progress reports, at least every
// runProgressInterval, so that a budget can be estimated.
func TestRunProgressOfSlowRecords(t *testing.T) {
	w := genWorkload(t, "seq:dev=64M,n=8000,size=1M,seed=1")
	var first uint64
	start := time.Now()
	_, err := Run(context.Background(), w, RunOptions{Data: true, Disk: Disk{Name: "null"}, Progress: func(done, total uint64) {
		if first == 0 {
			first = done
		}
		assert.Equal(t, uint64(8000), total)
	}})
	require.NoError(t, err)
	elapsed := time.Since(start)
	t.Logf("8000 writes of 1 MiB with data in %v; first report at %d records", elapsed, first)
	if elapsed < runProgressInterval*3/2 { // a window ending in the last records reports at the end
		t.Skipf("the run took %v: too fast to need a report on the way", elapsed)
	}
	assert.Less(t, first, uint64(8000), "a report before the end")
	assert.Zero(t, first%64, "reports come at multiples of 64 records")
}
