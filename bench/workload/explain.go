package workload

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/enum"
	"github.com/bhsim/bhsim/iomap"
)

// OpArgs are the arguments of an explained operation; each operation reads
// only its own (ExplainOp.Args names them) and ExplainOp.Parse fills in the
// defaults.
type OpArgs struct {
	// Block is the block the find-get-block operations look up (the bh-LRU thread
	// looks up block 1): below 2^18 on a 1 GiB device, beyond it on a
	// 32 TiB metadata-only one, so that a large block shows a taller index.
	Block uint64
	// BlockSize is write-page's and read-page's block size: 512, 1024,
	// 2048 or 4096.
	BlockSize uint32
	// Layout is write-page's and read-page's device.
	Layout Layout
	// BS is iomap-write-page's dd bs in bytes.
	BS uint64
	// Kernel is iomap-write-page's kernel.
	Kernel engine.Kernel
	// Count is the dd runs' count=; 0 asks for the thread's (Helios4DD's,
	// IMX8BoardDD's).
	Count uint64
}

// Arg is one argument of an ExplainOp: its command-line name, its default
// (the text a user would type) and what it means.
type Arg struct {
	Name, Default, Usage string
	// set parses v into a; its error names the valid values.
	set func(a *OpArgs, v string) error
}

// ExplainOp describes one operation Explain can build.
type ExplainOp struct {
	Name string
	// Summary says in a line what the operation is.
	Summary string
	// Profile is the built-in profile of the machine the operation's thread
	// was measured on, or empty for an operation that prices nothing.
	Profile string
	// Args are the arguments it reads, with their defaults.
	Args  []Arg
	build buildFunc
}

// buildFunc builds an operation's explanation from its arguments under p
// (never nil for an operation with a Profile), reporting a dd's progress.
type buildFunc func(ctx context.Context, op ExplainOp, a OpArgs, p *timing.Profile, progress func(done, total int)) (Explanation, error)

// Explanation is what explaining an operation produced: a report for a
// teacher's slide, priced under a profile where the operation has one.
type Explanation interface {
	// Text renders the explanation, its costs under p (which an operation
	// without a Profile ignores).
	Text(p *timing.Profile) string
}

// argBlock and the others are the arguments the operations share.
var (
	argBlock = Arg{Name: "block", Default: "1", Usage: "the `block` looked up (beyond 2^18, on a 32 TiB device)",
		set: func(a *OpArgs, v string) error {
			n, err := strconv.ParseUint(v, 10, 64)
			switch {
			case err != nil:
				return fmt.Errorf("workload: invalid block %q (a block number)", v)
			case n >= lookupLargeDevice/4096:
				return fmt.Errorf("workload: block %d is past the end of the largest lookup device (%s of 4 KiB blocks)", n, scenario.FormatDDSize(lookupLargeDevice))
			}
			a.Block = n
			return nil
		}}
	argBlockSize = Arg{Name: "bsize", Default: "512", Usage: "the device's block `size`: 512, 1024, 2048 or 4096",
		set: func(a *OpArgs, v string) error {
			c, err := ParseBlockSizeChoice(v)
			if err != nil || c.Size == 0 || c.Size > pageSize {
				return fmt.Errorf("workload: invalid block size %q (valid: 512, 1024, 2048, 4096)", v)
			}
			a.BlockSize = c.Size
			return nil
		}}
	argLayout = Arg{Name: "layout", Default: "direct", Usage: "the `device`: " + layoutNames.List(),
		set: func(a *OpArgs, v string) (err error) { a.Layout, err = ParseLayout(v); return err }}
	argCount = Arg{Name: "count", Default: "auto", Usage: "dd's count= (auto: the thread's, 2000 MiB on the Helios4, 4 GiB on Xu Yang's board)",
		set: func(a *OpArgs, v string) error {
			if v == "auto" {
				a.Count = 0
				return nil
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil || n == 0 {
				return fmt.Errorf("workload: invalid count %q (a positive number, or auto)", v)
			}
			a.Count = n
			return nil
		}}
)

// ExplainOps returns the operations Explain can build.
func ExplainOps() []ExplainOp {
	lookup := func(name, summary string) ExplainOp {
		return ExplainOp{Name: name, Summary: summary, Profile: "x86-server", Args: []Arg{argBlock}, build: buildLookup}
	}
	return []ExplainOp{
		lookup("find-get-block-hit", "one __find_get_block(bdev, block, 4096) that hits the per-CPU LRU"),
		lookup("find-get-block-miss", "one __find_get_block(bdev, block, 512) on 4 KiB blocks, as Tosatti's module called it: LRU miss, slow path, install"),
		lookup("find-get-block-slow", "one __find_get_block_slow(bdev, block): the page-cache index and the buffer ring"),
		{Name: "write-page", Summary: "one 4 KiB page of dd bs=1M written through buffer heads and written back, at a given block size",
			Profile: "helios4", build: buildHelios4Page(false), Args: []Arg{argBlockSize, argLayout, argCount}},
		{Name: "read-page", Summary: "one 4 KiB page of dd bs=1M read through the page cache: on-demand readahead in the device's window, no buffer heads",
			Profile: "helios4", build: buildHelios4Page(true), Args: []Arg{argBlockSize, argLayout, argCount}},
		{Name: "iomap-write-page", Summary: "one 4 KiB page written by dd to a block device at a given bs and kernel (Xu Yang's board)",
			Profile: "xu-yang-board", build: buildIomapWritePage, Args: []Arg{
				{Name: "bs", Default: "4500K", Usage: "dd's bs= `size` (K, M, G suffixes; at most " + scenario.FormatDDSize(MaxBS) + ")",
					set: func(a *OpArgs, v string) error {
						n, err := scenario.ParseDDSize(v)
						if err == nil && n > MaxBS {
							err = fmt.Errorf("workload: bs %s is above the largest the model simulates (%s)", v, scenario.FormatDDSize(MaxBS))
						}
						a.BS = n
						return err
					}},
				{Name: "kernel", Default: "6.6", Usage: "the `kernel`: 6.6, 6.6-revert, 6.6-fix (Xu Yang's table) or 6.18",
					set: func(a *OpArgs, v string) error {
						if !slices.Contains(iomapKernels, v) {
							return fmt.Errorf("workload: unknown kernel %q for iomap-write-page (valid: %s)", v, strings.Join(iomapKernels, ", "))
						}
						a.Kernel = engine.MustKernel(v)
						return nil
					}},
				argCount,
			}},
		{Name: "crash-loss", Summary: "what a power cut loses at each moment of dd bs=1M to a Helios4 disk (5.10.10+revert)",
			build: buildCrashLoss, Args: []Arg{
				{Name: "count", Default: "2000", Usage: "dd's count=",
					set: func(a *OpArgs, v string) error {
						if err := argCount.set(a, v); err != nil || a.Count == 0 {
							return fmt.Errorf("workload: invalid count %q (a positive number)", v)
						}
						return nil
					}},
			}},
	}
}

// iomapKernels are the kernels of Xu Yang's table and today's.
var iomapKernels = []string{"6.6", "6.6-revert", "6.6-fix", "6.18"}

// ExplainOpByName returns the operation called name; the error names the
// valid ones.
func ExplainOpByName(name string) (ExplainOp, error) {
	return enum.Find("workload", "operation", ExplainOps(), func(o ExplainOp) string { return o.Name }, name)
}

// Parse returns the operation's arguments: values (by Arg name) where given,
// the defaults elsewhere. Errors: a value that does not parse (naming the
// valid ones), or a name the operation does not read (naming those it does).
func (op ExplainOp) Parse(values map[string]string) (OpArgs, error) {
	var a OpArgs
	names := make([]string, len(op.Args))
	for i, arg := range op.Args {
		names[i] = arg.Name
	}
	for name := range values {
		if !slices.Contains(names, name) {
			return OpArgs{}, fmt.Errorf("workload: %s takes no argument %q (its arguments: %s)", op.Name, name, strings.Join(names, ", "))
		}
	}
	for _, arg := range op.Args {
		v, ok := values[arg.Name]
		if !ok {
			v = arg.Default
		}
		if err := arg.set(&a, v); err != nil {
			return OpArgs{}, fmt.Errorf("%w (--%s)", err, arg.Name)
		}
	}
	return a, nil
}

// Build runs the operation with a (from Parse) on the model, a dd on the
// clock under p (the operation's built-in Profile when p is nil), and
// returns what it counted; render it with the same p. Progress, if not
// nil, is called as a long run advances (the blocks of a dd done and their
// total). Errors: a failed run, ctx's error once it is done.
func (op ExplainOp) Build(ctx context.Context, a OpArgs, p *timing.Profile, progress func(done, total int)) (Explanation, error) {
	if p == nil && op.Profile != "" {
		var err error
		if p, err = timing.ProfileByName(op.Profile); err != nil {
			return nil, err
		}
	}
	return op.build(ctx, op, a, p, progress)
}

// Operation is what the model counted for an explained operation: the work
// of each resource over Per operations (calls or pages).
type Operation struct {
	ExplainOp
	// Title says exactly what ran.
	Title string
	// Facts are what the model observed, one a line ("block size 512: 8
	// buffers a page").
	Facts []string
	// Unit is what one operation is ("call", "page"); Per how many of them
	// the counts cover.
	Unit string
	Per  float64
	// Steps are the resources that worked, each with its counts.
	Steps []OpStep
	// Loads are every resource's demand including the all-CPU bound, Bytes
	// what the run moved and NS its simulated time on the clock, for
	// streaming operations (dd); all are empty for a single call.
	Loads []timing.Load
	Bytes float64
	NS    float64
}

// OpStep is one resource's work in an Operation: its timing.Load, the
// events its CPU counted (none for a disk or an md thread without events
// of its own) with the block-layer and md quantities charged to it, and a
// disk's service time.
type OpStep struct {
	Load timing.Load
}

// Ledger returns the step's priced lines under p, per operation of o, most
// expensive first: each quantity of its load, events, system calls,
// block-layer and md work. O(parameters · log parameters).
func (o *Operation) Ledger(s *OpStep, p *timing.Profile) []timing.LedgerLine {
	var lines []timing.LedgerLine
	for q, n := range s.Load.Q {
		if n != 0 {
			lines = append(lines, timing.LedgerLine{Param: timing.Param(q), Count: n, NS: p.NS[q]})
		}
	}
	for i := range lines {
		lines[i].Count /= o.Per
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].Total() > lines[j].Total() })
	return lines
}

// SimNS returns the step's simulated nanoseconds per operation under p,
// the sum of its ledger and its unpriced time (a disk's service), at an idle
// memory bus: Text adds a CPU's wait on a busy one (timing.Contended).
func (o *Operation) SimNS(s *OpStep, p *timing.Profile) float64 { return p.BusyNS(&s.Load) / o.Per }

// lookupSmallDevice is the device a lookup uses for blocks that fit it (the
// 1 GiB loop device of the bh-LRU thread); larger blocks get lookupLargeDevice.
const (
	lookupSmallDevice = 1 << 30
	lookupLargeDevice = 32 << 40
)

// buildLookup explains one lookup call: the block is read once, the LRU
// warmed by one call, and the next call counted.
func buildLookup(_ context.Context, op ExplainOp, args OpArgs, _ *timing.Profile, _ func(done, total int)) (Explanation, error) {
	block := args.Block
	size := uint64(lookupSmallDevice)
	if block >= size/4096 {
		size = lookupLargeDevice
	}
	m, d, err := lookupMachine(size)
	if err != nil {
		return nil, err
	}
	paths, err := measurePaths(m.CPU(0), d, []uint64{block}, 1)
	if err != nil {
		return nil, err
	}
	c, call := paths.Hit, fmt.Sprintf("__find_get_block(bdev, %d, %d)", block, d.BlockSize())
	setup := "the block cached and the LRU warmed by one earlier call"
	switch op.Name {
	case "find-get-block-miss":
		c, call = paths.Miss, fmt.Sprintf("__find_get_block(bdev, %d, %d)", block, tosattiSize)
	case "find-get-block-slow":
		c, call, setup = paths.Slow, fmt.Sprintf("__find_get_block_slow(bdev, %d)", block), "the block cached"
	}
	found := "returns the buffer"
	if c.Found == 0 {
		found = "returns NULL"
	}
	return &Operation{ExplainOp: op, Unit: "call", Per: float64(c.Calls),
		Title: fmt.Sprintf("one %s on CPU 0, %s", call, setup),
		Facts: []string{
			fmt.Sprintf("device of %s, block size %d (grow policy), index height %d; block %d is page %d", scenario.FormatDDSize(size),
				d.BlockSize(), d.IndexHeight(), block, d.Geometry().PageIndex(blocksize.Block(block))),
			fmt.Sprintf("the call %s; LRU hits %d, slots compared %d, index levels descended %d", found,
				c.Events[bufcache.EvLRUHit], c.Events[bufcache.EvLRUSlot], c.Events[bufcache.EvIndexLevel]),
		},
		Steps: []OpStep{{Load: timing.CPULoad("cpu0", timing.PerOp(c.Events, 1, 0))}},
	}, nil
}

// countOr returns count, or the thread's when count is 0 (auto).
func countOr(count, thread uint64) uint64 {
	if count == 0 {
		return thread
	}
	return count
}

// buildHelios4Page returns the build of write-page (read false) or
// read-page: one page of the Helios4 dd of 5.10.10 at a fixed block size,
// written through buffer heads and written back by the flusher and dd's
// close, or brought in by readahead, which builds no buffers (so the block
// size changes nothing: the table's read column).
func buildHelios4Page(read bool) buildFunc {
	return func(ctx context.Context, op ExplainOp, args OpArgs, p *timing.Profile, progress func(done, total int)) (Explanation, error) {
		choice := BlockSizeChoice{Size: args.BlockSize}
		d := choice.apply(Helios4DD(args.Layout, engine.MustKernel("5.10.10"), read))
		d.Count = countOr(args.Count, d.Count)
		dd, how := fmt.Sprintf("if=/dev/zero of=%s", devName(d.Layout)), "through buffer heads, written back by the flusher and dd's close"
		if read {
			dd, how = fmt.Sprintf("if=%s of=/dev/null", devName(d.Layout)), "brought in by readahead"
		}
		title := fmt.Sprintf("one 4 KiB page of dd %s bs=1M count=%d on a Helios4 at block size %d, %s", dd, d.Count, args.BlockSize, how)
		return buildDDOp(ctx, op, d, p, title, progress)
	}
}

// buildIomapWritePage explains a page of Xu Yang's dd.
func buildIomapWritePage(ctx context.Context, op ExplainOp, args OpArgs, p *timing.Profile, progress func(done, total int)) (Explanation, error) {
	d := IMX8BoardDD(args.Kernel, args.BS, 1)
	d.Count = countOr(args.Count, d.Count)
	title := fmt.Sprintf("one 4 KiB page of dd if=/dev/zero of=/dev/sda bs=%s count=%d on Xu Yang's board, kernel %s",
		scenario.FormatDDSize(args.BS), d.Count, args.Kernel.Name)
	return buildDDOp(ctx, op, d, p, title, progress)
}

// buildCrashLoss runs dd bs=1M to one Helios4 disk under the revert and
// reports, at moments of the run, how much of what dd had written a power cut
// would lose.
func buildCrashLoss(_ context.Context, _ ExplainOp, args OpArgs, _ *timing.Profile, _ func(done, total int)) (Explanation, error) {
	d := Helios4DD(LayoutDirect, engine.MustKernel("5.10.10+revert"), false)
	d.Count = args.Count
	points, err := CrashLoss(d)
	if err != nil {
		return nil, err
	}
	return &CrashReport{DD: d, Points: points}, nil
}

// devName is the device node dd writes for layout l.
func devName(l Layout) string {
	if l == LayoutDirect {
		return "/dev/sda"
	}
	return "/dev/md0 (" + l.String() + ")"
}

// buildDDOp runs d on the clock under p and explains one page of it,
// resource by resource.
func buildDDOp(ctx context.Context, op ExplainOp, d DD, p *timing.Profile, title string, progress func(done, total int)) (Explanation, error) {
	r, err := d.OnClock(ctx, p, progress)
	if err != nil {
		return nil, err
	}
	pages := r.Pages()
	o := &Operation{ExplainOp: op, Title: title, Unit: "page", Per: pages, Bytes: float64(r.Bytes), Loads: r.Loads, NS: r.DurationNS}
	perPage := r.PerPage
	requests := perPage(timing.ParamRequest)
	verb, kind, path := "written", "write", "generic_perform_write through buffer heads"
	switch {
	case d.Read:
		verb, kind, path = "read", "read", fmt.Sprintf("filemap_read with on-demand readahead, read_ahead_kb %d", r.ReadAheadKB)
	case d.Kernel.Write.Path != iomap.PathBufferHead:
		chunk, err := d.Kernel.Write.ChunkSize(4096)
		if err != nil {
			return nil, err
		}
		path = fmt.Sprintf("iomap_write_iter with %s chunks", scenario.FormatDDSize(chunk))
	}
	buffers := fmt.Sprintf("so %d buffer_head(s) a page", 4096/r.BlockSize)
	if d.Read {
		buffers = "which a read does not use: readahead builds no buffer_heads"
	}
	work := fmt.Sprintf("a page costs %.2f bios, %.2f write iterations and %.1f user pages pre-faulted; the disks served %.4f requests a page (%.1f a MiB)",
		perPage(timing.Ev(bufcache.EvBioSubmit)), perPage(timing.Ev(bufcache.EvWriteIter)), perPage(timing.Ev(bufcache.EvFaultInPage)), requests, 256*requests)
	if d.Read {
		ra := perPage(timing.Ev(bufcache.EvReadaheadPage)) // each a page the disks read
		work = fmt.Sprintf("a page costs %.4f bios and %.2f pages read ahead; the disks served %.4f requests a page (%.1f a MiB), %.0f KiB each",
			perPage(timing.Ev(bufcache.EvBioSubmit)), ra, requests, 256*requests, 4*ra/requests)
	}
	o.Facts = []string{
		fmt.Sprintf("%s %s in %.0f pages; device block size %d, %s; %s path: %s",
			scenario.FormatDDSize(r.Bytes), verb, pages, r.BlockSize, buffers, kind, path),
		work,
	}
	for _, l := range o.Loads {
		if l.Servers > 1 || (l.Q == timing.Quantities{} && l.FixedNS == 0) {
			continue // the all-CPU bound is a sum, not a resource; an idle CPU did nothing
		}
		o.Steps = append(o.Steps, OpStep{Load: l})
	}
	return o, nil
}

// Text renders the operation's bill under p, the way a teacher would put it
// on a slide: what ran, what the model saw, then each resource's events with
// count × unit cost = cost per operation, and for a streaming run the
// bottleneck and the throughput it allows.
func (o *Operation) Text(p *timing.Profile) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %s\n", o.Name, o.Title)
	fmt.Fprintf(&sb, "profile %s: %s\n", p.Name, p.Description)
	for _, f := range o.Facts {
		fmt.Fprintf(&sb, "  %s\n", f)
	}
	c := p.Contended(o.Loads)
	for i := range o.Steps {
		s := &o.Steps[i]
		wait := (c.BusyNS(p, &s.Load) - p.BusyNS(&s.Load)) / o.Per
		fmt.Fprintf(&sb, "\n%s: %.1f sim-ns a %s\n", s.Load.Name, o.SimNS(s, p)+wait, o.Unit)
		lines := o.Ledger(s, p)
		if len(lines) > 0 {
			fmt.Fprintf(&sb, "  %-18s %12s   %10s   %12s\n", "what", "count", "ns each", "ns")
		}
		for _, l := range lines {
			fmt.Fprintf(&sb, "  %-18s %12.3f × %10.3f = %12.1f\n", l.Param, l.Count, l.NS, l.Total())
		}
		if wait > 0 {
			fmt.Fprintf(&sb, "  %-31s %14s %12.1f\n", fmt.Sprintf("waiting on the bus, %.0f %% busy", 100*c.Utilisation), "", wait)
		}
		if s.Load.FixedNS != 0 {
			fmt.Fprintf(&sb, "  %-18s %12s   %10s   %12.1f\n", "disk service", "", "", s.Load.FixedNS/o.Per)
		}
	}
	if len(o.Loads) > 0 {
		b, t := p.Bottleneck(o.Loads)
		fmt.Fprintf(&sb, "\nthe busiest resource sets the pace: %s, %.1f sim-ns a %s;\n"+
			"on the clock what does not overlap it — dd's start before writeback, its waits, its close — adds %.1f, so %.1f MB/s\n",
			o.Loads[b].Name, t/o.Per, o.Unit, (o.NS-t)/o.Per, o.Bytes*1e3/o.NS)
	}
	return sb.String()
}
