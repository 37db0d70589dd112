package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bhsim/bhsim/bench/workload"
)

// sweepSynopsis is the first lines of `bhsim sweep --help`.
const sweepSynopsis = `[--machine NAME] [--profile NAME|FILE] [--costs fitted|built-in] [--cost PARAM=NS] [axis flags] [--format text|csv|json]

Runs the dd scenario on every combination of the axis values (comma-separated
lists; an axis not given keeps the machine's value) and prints one row per
cell: the simulated MB/s, bios per page, requests per MiB and the busiest
resource over the run (the steady state's pace; dd's start before writeback
and its close add their own time to the MB/s). Cells run in parallel on all
cores; the results do not depend on it. A sweep that takes more than a second
says on stderr how long it will take (a progress line in MiB moved on a
terminal), and one whose estimate passes ten minutes is refused with it.
Example:

  bhsim sweep --layout raid0,raid6 --bs 1M,4M --kernel 5.10.10,5.10.10+revert --count 200`

// sweepRow is one row of `bhsim sweep --format json`.
type sweepRow struct {
	Kernel         string  `json:"kernel"`
	Blocksize      string  `json:"blocksize"`
	Layout         string  `json:"layout"`
	BS             uint64  `json:"bs"`
	CPUs           int     `json:"cpus"`
	Count          uint64  `json:"count"`
	Op             string  `json:"op"`
	BlockSize      uint32  `json:"block_size"`
	MBps           float64 `json:"mbps"`
	BiosPerPage    float64 `json:"bios_per_page"`
	RequestsPerMiB float64 `json:"requests_per_mib"`
	Bottleneck     string  `json:"bottleneck"`
}

// sweepOut is `bhsim sweep --format json`.
type sweepOut struct {
	Schema   string     `json:"schema"`
	Tool     toolInfo   `json:"tool"`
	Scenario string     `json:"scenario"`
	Machine  string     `json:"machine"`
	Profile  string     `json:"profile"`
	Costs    string     `json:"costs"`
	Rows     []sweepRow `json:"rows"`
}

// sweep implements `bhsim sweep`.
func sweep(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sweep")
	var machines []string
	for _, m := range workload.DDMachines() {
		machines = append(machines, m.Name)
	}
	machine := fs.String("machine", "helios4", "the machine and base run: `NAME` "+strings.Join(machines, " or "))
	costs := addCostFlags(fs, "the machine's", true)
	format, checkFormat := formatFlag(fs, "text", "csv", "json")
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
	m, err := workload.DDMachineByName(*machine)
	if err != nil {
		return asUsage(err)
	}
	g, err := sweepGrid(m, axes)
	if err != nil {
		return err
	}
	p, costDesc, err := costs.resolve(m.Profile)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prog := newProgress(stderr, isTerminal(stderr), "sweep", "MiB")
	guard := newBudget(stderr, "sweep", "MiB", "fewer axis values or a smaller --count or --size", prog.task(0), cancel)
	rows, err := workload.SweepDDContext(ctx, g, p, workload.SweepOptions{Progress: guard.report})
	prog.finish()
	if refused := guard.refused(); refused != nil && (err == nil || errors.Is(err, context.Canceled)) {
		return refused // a cell's own failure, had one come first, is the one to report
	}
	if errors.Is(err, workload.ErrInvalidDD) {
		return asUsage(err)
	}
	if err != nil {
		return err
	}
	out := sweepOut{Schema: sweepSchema, Tool: tool(), Scenario: "dd", Machine: m.Name, Profile: p.Name, Costs: costDesc}
	for _, r := range rows {
		op := "write"
		if r.DD.Read {
			op = "read"
		}
		out.Rows = append(out.Rows, sweepRow{Kernel: r.DD.Kernel.Name, Blocksize: r.BlockSize.String(), Layout: r.DD.Layout.String(),
			BS: r.DD.BS, CPUs: r.DD.CPUs, Count: r.DD.Count, Op: op, BlockSize: r.Result.BlockSize, MBps: r.MBps,
			BiosPerPage: r.BiosPerPage, RequestsPerMiB: r.RequestsPerMiB, Bottleneck: r.Bottleneck})
	}
	switch *format {
	case "json":
		return writeJSON(stdout, out)
	case "csv":
		var cells [][]string
		for _, r := range out.Rows {
			cells = append(cells, []string{out.Machine, out.Profile, out.Costs, r.Kernel, r.Blocksize, r.Layout, strconv.FormatUint(r.BS, 10),
				strconv.Itoa(r.CPUs), strconv.FormatUint(r.Count, 10), r.Op, strconv.FormatUint(uint64(r.BlockSize), 10),
				num(r.MBps), num(r.BiosPerPage), num(r.RequestsPerMiB), r.Bottleneck})
		}
		return writeCSV(stdout, sweepCSVSchema, []string{"machine", "profile", "costs", "kernel", "blocksize", "layout", "bs", "cpus",
			"count", "op", "block_size", "mbps", "bios_per_page", "requests_per_mib", "bottleneck"}, cells)
	}
	fmt.Fprintf(stdout, "dd sweep on %s\nprofile %s (costs: %s): %s\n\n", m.Description, p.Name, costDesc, p.Description)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kernel\tblocksize\tlayout\tbs\tcpus\tcount\top\tblock size\tMB/s\tbios/page\trequests/MiB\tbottleneck\t")
	for _, r := range out.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%d\t%.1f\t%.2f\t%.1f\t%s\t\n", r.Kernel, r.Blocksize, r.Layout,
			workload.FormatDDSize(r.BS), r.CPUs, r.Count, r.Op, r.BlockSize, r.MBps, r.BiosPerPage, r.RequestsPerMiB, r.Bottleneck)
	}
	return tw.Flush()
}

// sweepGrid returns machine m's dd grid over the axis flags' values.
// Errors (usage): a value that does not parse, as "--AXIS: why", or both
// --count and --size; the grid's own errors.
func sweepGrid(m workload.DDMachine, axes map[string]*listFlag) (workload.DDGrid, error) {
	g := workload.DDGrid{Base: m.Base}
	for _, a := range workload.GridAxes() {
		err := g.SetAxis(a.Name, *axes[a.Name])
		switch why := errors.Unwrap(err); {
		case err == nil:
			continue
		case why != nil: // a value's error, wrapped in the name of the axis's field: the flag is the axis
			return g, usagef("--%s: %w", a.Name, why)
		case len(g.Counts) > 0 && len(g.Sizes) > 0:
			return g, usagef("workload: give --count or --size, not both")
		}
		return g, asUsage(err)
	}
	if _, err := g.Cells(); err != nil {
		return g, asUsage(err)
	}
	return g, nil
}
