package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bhsim/bhsim/bench"
)

// sweepSynopsis is the first lines of `bhsim sweep --help`.
const sweepSynopsis = `[--scenario dd] [--machine NAME] [--profile NAME] [--fitted] [axis flags] [--format text|csv|json]

Runs the dd scenario on every combination of the axis values (comma-separated
lists; an axis not given keeps the machine's value) and prints one row per
cell: the simulated MB/s, bios per page, requests per MiB and the resource
that sets the pace. Cells run in parallel on all cores; the results do not
depend on it. Example:

  bhsim sweep --layout raid0,raid6 --bs 1M,4M --preset 5.10.10,5.10.10+revert --count 200 --profile helios4`

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

// sweep implements `bhsim sweep`.
func sweep(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sweep")
	scenario := fs.String("scenario", "dd", "the `scenario` to sweep: dd")
	machine := fs.String("machine", "helios4", "the machine and base run: `NAME` helios4 (Helios4DD) or xu-yang (XuYangDD)")
	profile := fs.String("profile", "", "hardware profile `NAME` that prices the runs (default: the machine's)")
	fitted := fs.Bool("fitted", false, "calibrate the profile first, as its thread does (runs that reproduction: seconds)")
	format := fs.String("format", "text", "output `format`: text, csv or json")
	presets := fs.String("preset", "", "kernel presets, `LIST` of "+strings.Join(kernelNames(), ", "))
	bsizes := fs.String("blocksize", "", "block sizes, `LIST` of grow, logical (set_init_blocksize policies) or 512, 1024, 2048, 4096 (fixed); overrides the preset's policy")
	layouts := fs.String("layout", "", "devices, `LIST` of "+strings.Join(layoutNames(), ", ")+" (arrays span 4 disks, 512 KiB chunks)")
	bss := fs.String("bs", "", "dd block sizes, `LIST` of sizes with K, M or G suffixes (1M, 4500K)")
	cpus := fs.String("cpus", "", "numbers of CPUs, `LIST` (at least 2: dd's and the flusher's)")
	counts := fs.String("count", "", "dd count= values, `LIST`")
	sizes := fs.String("size", "", "bytes per run, `LIST` of sizes (count = size / bs, rounded up); not with --count")
	ops := fs.String("op", "", "directions, `LIST` of write, read")
	if pos, status, ok := parseArgs(fs, sweepSynopsis, args, stdout, stderr); !ok {
		return status
	} else if len(pos) > 0 {
		return fail(stderr, "sweep", fmt.Errorf("unexpected argument %q (sweep takes flags only; --help lists them)", pos[0]))
	}
	if *scenario != "dd" {
		return fail(stderr, "sweep", fmt.Errorf("unknown scenario %q (valid: dd)", *scenario))
	}
	if err := checkFormat(*format); err != nil {
		return fail(stderr, "sweep", err)
	}
	m, err := bench.DDMachineByName(*machine)
	if err != nil {
		return fail(stderr, "sweep", err)
	}
	g := bench.DDGrid{Base: m.Base}
	if err := parseGrid(&g, *presets, *bsizes, *layouts, *bss, *cpus, *counts, *sizes, *ops); err != nil {
		return fail(stderr, "sweep", err)
	}
	if _, err := g.Cells(); err != nil {
		return fail(stderr, "sweep", err)
	}
	if *profile == "" {
		*profile = m.Profile
	}
	p, usage, err := fittedProfile(*profile, *fitted)
	if err != nil {
		if usage {
			return fail(stderr, "sweep", err)
		}
		fmt.Fprintf(stderr, "bhsim sweep: calibrating %s: %v\n", *profile, err)
		return 1
	}
	rows, err := bench.SweepDD(g, p, bench.SweepOptions{Progress: progressLine(stderr, isTerminal(stderr), "sweep", time.Now())})
	if err != nil {
		fmt.Fprintf(stderr, "bhsim sweep: %s\n", strings.TrimPrefix(err.Error(), "bench: "))
		return 1
	}
	out := make([]sweepRow, len(rows))
	for i, r := range rows {
		op := "write"
		if r.DD.Read {
			op = "read"
		}
		out[i] = sweepRow{Kernel: r.DD.Preset.Name, Blocksize: r.BlockSize.String(), Layout: r.DD.Layout.String(),
			BS: r.DD.BS, CPUs: r.DD.CPUs, Count: r.DD.Count, Op: op, BlockSize: r.Result.BlockSize, MBps: r.MBps,
			BiosPerPage: r.BiosPerPage, RequestsPerMiB: r.RequestsPerMiB, Bottleneck: r.Bottleneck}
	}
	switch *format {
	case "json":
		err = writeJSON(stdout, struct {
			Scenario string     `json:"scenario"`
			Machine  string     `json:"machine"`
			Profile  string     `json:"profile"`
			Rows     []sweepRow `json:"rows"`
		}{*scenario, m.Name, p.Name, out})
	case "csv":
		err = writeSweepCSV(stdout, out)
	default:
		err = writeSweepText(stdout, m, p, *fitted, out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bhsim sweep: %v\n", err)
		return 1
	}
	return 0
}

// kernelNames returns the names of the kernel presets a sweep knows.
func kernelNames() []string {
	var names []string
	for _, k := range bench.Kernels() {
		names = append(names, k.Name)
	}
	return names
}

// layoutNames returns the names of the device layouts.
func layoutNames() []string {
	var names []string
	for _, l := range bench.Layouts() {
		names = append(names, l.String())
	}
	return names
}

// parseGrid sets g's axes from the flags' comma-separated lists. Errors name
// the valid values.
func parseGrid(g *bench.DDGrid, presets, bsizes, layouts, bss, cpus, counts, sizes, ops string) error {
	for _, s := range splitList(presets) {
		k, err := bench.KernelByName(s)
		if err != nil {
			return err
		}
		g.Kernels = append(g.Kernels, k)
	}
	for _, s := range splitList(bsizes) {
		c, err := bench.ParseBlockSizeChoice(s)
		if err != nil {
			return err
		}
		g.BlockSizes = append(g.BlockSizes, c)
	}
	for _, s := range splitList(layouts) {
		l, err := bench.ParseLayout(s)
		if err != nil {
			return err
		}
		g.Layouts = append(g.Layouts, l)
	}
	for _, list := range []struct {
		flag, value string
		into        *[]uint64
	}{{"bs", bss, &g.BS}, {"size", sizes, &g.Sizes}} {
		for _, s := range splitList(list.value) {
			n, err := bench.ParseDDSize(s)
			if err != nil {
				return fmt.Errorf("--%s: %s", list.flag, strings.TrimPrefix(err.Error(), "bench: "))
			}
			*list.into = append(*list.into, n)
		}
	}
	for _, s := range splitList(cpus) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			return fmt.Errorf("--cpus: invalid CPU count %q (at least 2)", s)
		}
		g.CPUs = append(g.CPUs, n)
	}
	for _, s := range splitList(counts) {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("--count: invalid count %q (a positive number)", s)
		}
		g.Counts = append(g.Counts, n)
	}
	for _, s := range splitList(ops) {
		switch s {
		case "write", "read":
			g.Reads = append(g.Reads, s == "read")
		default:
			return fmt.Errorf("unknown op %q (valid: write, read)", s)
		}
	}
	if len(g.Counts) > 0 && len(g.Sizes) > 0 {
		return errors.New("give --count or --size, not both")
	}
	return nil
}

// progressLine returns a progress callback for a terminal: once a second
// has passed since start, it rewrites one line on stderr and ends the line
// when the work is done. It returns nil when stderr is not a terminal.
func progressLine(stderr io.Writer, terminal bool, name string, start time.Time) func(done, total int) {
	if !terminal {
		return nil
	}
	shown := false
	return func(done, total int) {
		if !shown && time.Since(start) < time.Second {
			return
		}
		shown = true
		fmt.Fprintf(stderr, "\rbhsim %s: %d/%d cells, %.0f s", name, done, total, time.Since(start).Seconds())
		if done == total {
			fmt.Fprintln(stderr)
		}
	}
}

// sweepHeader is the column names of the text and CSV outputs.
var sweepHeader = []string{"kernel", "blocksize", "layout", "bs", "cpus", "count", "op", "block_size", "mbps",
	"bios_per_page", "requests_per_mib", "bottleneck"}

// writeSweepCSV writes the header and one row per cell.
func writeSweepCSV(w io.Writer, rows []sweepRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(sweepHeader); err != nil {
		return err
	}
	for _, r := range rows {
		if err := cw.Write([]string{r.Kernel, r.Blocksize, r.Layout, strconv.FormatUint(r.BS, 10), strconv.Itoa(r.CPUs),
			strconv.FormatUint(r.Count, 10), r.Op, strconv.FormatUint(uint64(r.BlockSize), 10), csvFloat(r.MBps),
			csvFloat(r.BiosPerPage), csvFloat(r.RequestsPerMiB), r.Bottleneck}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeSweepText writes the machine, the profile and an aligned table.
func writeSweepText(w io.Writer, m bench.DDMachine, p *bench.Profile, fitted bool, rows []sweepRow) error {
	costs := "built-in costs"
	if fitted {
		costs = "calibrated by its thread"
	}
	if _, err := fmt.Fprintf(w, "dd sweep on %s\nprofile %s (%s): %s\n\n", m.Description, p.Name, costs, p.Description); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kernel\tblocksize\tlayout\tbs\tcpus\tcount\top\tblock size\tMB/s\tbios/page\trequests/MiB\tbottleneck\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%d\t%.1f\t%.2f\t%.1f\t%s\t\n", r.Kernel, r.Blocksize, r.Layout,
			bench.FormatDDSize(r.BS), r.CPUs, r.Count, r.Op, r.BlockSize, r.MBps, r.BiosPerPage, r.RequestsPerMiB, r.Bottleneck)
	}
	return tw.Flush()
}
