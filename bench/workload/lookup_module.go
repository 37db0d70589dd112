package workload

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
)

// LookupModule is the kernel test module of the bh-LRU thread (Marcelo
// Tosatti, "[PATCH] fs/buffer.c: remove per-CPU buffer_head lookup cache",
// June 2023): open /dev/loop0, then time Loops calls of
// __find_get_block(bdev, Block, Size) and Loops calls of
// __find_get_block_slow(bdev, Block), each call between two ktime_get() and
// followed by __brelse outside the interval.
type LookupModule struct {
	// DeviceBytes is the loop device's size; the seed does not give it (1 GiB
	// is an ordinary backing file). Logical is its logical block size (512
	// for loop devices by default).
	DeviceBytes uint64
	Logical     uint32
	// Kernel is the kernel the module runs on (its set_init_blocksize policy
	// and bh LRU variant): 6.4 in the thread.
	Kernel engine.Kernel
	// Block and Size are the module's arguments: 1 and 512.
	Block uint64
	Size  uint32
	// Loops is NRLOOPS: 200 000.
	Loops int
	// Index is the page-cache index structure (bufcache.IndexXArray or
	// bufcache.IndexBTree).
	Index bufcache.IndexKind
}

// PostedLookupModule is the module exactly as the thread posts it, on a
// 1 GiB loop device and kernel 6.4.
func PostedLookupModule() LookupModule {
	return LookupModule{DeviceBytes: 1 << 30, Logical: 512, Kernel: engine.MustKernel("6.4"), Block: 1, Size: 512, Loops: 200_000}
}

// LookupResult is what the model did in each loop.
type LookupResult struct {
	Setup       LookupModule
	BlockSize   uint32 // the loop device's block size after open
	Page        uint64 // page index of Block for that block size
	IndexHeight int    // page-cache tree height during the loops
	Cached      bool   // whether the block exists and was read before the loops
	Find, Slow  Calls  // __find_get_block and __find_get_block_slow
}

// Calls is the outcome of one timed loop: how many calls found a buffer (the
// module's suc), the size of the buffers found, and the events of all calls.
type Calls struct {
	Calls, Found int
	FoundSize    uint32
	Events       bufcache.Counters
}

// Obs turns the loop into a calibration observation of one timed call.
func (c Calls) Obs(row, column string, published float64) timing.Observation {
	return timing.Observation{Row: row, Column: column, Published: published, Q: timing.PerOp(c.Events, c.Calls, 1)}
}

// Run executes the scenario. Before the loops the block is read once with the
// device's own block size (as any earlier reader of /dev/loop0 would have); a
// block past the end of the device is not read, so nothing caches its page.
// Devices above 64 GiB are simulated metadata-only.
func (s LookupModule) Run() (*LookupResult, error) {
	if s.Loops <= 0 {
		return nil, fmt.Errorf("workload: lookup module: %d loops", s.Loops)
	}
	m, err := engine.Build(engine.MachineSpec{Kernel: &s.Kernel, Config: bufcache.Config{Index: s.Index},
		Disk: engine.DiskSpec{Name: "loop0", Size: s.DeviceBytes, Logical: s.Logical, MetadataOnly: s.DeviceBytes > 64<<30}})
	if err != nil {
		return nil, err
	}
	d := m.Dev
	cpu := m.CPU(0)
	r := &LookupResult{Setup: s, BlockSize: d.BlockSize(), Page: uint64(d.Geometry().PageIndex(blocksize.Block(s.Block)))}
	if blocksize.Block(s.Block) < d.Geometry().EndBlock(s.DeviceBytes) {
		bh, err := d.Bread(cpu, s.Block, d.BlockSize())
		if err != nil {
			return nil, err
		}
		bufcache.Brelse(cpu, bh)
		r.Cached = true
	}
	r.IndexHeight = d.IndexHeight()
	r.Find = timedLoop(cpu, s.Loops, func() *bufcache.BufferHead { return d.FindGetBlock(cpu, s.Block, s.Size) })
	r.Slow = timedLoop(cpu, s.Loops, func() *bufcache.BufferHead { return d.FindGetBlockSlow(cpu, s.Block) })
	return r, nil
}

// timedLoop runs call n times, counting the events inside the timed interval
// only: the module's __brelse comes after the second ktime_get.
func timedLoop(cpu *bufcache.CPU, n int, call func() *bufcache.BufferHead) Calls {
	c := Calls{Calls: n}
	for range n {
		before := cpu.Events()
		bh := call()
		c.Events = c.Events.Add(cpu.Events().Sub(before))
		if bh != nil {
			c.Found++
			c.FoundSize = bh.Size()
			bufcache.Brelse(cpu, bh)
		}
	}
	return c
}

// Explain says, from the model's counts, what the module's two loops did and
// what they cost under p (harness included).
func (r *LookupResult) Explain(p *timing.Profile) string {
	var sb strings.Builder
	s := r.Setup
	fmt.Fprintf(&sb, "  device %s, block size %d after open (%s policy); block %d is page %d",
		scenario.FormatDDSize(s.DeviceBytes), r.BlockSize, s.Kernel.InitBlocksize, s.Block, r.Page)
	if !r.Cached {
		sb.WriteString(", past the end of the device: nothing reads it, its page is never cached")
	}
	fmt.Fprintf(&sb, "; index height %d\n", r.IndexHeight)
	for _, c := range []struct {
		name  string
		calls Calls
	}{{fmt.Sprintf("__find_get_block(bdev, %d, %d)", s.Block, s.Size), r.Find}, {fmt.Sprintf("__find_get_block_slow(bdev, %d)", s.Block), r.Slow}} {
		cl := c.calls
		fmt.Fprintf(&sb, "    %-42s found %d/%d", c.name, cl.Found, cl.Calls)
		if cl.Found > 0 {
			fmt.Fprintf(&sb, " (b_size %d)", cl.FoundSize)
		}
		fmt.Fprintf(&sb, ", LRU hits %.0f, %.1f sim-ns/call\n", float64(cl.Events[bufcache.EvLRUHit]), p.SimNS(cl.Events, float64(cl.Calls))/float64(cl.Calls))
		for _, l := range p.Ledger(cl.Events, float64(cl.Calls)) {
			fmt.Fprintf(&sb, "      %-18s %6.2f × %6.2f ns = %6.2f ns\n", l.Param, l.Count/float64(cl.Calls), l.NS, l.Total()/float64(cl.Calls))
		}
	}
	return sb.String()
}
