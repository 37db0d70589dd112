package timing

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
)

// streamingRun returns the loads of a synthetic streaming run: a writer CPU
// that copies bytes and does other kernel work, a flusher CPU that
// submits bios, the memory bus with busBytes, and a disk busy diskNS.
func streamingRun(copied, bios, busBytes, diskNS float64) []Load {
	var w, f, mem Quantities
	w[Ev(bufcache.EvCopyByte)] = copied
	w[Ev(bufcache.EvFolioAlloc)] = copied / 4096
	f[Ev(bufcache.EvBioSubmit)] = bios
	mem[ParamMemByte] = busBytes
	cpus := []Load{CPULoad("writer", w), CPULoad("flusher", f)}
	return append(cpus, AllCPUs(2, cpus...), MemoryLoad(mem), Load{Name: "disk", FixedNS: diskNS, Servers: 1})
}

// contendedProfile is the Helios4 profile with the memory-stall share k.
func contendedProfile(k float64) *Profile {
	p := Helios4()
	p.NS[ParamMemStall] = k
	return p
}

// TestContendedIsAFixedPoint checks the closed form of Contended against
// its definition on random runs: at the solved utilisation, the binding
// load's time is the run's time, no load needs more, and the memory bus's
// utilisation is its demand over that time; with a zero share the run's
// time is the plain bottleneck's.
func TestContendedIsAFixedPoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []float64{0, 0.2, 0.45, 0.9} {
		p := contendedProfile(k)
		for range 200 {
			loads := streamingRun(rng.Float64()*8192, rng.Float64()*16, rng.Float64()*40000, rng.Float64()*30000)
			b, tt := p.Bottleneck(loads)
			require.GreaterOrEqual(t, b, 0)
			c := p.Contended(loads)
			plain := 0.0
			for i := range loads {
				plain = max(plain, p.BusyNS(&loads[i]))
				assert.LessOrEqual(t, c.BusyNS(p, &loads[i]), tt*(1+1e-9), "no load needs more than the run's time")
			}
			assert.InDelta(t, tt, c.BusyNS(p, &loads[b]), tt*1e-9, "the binding load's time is the run's")
			if k == 0 {
				assert.InDelta(t, plain, tt, plain*1e-12, "no share: the plain bottleneck")
				assert.Zero(t, c.Utilisation)
				continue
			}
			assert.GreaterOrEqual(t, tt, plain*(1-1e-12), "contention never speeds a run up")
			assert.InDelta(t, p.BusyNS(&loads[3])/tt, c.Utilisation, 1e-12, "ρ = M / T")
			assert.Less(t, c.Utilisation, 1.0)
		}
	}
}

// TestContendedStretchesWhatWaits checks which work the bus's load stretches:
// a CPU's copies in full and the share k of its other work, a disk not at
// all, and a run the busier the bus.
func TestContendedStretchesWhatWaits(t *testing.T) {
	p := contendedProfile(0.5)
	loads := streamingRun(4096, 8, 16384, 1000)
	c := p.Contended(loads)
	require.Greater(t, c.Utilisation, 0.0)
	stretch := 1 / (1 - c.Utilisation)

	writer, flusher, disk := &loads[0], &loads[1], &loads[4]
	cp := 4096 * p.NS[Ev(bufcache.EvCopyByte)]
	rest := p.BusyNS(writer) - cp
	assert.InDelta(t, 0.5*rest+(cp+0.5*rest)*stretch, c.BusyNS(p, writer), 1e-6, "the copy waits in full, half the rest")
	assert.InDelta(t, 0.5*p.BusyNS(flusher)*(1+stretch), c.BusyNS(p, flusher), 1e-6, "no stream: half the work waits")
	assert.Equal(t, p.BusyNS(disk), c.BusyNS(p, disk), "a disk does not wait for the bus")

	_, t1 := p.Bottleneck(loads)
	_, t2 := p.Bottleneck(streamingRun(4096, 8, 2*16384, 1000))
	assert.Greater(t, t2, t1, "twice the bus traffic, a slower run")
	_, t0 := contendedProfile(0.1).Bottleneck(loads)
	assert.Greater(t, t1, t0, "a larger share, a slower run")
}

// TestCalibrateUnderContention fits the memory bus's cost to runs whose
// times depend on it nonlinearly (through the bus's load on the CPUs) and
// checks that the fit recovers the cost that priced them, from a prior half
// of it.
func TestCalibrateUnderContention(t *testing.T) {
	truth := contendedProfile(0.45)
	truth.NS[ParamMemByte] = 0.6
	var obs []Observation
	var keys []string
	for i, run := range [][4]float64{{4096, 1, 16384, 17000}, {4096, 8, 16384, 17000}, {4096, 1, 36000, 9000}, {4096, 16, 20480, 9000}} {
		o := Observation{Row: "r", Column: string(rune('a' + i)), Loads: streamingRun(run[0], run[1], run[2], run[3]), Bytes: 4096}
		o.Published = truth.Simulate(o)
		obs = append(obs, o)
		keys = append(keys, o.Key())
	}
	start := contendedProfile(0.45)
	start.NS[ParamMemByte] = 0.3
	fitted, cal, err := Calibrate(start, Fit{Params: []Param{ParamMemByte}, Cells: keys}, obs)
	require.NoError(t, err)
	assert.InDelta(t, 0.6, fitted.NS[ParamMemByte], 1e-4)
	for _, c := range cal.Cells {
		assert.InDelta(t, 0, c.RelError(), 1e-4, c.Column)
	}
}

// TestMemStallIsAShare checks the share's own rules: a profile's JSON and
// SetCost refuse one outside [0, 1), a profile file from before the share
// reads with 0, a fit cannot move it, and Describe shows its unit.
func TestMemStallIsAShare(t *testing.T) {
	p := Helios4()
	for _, bad := range []float64{-0.1, 1, 2} {
		assert.Error(t, p.SetCost("memory-stall", bad, "test"), "%v", bad)
	}
	require.NoError(t, p.SetCost("memory-stall", 0.3, "test"))
	assert.Contains(t, p.Describe(), "memory-stall          0.30 share")

	b, err := json.Marshal(p)
	require.NoError(t, err)
	var j map[string]any
	require.NoError(t, json.Unmarshal(b, &j))
	costs := j["costs"].([]any)
	kept := costs[:0]
	for _, c := range costs {
		if c.(map[string]any)["param"] != "memory-stall" {
			kept = append(kept, c)
		}
	}
	j["costs"] = kept
	old, err := json.Marshal(j)
	require.NoError(t, err)
	var q Profile
	require.NoError(t, json.Unmarshal(old, &q), "a file without memory-stall")
	assert.Zero(t, q.NS[ParamMemStall])
	bad := strings.Replace(string(b), `"ns":0.3,`, `"ns":1.5,`, 1)
	require.NotEqual(t, string(b), bad)
	assert.ErrorContains(t, json.Unmarshal([]byte(bad), &q), "share")

	obs := []Observation{{Row: "r", Column: "a", Published: 1, Q: Quantities{ParamTimer: 1}}, {Row: "r", Column: "b", Published: 2, Q: Quantities{ParamTimer: 2}}}
	_, _, err = Calibrate(p, Fit{Params: []Param{ParamMemStall}, Cells: []string{"r/a"}}, obs)
	assert.ErrorContains(t, err, "share")
}
