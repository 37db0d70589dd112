package host

import (
	"context"
	"os"
	"path/filepath"
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
	rec := modelRecord(t, ClockWall, timing.X86Server())
	fit := HostFit(ClockWall)
	fit.Cells = append(fit.Cells, "write-bs512/fsync 1")
	_, err := rec.Fit(context.Background(), timing.X86Server(), fit, engine.RunOnQueue)
	assert.ErrorContains(t, err, "fsync", "an fsync cell on the wall clock is refused before anything runs")
	_, err = rec.Fit(context.Background(), timing.X86Server(), HostFit(ClockCPU), engine.RunOnQueue)
	assert.ErrorContains(t, err, "wants its own fit", "the CPU clock's fit of a wall-clock record")
}

// testHarness is the harness of the records the tests make.
var testHarness = Harness{TimerNS: 1300, SyscallNS: 1100}

// modelRecord returns a record of clock c whose "kernel" is the model
// priced by truth: each cell's time in three runs is the model's at
// truth's costs (with testHarness's timer and system call), scaled by 0.9,
// 1 and 1.2, so that the median is truth's own.
func modelRecord(t *testing.T, c Clock, truth *timing.Profile) *CalibrationRecord {
	t.Helper()
	truth = truth.Scaled(truth.Name, truth.Description, 1, "")
	truth.Set(timing.ParamTimer, testHarness.TimerNS, "test")
	truth.Set(timing.ParamSyscall, testHarness.SyscallNS, "test")
	rec := &CalibrationRecord{Schema: CalibrationSchema, Kernel: "6.18-test", Machine: "x86_64", Clock: c.String(), Runs: 3, Harness: testHarness}
	for _, s := range CalibrationScenarios() {
		q := &scenario.QueueLimits{LogicalBlockSize: 512, PhysicalBlockSize: 512, MaxSectorsKB: 1280, MaxHWSectorsKB: 1280,
			MaxSegments: 128, MaxSegmentSize: 65536, Scheduler: "none", NrRequests: 256, ReadAheadKB: 128}
		m, err := engine.RunOnQueue(context.Background(), s, q)
		require.NoError(t, err, s.Name)
		rs := RecordedScenario{Name: s.Name, Queue: q}
		for _, hc := range hostCells(s) {
			if c == ClockWall && diskBound(hc.column) {
				continue
			}
			calls := 0
			for _, i := range hc.ops {
				calls += m.Ops[i].Calls
			}
			require.Positive(t, calls, "%s/%s", s.Name, hc.column)
			qs, err := modelQuantities(s.Name, hc, c, m, calls)
			require.NoError(t, err)
			ns := truth.SimNSOf(timing.Observation{Q: qs}) * float64(calls)
			rs.Cells = append(rs.Cells, RecordedCell{Cell: hc.column, Calls: calls, NS: []float64{1.2 * ns, ns, 0.9 * ns}})
		}
		rec.Scenarios = append(rec.Scenarios, rs)
	}
	return rec
}

// TestFitRecovers fits a record whose kernel is the model itself, priced
// by costs away from the prior: through the record's file, the fit finds
// those costs, every cell's error is nil, and the timer and system call
// are the record's measured ones.
func TestFitRecovers(t *testing.T) {
	for _, c := range []Clock{ClockWall, ClockCPU} {
		t.Run(c.String(), func(t *testing.T) {
			fit := HostFit(c)
			truth := timing.X86Server()
			for k, q := range fit.Params {
				truth.Set(q, truth.NS[q]*(1.5+0.25*float64(k%3))+10, "the test's truth")
			}
			file := filepath.Join(t.TempDir(), "calibration.json")
			require.NoError(t, modelRecord(t, c, truth).WriteFile(file))
			rec, err := ReadCalibrationRecord(file)
			require.NoError(t, err)
			got, err := rec.Fit(context.Background(), timing.X86Server(), fit, engine.RunOnQueue)
			require.NoError(t, err)
			for _, q := range fit.Params {
				assert.InEpsilon(t, truth.NS[q], got.Profile.NS[q], 1e-6, "%s: %s", c, q)
			}
			for _, cell := range got.Calibration.Cells {
				assert.InDelta(t, 0, cell.RelError(), 1e-6, "%s/%s", cell.Row, cell.Column)
			}
			assert.Equal(t, testHarness.TimerNS, got.Profile.NS[timing.ParamTimer])
			assert.Equal(t, testHarness.SyscallNS, got.Profile.NS[timing.ParamSyscall])
			assert.Equal(t, "6.18-test", got.Kernel)
			assert.Equal(t, c, got.Clock)
		})
	}
}

// TestCalibrationRecordCheck refuses a record that does not hold
// together, and a fit refuses a record without a scenario or cell.
func TestCalibrationRecordCheck(t *testing.T) {
	good := modelRecord(t, ClockWall, timing.X86Server())
	require.NoError(t, good.check())
	for _, tc := range []struct {
		name, want string
		spoil      func(r *CalibrationRecord)
	}{
		{"another schema", "schema", func(r *CalibrationRecord) { r.Schema = "bhsim-host-calibration/0" }},
		{"an unknown clock", "clock", func(r *CalibrationRecord) { r.Clock = "monotonic" }},
		{"no runs", "want all positive", func(r *CalibrationRecord) { r.Runs = 0 }},
		{"no harness", "want all positive", func(r *CalibrationRecord) { r.Harness.SyscallNS = 0 }},
		{"no queue", "no queue limits", func(r *CalibrationRecord) { r.Scenarios[2].Queue = nil }},
		{"a run missing", "positive times", func(r *CalibrationRecord) { r.Scenarios[0].Cells[1].NS = r.Scenarios[0].Cells[1].NS[1:] }},
		{"a time not positive", "positive times", func(r *CalibrationRecord) { r.Scenarios[0].Cells[0].NS[2] = 0 }},
		{"no calls", "positive times", func(r *CalibrationRecord) { r.Scenarios[1].Cells[0].Calls = 0 }},
		{"calls the scenario does not make", "made 1024 calls, the scenario makes 2048", func(r *CalibrationRecord) { r.Scenarios[0].Cells[0].Calls = 1024 }},
		{"the other clock", "wants its own fit", func(r *CalibrationRecord) { r.Clock = "cpu" }},
		{"a scenario missing", "no scenario write-64k", func(r *CalibrationRecord) {
			r.Scenarios = slices.DeleteFunc(r.Scenarios, func(s RecordedScenario) bool { return s.Name == "write-64k" })
		}},
		{"a cell missing", "has no cell close", func(r *CalibrationRecord) {
			r.Scenarios[0].Cells = slices.DeleteFunc(r.Scenarios[0].Cells, func(c RecordedCell) bool { return c.Cell == "close" })
		}},
	} {
		r := modelRecord(t, ClockWall, timing.X86Server())
		tc.spoil(r)
		_, err := r.Fit(context.Background(), timing.X86Server(), HostFit(ClockWall), engine.RunOnQueue)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	_, err := ReadCalibrationRecord(filepath.Join(t.TempDir(), "none.json"))
	assert.Error(t, err)
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

// TestKernelCell pools a cell of a host run: its calls and their time,
// CPU or elapsed by the clock; a failed or untimed operation is refused.
func TestKernelCell(t *testing.T) {
	kernel := &scenario.Result{Ops: []scenario.OpResult{
		{Op: "blkbszset a 1K", CPU: &scenario.Measurement{N: 1, MeanNs: 1000}, Wall: &scenario.Span{MinNs: 1500, MaxNs: 1500}},
		{Op: "blkbszset a 4K", CPU: &scenario.Measurement{N: 3, MeanNs: 2000}, Wall: &scenario.Span{MinNs: 9000, MaxNs: 9000}},
	}}
	cell := hostCell{"blkbszset", []int{0, 1}}
	for _, tc := range []struct {
		clock Clock
		ns    float64
	}{
		{ClockCPU, 7000},   // 1000 + 3×2000
		{ClockWall, 10500}, // 1500 + 9000
	} {
		calls, ns, err := kernelCell("s", cell, tc.clock, kernel)
		require.NoError(t, err, tc.clock)
		assert.Equal(t, 4, calls, tc.clock)
		assert.InDelta(t, tc.ns, ns, 1e-9, tc.clock)
	}
	kernel.Ops[1].Wall = nil
	_, _, err := kernelCell("s", cell, ClockWall, kernel)
	assert.ErrorContains(t, err, "cannot be a cell", "no elapsed time: a counting pass alone")
	_, _, err = kernelCell("s", cell, ClockCPU, kernel)
	assert.NoError(t, err, "the CPU clock needs no timing pass")
	kernel.Ops[1].Errno = "EINVAL"
	_, _, err = kernelCell("s", cell, ClockCPU, kernel)
	assert.ErrorContains(t, err, "cannot be a cell")
	kernel.Ops[1].Errno, kernel.Ops[1].CPU = "", nil
	_, _, err = kernelCell("s", cell, ClockCPU, kernel)
	assert.Error(t, err)
}

// TestModelQuantities takes a cell's quantities per call from the model:
// its events but the bios' completions, one system call, and on the CPU
// clock one timed interval and the tracepoint firings in the calling
// thread; an operation the model failed is refused.
func TestModelQuantities(t *testing.T) {
	model := &scenario.Result{Ops: []scenario.OpResult{
		{Events: scenario.Counters{scenario.C("folio-locks", 2), scenario.C("bio-completions", 4)},
			Counters: scenario.Counters{scenario.C("buffer.dirty", 3)}},
		{Events: scenario.Counters{scenario.C("folio-locks", 6)},
			Counters: scenario.Counters{scenario.C("bio.write", 5), scenario.C("rq.complete", 7)}},
	}}
	cell := hostCell{"blkbszset", []int{0, 1}}
	for _, tc := range []struct {
		clock          Clock
		firings, timer float64
	}{
		{ClockCPU, 2, 1},  // 8 firings in the thread over 4 calls
		{ClockWall, 0, 0}, // no tracepoint and no clock per call
	} {
		q, err := modelQuantities("s", cell, tc.clock, model, 4)
		require.NoError(t, err, tc.clock)
		assert.InDelta(t, 2, q[timing.Ev(mustEvent(t, "folio-locks"))], 1e-9, "%s: 8 events over 4 calls", tc.clock)
		assert.Zero(t, q[timing.Ev(mustEvent(t, "bio-completions"))], "%s: the loop worker's, not the calling thread's", tc.clock)
		assert.InDelta(t, tc.firings, q[timing.ParamTracepoint], 1e-9, tc.clock)
		assert.InDelta(t, 1, q[timing.ParamSyscall], 0, tc.clock)
		assert.InDelta(t, tc.timer, q[timing.ParamTimer], 0, tc.clock)
	}
	model.Ops[1].Errno = "EIO"
	_, err := modelQuantities("s", cell, ClockWall, model, 4)
	assert.ErrorContains(t, err, "cannot be a cell")
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
			rec, err := Measure(context.Background(), clock, Options{NoSignalHandler: true})
			require.NoError(t, err)
			require.NoError(t, rec.check())
			c, err := rec.Fit(context.Background(), timing.X86Server(), HostFit(clock), engine.RunOnQueue)
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

// TestMedian keeps the middle value, the middle pair's mean for an even
// count.
func TestMedian(t *testing.T) {
	assert.InDelta(t, 2, median([]float64{1, 9, 2}), 0)
	assert.InDelta(t, 3, median([]float64{1, 9, 2, 4}), 0)
	assert.InDelta(t, 5, median([]float64{5}), 0)
}
