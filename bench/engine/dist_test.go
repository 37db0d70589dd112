package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHistBuckets(t *testing.T) {
	for _, v := range []uint64{0, 1, 63, 64, 65, 127, 128, 1000, 1 << 20, 1<<40 + 12345, math.MaxUint64} {
		i := histIndex(v)
		require.Less(t, i, histBuckets, "v=%d", v)
		assert.LessOrEqual(t, v, histUpper(i), "v=%d falls at or below its bucket's bound", v)
		if i > 0 {
			assert.Greater(t, v, histUpper(i-1), "v=%d is above the previous bucket's", v)
		}
		if v >= 64 {
			assert.LessOrEqual(t, float64(histUpper(i)-v), float64(v)/32, "v=%d: a bucket is at most 1/32 wide", v)
		} else {
			assert.Equal(t, v, histUpper(i), "exact below 64")
		}
	}
}

func TestHistQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name string
		gen  func() float64
	}{
		{"uniform", func() float64 { return rng.Float64() * 1e6 }},
		{"exponential", func() float64 { return rng.ExpFloat64() * 5e4 }},
		{"small integers", func() float64 { return float64(rng.IntN(60)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h latencyHist
			var vals []float64
			for range 100_000 {
				v := math.Ceil(tc.gen())
				vals = append(vals, v)
				h.add(v)
			}
			slices.Sort(vals)
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
				exact := vals[int(math.Ceil(q*float64(len(vals))))-1]
				got := float64(h.quantile(q))
				assert.GreaterOrEqual(t, got, exact, "q=%v is an upper bound", q)
				assert.LessOrEqual(t, got, exact*(1+1.0/32)+1e-9, "q=%v within 3.1 %%", q)
			}
			s := h.summary()
			assert.Equal(t, uint64(vals[len(vals)-1]), s.MaxNS)
			assert.Equal(t, uint64(vals[0]), s.MinNS)
			assert.InDelta(t, 1, s.CDF[len(s.CDF)-1].Fraction, 1e-12)
		})
	}
	var empty latencyHist
	assert.Zero(t, empty.quantile(0.5))
	assert.Empty(t, empty.summary().CDF)
}

func TestTimeline(t *testing.T) {
	var tl timeline
	var total float64
	for i := range 10_000 {
		at := float64(i) * 1e5 // 10k completions over a simulated second
		tl.add(at, 4096)
		total += 4096
	}
	bins := tl.bins()
	assert.LessOrEqual(t, len(bins), timelineBins)
	assert.Greater(t, len(bins), timelineBins/2, "the bins cover the run without waste")
	var sum float64
	var ops uint64
	for i, b := range bins {
		sum += b.Bytes
		ops += b.Ops
		assert.Equal(t, float64(i)*b.WidthNS, b.StartNS)
	}
	assert.Equal(t, total, sum)
	assert.Equal(t, uint64(10_000), ops)
	assert.InDelta(t, 4096*1e4/1e9*1e3, bins[3].MBps, 0.5, "40.96 MB/s, steady")
}
