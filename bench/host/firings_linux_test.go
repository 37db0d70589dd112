//go:build linux

package host

import (
	"bufio"
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
)

const firingsScenario = `# the runner's tracepoints in its own thread
device size=16M sector=512
open a rdwr
blkbszset a 512
pwrite a off=0 len=4K repeat=64 fill=0xa1
pwrite a off=0 len=4K repeat=64 fill=0xa2
fsync a
pwrite a off=0 len=4K repeat=64 fill=0xa3
fsync a
pread a off=0 len=4K repeat=64
close a
`

// TestThreadFiringsLive checks threadFirings against the kernel: for every
// operation of a live run, the events of the runner's trace that the
// calling thread fired (those with the pid of the runner's markers, which
// that thread writes) are as many as threadFirings counts from the run's
// counters and from the model's, which the calibration uses — so the host
// calibration prices the tracepoints its thread pays for, and no other
// thread's (the loop worker's completions, kblockd's flush).
func TestThreadFiringsLive(t *testing.T) {
	needKernel(t)
	s, err := scenario.Parse("firings.scn", firingsScenario)
	require.NoError(t, err)
	var dump bytes.Buffer
	r, err := Run(context.Background(), s, Options{NoSignalHandler: true, TraceDump: &dump})
	require.NoError(t, err)
	m, err := engine.RunModel(context.Background(), s, engine.ModelOptions{Queue: r.Queue})
	require.NoError(t, err)
	inThread := make([]float64, len(s.Ops))
	others := make([]int, len(s.Ops))
	cur, pid := 0, -1
	sc := bufio.NewScanner(&dump)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		ev, ok := parseTraceLine(sc.Text())
		if !ok {
			continue
		}
		if what, op, ok := ev.marker(); ok {
			if what == "begin" {
				cur, pid = op, ev.pid
			}
			continue
		}
		if cur == 0 {
			continue
		}
		if ev.pid == pid {
			inThread[cur-1]++
		} else {
			others[cur-1]++
		}
	}
	require.NoError(t, sc.Err())
	var fsyncOthers int
	for i, op := range r.Ops {
		assert.InDelta(t, threadFirings(op.Counters), inThread[i], 0, "op %d (%s): firings in the runner's thread", i+1, op.Op)
		assert.InDelta(t, threadFirings(m.Ops[i].Counters), inThread[i], 0, "op %d (%s): the model's count", i+1, op.Op)
		if _, ok := s.Ops[i].(scenario.Fsync); ok {
			fsyncOthers += others[i]
		}
	}
	assert.Positive(t, fsyncOthers, "the loop worker completes the fsyncs' requests in its own thread")
}
