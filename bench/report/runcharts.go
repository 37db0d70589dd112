package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/bhsim/bhsim/bench/engine"
)

// WriteRunCharts draws a workload run's charts into dir, creating it (and
// its parents) if missing and overwriting the files: latency-cdf.svg and
// .png, one line per operation kind of the fraction of operations that took
// at most a latency, on a log axis from below the fastest; throughput.svg
// and .png, the MB/s of each interval of simulated time with the mean
// dashed, an interval above three times the 90th percentile clipped and
// named in the legend. Each legend sits in a band above the data. Both
// are 5.5 × 4 inches, the PNGs at 110 dpi, and name the workload, seed,
// kernel, CPUs, profile and disk. Errors: the directory or a file cannot be
// written. O(kinds × buckets + intervals).
func WriteRunCharts(dir string, r *engine.RunResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cdf, err := latencyCDFPlot(r)
	if err != nil {
		return err
	}
	if err := savePlot(dir, "latency-cdf", cdf); err != nil {
		return err
	}
	tp, err := throughputPlot(r)
	if err != nil {
		return err
	}
	return savePlot(dir, "throughput", tp)
}

// subtitle is a chart's second title line: what ran, on what.
func subtitle(r *engine.RunResult) string {
	seed := ""
	if r.Seed != nil && !strings.Contains(r.Workload, fmt.Sprintf("seed=%d", *r.Seed)) {
		seed = fmt.Sprintf(", seed %d", *r.Seed)
	}
	return fmt.Sprintf("%s%s\nkernel %s, %d CPUs, profile %s, disk %s", r.Workload, seed, r.Kernel, r.CPUs, r.Profile, r.Disk)
}

// latencyCDFPlot draws each kind's latency distribution: the fraction of
// operations that took at most x µs, x on a log scale from the power of
// ten below the fastest operation, so that every curve rises from 0 on the axis; the
// legend sits in a band above the curves' 1.
func latencyCDFPlot(r *engine.RunResult) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = "Simulated latency CDF\n" + subtitle(r)
	pl.Title.TextStyle.Font.Size = vg.Points(10)
	pl.X.Label.Text, pl.Y.Label.Text = "latency (log scale)", "fraction of operations ≤ latency"
	pl.X.Scale, pl.X.Tick.Marker = plot.LogScale{}, durationTicks{}
	pl.Y.Min, pl.Y.Max = 0, 1.06+0.075*float64(len(r.Kinds))
	pl.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.25}, {Value: 0.5, Label: "0.5"}, {Value: 0.75}, {Value: 1, Label: "1"}}
	pl.Legend.Top, pl.Legend.Left = true, true
	pl.Legend.TextStyle.Font.Size = vg.Points(9)
	pl.Add(plotter.NewGrid())
	lo := math.Inf(1)
	for _, k := range r.Kinds {
		if len(k.Latency.CDF) > 0 {
			lo = min(lo, max(float64(k.Latency.CDF[0].NS)/1e3, 1e-3))
		}
	}
	if !math.IsInf(lo, 1) {
		pl.X.Min = math.Pow(10, math.Floor(math.Log10(lo)-1e-9)) // the power of ten below the fastest
	}
	for i, k := range r.Kinds {
		var xy plotter.XYs
		prev := 0.0
		for _, p := range k.Latency.CDF { // a step function from 0: up at each bucket
			x := max(float64(p.NS)/1e3, 1e-3)
			if len(xy) == 0 {
				xy = append(xy, plotter.XY{X: pl.X.Min, Y: 0})
			}
			xy = append(xy, plotter.XY{X: x, Y: prev}, plotter.XY{X: x, Y: p.Fraction})
			prev = p.Fraction
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = plotutil.Color(i), vg.Points(1.6)
		pl.Add(l)
		pl.Legend.Add(fmt.Sprintf("%s: %d ops, p99 %s, max %s", k.Kind, k.Ops, seconds(float64(k.Latency.P99NS)), seconds(float64(k.Latency.MaxNS))), l)
	}
	return pl, nil
}

// throughputPlot draws MB/s per interval of simulated time.
func throughputPlot(r *engine.RunResult) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = "Throughput over simulated time\n" + subtitle(r)
	pl.Title.TextStyle.Font.Size = vg.Points(10)
	unit, scale := "s", 1e9
	if r.DurationNS < 1e7 {
		unit, scale = "ms", 1e6
	}
	pl.X.Label.Text, pl.Y.Label.Text = "simulated time ("+unit+")", "MB/s read + written (completed)"
	pl.Y.Min = 0
	pl.Y.Tick.Marker = plainTicks{}
	pl.Add(plotter.NewGrid())
	top := clipAt(r.Throughput)
	var xy plotter.XYs
	var off []string
	for _, b := range r.Throughput { // steps: flat over each interval
		y := b.MBps
		if y > top {
			off = append(off, fmt.Sprintf("%.0f", y))
			y = top
		}
		xy = append(xy, plotter.XY{X: b.StartNS / scale, Y: y}, plotter.XY{X: (b.StartNS + b.WidthNS) / scale, Y: y})
	}
	pl.Y.Max = top * (1.08 + 0.09*float64(2+min(len(off), 1))) // a band above the data for the legend
	if len(xy) == 0 {
		xy = plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}}
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil, err
	}
	l.Color, l.Width = plotutil.Color(0), vg.Points(1.2)
	pl.Add(l)
	mean, err := plotter.NewLine(plotter.XYs{{X: 0, Y: r.MBps}, {X: r.DurationNS / scale, Y: r.MBps}})
	if err != nil {
		return nil, err
	}
	mean.Color, mean.Dashes = plotutil.Color(1), []vg.Length{vg.Points(4), vg.Points(3)}
	pl.Add(mean)
	pl.Legend.Add("per interval", l)
	if len(off) > 0 {
		pl.Legend.Add(fmt.Sprintf("%d interval(s) off scale, clipped: %s MB/s", len(off), strings.Join(off[:min(len(off), 3)], ", ")))
	}
	pl.Legend.Add(fmt.Sprintf("mean %.1f MB/s", r.MBps), mean)
	pl.Legend.Top = true
	pl.Legend.TextStyle.Font.Size = vg.Points(9)
	return pl, nil
}

// clipAt is the chart's top: three times the 90th percentile of the
// intervals' rates, so that a burst (the page cache absorbing writes at
// memory speed) does not flatten the rest, or the largest rate when no
// interval exceeds it.
func clipAt(bins []engine.ThroughputBin) float64 {
	rates := make([]float64, len(bins))
	for i, b := range bins {
		rates[i] = b.MBps
	}
	slices.Sort(rates)
	if len(rates) == 0 {
		return 1
	}
	top, p90 := rates[len(rates)-1], rates[len(rates)*9/10]
	if p90 > 0 && top > 3*p90 {
		return 3 * p90
	}
	return top
}

// savePlot writes pl as dir/name.svg and dir/name.png.
func savePlot(dir, name string, pl *plot.Plot) error {
	svg := vgsvg.New(panelW, panelH)
	pl.Draw(draw.New(svg))
	if err := saveTo(filepath.Join(dir, name+".svg"), svg); err != nil {
		return err
	}
	img := vgimg.NewWith(vgimg.UseWH(panelW, panelH), vgimg.UseDPI(pngDPI))
	pl.Draw(draw.New(img))
	return saveTo(filepath.Join(dir, name+".png"), vgimg.PngCanvas{Canvas: img})
}

// durationTicks label a log axis of microseconds at each power of ten in
// time units ("1 µs", "10 ms", "1 s"), with unlabelled minor ticks between.
type durationTicks struct{}

// Ticks implements plot.Ticker.
func (durationTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for p := 1e-3; p <= hi*10; p *= 10 {
		for m := 1.0; m < 10; m++ {
			v := p * m
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 {
				t.Label = strings.Replace(seconds(v*1e3), ".0 ", " ", 1)
				t.Label = strings.Replace(strings.Replace(t.Label, ".000 ", " ", 1), ".001 µs", " ns", 1)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
