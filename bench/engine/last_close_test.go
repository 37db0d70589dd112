package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
)

// lastCloseRun runs spec over the ssd disk, with the last close when
// last says so, and returns the engine after the run.
func lastCloseRun(t *testing.T, spec string, last bool) *engine {
	t.Helper()
	return engineRun(t, spec, RunOptions{Profile: timing.X86Server(), LastClose: last})
}

// TestRunLastClose checks RunOptions.LastClose, dd's close of the device:
// without it a run's writes below the background threshold stay dirty
// and cached and the disk writes nothing; with it the last close writes
// every page back and drops the page cache, the disk is busy for those
// writes (beside the reads' requests, the same in both runs), the close
// waits for them, and the run takes that much longer, with one CPU or
// with four, each closing its own file.
func TestRunLastClose(t *testing.T) {
	tests := []struct {
		name, spec string
		pages      int64
	}{
		{"one writer", "seq:dev=64M,n=64,size=1M,reads=0,cpus=1", 64 << 20 >> 12},
		{"four writers and readers", "random:dev=64M,n=2000,size=16K,reads=0.3,cpus=4,seed=5", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain, closed := lastCloseRun(t, tc.spec, false), lastCloseRun(t, tc.spec, true)
			require.Zero(t, plain.mr.dev.WrittenPages(), "below the background threshold nothing is written back")
			require.Positive(t, plain.mr.dev.DirtyPages())
			require.Positive(t, plain.mr.dev.NrPages())

			dirty := plain.mr.dev.DirtyPages()
			if tc.pages > 0 {
				assert.Equal(t, tc.pages, dirty)
			}
			assert.Equal(t, dirty, closed.mr.dev.WrittenPages(), "the close writes back what was dirty")
			assert.Zero(t, closed.mr.dev.DirtyPages())
			assert.Zero(t, closed.mr.dev.NrPages(), "and drops the page cache")
			writes := closed.clk.diskBusy() - plain.clk.diskBusy() // the close's writes
			assert.Positive(t, writes)
			r, rp := closed.result(true), plain.result(true)
			assert.True(t, r.LastClose)
			assert.False(t, rp.LastClose)
			assert.Zero(t, rp.LastCloseNS)
			assert.GreaterOrEqual(t, r.LastCloseNS, writes, "the close waits for its writes")
			assert.Greater(t, r.DurationNS, rp.DurationNS+0.99*writes, "the run takes the close's time longer")
			assert.Equal(t, rp.Ops, r.Ops)
			assert.Equal(t, rp.Bytes, r.Bytes)
			for i := range closed.cpus {
				c, l := &closed.cpus[i], closed.loads()[i]
				assert.Equal(t, float64(c.ops+1), l.Q[timing.ParamSyscall], "cpu%d's load: a system call an operation, and its close", i)
			}
		})
	}
}

// TestStepShowsCloses checks step mode's blocks of the closes: one a CPU,
// the last one's saying it writes back and drops the page cache, with its
// bios, and nothing dirty or cached after it; a quiz hides the answers.
func TestStepShowsCloses(t *testing.T) {
	for _, quiz := range []bool{false, true} {
		t.Run(map[bool]string{false: "answers", true: "quiz"}[quiz], func(t *testing.T) {
			var out strings.Builder
			engineRun(t, "seq:dev=64K,n=3,size=4K,reads=0,cpus=2", RunOptions{Profile: timing.X86Server(), LastClose: true,
				Step: &StepOptions{W: &out, Quiz: quiz}})
			s := out.String()
			assert.Equal(t, 2, strings.Count(s, ": close(2) of the device"), "a close a CPU:\n%s", s)
			require.Equal(t, 1, strings.Count(s, "its last: sync_blockdev writes back"), "%s", s)
			last := s[strings.Index(s, "its last:"):]
			assert.Contains(t, last, "dirty folios 0, cached pages 0")
			if quiz {
				assert.Contains(t, last, "Bios:   ?")
				return
			}
			assert.Contains(t, last, "Bios:   write 0+8 (sync), write 8+8 (sync), write 16+8 (sync)")
		})
	}
}
