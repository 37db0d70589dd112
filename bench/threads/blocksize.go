package threads

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/bufcache"
)

// The set_init_blocksize revert thread. Maxim Mikityanskiy, "[PATCH] Revert
// "block: simplify set_init_blocksize" to regain lost performance", LKML
// 2021-01-26, and the follow-up in which the revert was taken for 5.11-rc6
// and 5.10.13: dd bs=1M count=2000 on a Helios4 (2 × Cortex-A9 at 1.6 GHz,
// 2 GiB) over four WD8003FFBX disks, MB/s.

// helios4Row is one kernel row of the Helios4 table: MB/s per layout.
type helios4Row struct {
	kernel      string
	read, write [5]float64 // in workload.Layouts() order
}

// helios4Published is Maxim Mikityanskiy's table.
var helios4Published = []helios4Row{
	{"9011495c9466", [5]float64{256, 313, 276, 313, 323}, [5]float64{254, 253, 195, 204, 117}},
	{"5ff9f19231a0", [5]float64{257, 398, 312, 344, 391}, [5]float64{154, 122, 67.7, 66.6, 67.2}},
	{"5.10.10", [5]float64{256, 401, 312, 356, 375}, [5]float64{149, 123, 64, 64.1, 61.5}},
	{"5.10.10+revert", [5]float64{255, 396, 312, 340, 393}, [5]float64{247, 274, 220, 225, 121}},
}

// helios4Source cites the table.
const helios4Source = "Maxim Mikityanskiy, \"[PATCH] Revert \\\"block: simplify set_init_blocksize\\\" to regain lost performance\", LKML 2021-01-26"

// BlocksizeFit fits one cost, a byte through the Helios4's memory
// controller (timing.ParamMemByte), to the ten write cells of the two rows
// whose kernels give the block device 4096-byte buffers, 5.10.10+revert and
// 9011495c9466 (its policy is the revert's). With one buffer and one bio a
// page those runs cannot tell per-bio from per-page work apart, and none of
// them is bound by it: on the four arrays the CPUs wait on a busy memory bus
// (the profile's memory-stall share, timing.Contended), the single disk
// runs at its media rate. The 512-byte rows (5ff9f19231a0 and
// 5.10.10), where eight bios a page make the CPUs the bound, and all reads
// are predictions from the profile's documented per-bio and per-page costs.
func BlocksizeFit() timing.Fit {
	f := timing.Fit{Params: []timing.Param{timing.ParamMemByte}}
	for _, row := range []string{"9011495c9466", "5.10.10+revert"} {
		for _, l := range workload.Layouts() {
			f.Cells = append(f.Cells, row+"/"+l.Column()+" W")
		}
	}
	return f
}

// blocksizeRun names one simulated dd run of the table: the kernel preset
// whose policy it ran, the layout and the direction.
type blocksizeRun struct {
	kernel string
	layout workload.Layout
	read   bool
}

// blocksizeRuns are the table's simulated runs, on the clock under the
// fitted profile. Only the block-size policy of the table's kernels is
// modelled, so the rows of one policy share runs: the runs are those of the
// two 5.10.10 rows, and the older rows reuse them (and are labelled so).
type blocksizeRuns map[blocksizeRun]*engine.RunResult

// name is the run's name among the thread's clock runs: "5.10.10/raid6/W".
func (k blocksizeRun) name() string {
	dir := "W"
	if k.read {
		dir = "R"
	}
	return fmt.Sprintf("%s/%s/%s", k.kernel, k.layout, dir)
}

// policyRow maps each row of the table to the row whose runs it shares.
var policyRow = map[string]string{
	"9011495c9466": "5.10.10+revert", "5ff9f19231a0": "5.10.10",
	"5.10.10": "5.10.10", "5.10.10+revert": "5.10.10+revert",
}

// runBlocksize is the thread's Run.
func runBlocksize(p *timing.Profile, opts Options) (*Reproduction, error) {
	r, _, err := reproduceBlocksize(p, BlocksizeFit(), opts)
	return r, err
}

// reproduceBlocksize runs dd on the clock for both 5.10.10 kernels on every
// layout, writes and reads, with 2000 × scale blocks of 1 MiB, calibrates
// fit's costs of p to the fitted cells (calibratedOnClock: the recorded fit
// for the built-in profile) and returns the reproduction and the runs
// under the fitted costs.
func reproduceBlocksize(p *timing.Profile, fit timing.Fit, opts Options) (*Reproduction, blocksizeRuns, error) {
	count := max(uint64(2000*opts.scale()+0.5), 1)
	clock := newClockRuns()
	var keys []blocksizeRun
	var names []string // the longest first: writes at 512-byte buffers, the arrays with most member bios first
	for _, read := range []bool{false, true} {
		for _, name := range []string{"5.10.10", "5.10.10+revert"} {
			layouts := workload.Layouts()
			slices.Reverse(layouts)
			for _, l := range layouts {
				dd := workload.Helios4DD(l, engine.MustKernel(name), read)
				dd.Count = count
				k := blocksizeRun{name, l, read}
				clock.add(k.name(), dd)
				keys, names = append(keys, k), append(names, k.name())
			}
		}
	}
	var obs []timing.Observation
	for _, row := range helios4Published {
		for _, read := range []bool{false, true} {
			for i, l := range workload.Layouts() {
				pub, dir := row.write[i], "W"
				if read {
					pub, dir = row.read[i], "R"
				}
				key := blocksizeRun{policyRow[row.kernel], l, read}
				obs = append(obs, clock.obs(key.name(), row.kernel, l.Column()+" "+dir, pub))
			}
		}
	}
	rep, err := calibratedOnClock(p, fit, obs, timing.Table{
		ID:     "blocksize-helios4",
		Title:  fmt.Sprintf("dd bs=1M count=%d on a Helios4: write (W) and read (R)", count),
		Source: helios4Source,
		Unit:   "MB/s",
	}, opts, clock, names)
	if err != nil {
		return nil, nil, err
	}
	results, err := clock.all(rep.Profile, names, nil)
	if err != nil {
		return nil, nil, err
	}
	runs := blocksizeRuns{}
	for i, k := range keys {
		runs[k] = results[i]
	}
	rep.Derived = []timing.Table{blocksizeRatios(rep.Table)}
	rep.Notes = blocksizeNotes(rep.Profile, runs)
	rep.Figures = []Figure{helios4Figure(rep.Table)}
	return rep, runs, nil
}

// blocksizeRatios derives, per layout, the revert's speed-up over 5.10.10
// for writes and the same ratio for reads, published and simulated.
func blocksizeRatios(t timing.Table) timing.Table {
	r := timing.Table{ID: "blocksize-helios4-ratios", Title: "5.10.10+revert over 5.10.10 (4096-byte over 512-byte buffers)",
		Source: helios4Source, Unit: "ratio", Decimals: 2}
	for _, l := range workload.Layouts() {
		for _, dir := range []struct{ suffix, name string }{{" W", "write speed-up"}, {" R", "read ratio"}} {
			grow, _ := t.Cell("5.10.10+revert", l.Column()+dir.suffix)
			logical, _ := t.Cell("5.10.10", l.Column()+dir.suffix)
			r.Cells = append(r.Cells, timing.Cell{Row: l.Column(), Column: dir.name,
				Published: grow.Published / logical.Published, Simulated: grow.Simulated / logical.Simulated,
				Label: derivedLabel(grow.Label, logical.Label)})
		}
	}
	return r
}

// blocksizeNotes renders, for each layout, what one page cost each resource
// under both policies, on the clock under p.
func blocksizeNotes(p *timing.Profile, runs blocksizeRuns) string {
	var sb strings.Builder
	sb.WriteString("where the time goes (µs per 4 KiB page written, by resource, each busy for that long over the run on\n" +
		"the clock; the busiest bounds the pace, and what does not overlap adds to it: the MB/s are the whole run's):\n")
	for _, l := range workload.Layouts() {
		for _, k := range []string{"5.10.10", "5.10.10+revert"} {
			r := runs[blocksizeRun{k, l, false}]
			fmt.Fprintf(&sb, "  %s, block size %d: %.2f bios/page, %.1f requests/MiB, %.1f MB/s\n", l.Column(), r.BlockSize,
				r.PerPage(timing.Ev(bufcache.EvBioSubmit)), 256*r.PerPage(timing.ParamRequest), r.MBps)
			loads := slices.Clone(r.Loads)
			for i := range loads {
				loads[i] = loads[i].Scaled(1 / r.Pages())
			}
			sb.WriteString(indent(p.DescribeLoads(loads), "  "))
		}
	}
	return sb.String()
}

// helios4Figure draws the Helios4 table: one panel per direction, bars per
// device column and kernel, published beside simulated.
func helios4Figure(t timing.Table) Figure {
	fig := Figure{ID: t.ID}
	var columns []string
	for _, l := range workload.Layouts() {
		columns = append(columns, l.Column())
	}
	for _, dir := range []struct{ suffix, name string }{{" W", "write"}, {" R", "read"}} {
		panel := Panel{Title: "Helios4 dd bs=1M " + dir.name, XLabel: "device", YLabel: t.Unit, Categories: columns}
		for _, row := range helios4Published {
			pub, sim := Series{Name: row.kernel, Published: true}, Series{Name: row.kernel}
			for _, col := range columns {
				c, _ := t.Cell(row.kernel, col+dir.suffix)
				pub.Y, sim.Y = append(pub.Y, c.Published), append(sim.Y, c.Simulated)
			}
			panel.Series = append(panel.Series, pub, sim)
		}
		fig.Panels = append(fig.Panels, panel)
	}
	return fig
}

// indent prefixes every non-empty line of s with by.
func indent(s, by string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "")
}
