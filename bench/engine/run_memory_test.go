package engine

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
