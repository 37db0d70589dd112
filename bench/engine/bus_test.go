package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
)

// busRun runs a dd-like stream on a Helios4 priced by p: 300 MiB of 1 MiB
// writes at 512-byte blocks on kernel 5.10.10 (one buffer_head and bio
// per 512 bytes), onto an HDD, in the Helios4's memory, where the
// flusher's writeback is the bottleneck. It returns the engine after the
// run, for its clock and its loads.
func busRun(t *testing.T, p *timing.Profile) *engine {
	t.Helper()
	return engineRun(t, "seq:dev=2000M,n=300,size=1M,reads=0,cpus=1", RunOptions{Kernel: MustKernel("5.10.10"), Profile: p, Disk: Disk{Name: "hdd"}, MemoryBytes: 853 << 20})
}

// engineRun runs the generator spec with options o and returns the
// engine after the run, for its clock, its machine and its loads.
func engineRun(t *testing.T, spec string, o RunOptions) *engine {
	t.Helper()
	w := genWorkload(t, spec)
	o, err := o.normalize(w)
	require.NoError(t, err)
	rd, err := w.Open()
	require.NoError(t, err)
	e, err := newEngine(w, o, o.Kernel)
	require.NoError(t, err)
	require.NoError(t, e.run(context.Background(), rd))
	return e
}

// TestBusStretchesAsContended holds the clock's memory bus (memBus) to the
// closed form it follows, timing.Profile.Contended: on a run whose
// flusher is the bottleneck for its whole length, the flusher's CPU time
// as the clock charged it, each pass stretched at the bus's load so far,
// is within 5 % of its load's demand stretched at the run's M / T — two
// computations of the same contention, one online, one after the run.
// And the bus matters: without the memory-stall share the same run's
// flusher is faster by more than a tenth, and so is the run.
func TestBusStretchesAsContended(t *testing.T) {
	p := timing.Helios4()
	require.Positive(t, p.NS[timing.ParamMemStall], "the Helios4 profile has a memory-stall share")
	e := busRun(t, p)
	loads := e.loads()
	fl := slices.IndexFunc(loads, func(l timing.Load) bool { return l.Name == "cpu1 (flusher)" })
	require.GreaterOrEqual(t, fl, 0)
	b, bound := p.Bottleneck(loads)
	require.Equal(t, fl, b, "the flusher bounds the run")
	assert.InEpsilon(t, bound, e.fl.busy, 0.05, "the clock's flusher against Contended's")
	r := e.result(true)
	assert.GreaterOrEqual(t, r.DurationNS, bound, "the bound is a bound")
	assert.Greater(t, resource(t, r, "memory").Utilisation, 0.2, "copies and DMA keep the bus busy")

	idle := *p
	idle.NS[timing.ParamMemStall] = 0
	plain := busRun(t, &idle)
	assert.Greater(t, e.fl.busy, 1.1*plain.fl.busy, "contention slows the flusher")
	assert.Greater(t, r.DurationNS, 1.1*plain.result(true).DurationNS, "and the run")
}

// TestBusIdleWithoutStallShare checks that a profile whose memory-stall
// share is 0 keeps the plain clock: the price of a byte on the bus changes
// no time of the run, and the flusher's line is its load's demand.
func TestBusIdleWithoutStallShare(t *testing.T) {
	p := timing.Helios4()
	p.NS[timing.ParamMemStall] = 0
	a := busRun(t, p)
	q := *p
	q.NS[timing.ParamMemByte] *= 3
	b := busRun(t, &q)
	ra, rb := a.result(true), b.result(true)
	assert.Equal(t, ra.DurationNS, rb.DurationNS)
	assert.Equal(t, a.fl.busy, b.fl.busy)
	assert.Equal(t, resource(t, ra, "cpu1 (flusher)").BusyNS, resource(t, rb, "cpu1 (flusher)").BusyNS)
}

// resource returns r's resource called name.
func resource(t *testing.T, r *RunResult, name string) Resource {
	t.Helper()
	i := slices.IndexFunc(r.Resources, func(res Resource) bool { return res.Name == name })
	require.GreaterOrEqual(t, i, 0, "no resource %q", name)
	return r.Resources[i]
}

// TestMemBusCPU checks what a CPU's work puts on the bus and how the bus
// stretches it: a copy is a load and a store a byte, a clear a store a
// byte, until the work's end; the stall part (the copy and the clear, and
// the memory-stall share of the rest) takes 1 / (1 − ρ) as long; stretch
// alone changes nothing.
func TestMemBusCPU(t *testing.T) {
	p := timing.X86Server()
	p.NS[timing.ParamMemByte] = 1
	p.NS[timing.Ev(bufcache.EvCopyByte)] = 0.5
	p.NS[timing.ParamZeroByte] = 0.25
	p.NS[timing.ParamMemStall] = 0.2
	b := memBus{p: p}
	b.dma(50, 100) // ρ = 0.5 at 100
	require.InDelta(t, 0.5, b.share(100), 1e-12)
	// 100 ns of work copying 40 bytes: a 20 ns stream, and 0.2 of the
	// other 80 ns, wait: 36 ns, stretched to 72 at ρ = 0.5.
	assert.InDelta(t, 136, b.stretch(100, 100, streams{copied: 40}), 1e-9)
	assert.InDelta(t, 0.5, b.share(100), 1e-12, "stretch puts nothing on the bus")
	assert.InDelta(t, 136, b.cpu(100, 100, streams{copied: 40}), 1e-9)
	assert.InDelta(t, 130, b.bytes, 1e-9, "the DMA's 50 bytes and the copy's 2 × 40")
	assert.InDelta(t, 236, b.until, 1e-9, "until the work's end")
	assert.InDelta(t, 80+20/(1-130.0/300), b.cpu(300, 100, streams{}), 1e-9, "no stream: the share of the rest alone, at ρ = 130/300")
	// 100 ns clearing 80 bytes (a 20 ns stream) and copying 40 (20 ns):
	// 40 ns of streams and 0.2 of the other 60 wait, at ρ = 130/500.
	rho := 130.0 / 500
	assert.InDelta(t, 48+52/(1-rho), b.cpu(500, 100, streams{copied: 40, zeroed: 80}), 1e-9)
	assert.InDelta(t, 130+80+80, b.bytes, 1e-9, "the clear's 80 bytes, a store each, and the copy's 2 × 40")
	p.NS[timing.ParamMemStall] = 0
	assert.Equal(t, 100.0, b.stretch(300, 100, streams{copied: 40, zeroed: 80}), "no memory-stall share: the plain clock")
}

// TestMemBusShare checks the bus's utilisation: its work over the time it
// spans, up to the last work's end, held below maxBusShare.
func TestMemBusShare(t *testing.T) {
	p := timing.X86Server()
	p.NS[timing.ParamMemByte] = 1 // a byte takes 1 ns of the bus
	tests := []struct {
		name    string
		dma     []struct{ n, end float64 }
		at, rho float64
	}{
		{"idle", nil, 100, 0},
		{"work that spans no time", []struct{ n, end float64 }{{10, 0}}, 0, 0},
		{"a quarter", []struct{ n, end float64 }{{25, 50}}, 100, 0.25},
		{"work ahead of the moment", []struct{ n, end float64 }{{25, 200}}, 100, 0.125},
		{"two transfers", []struct{ n, end float64 }{{25, 50}, {25, 80}}, 100, 0.5},
		{"more work than time", []struct{ n, end float64 }{{300, 100}}, 100, maxBusShare},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := memBus{p: p}
			for _, d := range tt.dma {
				b.dma(uint64(d.n), d.end)
			}
			assert.InDelta(t, tt.rho, b.share(tt.at), 1e-12)
		})
	}
}
