package report

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
)

// Sweep is the JSON of a dd sweep, bhsim-sweep/2 (`bhsim sweep --format
// json`): one row per cell of the grid.
type Sweep struct {
	// Schema is SweepSchema; Tool the binary that wrote it.
	Schema string `json:"schema"`
	Tool   Tool   `json:"tool"`
	// Scenario is "dd"; Machine the machine's name (workload.DDMachine).
	Scenario string `json:"scenario"`
	Machine  string `json:"machine"`
	// Profile is the timing profile's name; Costs what its costs are
	// ("fitted", "built-in", "from FILE", with any set one by one).
	Profile string `json:"profile"`
	Costs   string `json:"costs"`
	// Shard is the part of the grid the rows are, for a sweep split with
	// --shard (MergeFiles joins the parts); nil for the whole grid.
	Shard *Shard     `json:"shard,omitempty"`
	Rows  []SweepRow `json:"rows"`
	// MachineDescription and ProfileDescription head the text (WriteText);
	// they are not in the JSON.
	MachineDescription string `json:"-"`
	ProfileDescription string `json:"-"`
}

// SweepRow is one cell of a Sweep: the axis values it ran with, the
// device's block size during the run, and its simulated figures.
type SweepRow struct {
	Kernel string `json:"kernel"`
	// BlockSizeChoice is the value of the block-size axis (the --blocksize
	// list): a set_init_blocksize policy or a fixed size; BlockSize below is
	// the size the device then had.
	BlockSizeChoice string `json:"block_size_choice"`
	Layout          string `json:"layout"`
	BS              uint64 `json:"bs"`
	CPUs            int    `json:"cpus"`
	Count           uint64 `json:"count"`
	Op              string `json:"op"` // "write" or "read"
	BlockSize       uint32 `json:"block_size"`
	// MBps is decimal MB/s; Bottleneck the busiest resource over the run.
	MBps           float64 `json:"mbps"`
	BiosPerPage    float64 `json:"bios_per_page"`
	RequestsPerMiB float64 `json:"requests_per_mib"`
	Bottleneck     string  `json:"bottleneck"`
}

// SweepOf renders the rows of a dd sweep on machine m under profile p,
// whose costs are described by costs, written by tool. O(rows).
func SweepOf(tool Tool, m workload.DDMachine, p *timing.Profile, costs string, rows []workload.DDRow) Sweep {
	out := Sweep{Schema: SweepSchema, Tool: tool, Scenario: "dd", Machine: m.Name, Profile: p.Name, Costs: costs,
		MachineDescription: m.Description, ProfileDescription: p.Description}
	for _, r := range rows {
		op := "write"
		if r.DD.Read {
			op = "read"
		}
		out.Rows = append(out.Rows, SweepRow{Kernel: r.DD.Kernel.Name, BlockSizeChoice: r.BlockSizeChoice.String(), Layout: r.DD.Layout.String(),
			BS: r.DD.BS, CPUs: r.DD.CPUs, Count: r.DD.Count, Op: op, BlockSize: r.Result.BlockSize, MBps: r.MBps,
			BiosPerPage: r.BiosPerPage, RequestsPerMiB: r.RequestsPerMiB, Bottleneck: r.Bottleneck})
	}
	return out
}

// WriteCSV writes s as bhsim-sweep-csv/2: one row per cell, the machine,
// profile and costs on each; a shard's rows end with their cell's index
// and the grid's cells (ShardCSVColumns). Errors: w fails. O(rows).
func (s Sweep) WriteCSV(w io.Writer) error {
	var cells [][]string
	for _, r := range s.Rows {
		cells = append(cells, []string{s.Machine, s.Profile, s.Costs, r.Kernel, r.BlockSizeChoice, r.Layout, strconv.FormatUint(r.BS, 10),
			strconv.Itoa(r.CPUs), strconv.FormatUint(r.Count, 10), r.Op, strconv.FormatUint(uint64(r.BlockSize), 10),
			Num(r.MBps), Num(r.BiosPerPage), Num(r.RequestsPerMiB), r.Bottleneck})
	}
	header := []string{"machine", "profile", "costs", "kernel", "block_size_choice", "layout", "bs", "cpus",
		"count", "op", "block_size", "mbps", "bios_per_page", "requests_per_mib", "bottleneck"}
	if s.Shard != nil {
		header, cells = s.Shard.csv(header, cells, func(int) int { return 1 })
	}
	return WriteCSV(w, SweepCSVSchema, header, cells)
}

// WriteText prints s as `bhsim sweep` does: a header naming the machine
// and profile, then a right-aligned table of one row per cell. Errors: w
// fails. O(rows).
func (s Sweep) WriteText(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "dd sweep on %s\nprofile %s (costs: %s): %s\n\n", s.MachineDescription, s.Profile, s.Costs, s.ProfileDescription); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kernel\tblocksize\tlayout\tbs\tcpus\tcount\top\tblock size\tMB/s\tbios/page\trequests/MiB\tbottleneck\t")
	for _, r := range s.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%d\t%.1f\t%.2f\t%.1f\t%s\t\n", r.Kernel, r.BlockSizeChoice, r.Layout,
			scenario.FormatDDSize(r.BS), r.CPUs, r.Count, r.Op, r.BlockSize, r.MBps, r.BiosPerPage, r.RequestsPerMiB, r.Bottleneck)
	}
	return tw.Flush()
}

// AxisError is a sweep axis's value that does not parse: Axis is the
// axis's name (workload.GridAxes), Err why.
type AxisError struct {
	Axis string
	Err  error
}

// Error prints "axis AXIS: why".
func (e *AxisError) Error() string { return "axis " + e.Axis + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *AxisError) Unwrap() error { return e.Err }

// SweepGrid returns machine m's dd grid over the values axes gives (by
// axis name, workload.GridAxes; an axis not given keeps the machine's
// value). Errors: an *AxisError for a value that does not parse, or for
// both count and size; the grid's own (workload.DDGrid.Cells). O(cells).
func SweepGrid(m workload.DDMachine, axes map[string]*List) (workload.DDGrid, error) {
	g := workload.DDGrid{Base: m.Base}
	for _, a := range workload.GridAxes() {
		var values []string
		if l := axes[a.Name]; l != nil {
			values = *l
		}
		err := g.SetAxis(a.Name, values)
		switch why := errors.Unwrap(err); {
		case err == nil:
			continue
		case why != nil: // a value's error, wrapped in the name of the axis's field
			return g, &AxisError{a.Name, why}
		case len(g.Counts) > 0 && len(g.Sizes) > 0:
			return g, &AxisError{"count", errors.New("give count or size, not both")}
		}
		return g, err
	}
	_, err := g.Cells()
	return g, err
}

// List is a flag's value that may be given several times, or with
// comma-separated values (flag.Value): a sweep's axis, the costs set one
// by one, the LRU sizes of a miss-ratio curve.
type List []string

// String joins the values with commas.
func (l *List) String() string { return strings.Join(*l, ",") }

// Set appends v's comma-separated items. Errors: an empty item ("",
// "1,,2", "1,"), which would otherwise leave the flag as if not given.
// O(len(v)).
func (l *List) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			return fmt.Errorf("an empty item in %q (want a comma-separated list of values)", v)
		}
		*l = append(*l, s)
	}
	return nil
}
