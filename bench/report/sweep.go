package report

import (
	"fmt"
	"io"
	"strconv"
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
	Profile string     `json:"profile"`
	Costs   string     `json:"costs"`
	Rows    []SweepRow `json:"rows"`
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
// profile and costs on each. Errors: w fails. O(rows).
func (s Sweep) WriteCSV(w io.Writer) error {
	var cells [][]string
	for _, r := range s.Rows {
		cells = append(cells, []string{s.Machine, s.Profile, s.Costs, r.Kernel, r.BlockSizeChoice, r.Layout, strconv.FormatUint(r.BS, 10),
			strconv.Itoa(r.CPUs), strconv.FormatUint(r.Count, 10), r.Op, strconv.FormatUint(uint64(r.BlockSize), 10),
			Num(r.MBps), Num(r.BiosPerPage), Num(r.RequestsPerMiB), r.Bottleneck})
	}
	return WriteCSV(w, SweepCSVSchema, []string{"machine", "profile", "costs", "kernel", "block_size_choice", "layout", "bs", "cpus",
		"count", "op", "block_size", "mbps", "bios_per_page", "requests_per_mib", "bottleneck"}, cells)
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
