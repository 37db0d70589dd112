package threads

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"golang.org/x/exp/stats"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
)

// The alloc_page_buffers thread. Sean Fu, "Re: [PATCH] fs: buffer: Modify
// alloc_page_buffers.", LKML 2017-06-21: system time of LTP's writetest -b
// 800 on ext3 with 1 KiB blocks, ten runs before and after the patch.

// seanFuRuns are Sean Fu's ten runs: system time in seconds of `time
// writetest -b 800`, write and read, before and after his patch, in
// allocCells order.
var seanFuRuns = [4][10]float64{
	{5.604, 4.408, 4.184, 4.352, 4.380, 4.240, 4.460, 4.072, 4.300, 4.400}, // write, before
	{4.116, 3.924, 3.708, 3.656, 3.608, 3.612, 3.552, 3.832, 3.736, 3.480}, // write, after
	{3.128, 2.976, 3.384, 3.112, 2.924, 3.084, 3.348, 3.000, 3.012, 2.768}, // read, before
	{3.036, 2.568, 2.544, 2.752, 2.684, 2.856, 2.576, 2.968, 2.560, 2.752}, // read, after
}

// allocCell names a cell of the thread's table: the row (write or read) and
// the column (before: mainline's linear list, after: the circular one).
type allocCell struct {
	row, column string
	kernel      string
}

// mebibyte is 2^20 bytes.
const mebibyte = 1 << 20

// allocCells are the table's cells in seanFuRuns order.
var allocCells = [4]allocCell{
	{"write", "before", "4.12"},
	{"write", "after", "4.12-circular"},
	{"read", "before", "4.12"},
	{"read", "after", "4.12-circular"},
}

// AllocFit fits two costs to the two "before" cells. The model has a
// block device, not ext3, so ext3's per-page work is a cost of its own, one
// count per page: for the write fs-write-pages (write_begin and write_end
// with their journal handle, the allocation of four blocks, the metadata
// that maps them), for the read fs-read-pages (mapping a page's blocks
// through the indirect blocks). Neither differs between the variants, so
// both "after" cells are predictions of the ring events alone, priced by the
// profile's unfitted costs. Two parameters, two fitted cells: no degree of
// freedom, nothing to hide either.
func AllocFit() timing.Fit {
	return timing.Fit{
		Params: []timing.Param{timing.ParamFSWritePage, timing.ParamFSReadPage},
		Cells:  []string{"write/before", "read/before"},
		Why: map[timing.Param]string{timing.ParamFSReadPage: "a cold read's system time is about 15 µs a page, and " +
			"ext3's block mapping explains a fifth of it: the rest (the completion of each read in the softirq that " +
			"tick-based accounting charges to the task it interrupts, the page-cache drop before the read, the " +
			"indirect blocks' own reads) is work the model does not count, and this cost carries it"},
	}
}

// The model runs writetest (workload.WriteTest) with both variants and
// counts what changes: per ring built, the mainline caller's tail walk,
// PAGE_SIZE / block-size steps (four with 1 KiB blocks), disappears; the
// closing link only moves into alloc_page_buffers. Rings are built for each
// page written and for each indirect block, and a read builds them only for
// the indirect blocks of a cold read. That, priced by the profile, is the
// model's answer to Al Viro's "Do you really get an observable change in
// performance?".

// allocRuns are the writetest runs of the thread, linear and circular, by
// kernel name.
type allocRuns map[string]*workload.WriteTestResult

// runAlloc is the thread's Run.
func runAlloc(p *timing.Profile, opts Options) (*Reproduction, error) {
	r, _, err := reproduceAlloc(p, AllocFit(), opts)
	return r, err
}

// reproduceAlloc runs Sean Fu's writetest for both variants of
// alloc_page_buffers on scale × 800 MiB (a smaller run is extrapolated to
// 800 MiB: every page costs the same), calibrates fit's costs of p to the
// fitted cells and returns the table, in milliseconds of system time for
// 800 MiB. The write cells are the write phase; the read cells the read of a
// cold cache (writetest's own verify reads a cached file, which builds no
// buffers at all, and the notes report it too).
func reproduceAlloc(p *timing.Profile, fit timing.Fit, opts Options) (*Reproduction, allocRuns, error) {
	runs := allocRuns{}
	for i, k := range []string{"4.12", "4.12-circular"} {
		r, err := workload.PostedWriteTest(engine.MustKernel(k), opts.scale()).Run()
		if err != nil {
			return nil, nil, fmt.Errorf("writetest %s: %w", k, err)
		}
		runs[k] = r
		if opts.Progress != nil {
			opts.Progress(i+1, 2)
		}
	}
	var obs []timing.Observation
	for i, c := range allocCells {
		ph := runs[c.kernel].ReadCold
		if c.row == "write" {
			ph = runs[c.kernel].Write
		}
		obs = append(obs, timing.Observation{Row: c.row, Column: c.column, Published: publishedMS(seanFuRuns[i][:]),
			Q: sysMSQuantities(ph, c.row == "write"), Run: c.kernel + "/" + c.row})
	}
	rep, err := calibrated(p, fit, obs, timing.Table{
		ID:     "alloc-sean-fu",
		Title:  "writetest -b 800 on ext3 with 1 KiB blocks (read: cold cache), before and after \"fs: buffer: Modify alloc_page_buffers\"",
		Source: "Sean Fu, \"Re: [PATCH] fs: buffer: Modify alloc_page_buffers.\", LKML 2017-06-21, <20170621170746.GA4355@linux-zmni.DHCP>, mean of 10 runs",
		Unit:   "ms of system time for 800 MiB",
	})
	if err != nil {
		return nil, nil, err
	}
	fitted := rep.Profile
	rep.Notes = runs.notes(fitted)
	rep.Figures = []Figure{cellsFigure(rep.Table, "writetest -b 800 on ext3, 1 KiB blocks", "phase, kernel (before: mainline; after: Sean Fu's patch)")}
	return rep, runs, nil
}

// publishedMS is the mean of runs (seconds, printed to the millisecond) in
// milliseconds, to the tenth of a millisecond: the mean as the source's
// precision allows it to be printed.
func publishedMS(runs []float64) float64 { return math.Round(1e4*stats.Mean(runs)) / 10 }

// sysMSQuantities returns a phase's events, and its pages as the file
// system's per-page work (timing.ParamFSWritePage for a write, else
// ParamFSReadPage), as the quantities of an observation in milliseconds:
// extrapolated to 800 MiB and scaled so that their priced sum (ns) comes out
// in ms.
func sysMSQuantities(ph workload.Phase, write bool) timing.Quantities {
	q := timing.PerOp(ph.Events, 1, 0)
	if write {
		q[timing.ParamFSWritePage] = ph.Pages()
	} else {
		q[timing.ParamFSReadPage] = ph.Pages()
	}
	f := workload.PostedWriteTestMiB * mebibyte / float64(ph.Bytes) / 1e6
	for i := range q {
		q[i] *= f
	}
	return q
}

// phaseRow is one phase of writetest, as Text reports it.
type phaseRow struct {
	name string
	pick func(*workload.WriteTestResult) workload.Phase
	// fs is the file system's per-page cost the phase pays once a page, or
	// none (a cached read maps no blocks).
	fs    timing.Param
	hasFS bool
}

var phaseRows = []phaseRow{
	{"write", func(r *workload.WriteTestResult) workload.Phase { return r.Write }, timing.ParamFSWritePage, true},
	{"read, cold cache", func(r *workload.WriteTestResult) workload.Phase { return r.ReadCold }, timing.ParamFSReadPage, true},
	{"read, cached (writetest's verify)", func(r *workload.WriteTestResult) workload.Phase { return r.ReadCached }, 0, false},
}

// pageNS is the simulated system time of one page of ph under p: its events
// and, for a phase that maps blocks, the file system's per-page cost.
func (row phaseRow) pageNS(p *timing.Profile, ph workload.Phase) float64 {
	ns := p.SimNS(ph.Events, 0) / ph.Pages()
	if row.hasFS {
		ns += p.NS[row.fs]
	}
	return ns
}

// notes renders what the patch changes per page in events and nanoseconds
// under p, the answer to Al Viro's question, and the per-page ledger of each
// variant.
func (runs allocRuns) notes(p *timing.Profile) string {
	var sb strings.Builder
	lin, circ := runs["4.12"], runs["4.12-circular"]
	w := lin.Setup
	fmt.Fprintf(&sb, "the run: writetest of %d MiB in %d KiB write(2)s and read(2)s, ext3 block size %d (%d buffers a page), %d indirect blocks;\n",
		w.Bytes/mebibyte, w.IOSize>>10, w.BlockSize, lin.Write.BuffersPerPage, lin.TreeBlocks)
	if w.Bytes != workload.PostedWriteTestMiB*mebibyte {
		fmt.Fprintf(&sb, "  extrapolated ×%.4g to 800 MiB; ", float64(workload.PostedWriteTestMiB*mebibyte)/float64(w.Bytes))
	} else {
		sb.WriteString("  ")
	}
	fmt.Fprintf(&sb, "profile %s; system time = the events of the program's CPU. Writeback (the flusher,\n"+
		"  jbd2's commits, the script's sync) runs in other tasks, whose CPU time time(1) does not count.\n"+
		"  The fitted fs-write-pages and fs-read-pages are what ext3 does per page beyond the block-device model\n"+
		"  (journal handle, block allocation, metadata; the block mapping of a read): the same in both variants,\n"+
		"  they cancel out of Δ.\n", p.Name)

	sb.WriteString("\nwhat the patch changes, per 4 KiB page (program's CPU):\n")
	fmt.Fprintf(&sb, "  %-34s %10s %22s %22s %10s %12s %9s\n", "phase", "rings", "ring-links lin→circ", "ring-walks lin→circ", "Δ ns", "sys ns", "Δ")
	for _, row := range phaseRows {
		l, c := row.pick(lin), row.pick(circ)
		dl, dc := row.pageNS(p, l), row.pageNS(p, c)
		fmt.Fprintf(&sb, "  %-34s %10.4f %22s %22s %+10.3f %12.1f %+8.4f%%\n", row.name, l.Rings()/l.Pages(),
			fmt.Sprintf("%.4f → %.4f", l.PerPage(bufcache.EvRingLink), c.PerPage(bufcache.EvRingLink)),
			fmt.Sprintf("%.4f → %.4f", l.PerPage(bufcache.EvRingWalk), c.PerPage(bufcache.EvRingWalk)),
			dc-dl, dl, 100*(dc-dl)/dl)
	}
	sb.WriteString(runs.viroAnswer(p))
	for _, row := range phaseRows[:2] {
		fmt.Fprintf(&sb, "\nledger of one 4 KiB page, %s (profile %s):\n", row.name, p.Name)
		sb.WriteString(ledgerDiff(p, row, row.pick(lin), row.pick(circ)))
	}
	return sb.String()
}

// viroAnswer answers Al Viro's question from the model's counts: what the
// patch saves per page and over the run, against the published difference
// and the resolution of Sean Fu's ten runs (the standard error of the
// difference of two means). The difference is observable if it exceeds that.
// Cycles are counted at the x86-2017 profile's assumed clock, whatever the
// profile.
func (runs allocRuns) viroAnswer(p *timing.Profile) string {
	lin, circ := runs["4.12"], runs["4.12-circular"]
	var sb strings.Builder
	sb.WriteString("\nAl Viro: \"Do you really get an observable change in performance?\" What the model counts:\n")
	walk := p.NS[bufcache.EvRingWalk]
	pages := workload.PostedWriteTestMiB * mebibyte / float64(blocksize.DefaultPageSize)
	observable := false
	for i, row := range phaseRows[:2] {
		l, c := row.pick(lin), row.pick(circ)
		saved := l.PerPage(bufcache.EvRingWalk) - c.PerPage(bufcache.EvRingWalk)
		perPage := row.pageNS(p, l)
		deltaNS := perPage - row.pageNS(p, c)
		modelMS := deltaNS * pages / 1e6
		mb, sb1 := stats.MeanAndStdDev(seanFuRuns[2*i][:])
		ma, sa := stats.MeanAndStdDev(seanFuRuns[2*i+1][:])
		claimMS, seMS := 1e3*(mb-ma), 1e3*math.Sqrt((sb1*sb1+sa*sa)/float64(len(seanFuRuns[0])))
		observable = observable || modelMS > seMS
		fmt.Fprintf(&sb, "  %s: %.4f ring-walk steps saved a page (%d a ring × %.4f rings a page) at %.3f ns:\n"+
			"    %.3f ns of %.1f ns a page (%.4f%%), %.3f ms over 800 MiB. His means differ by %.0f ms (%.1f%%), %.0f× that,\n"+
			"    ± %.0f ms (standard error of the difference of two means of ten runs); %.0f ns (%.0f cycles at %.1f GHz)\n"+
			"    per step saved would be needed to explain it.\n",
			row.name, saved, l.BuffersPerPage, l.Rings()/l.Pages(), walk,
			deltaNS, perPage, 100*deltaNS/perPage, modelMS, claimMS, 100*claimMS/(1e3*mb), claimMS/modelMS,
			seMS, claimMS*1e6/(saved*pages), claimMS*1e6/(saved*pages)*timing.X86Desktop2017GHz, timing.X86Desktop2017GHz)
	}
	cached := lin.ReadCached
	fmt.Fprintf(&sb, "  writetest's verify as the program runs it reads a cached file: %.0f rings a page, nothing to save.\n", cached.Rings()/cached.Pages())
	if observable {
		sb.WriteString("  Verdict: yes, the modelled difference exceeds the resolution of ten runs.\n")
	} else {
		sb.WriteString("  Verdict: no. In both phases the modelled difference is below the resolution of ten runs of time(1);\n" +
			"  the published differences are not what this change can do.\n")
	}
	return sb.String()
}

// ledgerDiff renders, per page moved, every event either variant recorded
// in row's phase, and the file system's per-page cost: count and cost with
// the linear list, with the circular one, and the difference, most expensive
// first, with the totals.
func ledgerDiff(p *timing.Profile, row phaseRow, lin, circ workload.Phase) string {
	type line struct {
		param    timing.Param
		ns, l, c float64 // unit cost, counts per page
	}
	byParam := map[timing.Param]*line{}
	var lines []*line
	for i, ph := range []workload.Phase{lin, circ} {
		ledger := p.Ledger(ph.Events, 0)
		if row.hasFS {
			ledger = append(ledger, timing.LedgerLine{Param: row.fs, Count: ph.Pages(), NS: p.NS[row.fs]})
		}
		for _, ll := range ledger {
			x := byParam[ll.Param]
			if x == nil {
				x = &line{param: ll.Param, ns: ll.NS}
				byParam[ll.Param] = x
				lines = append(lines, x)
			}
			if i == 0 {
				x.l = ll.Count / ph.Pages()
			} else {
				x.c = ll.Count / ph.Pages()
			}
		}
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].l*lines[i].ns > lines[j].l*lines[j].ns })
	var sb strings.Builder
	fmt.Fprintf(&sb, "  %-18s %10s %12s %12s %12s %12s %10s\n", "event", "ns each", "linear", "ns", "circular", "ns", "Δ ns")
	var tl, tc float64
	for _, x := range lines {
		tl, tc = tl+x.l*x.ns, tc+x.c*x.ns
		fmt.Fprintf(&sb, "  %-18s %10.3f %12.4f %12.3f %12.4f %12.3f %+10.3f\n", x.param, x.ns, x.l, x.l*x.ns, x.c, x.c*x.ns, (x.c-x.l)*x.ns)
	}
	fmt.Fprintf(&sb, "  %-18s %10s %12s %12.3f %12s %12.3f %+10.3f (%+.4f%%)\n", "total", "", "", tl, "", tc, tc-tl, 100*(tc-tl)/tl)
	return sb.String()
}

// cellsFigure draws a table's cells as bars, published beside simulated.
func cellsFigure(t timing.Table, title, xlabel string) Figure {
	panel := Panel{Title: title, XLabel: xlabel, YLabel: t.Unit}
	pub, sim := Series{Name: t.Unit, Published: true}, Series{Name: t.Unit}
	for _, c := range t.Cells {
		panel.Categories = append(panel.Categories, strings.TrimSpace(c.Row+" "+c.Column))
		pub.Y, sim.Y = append(pub.Y, c.Published), append(sim.Y, c.Simulated)
	}
	panel.Series = []Series{pub, sim}
	return Figure{ID: t.ID, Panels: []Panel{panel}}
}
