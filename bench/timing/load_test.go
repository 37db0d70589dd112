package timing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
)

// twoStage builds the loads of a pipeline: a writer CPU doing w copies, a
// flusher doing f bios, the all-CPU bound over both, and a disk busy diskNS.
func twoStage(w, f, diskNS float64) []Load {
	var qw, qf Quantities
	qw[bufcache.EvCopyByte] = w
	qf[bufcache.EvBioSubmit] = f
	cpus := []Load{CPULoad("writer", qw), CPULoad("flusher", qf)}
	return append(cpus, AllCPUs(2, cpus...), Load{Name: "disk", FixedNS: diskNS, Servers: 1})
}

func TestBottleneck(t *testing.T) {
	p := &Profile{}
	p.NS[bufcache.EvCopyByte], p.NS[bufcache.EvBioSubmit] = 1, 10
	for _, tc := range []struct {
		name   string
		loads  []Load
		want   string
		wantNS float64
	}{
		{"writer-bound", twoStage(100, 5, 20), "writer", 100},
		{"flusher-bound", twoStage(10, 9, 20), "flusher", 90},
		{"disk-bound", twoStage(10, 1, 95), "disk", 95},
		{"two CPUs both busy: the all-CPU bound is not above either", twoStage(80, 8, 20), "writer", 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i, ns := p.Bottleneck(tc.loads)
			require.GreaterOrEqual(t, i, 0)
			assert.Equal(t, tc.want, tc.loads[i].Name)
			assert.InDelta(t, tc.wantNS, ns, 1e-9)
			assert.Contains(t, p.DescribeLoads(tc.loads), tc.want)
		})
	}
	i, ns := p.Bottleneck(nil)
	assert.Equal(t, -1, i)
	assert.Zero(t, ns)
}

// TestAllCPUsBound checks the all-CPU bound: three threads of work on two
// CPUs take at least half their sum, more than any one of them.
func TestAllCPUsBound(t *testing.T) {
	p := &Profile{}
	p.NS[bufcache.EvCopyByte] = 1
	var q Quantities
	q[bufcache.EvCopyByte] = 60
	a, b, c := CPULoad("a", q), CPULoad("b", q), CPULoad("c", q)
	all := AllCPUs(2, a, b, c)
	assert.Equal(t, "all 2 CPUs", all.Name)
	assert.InDelta(t, 90, p.BusyNS(&all), 1e-9)
	i, _ := p.Bottleneck([]Load{a, b, c, all})
	assert.Equal(t, 3, i)
}

// TestCalibrateBottleneck fits two costs to throughput cells whose binding
// resource changes with the costs: a disk-bound cell adds no equation, and
// the cells that the fitted costs make CPU-bound are matched exactly.
func TestCalibrateBottleneck(t *testing.T) {
	truth := &Profile{Name: "truth"}
	truth.NS[bufcache.EvCopyByte], truth.NS[bufcache.EvBioSubmit] = 2, 30
	var keys []string
	mk := func(row string, w, f, disk float64, fit bool) Observation {
		o := Observation{Row: row, Column: "W", Loads: twoStage(w, f, disk), Bytes: 4096}
		o.Published = truth.Simulate(o)
		if fit {
			keys = append(keys, o.Key())
		}
		return o
	}
	obs := []Observation{
		mk("writer-bound", 1000, 10, 100, true),
		mk("flusher-bound", 100, 80, 100, true),
		mk("disk-bound", 100, 10, 5000, true),
		mk("predicted", 300, 50, 100, false),
	}
	start := &Profile{Name: "start"}
	start.NS[bufcache.EvCopyByte], start.NS[bufcache.EvBioSubmit] = 0.1, 1 // every cell disk-bound at first
	fitted, cal, err := Calibrate(start, Fit{Params: []Param{Ev(bufcache.EvCopyByte), Ev(bufcache.EvBioSubmit)}, Cells: keys}, obs)
	require.NoError(t, err)
	assert.InDelta(t, 2, fitted.NS[bufcache.EvCopyByte], 1e-9)
	assert.InDelta(t, 30, fitted.NS[bufcache.EvBioSubmit], 1e-9)
	for _, c := range cal.Cells {
		assert.InDelta(t, 0, c.RelError(), 1e-9, c.Row)
	}
	assert.InDelta(t, 4096*1e3/2000, obs[0].Published, 1e-9, "MB/s of a 2000 ns page")
}
