package workload

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
)

// GridAxis is one axis of a DDGrid as the command line names it, with what
// its values are.
type GridAxis struct {
	Name, Usage string
	field       string // the DDGrid field it sets, for errors
	set         func(g *DDGrid, v string) error
}

// GridAxes returns the axes of a DDGrid, in the order Cells expands them.
func GridAxes() []GridAxis {
	var kernels, layouts []string
	for _, k := range engine.Kernels() {
		kernels = append(kernels, k.Name)
	}
	for _, l := range Layouts() {
		layouts = append(layouts, l.String())
	}
	return []GridAxis{
		{"kernel", "kernel presets, `LIST` of " + strings.Join(kernels, ", "), "Kernels", func(g *DDGrid, v string) error {
			k, err := engine.KernelByName(v)
			g.Kernels = append(g.Kernels, k)
			return err
		}},
		{"blocksize", "block sizes, `LIST` of grow, logical (set_init_blocksize policies) or 512, 1024, 2048, 4096 (fixed; up to 65536 on 6.18); overrides the kernel's policy", "BlockSizes",
			func(g *DDGrid, v string) error {
				c, err := ParseBlockSizeChoice(v)
				g.BlockSizes = append(g.BlockSizes, c)
				return err
			}},
		{"layout", "devices, `LIST` of " + strings.Join(layouts, ", ") + " (arrays span 4 disks, 512 KiB chunks)", "Layouts", func(g *DDGrid, v string) error {
			l, err := ParseLayout(v)
			g.Layouts = append(g.Layouts, l)
			return err
		}},
		{"bs", "dd block sizes, `LIST` of sizes with K, M or G suffixes (1M, 4500K; at most " + scenario.FormatDDSize(MaxBS) + ")", "BS", func(g *DDGrid, v string) error {
			n, err := scenario.ParseDDSize(v)
			if err == nil && n > MaxBS {
				err = fmt.Errorf("workload: bs %s is above the largest the model simulates (%s)", v, scenario.FormatDDSize(MaxBS))
			}
			g.BS = append(g.BS, n)
			return err
		}},
		{"cpus", "numbers of CPUs, `LIST` (at least 2: dd's and the flusher's; on the clock CPUs beyond those two are idle in a dd and change no figure)", "CPUs", func(g *DDGrid, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 2 || n > 64 {
				return fmt.Errorf("workload: invalid CPU count %q (2 to 64)", v)
			}
			g.CPUs = append(g.CPUs, n)
			return nil
		}},
		{"count", "dd count= values, `LIST`", "Counts", func(g *DDGrid, v string) error {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil || n == 0 {
				return fmt.Errorf("workload: invalid count %q (a positive number)", v)
			}
			g.Counts = append(g.Counts, n)
			return nil
		}},
		{"size", "bytes per run, `LIST` of sizes (count = size / bs, rounded up); not with --count", "Sizes", func(g *DDGrid, v string) error {
			n, err := scenario.ParseDDSize(v)
			g.Sizes = append(g.Sizes, n)
			return err
		}},
		{"op", "directions, `LIST` of write, read", "Reads", func(g *DDGrid, v string) error {
			if v != "write" && v != "read" {
				return fmt.Errorf("workload: unknown op %q (valid: write, read)", v)
			}
			g.Reads = append(g.Reads, v == "read")
			return nil
		}},
	}
}

// SetAxis appends values to the axis called name. Errors: an unknown axis,
// a value that does not parse (naming the valid ones, wrapped in the name
// of the DDGrid field the axis sets: "DDGrid.Kernels: "), both Counts and
// Sizes set.
func (g *DDGrid) SetAxis(name string, values []string) error {
	for _, a := range GridAxes() {
		if a.Name != name {
			continue
		}
		for _, v := range values {
			if err := a.set(g, v); err != nil {
				return fmt.Errorf("DDGrid.%s: %w", a.field, err)
			}
		}
		if len(g.Counts) > 0 && len(g.Sizes) > 0 {
			return errors.New("workload: DDGrid: both Counts and Sizes are set (a run's length is given by one or the other)")
		}
		return nil
	}
	return fmt.Errorf("workload: unknown axis %q", name)
}
