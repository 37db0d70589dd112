package web

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/threads"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
)

// DDRequest is the block-size view's form: a dd on one of the threads'
// machines (workload.DDMachines), run at each block size under each
// kernel, as `bhsim sweep --machine M --kernel K --blocksize S --layout L
// --bs BS --count N --op OP --profile P --costs C` runs one cell.
type DDRequest struct {
	// Machine is a workload.DDMachine's name ("helios4", "xu-yang").
	Machine string `json:"machine"`
	// Kernels are kernel presets, side by side ("5.10.10", "6.18").
	Kernels []string `json:"kernels"`
	// BlockSizes are block-size choices (workload.ParseBlockSizeChoice:
	// "512" to "65536", "grow", "logical").
	BlockSizes []string `json:"blockSizes"`
	// Layout is the device (workload.ParseLayout: "direct", "raid0", …).
	Layout string `json:"layout"`
	// BS is dd's bs= ("1M", "4500K"), Count its count=, Op "write" or
	// "read".
	BS    string `json:"bs"`
	Count uint64 `json:"count"`
	Op    string `json:"op"`
	// Profile is a built-in profile ("": the machine's) and Costs its
	// costs, "fitted" ("": the default, as sweep's) or "built-in".
	Profile string `json:"profile"`
	Costs   string `json:"costs"`
}

// DDRow is one cell of the view: the kernel and block-size choice it ran
// with and what `bhsim sweep` prints for it, as numbers and as the text
// sweep prints (MB/s with one decimal, bios/page with two, requests/MiB
// with one); Error, instead, when the model refused the cell (a block
// above a page on a kernel that cannot have one).
type DDRow struct {
	Kernel          string  `json:"kernel"`
	BlockSizeChoice string  `json:"block_size_choice"`
	BlockSize       uint32  `json:"blockSize"`
	MBps            float64 `json:"mbps"`
	BiosPerPage     float64 `json:"biosPerPage"`
	RequestsPerMiB  float64 `json:"requestsPerMiB"`
	Bottleneck      string  `json:"bottleneck"`
	MBpsText        string  `json:"mbpsText"`
	BiosText        string  `json:"biosText"`
	RequestsText    string  `json:"requestsText"`
	Error           string  `json:"error,omitempty"`
}

// DDResponse is the view's answer: the machine and profile that ran, the
// rows in kernel-major order, and the equivalent command line.
type DDResponse struct {
	Machine            string  `json:"machine"`
	MachineDescription string  `json:"machineDescription"`
	Profile            string  `json:"profile"`
	Costs              string  `json:"costs"`
	Rows               []DDRow `json:"rows"`
	Command            string  `json:"command"`
}

// maxDDBytes bounds what one cell of the view moves: a browser runs the
// model on one thread, and a lecture cannot wait for a 2 GB dd.
const maxDDBytes = 1 << 30

// DD runs the view's dd: for each kernel and block size, one cell of
// workload.SweepDD on the clock under the profile the request names, as
// bhsim sweep runs it. A cell the model refuses as an invalid
// dd (workload.ErrInvalidDD) has its Error set; the others run on. Errors:
// an unknown machine, kernel, block size, layout, op or profile, a bs or
// count that does not parse or moves more than 1 GiB a cell, no kernel or
// block size, a failed run. O(kernels · block sizes · bs · count).
func DD(ctx context.Context, req DDRequest) (*DDResponse, error) {
	m, err := workload.DDMachineByName(req.Machine)
	if err != nil {
		return nil, err
	}
	p, costs, err := resolveProfile(req.Profile, req.Costs, m.Profile)
	if err != nil {
		return nil, err
	}
	base, err := ddBase(m, req)
	if err != nil {
		return nil, err
	}
	if len(req.Kernels) == 0 || len(req.BlockSizes) == 0 {
		return nil, errors.New("web: DDRequest: want at least one kernel and one block size")
	}
	out := &DDResponse{Machine: m.Name, MachineDescription: m.Description, Profile: p.Name, Costs: costs,
		Command: ddCommand(req, m, p, costs)}
	for _, k := range req.Kernels {
		for _, bs := range req.BlockSizes {
			g := workload.DDGrid{Base: base}
			if err := g.SetAxis("kernel", []string{k}); err != nil {
				return nil, err
			}
			if err := g.SetAxis("blocksize", []string{bs}); err != nil {
				return nil, err
			}
			rows, err := workload.SweepDDContext(ctx, g, p, workload.SweepOptions{Workers: 1})
			if errors.Is(err, workload.ErrInvalidDD) {
				out.Rows = append(out.Rows, DDRow{Kernel: k, BlockSizeChoice: bs, Error: refusal(err)})
				continue
			}
			if err != nil {
				return nil, err
			}
			out.Rows = append(out.Rows, ddRow(rows[0]))
		}
	}
	return out, nil
}

// ddBase returns machine m's base dd with the request's layout, bs, count
// and op applied through the sweep's axes.
func ddBase(m workload.DDMachine, req DDRequest) (workload.DD, error) {
	g := workload.DDGrid{Base: m.Base}
	for _, a := range []struct{ name, v string }{{"layout", req.Layout}, {"bs", req.BS}, {"op", req.Op}} {
		if a.v == "" {
			continue
		}
		if err := g.SetAxis(a.name, []string{a.v}); err != nil {
			return workload.DD{}, err
		}
	}
	if req.Count != 0 {
		g.Counts = []uint64{req.Count}
	}
	cells, err := g.Cells()
	if err != nil {
		return workload.DD{}, err
	}
	d := cells[0].DD
	if d.BS*d.Count > maxDDBytes || d.Count > maxDDBytes {
		return workload.DD{}, fmt.Errorf("web: DDRequest: bs=%s count=%d moves more than the page runs (%s a cell)",
			scenario.FormatDDSize(d.BS), d.Count, scenario.FormatDDSize(maxDDBytes))
	}
	return d, nil
}

// ddRow is a sweep row as the view shows it, in sweep's text formats
// (report.Sweep.WriteText).
func ddRow(r workload.DDRow) DDRow {
	return DDRow{Kernel: r.DD.Kernel.Name, BlockSizeChoice: r.BlockSizeChoice.String(), BlockSize: r.Result.BlockSize,
		MBps: r.MBps, BiosPerPage: r.BiosPerPage, RequestsPerMiB: r.RequestsPerMiB, Bottleneck: r.Bottleneck,
		MBpsText: fmt.Sprintf("%.1f", r.MBps), BiosText: fmt.Sprintf("%.2f", r.BiosPerPage), RequestsText: fmt.Sprintf("%.1f", r.RequestsPerMiB)}
}

// refusal is the reason of an invalid dd's error, past the sweep's and the
// dd's prefixes ("kernel 5.10.10: blocksize: set_blocksize(8192): above
// PAGE_SIZE (8192 > 4096)").
func refusal(err error) string {
	s := err.Error()
	if _, rest, ok := strings.Cut(s, workload.ErrInvalidDD.Error()+": "); ok {
		return rest
	}
	return s
}

// resolveProfile returns the built-in profile called name (def when "")
// with its costs — fitted (as sweep's default) or built-in — and what they
// are, as bench/report's Costs.Resolve says it. Errors: an unknown
// profile or costs, a profile without a fitted copy.
func resolveProfile(name, costs, def string) (*timing.Profile, string, error) {
	if name == "" {
		name = def
	}
	if _, err := timing.ProfileByName(name); err != nil {
		return nil, "", err
	}
	switch costs {
	case "", "fitted":
		p, err := threads.Fitted(name)
		return p, "fitted", err
	case "built-in":
		p, err := timing.ProfileByName(name)
		return p, costs, err
	}
	return nil, "", fmt.Errorf("web: unknown costs %q (valid: fitted, built-in)", costs)
}

// ddCommand is the bhsim sweep command line that prints the request's
// rows.
func ddCommand(req DDRequest, m workload.DDMachine, p *timing.Profile, costs string) string {
	parts := []string{"bhsim sweep --machine " + m.Name, "--kernel " + strings.Join(req.Kernels, ","),
		"--blocksize " + strings.Join(req.BlockSizes, ",")}
	for _, f := range []struct{ name, v string }{{"layout", req.Layout}, {"bs", req.BS}, {"op", req.Op}} {
		if f.v != "" {
			parts = append(parts, "--"+f.name+" "+f.v)
		}
	}
	if req.Count != 0 {
		parts = append(parts, fmt.Sprintf("--count %d", req.Count))
	}
	if p.Name != m.Profile {
		parts = append(parts, "--profile "+p.Name)
	}
	if costs != "fitted" {
		parts = append(parts, "--costs "+costs)
	}
	return strings.Join(parts, " ")
}

// kernelNames lists the kernel presets, for the forms.
func kernelNames() []string { return engine.KernelNames() }
