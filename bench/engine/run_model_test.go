package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bufcache"
)

// corpusDir and kernelDir are the host-kernel corpus and Linux 6.18's
// recordings of it.
const (
	corpusDir = "../../testdata/scenarios"
	kernelDir = "../../testdata/kernel/6.18"
)

// recording reads the 6.18 recording of the scenario called name.
func recording(t *testing.T, name string) *scenario.Result {
	t.Helper()
	r, err := scenario.ReadResultFile(filepath.Join(kernelDir, name+".json"))
	require.NoError(t, err)
	return r
}

// everyCounter returns a copy of r that reports every counter, so that a
// comparison looks past a scenario's report patterns.
func everyCounter(r *scenario.Result) *scenario.Result {
	c := *r
	c.Report = nil
	return &c
}

// differences lists a comparison's unequal rows as text.
func differences(c *scenario.Comparison) string {
	if len(c.Differences()) == 0 {
		return ""
	}
	return c.String()
}

// TestRunModelKernel618 runs every corpus scenario on the 6.18 preset over
// the recording's queue limits, with the machine's invariant checks on, and
// compares every counter and result with what Linux 6.18 recorded (a
// counter the kernel's runs varied on must lie in their range).
func TestRunModelKernel618(t *testing.T) {
	// Counts only: nothing here reads the heap or GOMAXPROCS.
	t.Parallel()
	scns, err := scenario.ParseDir(corpusDir)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(scns), 40, "the corpus")
	for _, s := range scns {
		t.Run(s.Name, func(t *testing.T) {
			kernel := recording(t, s.Name)
			model, err := RunModel(context.Background(), s, ModelOptions{Queue: kernel.Queue, Check: true})
			require.NoError(t, err)
			assert.Equal(t, "6.18", model.Kernel)
			c := scenario.Compare(everyCounter(model), everyCounter(kernel))
			require.NotEmpty(t, c.Rows)
			assert.Empty(t, differences(c))
			for _, r := range []*scenario.Result{model, kernel} {
				for _, cn := range r.Total {
					_, ok := scenario.ParseCounter(cn.Name)
					assert.True(t, ok, "%s: %s belongs to no counter family", r.Runner, cn.Name)
					family, _, _ := strings.Cut(cn.Name, ".")
					assert.Contains(t, scenario.CounterRoots(), family, "%s: a report pattern could not name %s", r.Runner, cn.Name)
				}
			}
		})
	}
}

// TestRunModelDetects checks that a comparison sees a difference: the
// model's dd at 4K against the recording of dd at 16K, one changed counter
// of the right recording, and an older kernel's model of the same scenario.
func TestRunModelDetects(t *testing.T) {
	s, err := scenario.ParseFile(filepath.Join(corpusDir, "dd-bs4k.scn"))
	require.NoError(t, err)
	same := recording(t, "dd-bs4k")
	model, err := RunModel(context.Background(), s, ModelOptions{Queue: same.Queue})
	require.NoError(t, err)
	require.Empty(t, scenario.Compare(model, same).Differences())

	assert.NotEmpty(t, scenario.Compare(model, recording(t, "dd-bs16k")).Differences(), "another scenario's recording")

	changed := recording(t, "dd-bs4k")
	for i, c := range changed.Ops[4].Counters {
		if c.Name == "bio.write" {
			changed.Ops[4].Counters[i].Min++
			changed.Ops[4].Counters[i].Max++
		}
	}
	assert.Len(t, scenario.Compare(model, changed).Differences(), 1, "one changed counter")

	old, err := RunModel(context.Background(), s, ModelOptions{Kernel: MustKernel("5.10.10"), Queue: same.Queue})
	require.NoError(t, err)
	assert.Equal(t, "5.10.10", old.Kernel)
	assert.NotEmpty(t, scenario.Compare(old, same).Differences(), "5.10's one-page folios and plug are not 6.18's")
}

// TestRunModelDefaultQueue checks that the default queue is the host's loop
// device: a scenario run without the recording's limits matches it too, and
// the result's header describes the queue used.
func TestRunModelDefaultQueue(t *testing.T) {
	for _, name := range []string{"dd-bs4k", "plug-write-4m", "read-cold-1m", "plug-write-4k-sector"} {
		t.Run(name, func(t *testing.T) {
			s, err := scenario.ParseFile(filepath.Join(corpusDir, name+".scn"))
			require.NoError(t, err)
			kernel := recording(t, name)
			model, err := RunModel(context.Background(), s, ModelOptions{})
			require.NoError(t, err)
			require.NotNil(t, model.Queue)
			assert.Equal(t, kernel.Queue.LogicalBlockSize, model.Queue.LogicalBlockSize)
			assert.Equal(t, kernel.Queue.MaxSectorsKB, model.Queue.MaxSectorsKB)
			assert.Equal(t, kernel.Queue.MaxSegments, model.Queue.MaxSegments)
			assert.Equal(t, kernel.Queue.ReadAheadKB, model.Queue.ReadAheadKB)
			assert.Empty(t, differences(scenario.Compare(everyCounter(model), everyCounter(kernel))))
		})
	}
}

// TestRunModelResults checks the per-operation results and the event
// ledger on a small scenario worked out by hand.
func TestRunModelResults(t *testing.T) {
	s, err := scenario.Parse("t.scn", `device size=1M sector=512
open a rdwr
open b rdonly
blkbszset a 1K
pwrite a off=512 len=1K fill=0x11
pwrite b off=0 len=4K
pread a off=0 len=2K
fsync a
fsync b
close b
close a
`)
	require.NoError(t, err)
	r, err := RunModel(context.Background(), s, ModelOptions{Check: true})
	require.NoError(t, err)
	for _, tc := range []struct {
		op        int
		errno     string
		calls     int
		bytes     int64
		blockSize int
	}{
		{1, "", 1, 0, 4096}, // set_init_blocksize: 4 KiB divides 1 MiB
		{2, "", 1, 0, 4096},
		{3, "", 1, 0, 1024},
		{4, "", 1, 1024, 0},
		{5, "EBADF", 1, 0, 0}, // pwrite on a read-only descriptor
		{6, "", 1, 2048, 0},
		{7, "", 1, 0, 0},
		{8, "", 1, 0, 0},
	} {
		o := r.Ops[tc.op-1]
		assert.Equal(t, tc.errno, o.Errno, "op %d (%s)", tc.op, o.Op)
		assert.Equal(t, tc.calls, o.Calls, "op %d calls", tc.op)
		assert.Equal(t, tc.bytes, o.Bytes, "op %d bytes", tc.op)
		assert.Equal(t, tc.blockSize, o.BlockSize, "op %d block size", tc.op)
	}
	// The write of 1 KiB at 512 covers half of two 1 KiB blocks of an
	// uncached page: block_write_begin reads both blocks first.
	assert.Equal(t, uint64(2), r.Ops[3].Counters.Value("rmw.read.bios"))
	assert.Equal(t, uint64(1), r.Ops[3].Counters.Value("pagecache.add.order=0"))
	assert.Equal(t, "0x00*512 0x11*1024 0x00*512", r.Ops[5].Data)
	// fsync writes the two dirty blocks and flushes the disk's cache.
	assert.Equal(t, uint64(2), r.Ops[6].Counters.Value("sectors.written")/2)
	assert.Equal(t, uint64(1), r.Ops[6].Counters.Value("rq.flush"))
	assert.NotZero(t, r.Ops[3].Events.Value(bufcache.EvWriteIter.String()), "the ledger counts the write's iterations")
	assert.Equal(t, []scenario.FsyncResult{{Op: 7, FD: "a"}, {Op: 8, FD: "b"}}, r.Fsyncs)
	assert.Equal(t, r.Ops[3].Counters.Value("rmw.read.bios")+r.Ops[5].Counters.Value("bio.read"), r.Total.Value("bio.read"))
}

// TestRunModelErrors checks the runner's own failures: an invalid scenario,
// invalid queue limits, a cancelled context.
func TestRunModelErrors(t *testing.T) {
	s, err := scenario.ParseFile(filepath.Join(corpusDir, "dd-bs4k.scn"))
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		s    *scenario.Scenario
		opts ModelOptions
		ctx  func() context.Context
		want string
	}{
		{"no device", &scenario.Scenario{Name: "x"}, ModelOptions{}, context.Background, "device"},
		{"bad limits", s, ModelOptions{Queue: &scenario.QueueLimits{LogicalBlockSize: 512, MaxSectorsKB: 4096, MaxHWSectorsKB: 1024}}, context.Background, "max_sectors_kb"},
		{"bad kernel", s, ModelOptions{Kernel: Kernel{Name: "x", SetBlocksize: MustKernel("6.18").SetBlocksize}}, context.Background, "large folios"},
		{"cancelled", s, ModelOptions{}, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RunModel(tc.ctx(), tc.s, tc.opts)
			require.Error(t, err)
			assert.Contains(t, strings.ToLower(err.Error()), tc.want)
		})
	}
}

// TestRunModelBackingSize runs `backing size=` on a 1 TiB device (sparse:
// only what is written costs memory): a store of N bytes takes writeback
// up to N bytes in all, and the write that would pass it fails the fsync
// that writes it back; the pages written before stay readable.
func TestRunModelBackingSize(t *testing.T) {
	for _, tt := range []struct {
		backing string
		fsyncs  []string
	}{
		{"backing size=16K", []string{"", "", ""}},
		{"backing size=12K", []string{"", "", "EIO"}},
		{"backing size=8K", []string{"", "EIO", "EIO"}},
		{"backing size=4K", []string{"", "EIO", "EIO"}},
		{"backing full", []string{"", "EIO", "EIO"}},
	} {
		t.Run(tt.backing, func(t *testing.T) {
			s, err := scenario.Parse("b.scn", "device size=1T sector=4096\nopen a rdwr\npwrite a off=1000G len=4K fill=1\nfsync a\n"+
				tt.backing+"\npwrite a off=0 len=8K fill=2\nfsync a\npwrite a off=100G len=4K fill=3\nfsync a\npread a off=1000G len=4K\n")
			require.NoError(t, err)
			r, err := RunModel(context.Background(), s, ModelOptions{})
			require.NoError(t, err)
			var got []string
			for _, f := range r.Fsyncs {
				got = append(got, f.Errno)
			}
			assert.Equal(t, tt.fsyncs, got)
			assert.Equal(t, "0x01*4096", r.Ops[len(r.Ops)-1].Data, "a page the store holds reads back")
		})
	}
}
