package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/threads"
)

// checkChart checks that dir holds a valid SVG and PNG chart of id.
func checkChart(t *testing.T, dir, id string) {
	t.Helper()
	svg, err := os.ReadFile(filepath.Join(dir, id+".svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "</svg>")
	png, err := os.ReadFile(filepath.Join(dir, id+".png"))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "%s.png has the PNG magic", id)
}

// TestWriteFigure draws every kind of panel: bars, lines with published
// and simulated series, several panels in rows of two; the same figure
// draws the same bytes.
func TestWriteFigure(t *testing.T) {
	dir := t.TempDir()
	f := threads.Figure{ID: "test", Panels: []threads.Panel{
		{Title: "bars", XLabel: "x", YLabel: "y", Categories: []string{"a", "b"}, Series: []threads.Series{
			{Name: "k", Published: true, Y: []float64{1, 2}}, {Name: "k", Y: []float64{1.5, 2.5}}}},
		{Title: "lines", XLabel: "bs (KiB)", YLabel: "MB/s", Series: []threads.Series{
			{Name: "a", Published: true, X: []float64{1, 2}, Y: []float64{3, 4}}, {Name: "a", X: []float64{1, 2}, Y: []float64{3, 4}},
			{Name: "b", X: []float64{1, 2}, Y: []float64{3, 4}}}},
		{Title: "third", XLabel: "n", YLabel: "ns", Series: []threads.Series{{Name: "c", X: []float64{1}, Y: []float64{1}}}},
	}}
	require.NoError(t, WriteFigure(dir, f))
	checkChart(t, dir, "test")
	svg, err := os.ReadFile(filepath.Join(dir, "test.svg"))
	require.NoError(t, err)
	for _, s := range []string{">bars<", ">lines<", ">third<", ">published<", ">simulated<", "a published (dashed)", "b simulated (dotted: on a&#39;s line)"} {
		assert.Contains(t, string(svg), s)
	}

	again := t.TempDir()
	require.NoError(t, WriteFigure(again, f))
	for _, ext := range []string{".svg", ".png"} {
		want, err := os.ReadFile(filepath.Join(dir, "test"+ext))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(again, "test"+ext))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "test%s is drawn the same twice", ext)
	}

	assert.Error(t, WriteFigure(filepath.Join(dir, "missing"), f), "the directory must exist")
}

// TestCoincide: series hide one another when their x values are the same
// and their y values within 1 %.
func TestCoincide(t *testing.T) {
	a := threads.Series{X: []float64{1, 2}, Y: []float64{100, 200}}
	for _, tt := range []struct {
		name string
		b    threads.Series
		want bool
	}{
		{"equal", threads.Series{X: []float64{1, 2}, Y: []float64{100, 200}}, true},
		{"within 1 %", threads.Series{X: []float64{1, 2}, Y: []float64{100.9, 198.5}}, true},
		{"2 % apart at one x", threads.Series{X: []float64{1, 2}, Y: []float64{100, 204}}, false},
		{"other x", threads.Series{X: []float64{1, 3}, Y: []float64{100, 200}}, false},
		{"fewer points", threads.Series{X: []float64{1}, Y: []float64{100}}, false},
	} {
		assert.Equal(t, tt.want, coincide(a, tt.b), tt.name)
		assert.Equal(t, tt.want, coincide(tt.b, a), tt.name+", either way")
	}
}

// TestCentreLastRow: a last row of one panel under two moves half a column
// right; full rows and single rows stay.
func TestCentreLastRow(t *testing.T) {
	grid := func(rows, cols int) [][]draw.Canvas {
		g := make([][]draw.Canvas, rows)
		for i := range g {
			g[i] = make([]draw.Canvas, cols)
			for j := range g[i] {
				g[i][j].Rectangle = vg.Rectangle{Min: vg.Point{X: vg.Length(100 * j), Y: vg.Length(-50 * i)}, Max: vg.Point{X: vg.Length(100*j + 80)}}
			}
		}
		return g
	}
	for _, tt := range []struct {
		name          string
		rows, cols, n int
		wantMinX      vg.Length // of the last row's first canvas
	}{
		{"3 panels in 2 columns", 2, 2, 3, 50},
		{"4 panels in 2 columns", 2, 2, 4, 0},
		{"2 panels in a row", 1, 2, 2, 0},
		{"5 panels in 2 columns", 3, 2, 5, 50},
	} {
		g := grid(tt.rows, tt.cols)
		centreLastRow(g, tt.n)
		last := g[tt.rows-1][0].Rectangle
		assert.Equal(t, tt.wantMinX, last.Min.X, tt.name)
		assert.Equal(t, tt.wantMinX+80, last.Max.X, tt.name)
		assert.Equal(t, vg.Length(0), g[0][0].Min.X, "%s: the rows above stay", tt.name)
	}
}

// TestRunChartsRoom: the latency CDF's axis starts a decade at or below the
// fastest operation (its first step shows) and has a band above 1 for the
// legend; the throughput chart has one above its highest interval.
func TestRunChartsRoom(t *testing.T) {
	r := &engine.RunResult{Workload: "w", Kinds: []engine.KindResult{
		{Kind: "read", Ops: 10, Latency: engine.Latency{CDF: []engine.CDFPoint{{NS: 200, Fraction: 0.47}, {NS: 120000, Fraction: 1}}}},
		{Kind: "write", Ops: 10, Latency: engine.Latency{CDF: []engine.CDFPoint{{NS: 300, Fraction: 0.5}, {NS: 700, Fraction: 1}}}},
	}, Throughput: []engine.ThroughputBin{{StartNS: 0, WidthNS: 1e6, MBps: 100}, {StartNS: 1e6, WidthNS: 1e6, MBps: 250}}, DurationNS: 2e6, MBps: 175}
	cdf, err := latencyCDFPlot(r)
	require.NoError(t, err)
	assert.InDelta(t, 0.1, cdf.X.Min, 1e-12, "0.2 µs: the axis from 0.1 µs")
	assert.Greater(t, cdf.Y.Max, 1.15, "a band above 1 for two legend rows")
	assert.True(t, cdf.Legend.Top)
	r.Kinds[0].Latency.CDF[0].NS = 1000
	r.Kinds = r.Kinds[:1]
	cdf, err = latencyCDFPlot(r)
	require.NoError(t, err)
	assert.InDelta(t, 0.1, cdf.X.Min, 1e-12, "1 µs exactly: the decade below, so the step is not on the axis")
	tp, err := throughputPlot(r)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, tp.Y.Max, 250*1.25, "the legend's band above the highest interval")
}
