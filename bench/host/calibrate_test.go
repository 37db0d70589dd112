package host

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
)

// TestCalibrationScenarios checks the microbenchmarks: each validates and
// round-trips through the scenario language, runs on the model without an
// error in any cell, the open, close and BLKBSZSET cells count a device
// file's open and release, and HostFit fits cells that exist, about half of
// them, with fewer costs than cells, leaving the measured timer and system
// call alone.
func TestCalibrationScenarios(t *testing.T) {
	var keys []string
	for _, s := range CalibrationScenarios() {
		require.NoError(t, s.Validate(), s.Name)
		back, err := scenario.Parse(s.Name, s.Format())
		require.NoError(t, err, s.Name)
		assert.Equal(t, s.Format(), back.Format(), s.Name)
		m, err := engine.RunModel(context.Background(), s, engine.ModelOptions{})
		require.NoError(t, err, s.Name)
		cells := hostCells(s)
		require.NotEmpty(t, cells, s.Name)
		for _, c := range cells {
			for _, i := range c.ops {
				assert.Empty(t, m.Ops[i].Errno, "%s op %d", s.Name, i+1)
			}
			keys = append(keys, s.Name+"/"+c.column)
		}
		if strings.HasPrefix(s.Name, "write-bs") {
			assert.NotZero(t, m.Ops[4].Counters.Value("bio.write"), "%s: the first fsync writes back", s.Name)
		}
		for _, c := range cells {
			want := map[string][2]uint64{"open": {1, 0}, "close": {0, 1}, "blkbszset": {1, 1}}[c.column]
			for _, i := range c.ops {
				ev := m.Ops[i].Events
				assert.Equal(t, want, [2]uint64{ev.Value("file-opens"), ev.Value("file-releases")}, "%s op %d", s.Name, i+1)
			}
		}
	}
	for _, c := range []Clock{ClockWall, ClockCPU} {
		fit := HostFit(c)
		assert.NotContains(t, fit.Params, timing.ParamTimer, "%s: measured, not fitted", c)
		assert.NotContains(t, fit.Params, timing.ParamSyscall, "%s: measured, not fitted", c)
		assert.Equal(t, c == ClockCPU, slices.Contains(fit.Params, timing.ParamTracepoint), "%s: a firing is priced where they fire", c)
		for _, k := range fit.Cells {
			assert.Contains(t, keys, k, c)
			for _, heldOut := range []string{"write-bs4096/", "read-cached/", "blkbszset/"} {
				assert.False(t, strings.HasPrefix(k, heldOut), "%s: %s is predicted, not fitted", c, k)
			}
			if c == ClockWall {
				assert.NotContains(t, k, "/fsync", "the wall clock fits no fsync: its time is the disk's")
			}
		}
		assert.Less(t, len(fit.Params), len(fit.Cells), c)
		for q := range fit.Why {
			assert.Contains(t, fit.Params, q, "%s: a reason for a cost the fit frees", c)
		}
	}
	_, err := Calibrate(context.Background(), timing.X86Server(), HostFit(ClockCPU), ClockWall, Options{}, engine.RunOnQueue)
	assert.ErrorContains(t, err, "fsync", "an fsync cell on the wall clock is refused before anything runs")
}

// TestParseClock reads both clocks' names back and refuses another.
func TestParseClock(t *testing.T) {
	for _, c := range []Clock{ClockWall, ClockCPU} {
		back, err := ParseClock(c.String())
		require.NoError(t, err)
		assert.Equal(t, c, back)
	}
	_, err := ParseClock("monotonic")
	assert.ErrorContains(t, err, "want wall")
}

// TestHostObservation pools a cell from a host result and a model result:
// the host's time per call over the pooled operations, CPU or elapsed by
// the clock; the model's events per call but the bios' completions and one
// system call, and on the CPU clock one timed interval and the tracepoint
// firings in the calling thread; a failed or untimed operation is refused.
func TestHostObservation(t *testing.T) {
	kernel := &scenario.Result{Ops: []scenario.OpResult{
		{Op: "blkbszset a 1K", CPU: &scenario.Measurement{N: 1, MeanNs: 1000}, Wall: &scenario.Span{MinNs: 1500, MaxNs: 1500}},
		{Op: "blkbszset a 4K", CPU: &scenario.Measurement{N: 3, MeanNs: 2000}, Wall: &scenario.Span{MinNs: 9000, MaxNs: 9000}},
	}}
	model := &scenario.Result{Ops: []scenario.OpResult{
		{Events: scenario.Counters{scenario.C("folio-locks", 2), scenario.C("bio-completions", 4)},
			Counters: scenario.Counters{scenario.C("buffer.dirty", 3)}},
		{Events: scenario.Counters{scenario.C("folio-locks", 6)},
			Counters: scenario.Counters{scenario.C("bio.write", 5), scenario.C("rq.complete", 7)}},
	}}
	cell := hostCell{"blkbszset", []int{0, 1}}
	for _, tc := range []struct {
		clock              Clock
		ns, firings, timer float64
	}{
		{ClockCPU, 1750, 2, 1},  // (1000 + 3×2000) / 4 calls; 8 firings in the thread over 4 calls
		{ClockWall, 2625, 0, 0}, // (1500 + 9000) / 4 calls; no tracepoint and no clock per call
	} {
		o, err := hostObservation("s", cell, tc.clock, kernel, model)
		require.NoError(t, err, tc.clock)
		assert.InDelta(t, tc.ns, o.Published, 1e-9, tc.clock)
		assert.InDelta(t, 2, o.Q[timing.Ev(mustEvent(t, "folio-locks"))], 1e-9, "%s: 8 events over 4 calls", tc.clock)
		assert.Zero(t, o.Q[timing.Ev(mustEvent(t, "bio-completions"))], "%s: the loop worker's, not the calling thread's", tc.clock)
		assert.InDelta(t, tc.firings, o.Q[timing.ParamTracepoint], 1e-9, tc.clock)
		assert.InDelta(t, 1, o.Q[timing.ParamSyscall], 0, tc.clock)
		assert.InDelta(t, tc.timer, o.Q[timing.ParamTimer], 0, tc.clock)
	}

	kernel.Ops[1].Wall = nil
	_, err := hostObservation("s", cell, ClockWall, kernel, model)
	assert.ErrorContains(t, err, "cannot be a cell", "no elapsed time: a counting pass alone")
	_, err = hostObservation("s", cell, ClockCPU, kernel, model)
	assert.NoError(t, err, "the CPU clock needs no timing pass")
	kernel.Ops[1].Errno = "EINVAL"
	_, err = hostObservation("s", cell, ClockCPU, kernel, model)
	assert.ErrorContains(t, err, "cannot be a cell")
	kernel.Ops[1].Errno, kernel.Ops[1].CPU = "", nil
	_, err = hostObservation("s", cell, ClockCPU, kernel, model)
	assert.Error(t, err)
}

// TestCalibrateLive runs the host calibration on this machine's kernel
// (BHSIM_KERNEL=1, as root) and checks that it fits and predicts: every
// cell has a label, the held-out half exists, the profile is named, and its
// timer and system-call costs are the measured ones.
func TestCalibrateLive(t *testing.T) {
	if os.Getenv("BHSIM_KERNEL") != "1" {
		t.Skip("set BHSIM_KERNEL=1 to calibrate on the host kernel (needs root, loop devices and tracefs)")
	}
	for _, clock := range []Clock{ClockWall, ClockCPU} {
		t.Run(clock.String(), func(t *testing.T) {
			c, err := Calibrate(context.Background(), timing.X86Server(), HostFit(clock), clock, Options{NoSignalHandler: true}, engine.RunOnQueue)
			require.NoError(t, err)
			assert.Equal(t, "x86-host", c.Profile.Name)
			var predicted int
			for _, cell := range c.Calibration.Cells {
				if cell.Label == timing.LabelPredicted {
					predicted++
					assert.Positive(t, cell.Simulated, cell.Row+"/"+cell.Column)
				}
			}
			assert.Positive(t, predicted)
			assert.Contains(t, c.Report(), "predicted")
			assert.Contains(t, c.Report(), clock.what())
			assert.Equal(t, c.Harness.TimerNS, c.Profile.NS[timing.ParamTimer], "the timer is measured, not fitted")
			assert.Equal(t, c.Harness.SyscallNS, c.Profile.NS[timing.ParamSyscall], "the system call is measured, not fitted")
			assert.Contains(t, c.Profile.Source[timing.ParamSyscall], "measured on this host")
			fitted := timing.Ev(bufcache.EvBHFree)
			if clock == ClockCPU {
				fitted = timing.ParamTracepoint
			}
			assert.Contains(t, c.Profile.Source[fitted], "fitted")
		})
	}
}

// TestThreadFirings counts one firing for each counter of a tracepoint the
// calling thread fires, none for the counters of an event's arguments, and
// none for the completions and the flush machinery's issues, which other
// threads make.
func TestThreadFirings(t *testing.T) {
	for _, tc := range []struct {
		name string
		cs   scenario.Counters
		want float64
	}{
		{"none", nil, 0},
		{"a write's", scenario.Counters{scenario.C("buffer.dirty", 8), scenario.C("pagecache.add.order=0", 1),
			scenario.C("pagecache.add.pages", 1), scenario.C("pagecache.dirty", 1)}, 10},
		{"an fsync's", scenario.Counters{scenario.C("bio.write", 16), scenario.C("bio.write.bytes=512", 16),
			scenario.C("bio.flush", 1), scenario.C("bio.preflush", 1), scenario.C("merge.back", 15),
			scenario.C("plug.plug", 1), scenario.C("plug.unplug", 1), scenario.C("plug.unplug.rqs", 1),
			scenario.C("rq.get", 2), scenario.C("rq.insert", 1), scenario.C("rq.write", 1),
			scenario.C("rq.write.bytes=8192", 1), scenario.C("sectors.written", 16), scenario.C("rq.flush", 1),
			scenario.C("rq.complete", 2), scenario.C("stat.write.ios", 1)}, 16 + 1 + 15 + 2 + 2 + 1 + 1},
		{"a read's", scenario.Counters{scenario.C("readahead.sync", 1), scenario.C("readahead.order=0", 1),
			scenario.C("readahead.window.pages=32", 1), scenario.C("readahead.unbounded.pages=4", 1),
			scenario.C("pagecache.add.order=2", 8), scenario.C("bio.read", 1), scenario.C("bio.read.ahead", 1),
			scenario.C("bio.split", 1), scenario.C("merge.front", 1), scenario.C("rq.read", 2)}, 1 + 1 + 1 + 8 + 1 + 1 + 1 + 2},
		{"errors and a truncation", scenario.Counters{scenario.C("wberr.set", 1), scenario.C("wberr.report", 2),
			scenario.C("pagecache.remove.order=0", 3), scenario.C("pagecache.remove.pages", 3), scenario.C("rq.error", 1)}, 5},
		{"a write with a preflush", scenario.Counters{scenario.C("rq.write.preflush", 1), scenario.C("bio.write", 1),
			scenario.C("bio.preflush", 1), scenario.C("rq.get", 1), scenario.C("rq.write", 1), scenario.C("merge.rq", 1)}, 3},
	} {
		assert.InDelta(t, tc.want, threadFirings(tc.cs), 0, tc.name)
	}
}

// mustEvent returns the event called name.
func mustEvent(t *testing.T, name string) bufcache.Event {
	t.Helper()
	e, err := bufcache.ParseEvent(name)
	require.NoError(t, err)
	return e
}

// TestMedianRuns keeps the median of each cell over the runs, the middle
// pair's mean for an even count.
func TestMedianRuns(t *testing.T) {
	cell := func(v ...float64) [][]timing.Observation {
		var runs [][]timing.Observation
		for _, x := range v {
			runs = append(runs, []timing.Observation{{Row: "r", Column: "c", Published: x}})
		}
		return runs
	}
	assert.InDelta(t, 2, medianRuns(cell(1, 9, 2))[0].Published, 0)
	assert.InDelta(t, 3, medianRuns(cell(1, 9, 2, 4))[0].Published, 0)
	assert.Equal(t, "r", medianRuns(cell(5))[0].Row)
}
