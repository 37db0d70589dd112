package host

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/bufcache"
)

// TestCalibrationScenarios checks the microbenchmarks: each validates and
// round-trips through the scenario language, runs on the model without an
// error in any cell, and HostFit fits cells that exist, about half of them,
// with fewer costs than cells.
func TestCalibrationScenarios(t *testing.T) {
	var keys []string
	for _, s := range CalibrationScenarios() {
		require.NoError(t, s.Validate(), s.Name)
		back, err := workload.Parse(s.Name, s.Format())
		require.NoError(t, err, s.Name)
		assert.Equal(t, s.Format(), back.Format(), s.Name)
		m, err := workload.RunModel(context.Background(), s, workload.ModelOptions{})
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
	}
	fit := HostFit()
	for _, k := range fit.Cells {
		assert.Contains(t, keys, k)
	}
	assert.InDelta(t, len(keys)/2, len(fit.Cells), 1, "half the cells fitted")
	assert.Less(t, len(fit.Params), len(fit.Cells))
	for q := range fit.Why {
		assert.Contains(t, fit.Params, q, "a reason for a cost the fit frees")
	}
}

// TestHostObservation pools a cell from a host result and a model result:
// the host's CPU time per call over the pooled operations, the model's
// events per call plus one system call; a failed or untimed operation is
// refused.
func TestHostObservation(t *testing.T) {
	kernel := &workload.Result{Ops: []workload.OpResult{
		{Op: "blkbszset a 1K", CPU: &workload.Measurement{N: 1, MeanNs: 1000}},
		{Op: "blkbszset a 4K", CPU: &workload.Measurement{N: 3, MeanNs: 2000}},
	}}
	model := &workload.Result{Ops: []workload.OpResult{
		{Events: workload.Counters{workload.C("folio-locks", 2)}},
		{Events: workload.Counters{workload.C("folio-locks", 6)}},
	}}
	o, err := hostObservation("s", hostCell{"blkbszset", []int{0, 1}}, kernel, model)
	require.NoError(t, err)
	assert.InDelta(t, 1750, o.Published, 1e-9, "(1000 + 3×2000) / 4 calls")
	assert.InDelta(t, 2, o.Q[timing.Ev(mustEvent(t, "folio-locks"))], 1e-9, "8 events over 4 calls")
	assert.InDelta(t, 1, o.Q[timing.ParamSyscall], 0)

	kernel.Ops[1].Errno = "EINVAL"
	_, err = hostObservation("s", hostCell{"blkbszset", []int{0, 1}}, kernel, model)
	assert.ErrorContains(t, err, "cannot be a cell")
	kernel.Ops[1].Errno, kernel.Ops[1].CPU = "", nil
	_, err = hostObservation("s", hostCell{"blkbszset", []int{0, 1}}, kernel, model)
	assert.Error(t, err)
}

// TestCalibrateLive runs the host calibration on this machine's kernel
// (BHSIM_KERNEL=1, as root) and checks that it fits and predicts: every
// cell has a label, the held-out half exists, and the profile is named.
func TestCalibrateLive(t *testing.T) {
	if os.Getenv("BHSIM_KERNEL") != "1" {
		t.Skip("set BHSIM_KERNEL=1 to calibrate on the host kernel (needs root, loop devices and tracefs)")
	}
	c, err := Calibrate(context.Background(), timing.X86Server(), HostFit(), Options{NoSignalHandler: true})
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
