package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
)

// busRun runs a dd-like stream on a Helios4 priced by p: 300 MiB of 1 MiB
// writes at 512-byte blocks on kernel 5.10.10 (one buffer_head and bio
// per 512 bytes), onto an HDD, in the Helios4's memory, where the
// flusher's writeback is the bottleneck.
func busRun(t *testing.T, p *timing.Profile) *RunResult {
	t.Helper()
	r, err := Run(context.Background(), genWorkload(t, "seq:dev=2000M,n=300,size=1M,reads=0,cpus=1"),
		RunOptions{Kernel: MustKernel("5.10.10"), Profile: p, Disk: Disk{Name: "hdd"}, MemoryBytes: 853 << 20})
	require.NoError(t, err)
	return r
}

// resource returns r's resource called name.
func resource(t *testing.T, r *RunResult, name string) Resource {
	t.Helper()
	for _, res := range r.Resources {
		if res.Name == name {
			return res
		}
	}
	require.Failf(t, "no such resource", "%q", name)
	return Resource{}
}

// TestBusStretchesAsContended holds the clock's memory bus (memBus) to the
// closed form it follows, timing.Profile.Contended: on a run whose
// flusher is the bottleneck for its whole length, the flusher's time as
// the clock charged it, each pass stretched at the bus's load so far, is
// within 5 % of its demand stretched at the run's M / T — two
// computations of the same contention, one online, one after the run.
// And the bus matters: without the memory-stall share the same run's
// flusher is faster by more than a tenth, and the run with it no faster
// than the bound says.
func TestBusStretchesAsContended(t *testing.T) {
	p := timing.Helios4()
	require.Positive(t, p.NS[timing.ParamMemStall], "the Helios4 profile has a memory-stall share")
	r := busRun(t, p)
	require.Equal(t, "cpu1 (flusher)", r.Bound.Resource, "the flusher bounds the run")
	flusher := resource(t, r, "cpu1 (flusher)")
	assert.InEpsilon(t, r.Bound.BusyNS, flusher.BusyNS, 0.05, "the clock's flusher against Contended's")
	assert.GreaterOrEqual(t, r.DurationNS, r.Bound.BusyNS, "the bound is a bound")
	mem := resource(t, r, "memory")
	assert.Greater(t, mem.Utilisation, 0.2, "copies and DMA keep the bus busy")

	idle := *p
	idle.NS[timing.ParamMemStall] = 0
	plain := busRun(t, &idle)
	assert.Greater(t, flusher.BusyNS, 1.1*resource(t, plain, "cpu1 (flusher)").BusyNS, "contention slows the flusher")
	assert.Greater(t, r.DurationNS, plain.DurationNS, "and the run")
}

// TestBusIdleWithoutStallShare checks that a profile whose memory-stall
// share is 0 keeps the plain clock: the price of a byte on the bus moves
// the bus's reported load and nothing else.
func TestBusIdleWithoutStallShare(t *testing.T) {
	p := timing.Helios4()
	p.NS[timing.ParamMemStall] = 0
	a := busRun(t, p)
	q := *p
	q.NS[timing.ParamMemByte] *= 3
	b := busRun(t, &q)
	assert.Equal(t, a.DurationNS, b.DurationNS)
	assert.Equal(t, resource(t, a, "cpu1 (flusher)").BusyNS, resource(t, b, "cpu1 (flusher)").BusyNS)
	assert.InEpsilon(t, 3*resource(t, a, "memory").BusyNS, resource(t, b, "memory").BusyNS, 1e-9)
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
