package bench

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// profile prices the lookup benchmarks' events.
var profile = timing.X86Server()

// reportSim reports sim-ns/op (no harness) and the named events per op for
// the events ev recorded over b.N identical operations: each op does the
// same work, so the figures do not depend on b.N.
func reportSim(b *testing.B, ev bufcache.Counters, events ...bufcache.Event) {
	b.ReportMetric(profile.SimNS(ev, 0)/float64(b.N), "sim-ns/op")
	for _, e := range events {
		b.ReportMetric(float64(ev[e])/float64(b.N), e.String()+"/op")
	}
}

// lookupEvents are the events the lookup benchmarks report per op.
var lookupEvents = []bufcache.Event{bufcache.EvLRUSlot, bufcache.EvIndexLevel, bufcache.EvRingWalk}

// metric is one simulated figure of a benchmark and its unit.
type metric struct {
	value float64
	unit  string
}

// fixedRuns caches the simulated figures of each benchmark configuration's
// fixed-size run, so that a process runs it once however often the
// benchmark runs (-count, b.N's ramp-up).
var fixedRuns sync.Map // string → []metric

// reportFixed reports the simulated figures of key's fixed-size run, which
// run computes once per process: figures of a fixed, stated amount of
// simulated work, never of b.N.
func reportFixed(b *testing.B, key string, run func() ([]metric, error)) {
	b.Helper()
	v, ok := fixedRuns.Load(key)
	if !ok {
		ms, err := run()
		require.NoError(b, err, key)
		v, _ = fixedRuns.LoadOrStore(key, ms)
	}
	for _, m := range v.([]metric) {
		b.ReportMetric(m.value, m.unit)
	}
}

// openLookup opens a 32 TiB metadata-only device on a machine built from cfg,
// sets its block size to size and reads block once.
func openLookup(tb testing.TB, cfg bufcache.Config, size uint32, block uint64) (*bufcache.Machine, *bufcache.BlockDevice) {
	m, err := bufcache.NewMachine(cfg)
	require.NoError(tb, err)
	disk, err := blk.NewMemDisk("loop0", 32<<40, 512)
	require.NoError(tb, err)
	d, err := m.Open(disk, bufcache.DeviceOptions{MetadataOnly: true})
	require.NoError(tb, err)
	require.NoError(tb, d.SetBlocksize(m.CPU(0), size))
	bh, err := d.Bread(m.CPU(0), block, size)
	require.NoError(tb, err)
	bufcache.Brelse(m.CPU(0), bh)
	return m, d
}
