package workload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk/md"
	"github.com/bhsim/bhsim/internal/enum"
	"github.com/bhsim/bhsim/internal/fanout"
)

// BlockSizeChoice is a value of a sweep's block-size axis: a
// set_init_blocksize policy, or a fixed block size. A fixed size S up to a
// page is modelled as disks of S-byte logical blocks under the logical
// policy (the device then has S-byte blocks, as after a filesystem's
// sb_set_blocksize); a size above a page (8 KiB to 64 KiB, which only a
// kernel with blocksize.RulesLarge accepts) as set_blocksize(S) right after
// dd's open (DD.SetBlocksize), since no disk of the model has logical
// blocks larger than a page.
type BlockSizeChoice struct {
	// Policy is the policy when Size is 0.
	Policy blocksize.Policy
	// Size is the fixed block size in bytes, or 0.
	Size uint32
}

// String returns the policy's name or the size in bytes ("grow", "1024").
func (c BlockSizeChoice) String() string {
	if c.Size != 0 {
		return strconv.FormatUint(uint64(c.Size), 10)
	}
	return c.Policy.String()
}

// ParseBlockSizeChoice parses a policy name (blocksize.ParsePolicy) or a
// block size in bytes: a power of two from 512 to 65536 (blocksize.MaxBlockSize;
// above 4096, 4 KiB pages, only on a kernel with blocksize.RulesLarge, which
// the run checks). The error names the valid choices.
func ParseBlockSizeChoice(s string) (BlockSizeChoice, error) {
	if p, err := blocksize.ParsePolicy(s); err == nil {
		return BlockSizeChoice{Policy: p}, nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || blocksize.ValidateLogical(uint32(n), blocksize.MaxBlockSize) != nil {
		var names []string
		for _, p := range blocksize.Policies() {
			names = append(names, p.String())
		}
		return BlockSizeChoice{}, fmt.Errorf("workload: unknown block size %q (valid: %s, 512, 1024, 2048, 4096, and up to 65536 on 6.18)", s, strings.Join(names, ", "))
	}
	return BlockSizeChoice{Size: uint32(n)}, nil
}

// pageSize is the page size of every machine a dd runs on.
const pageSize = 4096

// apply sets c in d, after the kernel's policy.
func (c BlockSizeChoice) apply(d DD) DD {
	switch {
	case c.Size == 0:
		d.Kernel.InitBlocksize = c.Policy
	case c.Size > pageSize:
		d.Kernel.InitBlocksize, d.Logical, d.SetBlocksize = blocksize.PolicyLogical, pageSize, c.Size
	default:
		d.Kernel.InitBlocksize, d.Logical = blocksize.PolicyLogical, c.Size
	}
	return d
}

// DDMachine is a machine a dd sweep runs on: the run its grid starts from
// and the built-in profile that prices it.
type DDMachine struct {
	Name, Description string
	Profile           string
	Base              DD
}

// DDMachines returns the machines of the two dd threads: Maxim's Helios4
// (Helios4DD: kernel 5.10.10, /dev/sda, bs=1M count=2000) and Xu Yang's
// board (IMX8BoardDD: kernel 6.6, /dev/sda, bs=1M, 4 GiB), whose arrays span
// four of its SSDs with 512 KiB chunks.
func DDMachines() []DDMachine {
	xu := IMX8BoardDD(engine.MustKernel("6.6"), 1<<20, 1)
	xu.Members, xu.Chunk = 4, md.DefaultChunkSize
	return []DDMachine{
		{Name: "helios4", Profile: "helios4", Base: Helios4DD(LayoutDirect, engine.MustKernel("5.10.10"), false),
			Description: "Helios4 (the set_init_blocksize thread): 2 × Cortex-A9, 640 MiB of page cache (low memory), 4 × WD8003FFBX"},
		{Name: "xu-yang", Profile: "xu-yang-board", Base: xu,
			Description: "Xu Yang's board (the iomap thread): 4 × Cortex-A53 (assumed), 1.5 GiB of page cache, SSDs timed by the profile (disk-requests, disk-bytes)"},
	}
}

// DDMachineByName returns the machine called name; the error names the
// valid ones.
func DDMachineByName(name string) (DDMachine, error) {
	return enum.Find("workload", "machine", DDMachines(), func(m DDMachine) string { return m.Name }, name)
}

// DDGrid is a parameter grid of dd runs: every combination of the values of
// its axes, each applied to Base. An empty axis keeps Base's value. The
// block-size axis applies after the kernel axis, so it overrides the
// kernel's policy. Counts and Sizes are two spellings of the run's length
// (count=, or bytes per run); at most one may be given.
type DDGrid struct {
	Base       DD
	Kernels    []engine.Kernel
	BlockSizes []BlockSizeChoice
	Layouts    []Layout
	BS         []uint64
	CPUs       []int
	Counts     []uint64
	// Sizes are bytes per run: count = ⌈size / bs⌉.
	Sizes []uint64
	Reads []bool
}

// DDCell is one cell of a DDGrid: the run, and the value of the block-size
// axis that made it (when that axis is empty, the policy of Base or of the
// cell's kernel).
type DDCell struct {
	DD              DD
	BlockSizeChoice BlockSizeChoice
}

// Cells returns the grid's cells in row-major order of the axes as DDGrid
// lists them (kernel slowest, direction fastest). Errors: both Counts and
// Sizes given, a zero bs, count or size, fewer than 2 CPUs, an unknown
// layout. O(cells).
func (g DDGrid) Cells() ([]DDCell, error) {
	if len(g.Counts) > 0 && len(g.Sizes) > 0 {
		return nil, errors.New("workload: sweep: give counts or sizes, not both")
	}
	// A kernel named alone is its preset (Kernel.resolved) before any axis
	// changes one of its variants, which would make it look like a
	// kernel of its own.
	base := g.Base
	var err error
	if base.Kernel, err = base.Kernel.Resolved(); err != nil {
		return nil, fmt.Errorf("workload: sweep: %w", err)
	}
	cells := []DDCell{{DD: base, BlockSizeChoice: BlockSizeChoice{Policy: base.Kernel.InitBlocksize}}}
	// expand replaces every cell by one per value of an axis of n values.
	expand := func(n int, set func(c *DDCell, i int) error) error {
		if n == 0 {
			return nil
		}
		out := make([]DDCell, 0, len(cells)*n)
		for _, c := range cells {
			for i := range n {
				nc := c
				if err := set(&nc, i); err != nil {
					return err
				}
				out = append(out, nc)
			}
		}
		cells = out
		return nil
	}
	steps := []struct {
		n   int
		set func(c *DDCell, i int) error
	}{
		{len(g.Kernels), func(c *DDCell, i int) error {
			k, err := g.Kernels[i].Resolved()
			if err != nil {
				return fmt.Errorf("workload: sweep: %w", err)
			}
			c.DD.Kernel = k
			c.BlockSizeChoice = BlockSizeChoice{Policy: k.InitBlocksize}
			return nil
		}},
		{len(g.BlockSizes), func(c *DDCell, i int) error {
			c.DD, c.BlockSizeChoice = g.BlockSizes[i].apply(c.DD), g.BlockSizes[i]
			return nil
		}},
		{len(g.Layouts), func(c *DDCell, i int) error {
			if g.Layouts[i] >= numLayouts {
				return fmt.Errorf("workload: sweep: unknown layout %s", g.Layouts[i])
			}
			c.DD.Layout = g.Layouts[i]
			return nil
		}},
		{len(g.BS), func(c *DDCell, i int) error { c.DD.BS = g.BS[i]; return nil }},
		{len(g.CPUs), func(c *DDCell, i int) error { c.DD.CPUs = g.CPUs[i]; return nil }},
		{len(g.Counts), func(c *DDCell, i int) error { c.DD.Count = g.Counts[i]; return nil }},
		{len(g.Sizes), func(c *DDCell, i int) error {
			if g.Sizes[i] == 0 || c.DD.BS == 0 {
				return errors.New("workload: sweep: size and bs must be positive")
			}
			c.DD.Count = (g.Sizes[i] + c.DD.BS - 1) / c.DD.BS
			return nil
		}},
		{len(g.Reads), func(c *DDCell, i int) error { c.DD.Read = g.Reads[i]; return nil }},
	}
	for _, s := range steps {
		if err := expand(s.n, s.set); err != nil {
			return nil, err
		}
	}
	for _, c := range cells {
		if c.DD.BS == 0 || c.DD.Count == 0 || c.DD.CPUs < 2 {
			return nil, fmt.Errorf("workload: sweep: bs %d, count %d, %d CPUs: need a positive bs and count and at least 2 CPUs",
				c.DD.BS, c.DD.Count, c.DD.CPUs)
		}
	}
	return cells, nil
}

// DDRow is one cell of a sweep as it ran on the clock.
type DDRow struct {
	DDCell
	Result *engine.RunResult
	// MBps is the simulated throughput (decimal MB/s, dd's unit, over the
	// whole run, its last close included: Result.MBps) and Bottleneck
	// the busiest resource over the run (Result.Bound, a timing.Load's
	// name), the steady state's pace.
	MBps       float64
	Bottleneck string
	// BiosPerPage counts the bios every CPU submitted per PAGE_SIZE page
	// moved; RequestsPerMiB the requests issued per MiB moved (an md
	// array's members' included).
	BiosPerPage, RequestsPerMiB float64
}

// rowOf returns r's row for cell c. O(resources).
func rowOf(c DDCell, r *engine.RunResult) DDRow {
	return DDRow{DDCell: c, Result: r, MBps: r.MBps, Bottleneck: r.Bound.Resource,
		BiosPerPage: r.PerPage(timing.Ev(bufcache.EvBioSubmit)), RequestsPerMiB: 256 * r.PerPage(timing.ParamRequest)}
}

// SweepOptions tune how a sweep runs, never what it computes.
type SweepOptions struct {
	// Workers is the number of cells run at once (GOMAXPROCS when ≤ 0).
	Workers int
	// Progress, when not nil, is called one call at a time, from the
	// goroutines running the cells, as their dds advance (every
	// progressEvery blocks and at each cell's end), with the MiB the dds
	// have moved across all cells and the grid's total: each cell counts
	// its bs·count rounded up to whole MiB. The last call of a sweep that
	// succeeds has done == total. (Before this field counted MiB it
	// counted cells.)
	Progress func(done, total int)
	// Shard and Shards choose a part of the grid for one machine of
	// several: only the cells i (in Cells' order) with i mod Shards ==
	// Shard run, and the rows are theirs, in order. Shards 0 runs every
	// cell. Preconditions: 0 <= Shard < Shards, or both 0.
	Shard, Shards int
}

// SweepDD runs every cell of g on the clock under p, each on its own
// machine: SweepDDContext without a deadline.
func SweepDD(g DDGrid, p *timing.Profile, opts SweepOptions) ([]DDRow, error) {
	return SweepDDContext(context.Background(), g, p, opts)
}

// SweepDDContext runs every cell of g (or of opts' shard) on the clock
// under p (DD.OnClock), each on its own machine. The rows come in Cells'
// order and depend on opts only through the shard.
// Errors: those of Cells, the first failed run in cell order (every started
// cell runs to its end or to ctx's), and ctx's error once ctx is done (the
// running dds stop within progressEvery blocks; errors.Is matches it).
func SweepDDContext(ctx context.Context, g DDGrid, p *timing.Profile, opts SweepOptions) ([]DDRow, error) {
	cells, err := g.Cells()
	if err != nil {
		return nil, err
	}
	if opts.Shards > 0 {
		var part []DDCell
		for i := opts.Shard; i < len(cells); i += opts.Shards {
			part = append(part, cells[i])
		}
		cells = part
	}
	moved := newSweepProgress(cells, opts.Progress)
	results := make([]*engine.RunResult, len(cells))
	err = fanout.Run(ctx, len(cells), opts.Workers, func(ctx context.Context, i int) error {
		r, err := cells[i].DD.OnClock(ctx, p, moved.cell(i))
		if err != nil {
			return fmt.Errorf("workload: sweep: dd %s %s %s bs=%d: %w", cells[i].DD.Kernel.Name, cells[i].BlockSizeChoice,
				cells[i].DD.Layout, cells[i].DD.BS, err)
		}
		results[i] = r
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	rows := make([]DDRow, len(cells))
	for i, c := range cells {
		rows[i] = rowOf(c, results[i])
	}
	return rows, nil
}

// sweepProgress adds the cells' dd progress into MiB moved across a grid
// for SweepOptions.Progress.
type sweepProgress struct {
	mu       sync.Mutex
	report   func(done, total int)
	bs       []uint64 // each cell's block size
	mib      []int    // each cell's whole MiB (bs·count rounded up)
	done     []int    // each cell's MiB moved so far
	sum, all int
}

// newSweepProgress returns the progress of cells reported to report, or nil
// when report is nil.
func newSweepProgress(cells []DDCell, report func(done, total int)) *sweepProgress {
	if report == nil {
		return nil
	}
	sp := &sweepProgress{report: report, bs: make([]uint64, len(cells)), mib: make([]int, len(cells)), done: make([]int, len(cells))}
	for i, c := range cells {
		sp.bs[i] = c.DD.BS
		sp.mib[i] = int((c.DD.BS*c.DD.Count + 1<<20 - 1) >> 20)
		sp.all += sp.mib[i]
	}
	return sp
}

// cell returns the RunContext progress callback of cell i, or nil for a nil
// sweepProgress.
func (sp *sweepProgress) cell(i int) func(done, total int) {
	if sp == nil {
		return nil
	}
	return func(blocks, count int) {
		mib := int(uint64(blocks) * sp.bs[i] >> 20)
		if blocks == count {
			mib = sp.mib[i]
		}
		sp.mu.Lock()
		defer sp.mu.Unlock()
		sp.sum += mib - sp.done[i]
		sp.done[i] = mib
		sp.report(sp.sum, sp.all)
	}
}
