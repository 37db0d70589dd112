package scenario

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func timedResult(runs int, total *Span, ops ...*Span) *Result {
	r := &Result{Scenario: "t", Runs: runs, Wall: total}
	for i, w := range ops {
		r.Ops = append(r.Ops, OpResult{Index: i + 1, Op: "fsync a", Wall: w})
	}
	return r
}

func ms(lo, hi float64) *Span {
	return &Span{MinNs: int64(lo * 1e6), MaxNs: int64(hi * 1e6)}
}

func TestCompareTime(t *testing.T) {
	for _, tc := range []struct {
		name         string
		model, kern  *Result
		within, rows int
	}{
		{"inside the range", timedResult(1, ms(50, 50), ms(50, 50)), timedResult(3, ms(48, 52), ms(48, 52)), 2, 2},
		{"5 % above the slowest run", timedResult(1, ms(54.5, 54.5)), timedResult(3, ms(48, 52)), 1, 1},
		{"6 % above the slowest run", timedResult(1, ms(55.2, 55.2)), timedResult(3, ms(48, 52)), 0, 1},
		{"one run: 10 %", timedResult(1, ms(54.9, 54.9)), timedResult(1, ms(50, 50)), 1, 1},
		{"one run: 11 % below", timedResult(1, ms(44.4, 44.4)), timedResult(1, ms(50, 50)), 0, 1},
		{"both under the floor", timedResult(1, ms(0.2, 0.2)), timedResult(3, ms(0.1, 0.5)), 0, 0},
		{"the model over the floor", timedResult(1, ms(3, 3)), timedResult(3, ms(0.1, 0.5)), 0, 1},
		{"no kernel times", timedResult(1, ms(3, 3)), timedResult(3, nil), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := CompareTime(tc.model, tc.kern)
			require.Len(t, rows, tc.rows)
			assert.Equal(t, TimeSummary{tc.within, tc.rows}, SummariseTime(rows))
		})
	}
}

func TestTimeRowErrorAndString(t *testing.T) {
	r := CompareTime(timedResult(1, nil, ms(56, 56)), timedResult(3, nil, ms(48, 50)))
	require.Len(t, r, 1)
	assert.InDelta(t, 0.12, r[0].Error(), 1e-9)
	assert.Equal(t, "op 1 fsync a: model 56.0ms, kernel 48.0ms..50.0ms (+12.0 %)", r[0].String())
	assert.False(t, r[0].Within)
	below := CompareTime(timedResult(1, ms(24, 24)), timedResult(3, ms(48, 50)))
	assert.InDelta(t, -0.5, below[0].Error(), 1e-9)
}

func TestMergeRunsSpans(t *testing.T) {
	a := timedResult(1, ms(10, 10), ms(4, 4), nil)
	b := timedResult(1, ms(12, 12), ms(3, 3), ms(1, 1))
	m, err := MergeRuns([]*Result{a, b})
	require.NoError(t, err)
	assert.Equal(t, ms(10, 12), m.Wall)
	assert.Equal(t, ms(3, 4), m.Ops[0].Wall)
	assert.Equal(t, ms(1, 1), m.Ops[1].Wall, "a run without a time leaves the others'")
	assert.Equal(t, 2, m.Runs)
}

func TestSpanString(t *testing.T) {
	assert.Equal(t, "1.52s", SpanOf(1520*time.Millisecond).String())
	assert.Equal(t, "812ns..41.2µs", Span{812, 41200}.String())
}
