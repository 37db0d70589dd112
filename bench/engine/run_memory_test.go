package engine

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/internal/race"
)

// runPeak runs n random 4 KiB writes on 4 CPUs over a 64 MiB device and
// returns the live heap's peak, sampled at every progress call (every
// 65536 operations).
func runPeak(t *testing.T, n int) uint64 {
	t.Helper()
	w := genWorkload(t, fmt.Sprintf("random:dev=64M,n=%d,size=4K,cpus=4,fsync=5000,seed=7", n))
	runtime.GC()
	var peak uint64
	var ms runtime.MemStats
	_, err := Run(context.Background(), w, RunOptions{Progress: func(uint64, uint64) {
		runtime.GC() // the live heap, not garbage awaiting a collection
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
	}})
	require.NoError(t, err)
	return peak
}

// TestRunBoundedMemory runs a workload eight times longer than another on
// the same device: the heap's peak may grow with the device (its page
// cache), not with the workload's length.
func TestRunBoundedMemory(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("runs 900 000 operations: not under -short or -race")
	}
	short, long := runPeak(t, 100_000), runPeak(t, 800_000)
	t.Logf("heap peak: %.1f MiB for 100 000 operations, %.1f MiB for 800 000", float64(short)/(1<<20), float64(long)/(1<<20))
	assert.Less(t, long, short+4<<20, "the heap does not grow with the workload")
}

// runMallocs is the heap allocations of a run of w.
func runMallocs(t *testing.T, w Workload) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Run(context.Background(), w, RunOptions{})
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// TestRunAllocatesNothingPerRecord: the clock, the flusher and the
// writers' balance_dirty_pages allocate nothing per record once their
// queues have grown: a run ten times longer, under a throttle rule and a
// strict dirty limit (the flusher writing back and the writers sleeping
// throughout), makes about as many allocations as the short one.
func TestRunAllocatesNothingPerRecord(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector's shadow allocations are not the run's")
	}
	rules, err := scenario.ParseRules("wbps=64M max_bytes=2M strict_limit=1")
	require.NoError(t, err)
	allocs := func(n int) uint64 {
		w := genWorkload(t, fmt.Sprintf("random:dev=64M,n=%d,size=4K,reads=0.3,cpus=2,seed=3", n))
		w.Rules = rules
		return runMallocs(t, w)
	}
	short, long := allocs(4000), allocs(40000)
	t.Logf("allocations: %d for 4 000 records, %d for 40 000", short, long)
	assert.Less(t, float64(long), 1.2*float64(short)+500, "about as many for ten times the records")
}

// sliceReader gives recs, then io.EOF.
type sliceReader struct{ recs []source.IO }

// Next implements source.IOReader.
func (r *sliceReader) Next() (source.IO, error) {
	if len(r.recs) == 0 {
		return source.IO{}, io.EOF
	}
	rec := r.recs[0]
	r.recs = r.recs[1:]
	return rec, nil
}
