package threads

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/bufcache"
)

// The iomap thread. Xu Yang (NXP), "Re: [PATCH 5/6] block: use iomap for
// writes to block devices", LKML 2024-04-26: dd if=/dev/zero of=/dev/sda bs=X
// count=N, about 4 GiB a run, MB/s, on v6.6 (block-device writes through
// iomap), with the iomap change reverted, and with the fix (4e527d5841e2).

// iomapKernel is a column of Xu Yang's table: the kernel preset and its
// label in the thread.
type iomapKernel struct{ name, column string }

// iomapKernels are the table's columns.
var iomapKernels = []iomapKernel{
	{"6.6", "6.6+ (iomap)"},
	{"6.6-revert", "487c607df790 reverted"},
	{"6.6-fix", "with 4e527d5841e2"},
}

// iomapRow is one dd bs of the table: MB/s per kernel, in iomapKernels order.
type iomapRow struct {
	kib   uint64
	count uint64
	mbps  [3]float64
}

// iomapPublished is Xu Yang's table.
var iomapPublished = []iomapRow{
	{400, 10485, [3]float64{334, 339, 339}},
	{800, 5242, [3]float64{278, 330, 330}},
	{1600, 2621, [3]float64{204, 332, 332}},
	{2200, 1906, [3]float64{170, 333, 333}},
	{3000, 1398, [3]float64{150, 333, 333}},
	{4500, 932, [3]float64{139, 333, 333}},
}

// IomapBS returns the dd block sizes of Xu Yang's table, in bytes.
func IomapBS() []uint64 {
	var bs []uint64
	for _, r := range iomapPublished {
		bs = append(bs, r.kib<<10)
	}
	return bs
}

// iomapRowName is the table's row label for a bs of kib KiB.
func iomapRowName(kib uint64) string { return fmt.Sprintf("bs=%dK", kib) }

// IomapFit fits three costs: a user page touched by the pre-fault and a byte
// copied into the page cache (which carries the rest of the writer's per-page
// work the profile does not price well), fitted to two cells of the 6.6
// curve, 800K and 4500K; and a byte written by the SSD
// (timing.ParamDiskByte), the disk the thread does not name, whose rate the
// profile can only assume, fitted to two cells of the reverted column, 400K
// and 4500K. The other four 6.6 cells, the other reverted cells and the
// column of the fix are predictions.
func IomapFit() timing.Fit {
	return timing.Fit{
		Params: []timing.Param{timing.Ev(bufcache.EvFaultInPage), timing.Ev(bufcache.EvCopyByte), timing.ParamDiskByte},
		Cells: []string{iomapRowName(800) + "/" + iomapKernels[0].column, iomapRowName(4500) + "/" + iomapKernels[0].column,
			iomapRowName(400) + "/" + iomapKernels[1].column, iomapRowName(4500) + "/" + iomapKernels[1].column},
	}
}

// iomapRun names one run of the thread: the kernel and the bs in bytes.
type iomapRun struct {
	kernel string
	bs     uint64
}

// runIomap is the thread's Run.
func runIomap(p *timing.Profile, opts Options) (*Reproduction, error) {
	r, _, err := reproduceIomap(p, IomapFit(), opts)
	return r, err
}

// name is the run's name among the thread's clock runs: "6.6/409600".
func (k iomapRun) name() string { return fmt.Sprintf("%s/%d", k.kernel, k.bs) }

// reproduceIomap runs Xu Yang's dd on the clock for the three kernels and
// six block sizes, each writing scale × 4 GiB, calibrates fit's costs of p
// (calibratedOnClock: the recorded fit for the built-in profile) and
// returns the reproduction and the runs under the fitted costs.
func reproduceIomap(p *timing.Profile, fit timing.Fit, opts Options) (*Reproduction, map[iomapRun]*engine.RunResult, error) {
	clock := newClockRuns()
	var keys []iomapRun
	var names []string
	for _, k := range iomapKernels {
		for _, bs := range IomapBS() {
			key := iomapRun{k.name, bs}
			clock.add(key.name(), workload.IMX8BoardDD(engine.MustKernel(k.name), bs, opts.scale()))
			keys, names = append(keys, key), append(names, key.name())
		}
	}
	var obs []timing.Observation
	for _, row := range iomapPublished {
		for i, k := range iomapKernels {
			key := iomapRun{k.name, row.kib << 10}
			obs = append(obs, clock.obs(key.name(), iomapRowName(row.kib), k.column, row.mbps[i]))
		}
	}
	rep, err := calibratedOnClock(p, fit, obs, timing.Table{
		ID:     "iomap-xu-yang",
		Title:  fmt.Sprintf("dd if=/dev/zero of=/dev/sda, %.3g GiB per run, by dd bs", 4*opts.scale()),
		Source: "Xu Yang, \"Re: [PATCH 5/6] block: use iomap for writes to block devices\", LKML 2024-04-26",
		Unit:   "MB/s",
	}, opts, clock, names)
	if err != nil {
		return nil, nil, err
	}
	results, err := clock.all(rep.Profile, names, nil)
	if err != nil {
		return nil, nil, err
	}
	runs := map[iomapRun]*engine.RunResult{}
	for i, k := range keys {
		runs[k] = results[i]
	}
	rep.Notes = iomapNotes(runs)
	rep.Figures = []Figure{iomapFigure(rep.Table)}
	return rep, runs, nil
}

// iomapNotes renders, per bs, what the model counted on the clock:
// pre-faulted user pages per page written, the run's time per page and
// its MB/s — the root cause step by step.
func iomapNotes(runs map[iomapRun]*engine.RunResult) string {
	var sb strings.Builder
	sb.WriteString("what the model counted per 4 KiB page written (faultin = user pages pre-faulted; µs = the run's time on the clock):\n")
	fmt.Fprintf(&sb, "  %-8s", "bs")
	for _, k := range iomapKernels {
		fmt.Fprintf(&sb, " %28s", k.name+": faultin, µs, MB/s")
	}
	sb.WriteString("\n")
	for _, bs := range IomapBS() {
		fmt.Fprintf(&sb, "  %-8s", scenario.FormatDDSize(bs))
		for _, k := range iomapKernels {
			r := runs[iomapRun{k.name, bs}]
			fmt.Fprintf(&sb, " %28s", fmt.Sprintf("%.1f, %.2f, %.0f", r.PerPage(timing.Ev(bufcache.EvFaultInPage)), r.DurationNS/r.Pages()/1e3, r.MBps))
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// iomapFigure draws Xu Yang's table: MB/s against dd's bs, one line per
// kernel, published and simulated.
func iomapFigure(t timing.Table) Figure {
	panel := Panel{Title: "Xu Yang's dd to /dev/sda", XLabel: "dd bs (KiB)", YLabel: t.Unit}
	for _, k := range iomapKernels {
		pub, sim := Series{Name: k.column, Published: true}, Series{Name: k.column}
		for _, row := range iomapPublished {
			c, _ := t.Cell(iomapRowName(row.kib), k.column)
			x := float64(row.kib)
			pub.X, pub.Y = append(pub.X, x), append(pub.Y, c.Published)
			sim.X, sim.Y = append(sim.X, x), append(sim.Y, c.Simulated)
		}
		panel.Series = append(panel.Series, pub, sim)
	}
	return Figure{ID: t.ID, Panels: []Panel{panel}}
}
