package bench

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/iomap"
)

// OpArgs names an operation to explain and its arguments; each operation
// reads only its own (ExplainOps says which) and, except for Block, the zero
// value of an argument means its default.
type OpArgs struct {
	// Op is one of ExplainOps' names.
	Op string
	// Block is the block the find-get-block operations look up, as given
	// (0 is block 0; seed 004 looks up block 1): below 2^18 on a 1 GiB
	// device, beyond it on a 32 TiB metadata-only one, so that a large block
	// shows a taller index.
	Block uint64
	// BlockSize is write-page's block size: 512, 1024, 2048 or 4096
	// (default 512).
	BlockSize uint32
	// Layout is write-page's device (default direct).
	Layout Layout
	// BS is iomap-write-page's dd bs in bytes (default 4500 KiB).
	BS uint64
	// Kernel is iomap-write-page's kernel, a WritePresets name (default "6.6").
	Kernel string
	// Count is the dd runs' count= (default: 256 MiB worth of blocks).
	Count uint64
}

// ExplainOp describes one operation Explain can build.
type ExplainOp struct {
	Name string
	// Summary says in a line what the operation is.
	Summary string
	// Args lists the OpArgs fields it reads, by their command-line names.
	Args []string
	// Profile is the built-in profile of the machine the operation's thread
	// was measured on.
	Profile string
}

// ExplainOps returns the operations Explain can build.
func ExplainOps() []ExplainOp {
	return []ExplainOp{
		{"find-get-block-hit", "one __find_get_block(bdev, block, 4096) that hits the per-CPU LRU", []string{"block"}, "x86-server"},
		{"find-get-block-miss", "one __find_get_block(bdev, block, 512) on 4 KiB blocks, as Tosatti's module called it: LRU miss, slow path, install", []string{"block"}, "x86-server"},
		{"find-get-block-slow", "one __find_get_block_slow(bdev, block): the page-cache index and the buffer ring", []string{"block"}, "x86-server"},
		{"write-page", "one 4 KiB page of dd bs=1M written through buffer heads and written back, at a given block size", []string{"bsize", "layout", "count"}, "helios4"},
		{"iomap-write-page", "one 4 KiB page written by dd to a block device at a given bs and kernel (Xu Yang's board)", []string{"bs", "kernel", "count"}, "xu-yang-board"},
	}
}

// ExplainOpByName returns the operation called name; the error names the
// valid ones.
func ExplainOpByName(name string) (ExplainOp, error) {
	var names []string
	for _, o := range ExplainOps() {
		if o.Name == name {
			return o, nil
		}
		names = append(names, o.Name)
	}
	return ExplainOp{}, fmt.Errorf("bench: unknown operation %q (valid: %s)", name, strings.Join(names, ", "))
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
	// Loads are every resource's demand including the all-CPU bound, and
	// Bytes what the run moved, for streaming operations (dd); both are
	// empty for a single call.
	Loads []Load
	Bytes float64
}

// OpStep is one resource's work in an Operation: the events its CPU counted
// (zero for a disk or an md thread without events of its own) and its Load,
// which adds the block-layer and md quantities charged to it and a disk's
// service time.
type OpStep struct {
	Events bufcache.Counters
	Load   Load
}

// Ledger returns the step's priced lines under p, per operation of o, most
// expensive first: Profile.Ledger of its events, then the block-layer and md
// parameters of its load. O(parameters · log parameters).
func (o *Operation) Ledger(s *OpStep, p *Profile) []LedgerLine {
	lines := p.Ledger(s.Events, 0)
	for q := ParamTimer + 1; q < paramEnd; q++ {
		if n := s.Load.Q[q]; n != 0 {
			lines = append(lines, LedgerLine{q, n, p.NS[q]})
		}
	}
	for i := range lines {
		lines[i].Count /= o.Per
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].Total() > lines[j].Total() })
	return lines
}

// SimNS returns the step's simulated nanoseconds per operation under p,
// the sum of its ledger and its unpriced time (a disk's service).
func (o *Operation) SimNS(s *OpStep, p *Profile) float64 { return p.BusyNS(&s.Load) / o.Per }

// Validate checks a's operation and the arguments it reads. Errors name
// the valid values: an unknown operation, kernel or layout, a block size
// other than 512, 1024, 2048 or 4096, a block past the end of the largest
// lookup device (32 TiB of 4 KiB blocks). O(operations).
func (a OpArgs) Validate() error {
	op, err := ExplainOpByName(a.Op)
	if err != nil {
		return err
	}
	switch op.Name {
	case "write-page":
		if a.Layout >= numLayouts {
			return fmt.Errorf("bench: unknown layout %s (valid: %s)", a.Layout, strings.Join(layoutNames[:], ", "))
		}
		if a.BlockSize != 0 {
			if _, err := ParseBlockSizeChoice(fmt.Sprint(a.BlockSize)); err != nil {
				return fmt.Errorf("bench: invalid block size %d (valid: 512, 1024, 2048, 4096)", a.BlockSize)
			}
		}
	case "iomap-write-page":
		if a.Kernel != "" {
			if _, err := WritePresetByName(a.Kernel); err != nil {
				return err
			}
		}
	default:
		if a.Block >= lookupLargeDevice/4096 {
			return fmt.Errorf("bench: block %d is past the end of the largest lookup device (%s of 4 KiB blocks)",
				a.Block, byteSize(lookupLargeDevice))
		}
	}
	return nil
}

// BuildOp runs args.Op on the model and returns what it counted. Errors:
// those of Validate, a failed run.
func BuildOp(args OpArgs) (*Operation, error) {
	if err := args.Validate(); err != nil {
		return nil, err
	}
	op, _ := ExplainOpByName(args.Op) // Validate found it
	switch op.Name {
	case "write-page":
		return buildWritePage(op, args)
	case "iomap-write-page":
		return buildIomapWritePage(op, args)
	default:
		return buildLookup(op, args)
	}
}

// lookupSmallDevice is the device a lookup uses for blocks that fit it (the
// 1 GiB loop device of seed 004); larger blocks get lookupLargeDevice.
const (
	lookupSmallDevice = 1 << 30
	lookupLargeDevice = 32 << 40
)

// buildLookup explains one lookup call: the block is read once, the LRU
// warmed by one call, and the next call counted.
func buildLookup(op ExplainOp, args OpArgs) (*Operation, error) {
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
			fmt.Sprintf("device of %s, block size %d (grow policy), index height %d; block %d is page %d", byteSize(size),
				d.BlockSize(), d.IndexHeight(), block, d.Geometry().PageIndex(block)),
			fmt.Sprintf("the call %s; LRU hits %d, slots compared %d, index levels descended %d", found,
				c.Events[bufcache.EvLRUHit], c.Events[bufcache.EvLRUSlot], c.Events[bufcache.EvIndexLevel]),
		},
		Steps: []OpStep{{Events: c.Events, Load: CPULoad("cpu0", Quantities(c.Events, 1, 0))}},
	}, nil
}

// defaultExplainBytes is what a dd run of an explained page writes unless
// Count says otherwise: more than the Helios4's background threshold, so
// the flusher writes back part of it as in the thread's runs.
const defaultExplainBytes = 256 << 20

// buildWritePage explains a page of the Helios4 dd at a fixed block size.
func buildWritePage(op ExplainOp, args OpArgs) (*Operation, error) {
	bsize := args.BlockSize
	if bsize == 0 {
		bsize = 512
	}
	choice := BlockSizeChoice{Size: bsize}
	d := choice.apply(Helios4DD(args.Layout, Preset{Name: "block size " + choice.String()}, false))
	d.Count = args.Count
	if d.Count == 0 {
		d.Count = defaultExplainBytes / d.BS
	}
	title := fmt.Sprintf("one 4 KiB page of dd if=/dev/zero of=%s bs=1M count=%d on a Helios4 at block size %d, through buffer heads, written back by the flusher and dd's close",
		devName(d.Layout), d.Count, bsize)
	return buildDDOp(op, d, title)
}

// buildIomapWritePage explains a page of Xu Yang's dd.
func buildIomapWritePage(op ExplainOp, args OpArgs) (*Operation, error) {
	name := args.Kernel
	if name == "" {
		name = "6.6"
	}
	k, err := WritePresetByName(name)
	if err != nil {
		return nil, err
	}
	bs := args.BS
	if bs == 0 {
		bs = 4500 << 10
	}
	d := XuYangDD(k, bs, 1)
	d.Count = args.Count
	if d.Count == 0 {
		d.Count = (defaultExplainBytes + bs - 1) / bs
	}
	title := fmt.Sprintf("one 4 KiB page of dd if=/dev/zero of=/dev/sda bs=%s count=%d on Xu Yang's board, kernel %s (%s)",
		FormatDDSize(bs), d.Count, k.Name, k.Column)
	return buildDDOp(op, d, title)
}

// devName is the device node dd writes for layout l.
func devName(l Layout) string {
	if l == LayoutDirect {
		return "/dev/sda"
	}
	return "/dev/md0 (" + l.String() + ")"
}

// buildDDOp runs d and explains one page of it, resource by resource.
func buildDDOp(op ExplainOp, d DD, title string) (*Operation, error) {
	r, err := d.Run()
	if err != nil {
		return nil, err
	}
	o := &Operation{ExplainOp: op, Title: title, Unit: "page", Per: r.Pages(), Bytes: float64(r.Bytes), Loads: r.Loads()}
	var bios, writeIters, faultins uint64
	for _, ev := range r.CPU {
		bios += ev[bufcache.EvBioSubmit]
		writeIters += ev[bufcache.EvWriteIter]
		faultins += ev[bufcache.EvFaultInPage]
	}
	path := "generic_perform_write through buffer heads"
	if d.Write.Path != iomap.PathBufferHead {
		chunk, err := d.Write.ChunkSize(4096)
		if err != nil {
			return nil, err
		}
		path = fmt.Sprintf("iomap_write_iter with %s chunks", FormatDDSize(chunk))
	}
	o.Facts = []string{
		fmt.Sprintf("%s written in %.0f pages; device block size %d, so %d buffer_head(s) a page; write path: %s",
			byteSize(r.Bytes), r.Pages(), r.BlockSize, 4096/r.BlockSize, path),
		fmt.Sprintf("a page costs %.2f bios, %.2f write iterations and %.1f user pages pre-faulted; the disks served %.4f requests a page (%.1f a MiB)",
			float64(bios)/r.Pages(), float64(writeIters)/r.Pages(), float64(faultins)/r.Pages(),
			float64(r.Requests())/r.Pages(), float64(r.Requests())/(float64(r.Bytes)/(1<<20))),
	}
	for i, l := range o.Loads {
		if l.Servers > 1 || (l.Q == [numParams]float64{} && l.FixedNS == 0) {
			continue // the all-CPU bound is a sum, not a resource; an idle CPU did nothing
		}
		s := OpStep{Load: l}
		if i < len(r.CPU) {
			s.Events = r.CPU[i]
		}
		o.Steps = append(o.Steps, s)
	}
	return o, nil
}

// Text renders the operation's bill under p, the way a teacher would put it
// on a slide: what ran, what the model saw, then each resource's events with
// count × unit cost = cost per operation, and for a streaming run the
// bottleneck and the throughput it allows.
func (o *Operation) Text(p *Profile) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %s\n", o.Name, o.Title)
	fmt.Fprintf(&sb, "profile %s: %s\n", p.Name, p.Description)
	for _, f := range o.Facts {
		fmt.Fprintf(&sb, "  %s\n", f)
	}
	for i := range o.Steps {
		s := &o.Steps[i]
		fmt.Fprintf(&sb, "\n%s: %.1f sim-ns a %s\n", s.Load.Name, o.SimNS(s, p), o.Unit)
		lines := o.Ledger(s, p)
		if len(lines) > 0 {
			fmt.Fprintf(&sb, "  %-18s %12s   %10s   %12s\n", "what", "count", "ns each", "ns")
		}
		for _, l := range lines {
			fmt.Fprintf(&sb, "  %-18s %12.3f × %10.3f = %12.1f\n", l.Param, l.Count, l.NS, l.Total())
		}
		if s.Load.FixedNS != 0 {
			fmt.Fprintf(&sb, "  %-18s %12s   %10s   %12.1f\n", "disk service", "", "", s.Load.FixedNS/o.Per)
		}
	}
	if len(o.Loads) > 0 {
		b, t := p.Bottleneck(o.Loads)
		fmt.Fprintf(&sb, "\nthe busiest resource sets the pace: %s, %.1f sim-ns a %s, so %.1f MB/s\n",
			o.Loads[b].Name, t/o.Per, o.Unit, o.Bytes*1e3/t)
	}
	return sb.String()
}
