package main

import (
	"context"
	"io"
	"strings"

	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/workload"
)

// sweepSynopsis is the first lines of `bhsim sweep --help`.
const sweepSynopsis = `[--machine NAME] [--profile NAME|FILE] [--costs fitted|built-in] [--cost PARAM=NS] [axis flags] [--format text|csv|json] [--shard K/N]

Runs the dd scenario on every combination of the axis values (comma-separated
lists; an axis not given keeps the machine's value) and prints one row per
cell: the simulated MB/s, bios per page, requests per MiB and the busiest
resource over the run (the steady state's pace; dd's start before writeback
and its close add their own time to the MB/s). Cells run in parallel on all
cores; the results do not depend on it. A sweep that takes more than a second
says on stderr how long it will take (a progress line in MiB moved on a
terminal), and one whose estimate passes ten minutes is refused with it.
--shard K/N runs only the cells i with i mod N = K, for one of N machines;
bhsim merge joins the N outputs into the whole's (docs/at-scale.md).
Example:

  bhsim sweep --layout raid0,raid6 --bs 1M,4M --kernel 5.10.10,5.10.10+revert --count 200`

// sweep implements `bhsim sweep`.
func sweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sweep")
	machines := namesOf(workload.DDMachines(), func(m workload.DDMachine) string { return m.Name })
	machine := fs.String("machine", "helios4", "the machine and base run: `NAME` "+strings.Join(machines, " or "))
	costs := addCostFlags(fs, "the machine's", true, nil)
	format, checkFormat := formatFlag(fs, "text", "csv", "json")
	shard := fs.String("shard", "", "run shard `K/N` of the grid's cells: those i with i mod N = K (json or csv, for bhsim merge)")
	axes := map[string]*listFlag{}
	for _, a := range workload.GridAxes() {
		axes[a.Name] = new(listFlag)
		fs.Var(axes[a.Name], a.Name, a.Usage)
	}
	if pos, err := parseArgs(fs, sweepSynopsis, args, stdout); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected argument %q (sweep takes flags only; --help lists them)", pos[0])
	}
	if err := checkFormat(); err != nil {
		return err
	}
	sh, err := shardOf(*shard, *format)
	if err != nil {
		return err
	}
	m, err := workload.DDMachineByName(*machine)
	if err != nil {
		return asUsage(err)
	}
	g, err := report.SweepGrid(m, axes)
	if err != nil {
		return flagError(err)
	}
	p, costDesc, err := resolveCosts(costs, m.Profile)
	if err != nil {
		return err
	}
	var rows []workload.DDRow
	err = budgeted(ctx, stderr, "sweep", "MiB", "fewer axis values or a smaller --count or --size", func(ctx context.Context, progress func(done, total int)) (err error) {
		rows, err = workload.SweepDDContext(ctx, g, p, workload.SweepOptions{Progress: progress, Shard: sh.Index, Shards: sh.Count})
		return err
	})
	if err != nil {
		return err
	}
	out := report.SweepOf(report.CurrentTool(), m, p, costDesc, rows)
	cells, _ := g.Cells()
	out.Shard = sh.Of(len(cells))
	return printAs(stdout, *format, jsonOf(out), out.WriteCSV, out.WriteText)
}
