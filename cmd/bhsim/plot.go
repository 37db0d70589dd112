package main

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/bhsim/bhsim/bench"
)

// Chart geometry: each panel of a figure is panelW × panelH; PNGs are drawn
// at pngDPI.
const (
	panelW = 6 * vg.Inch
	panelH = 4.5 * vg.Inch
	pngDPI = 110
)

// figure is the chart of one table: panels side by side, written as
// <id>.svg and <id>.png.
type figure struct {
	id     string
	panels []*plot.Plot
}

// writeFigures writes the charts of every result into dir, which exists:
// each result's own figures, and the default chart of each table that has
// none.
func writeFigures(dir string, results []*threadResult) error {
	for _, r := range results {
		figs := slices.Clone(r.figures)
		for _, t := range r.tables {
			if slices.ContainsFunc(figs, func(f figure) bool { return f.id == t.ID }) {
				continue
			}
			f, err := tableFigure(t)
			if err != nil {
				return err
			}
			figs = append(figs, f)
		}
		for _, f := range figs {
			if err := f.write(dir); err != nil {
				return err
			}
		}
	}
	return nil
}

// tableFigure returns the default chart of t, chosen by its id.
func tableFigure(t bench.Table) (figure, error) {
	switch t.ID {
	case "blocksize-helios4":
		return helios4Figure(t)
	case "iomap-xu-yang":
		return iomapFigure(t)
	default:
		p, err := cellBars(t, t.Title)
		return figure{id: t.ID, panels: []*plot.Plot{p}}, err
	}
}

// write saves f as SVG and PNG in dir.
func (f figure) write(dir string) error {
	w := vg.Length(len(f.panels)) * panelW
	svg := vgsvg.New(w, panelH)
	f.draw(draw.New(svg))
	if err := saveTo(filepath.Join(dir, f.id+".svg"), svg); err != nil {
		return err
	}
	img := vgimg.NewWith(vgimg.UseWH(w, panelH), vgimg.UseDPI(pngDPI))
	f.draw(draw.New(img))
	return saveTo(filepath.Join(dir, f.id+".png"), vgimg.PngCanvas{Canvas: img})
}

// draw lays f's panels out side by side on dc.
func (f figure) draw(dc draw.Canvas) {
	tiles := draw.Tiles{Rows: 1, Cols: len(f.panels), PadX: vg.Centimeter, PadTop: vg.Millimeter * 2,
		PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align([][]*plot.Plot{f.panels}, tiles, dc)
	for i, p := range f.panels {
		p.Draw(canvases[0][i])
	}
}

// saveTo writes w to the file called name.
func saveTo(name string, w io.WriterTo) error {
	file, err := os.Create(name)
	if err != nil {
		return err
	}
	_, err = w.WriteTo(file)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// newPanel returns a plot with a title and axis labels, its legend at the
// top left.
func newPanel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	return p
}

// plainTicks are gonum's default ticks labelled in the shortest form
// ("250", not "250.00").
type plainTicks struct{}

// Ticks returns the default ticks of [lo, hi] with plain labels.
func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', -1, 64)
		}
	}
	return ticks
}

// light returns c blended halfway to white: the colour of a published bar
// beside the simulated one.
func light(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8 + 255) / 2) }
	return color.RGBA{mix(r), mix(g), mix(b), 255}
}

// barGroups adds to p one pair of bar series (published light, simulated
// solid) per series name, grouped at the nominal x positions, and puts
// headroom above the tallest bar for the legend.
func barGroups(p *plot.Plot, names []string, published, simulated [][]float64) error {
	n := 2 * len(names)
	width := min(vg.Points(30), panelW*0.7/vg.Length(n*len(published[0])+1))
	top := 0.0
	for i, name := range names {
		for k, vals := range [][]float64{published[i], simulated[i]} {
			bars, err := plotter.NewBarChart(plotter.Values(vals), width)
			if err != nil {
				return err
			}
			bars.LineStyle.Width = 0
			bars.Color = plotutil.Color(i)
			if k == 0 {
				bars.Color = light(bars.Color)
			}
			bars.Offset = (vg.Length(2*i+k) - vg.Length(n-1)/2) * width
			p.Add(bars)
			if k == 1 {
				p.Legend.Add(name, bars)
			}
			top = max(top, slices.Max(vals))
		}
	}
	p.Y.Min, p.Y.Max = 0, top*(1.15+0.07*float64(len(names)))
	return nil
}

// helios4Figure draws the Helios4 table: one panel per direction, bars per
// device column and kernel, published (light) beside simulated (solid).
func helios4Figure(t bench.Table) (figure, error) {
	var kernels, columns []string
	for _, c := range t.Cells {
		col := strings.TrimSuffix(strings.TrimSuffix(c.Column, " W"), " R")
		if !slices.Contains(kernels, c.Row) {
			kernels = append(kernels, c.Row)
		}
		if !slices.Contains(columns, col) {
			columns = append(columns, col)
		}
	}
	fig := figure{id: t.ID}
	for _, dir := range []struct{ suffix, name string }{{" W", "write"}, {" R", "read"}} {
		pub, sim := make([][]float64, len(kernels)), make([][]float64, len(kernels))
		for i, k := range kernels {
			pub[i], sim[i] = make([]float64, len(columns)), make([]float64, len(columns))
			for j, col := range columns {
				c, ok := findCell(t, k, col+dir.suffix)
				if !ok {
					return figure{}, fmt.Errorf("plot %s: no cell %s/%s%s", t.ID, k, col, dir.suffix)
				}
				pub[i][j], sim[i][j] = c.Published, c.Simulated
			}
		}
		p := newPanel("Helios4 dd bs=1M "+dir.name+": light published, solid simulated", "device", t.Unit)
		p.NominalX(columns...)
		if err := barGroups(p, kernels, pub, sim); err != nil {
			return figure{}, err
		}
		fig.panels = append(fig.panels, p)
	}
	return fig, nil
}

// findCell returns t's cell at row and column.
func findCell(t bench.Table, row, column string) (bench.Cell, bool) {
	for _, c := range t.Cells {
		if c.Row == row && c.Column == column {
			return c, true
		}
	}
	return bench.Cell{}, false
}

// iomapFigure draws Xu Yang's table: MB/s against dd's bs, one colour per
// kernel, published dashed and simulated solid with points.
func iomapFigure(t bench.Table) (figure, error) {
	var kernels []string
	pub, sim := map[string]plotter.XYs{}, map[string]plotter.XYs{}
	for _, c := range t.Cells {
		num, okPrefix := strings.CutPrefix(c.Row, "bs=")
		num, okSuffix := strings.CutSuffix(num, "K")
		kib, err := strconv.ParseFloat(num, 64)
		if err != nil || !okPrefix || !okSuffix {
			return figure{}, fmt.Errorf("plot %s: row %q is not bs=<n>K", t.ID, c.Row)
		}
		if !slices.Contains(kernels, c.Column) {
			kernels = append(kernels, c.Column)
		}
		pub[c.Column] = append(pub[c.Column], plotter.XY{X: kib, Y: c.Published})
		sim[c.Column] = append(sim[c.Column], plotter.XY{X: kib, Y: c.Simulated})
	}
	p := newPanel("Xu Yang's dd to /dev/sda: dashed published, solid simulated", "dd bs (KiB)", t.Unit)
	p.Legend.Top, p.Legend.Left = false, true
	for i, k := range kernels {
		pl, err := plotter.NewLine(pub[k])
		if err != nil {
			return figure{}, err
		}
		pl.Color, pl.Dashes = plotutil.Color(i), []vg.Length{vg.Points(5), vg.Points(3)}
		sl, sp, err := plotter.NewLinePoints(sim[k])
		if err != nil {
			return figure{}, err
		}
		sl.Color, sp.Color, sp.Shape = plotutil.Color(i), plotutil.Color(i), plotutil.Shape(i)
		p.Add(pl, sl, sp)
		p.Legend.Add(k+" simulated", sl, sp)
		p.Legend.Add(k+" published", pl)
	}
	p.Y.Min = 0
	return figure{id: t.ID, panels: []*plot.Plot{p}}, nil
}

// cellBars is the generic chart of a table: published (light) beside
// simulated (solid) for every cell.
func cellBars(t bench.Table, title string) (*plot.Plot, error) {
	if len(t.Cells) == 0 {
		return nil, fmt.Errorf("plot %s: no cells", t.ID)
	}
	var labels []string
	pub, sim := make([]float64, len(t.Cells)), make([]float64, len(t.Cells))
	for i, c := range t.Cells {
		labels = append(labels, strings.TrimSpace(c.Row+"\n"+c.Column))
		pub[i], sim[i] = c.Published, c.Simulated
	}
	p := newPanel(title, "", t.Unit)
	p.NominalX(labels...)
	if len(labels) > 4 {
		p.X.Tick.Label.Rotation = 0.5
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	}
	p.X.Tick.Label.Font.Size = vg.Points(8)
	return p, barGroups(p, []string{"published (light), simulated (solid)"}, [][]float64{pub}, [][]float64{sim})
}

// lruFigure draws the bh LRU thread: the LRU against the slow path by
// distinct blocks cycled (CycleSweep) and by index height (HeightSweep),
// under the calibrated profile and without harness, beside the published
// cells.
func lruFigure(t *bench.LRUThread) (figure, error) {
	perCall := func(c bench.Calls) float64 { return t.Profile.SimNS(c.Events, 0) / float64(c.Calls) }
	var cycHit, cycSlow plotter.XYs
	for _, r := range t.Cycles {
		cycHit = append(cycHit, plotter.XY{X: float64(r.N), Y: perCall(r.Hit)})
		cycSlow = append(cycSlow, plotter.XY{X: float64(r.N), Y: perCall(r.Slow)})
	}
	var hHit, hMiss, hSlow plotter.XYs
	for _, r := range t.Heights {
		x := float64(r.Height)
		hHit = append(hHit, plotter.XY{X: x, Y: perCall(r.Hit)})
		hMiss = append(hMiss, plotter.XY{X: x, Y: perCall(r.Miss)})
		hSlow = append(hSlow, plotter.XY{X: x, Y: perCall(r.Slow)})
	}
	cyc := newPanel("blocks cycled round-robin, 16-slot LRU", "distinct blocks", "sim-ns per call")
	if err := plotutil.AddLinePoints(cyc, "__find_get_block (LRU first)", cycHit, "__find_get_block_slow", cycSlow); err != nil {
		return figure{}, err
	}
	height := newPanel("one cached block at each index height", "xarray height", "sim-ns per call")
	if err := plotutil.AddLinePoints(height, "LRU hit (size 4096)", hHit, "LRU miss (size 512, as Tosatti)", hMiss,
		"__find_get_block_slow", hSlow); err != nil {
		return figure{}, err
	}
	for _, p := range []*plot.Plot{cyc, height} {
		p.Y.Min = 0
		p.Y.Max *= 1.3
	}
	cells, err := cellBars(t.Table, "Tosatti's module: published vs simulated")
	return figure{id: t.Table.ID, panels: []*plot.Plot{cells, cyc, height}}, err
}
