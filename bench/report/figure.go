package report

import (
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

	"github.com/bhsim/bhsim/bench/threads"
)

// Chart geometry: each panel is panelW × panelH, at most maxCols panels a
// row; PNGs are drawn at pngDPI.
const (
	panelW  = 5.5 * vg.Inch
	panelH  = 4 * vg.Inch
	maxCols = 2
	pngDPI  = 110
)

// WriteFigure draws f, one of a reproduction's figures, as dir/ID.svg and
// dir/ID.png (ID is f.ID), overwriting them: its panels in rows of at most
// two (a last row of one centred), each 5.5 × 4 inches, bars for a panel with categories and lines
// otherwise, a published series light (bars) or dashed (lines) beside the
// simulated one; the PNG at 110 dpi. The same figure draws the same bytes.
// Preconditions: dir exists; f has a panel; a line series has as many X as Y values.
// Errors: a value gonum cannot plot (NaN, ±Inf) or a file that cannot be
// written. O(points) per panel.
func WriteFigure(dir string, f threads.Figure) error {
	var panels []*plot.Plot
	for _, p := range f.Panels {
		pl, err := panelPlot(p)
		if err != nil {
			return err
		}
		panels = append(panels, pl)
	}
	cols := min(len(panels), maxCols)
	rows := (len(panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
		for j := range cols {
			if k := i*cols + j; k < len(panels) {
				grid[i][j] = panels[k]
			}
		}
	}
	w, h := vg.Length(cols)*panelW, vg.Length(rows)*panelH
	drawOn := func(c draw.Canvas) {
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter, PadTop: 2 * vg.Millimeter,
			PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
		canvases := plot.Align(grid, tiles, c)
		centreLastRow(canvases, len(panels))
		for i := range grid {
			for j, p := range grid[i] {
				if p != nil {
					p.Draw(canvases[i][j])
				}
			}
		}
	}
	svg := vgsvg.New(w, h)
	drawOn(draw.New(svg))
	if err := saveTo(filepath.Join(dir, f.ID+".svg"), svg); err != nil {
		return err
	}
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))
	drawOn(draw.New(img))
	return saveTo(filepath.Join(dir, f.ID+".png"), vgimg.PngCanvas{Canvas: img})
}

// centreLastRow moves the canvases of a grid's last row, when it holds
// fewer of the n panels than the rows above, to the middle of the row, so
// that no empty panel shows at its end. O(columns).
func centreLastRow(canvases [][]draw.Canvas, n int) {
	rows, cols := len(canvases), len(canvases[0])
	last := n - (rows-1)*cols
	if rows < 2 || cols < 2 || last >= cols {
		return
	}
	dx := (canvases[0][1].Min.X - canvases[0][0].Min.X) * vg.Length(cols-last) / 2
	for j := range last {
		r := &canvases[rows-1][j].Rectangle
		r.Min.X, r.Max.X = r.Min.X+dx, r.Max.X+dx
	}
}

// WriteFigures draws every figure of the reproductions rs into dir
// (WriteFigure), creating it and its parents if missing. Errors: the
// first figure that cannot be drawn or written.
func WriteFigures(dir string, rs ...*threads.Reproduction) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, r := range rs {
		for _, f := range r.Figures {
			if err := WriteFigure(dir, f); err != nil {
				return err
			}
		}
	}
	return nil
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

// panelPlot draws one panel: bars or lines.
func panelPlot(p threads.Panel) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text, pl.X.Label.Text, pl.Y.Label.Text = p.Title, p.XLabel, p.YLabel
	pl.Title.TextStyle.Font.Size = vg.Points(11)
	pl.Legend.Top, pl.Legend.Left = true, true
	pl.Legend.TextStyle.Font.Size = vg.Points(8)
	pl.Y.Tick.Marker = plainTicks{}
	pl.Y.Min = 0
	var err error
	if len(p.Categories) > 0 {
		err = bars(pl, p)
	} else {
		err = lines(pl, p)
	}
	return pl, err
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

// dataTicks put a tick at each x of the data, labelled at most twelve
// times (every n-th tick).
type dataTicks []float64

// Ticks returns a tick at every data x within [lo, hi].
func (d dataTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	step := (len(d) + 11) / 12
	for i, x := range d {
		if x >= lo && x <= hi {
			t := plot.Tick{Value: x}
			if i%step == 0 {
				t.Label = strconv.FormatFloat(x, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// light returns c blended halfway to white: the colour of a published bar.
func light(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8 + 255) / 2) }
	return color.RGBA{mix(r), mix(g), mix(b), 255}
}

// bars draws p's series as grouped bars at its categories: a published
// series light, a simulated one solid, in pairs of one colour per name. With
// one name the legend shows both kinds of bar; with several, one entry a
// name and the title says which bar is which.
func bars(pl *plot.Plot, p threads.Panel) error {
	pl.NominalX(p.Categories...)
	if len(p.Categories) > 3 {
		pl.X.Tick.Label.Rotation = 0.4
		pl.X.Tick.Label.XAlign, pl.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	}
	pl.X.Tick.Label.Font.Size = vg.Points(8)
	n := len(p.Series)
	width := min(vg.Points(24), panelW*0.7/vg.Length(n*len(p.Categories)+1))
	var names []string
	for _, s := range p.Series {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	if len(names) > 1 {
		pl.Title.Text += "\n(light: published, solid: simulated)"
	}
	top := 0.0
	for i, s := range p.Series {
		b, err := plotter.NewBarChart(plotter.Values(s.Y), width)
		if err != nil {
			return err
		}
		b.LineStyle.Width = 0
		b.Color = plotutil.Color(slices.Index(names, s.Name))
		if s.Published {
			b.Color = light(b.Color)
		}
		b.Offset = (vg.Length(i) - vg.Length(n-1)/2) * width
		pl.Add(b)
		switch {
		case len(names) == 1 && s.Published:
			pl.Legend.Add("published", b)
		case len(names) == 1:
			pl.Legend.Add("simulated", b)
		case !s.Published:
			pl.Legend.Add(s.Name, b)
		}
		top = max(top, slices.Max(s.Y))
	}
	pl.Y.Max = top * (1.15 + 0.08*float64(len(names)))
	return nil
}

// lines draws p's series as lines: simulated solid with points, published
// dashed on top, one colour and marker per name. Each name's simulated line
// is drawn narrower than the one before, so that lines that coincide stay
// visible one inside the other; a simulated line that lies on an earlier
// one (coincide) is drawn dotted over it, its markers larger, and its
// legend entry says on which. Ticks sit at the data's x values and the
// legend in the emptiest corner.
func lines(pl *plot.Plot, p threads.Panel) error {
	var names []string
	var xs []float64
	var all plotter.XYs
	for _, s := range p.Series {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	var published []plot.Plotter
	simulated := ""
	if slices.ContainsFunc(p.Series, func(s threads.Series) bool { return s.Published }) {
		simulated = " simulated"
	}
	var drawn []threads.Series // the simulated series so far
	for _, s := range p.Series {
		k := slices.Index(names, s.Name)
		xy := make(plotter.XYs, len(s.X))
		for i := range s.X {
			xy[i] = plotter.XY{X: s.X[i], Y: s.Y[i]}
			if !slices.Contains(xs, s.X[i]) {
				xs = append(xs, s.X[i])
			}
		}
		all = append(all, xy...)
		if s.Published {
			l, err := plotter.NewLine(xy)
			if err != nil {
				return err
			}
			l.Color, l.Dashes, l.Width = darker(plotutil.Color(k)), []vg.Length{vg.Points(4), vg.Points(3)}, vg.Points(0.8)
			published = append(published, l)
			pl.Legend.Add(s.Name+" published (dashed)", l)
			continue
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		l.Color, l.Width = plotutil.Color(k), vg.Points(1+1.2*float64(len(names)-1-k))
		pts.Color, pts.Shape, pts.Radius = plotutil.Color(k), plotutil.Shape(k), vg.Points(3)
		label := s.Name + simulated
		if j := slices.IndexFunc(drawn, func(o threads.Series) bool { return coincide(o, s) }); j >= 0 {
			under := slices.Index(names, drawn[j].Name)
			l.Width, l.Dashes = vg.Points(1+1.2*float64(len(names)-1-under)), []vg.Length{vg.Points(4), vg.Points(3)}
			pts.Radius = vg.Points(5)
			label += " (dotted: on " + drawn[j].Name + "'s line)"
		}
		drawn = append(drawn, s)
		pl.Add(l, pts)
		pl.Legend.Add(label, l, pts)
	}
	pl.Add(published...)
	slices.Sort(xs)
	pl.X.Tick.Marker = dataTicks(xs)
	top := 0.0
	for _, v := range all {
		top = max(top, v.Y)
	}
	pl.Y.Max = top * (1.15 + 0.06*float64(len(p.Series)))
	if strings.Contains(pl.X.Label.Text, "KiB") {
		pl.X.Tick.Label.Rotation = 0.5
		pl.X.Tick.Label.XAlign, pl.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	}
	placeLegend(pl, all, xs)
	return nil
}

// coincide reports whether series a and b have the same x values and y
// values within 1 % of each other: lines that would hide one another.
func coincide(a, b threads.Series) bool {
	if !slices.Equal(a.X, b.X) || len(a.Y) != len(b.Y) {
		return false
	}
	for i := range a.Y {
		if d := a.Y[i] - b.Y[i]; d > 0.01*max(a.Y[i], b.Y[i]) || -d > 0.01*max(a.Y[i], b.Y[i]) {
			return false
		}
	}
	return true
}

// darker returns c at two thirds of its brightness: a published line drawn
// over the simulated one of the same colour.
func darker(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	dim := func(v uint32) uint8 { return uint8(v >> 8 * 2 / 3) }
	return color.RGBA{dim(r), dim(g), dim(b), 255}
}

// placeLegend puts pl's legend in the corner of the data area with the
// fewest points of pts (each corner a box of 45 % of the width and height).
func placeLegend(pl *plot.Plot, pts plotter.XYs, xs []float64) {
	if len(xs) == 0 {
		return
	}
	x0, x1, y1 := xs[0], xs[len(xs)-1], pl.Y.Max
	best, bestN := [2]bool{true, true}, len(pts)+1
	for _, top := range []bool{true, false} {
		for _, left := range []bool{true, false} {
			n := 0
			for _, p := range pts {
				inX := (left && p.X <= x0+0.45*(x1-x0)) || (!left && p.X >= x1-0.45*(x1-x0))
				inY := (top && p.Y >= 0.55*y1) || (!top && p.Y <= 0.45*y1)
				if inX && inY {
					n++
				}
			}
			if n < bestN {
				best, bestN = [2]bool{top, left}, n
			}
		}
	}
	pl.Legend.Top, pl.Legend.Left = best[0], best[1]
}
