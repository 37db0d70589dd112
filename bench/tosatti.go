package bench

import (
	"fmt"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/pageindex"
)

// Tosatti describes the test module of seed 004 (Marcelo Tosatti, "[PATCH]
// fs/buffer.c: remove per-CPU buffer_head lookup cache", June 2023): open
// /dev/loop0, then time Loops calls of __find_get_block(bdev, Block, Size) and
// Loops calls of __find_get_block_slow(bdev, Block), each call between two
// ktime_get() and followed by __brelse outside the interval.
type Tosatti struct {
	// DeviceBytes is the loop device's size; the seed does not give it (1 GiB
	// is an ordinary backing file). Logical is its logical block size (512
	// for loop devices by default).
	DeviceBytes uint64
	Logical     uint32
	// Policy is set_init_blocksize's (grow: what a 2023 kernel does).
	Policy blocksize.Policy
	// Block and Size are the module's arguments: 1 and 512.
	Block uint64
	Size  uint32
	// Loops is NRLOOPS: 200 000.
	Loops int
	// Index is the page-cache index structure.
	Index pageindex.Kind
}

// TosattiSeed is the module exactly as seed 004 writes it, on a 1 GiB loop
// device.
func TosattiSeed() Tosatti {
	return Tosatti{DeviceBytes: 1 << 30, Logical: 512, Policy: blocksize.PolicyGrow, Block: 1, Size: 512, Loops: 200_000}
}

// TosattiResult is what the model did in each loop.
type TosattiResult struct {
	Setup       Tosatti
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
func (c Calls) Obs(row, column string, published float64, fit bool) Observation {
	return Observation{Row: row, Column: column, Published: published, Q: Quantities(c.Events, c.Calls, 1), Fit: fit}
}

// Run executes the scenario. Before the loops the block is read once with the
// device's own block size (as any earlier reader of /dev/loop0 would have); a
// block past the end of the device is not read, so nothing caches its page.
// Devices above 64 GiB are simulated metadata-only.
func (s Tosatti) Run() (*TosattiResult, error) {
	if s.Loops <= 0 {
		return nil, fmt.Errorf("bench: tosatti: %d loops", s.Loops)
	}
	m, err := bufcache.NewMachine(bufcache.Config{Blocksize: s.Policy, Index: s.Index})
	if err != nil {
		return nil, err
	}
	disk, err := blk.NewMemDisk("loop0", s.DeviceBytes, s.Logical)
	if err != nil {
		return nil, err
	}
	d, err := m.Open(disk, bufcache.DeviceOptions{MetadataOnly: s.DeviceBytes > 64<<30})
	if err != nil {
		return nil, err
	}
	cpu := m.CPU(0)
	r := &TosattiResult{Setup: s, BlockSize: d.BlockSize(), Page: d.Geometry().PageIndex(s.Block)}
	if s.Block < d.Geometry().EndBlock(s.DeviceBytes) {
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
