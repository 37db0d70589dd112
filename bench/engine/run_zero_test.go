package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bench/timing"
)

// runGen runs the generator gen with o to its end.
func runGen(t *testing.T, gen string, o engine.RunOptions) *engine.RunResult {
	t.Helper()
	g, err := source.ParseGenerator(gen)
	require.NoError(t, err)
	w, err := engine.GenWorkload(g)
	require.NoError(t, err)
	r, err := engine.Run(context.Background(), w, o)
	require.NoError(t, err)
	return r
}

// TestRunFromZero checks RunOptions.FromZero, dd's read of each block
// from /dev/zero before its write: on a profile without a memory-stall
// share, each write's CPU pays one more system call and a clear of its
// bytes, reads pay nothing more, the memory bus carries a store of each
// byte cleared, and the model's work (bios, requests, lookups) is that of
// the run without it.
func TestRunFromZero(t *testing.T) {
	tests := []struct {
		name, gen     string
		writes, bytes float64
	}{
		{"a dd's stream of 1 MiB writes", "seq:dev=64M,n=64,size=1M,reads=0,cpus=1", 64, 64 << 20},
		{"a random mix", "random:dev=64M,n=400,size=4K,reads=0.5,cpus=1,seed=3", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := timing.X86Server()
			require.Zero(t, p.NS[timing.ParamMemStall], "the plain clock")
			plain := runGen(t, tc.gen, engine.RunOptions{Profile: p, Disk: engine.Disk{Name: "null"}})
			zero := runGen(t, tc.gen, engine.RunOptions{Profile: p, FromZero: true, Disk: engine.Disk{Name: "null"}})
			wr, ok := plain.Kind("write")
			require.True(t, ok)
			writes, bytes := float64(wr.Ops), float64(wr.Bytes)
			if tc.writes > 0 {
				require.Equal(t, tc.writes, writes)
				require.Equal(t, tc.bytes, bytes)
			}
			busy := func(r *engine.RunResult, name string) float64 {
				for _, res := range r.Resources {
					if res.Name == name {
						return res.BusyNS
					}
				}
				require.Failf(t, "no resource", "%s in %v", name, r.Resources)
				return 0
			}
			extra := writes*p.NS[timing.ParamSyscall] + bytes*p.NS[timing.ParamZeroByte]
			assert.InDelta(t, busy(plain, "cpu0")+extra, busy(zero, "cpu0"), 1e-6*extra+1e-6, "one more call and a clear per write")
			assert.InDelta(t, busy(plain, "memory")+bytes*p.NS[timing.ParamMemByte], busy(zero, "memory"), 1e-6*busy(zero, "memory"), "a store a byte cleared")
			rd, _ := plain.Kind("read")
			rdZero, _ := zero.Kind("read")
			assert.Equal(t, rd.Latency, rdZero.Latency, "reads pay nothing more")
			wrZero, _ := zero.Kind("write")
			assert.Equal(t, [2]float64{wr.BiosPerOp, wr.RequestsPerOp}, [2]float64{wrZero.BiosPerOp, wrZero.RequestsPerOp}, "the same bios and requests")
			assert.Equal(t, plain.LRU, zero.LRU, "the same lookups")
		})
	}
}

// TestRunToNull checks RunOptions.ToNull, dd's write of each block it read
// to /dev/null: each read's CPU pays one more system call and its latency
// with it, writes pay nothing more, and the memory bus carries nothing more.
func TestRunToNull(t *testing.T) {
	const gen = "random:dev=64M,n=400,size=16K,reads=0.5,cpus=1,seed=4"
	p := timing.X86Server()
	plain := runGen(t, gen, engine.RunOptions{Profile: p, Disk: engine.Disk{Name: "null"}})
	null := runGen(t, gen, engine.RunOptions{Profile: p, ToNull: true, Disk: engine.Disk{Name: "null"}})
	rd, ok := plain.Kind("read")
	require.True(t, ok)
	require.Positive(t, rd.Ops)
	rdNull, _ := null.Kind("read")
	sys := p.NS[timing.ParamSyscall]
	assert.InDelta(t, rd.Latency.MeanNS+sys, rdNull.Latency.MeanNS, 1e-6*sys, "a read's latency has one more call")
	wr, _ := plain.Kind("write")
	wrNull, _ := null.Kind("write")
	assert.Equal(t, wr.Latency, wrNull.Latency, "writes pay nothing more")
	assert.InDelta(t, plain.DurationNS+float64(rd.Ops)*sys, null.DurationNS, 1e-6*plain.DurationNS, "the run, one CPU at depth 1, is longer by the calls")
	assert.True(t, null.ToNull)
	assert.Contains(t, null.Header(), "each read's data written to /dev/null after")
}
