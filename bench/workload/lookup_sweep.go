package workload

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
)

// tosattiSize is the size argument of the bh-LRU thread's __find_get_block calls.
const tosattiSize = 512

// lookupPaths are the per-call events of one lookup workload under the three
// ways of finding a buffer.
type lookupPaths struct {
	Hit  Calls // __find_get_block asking with the device's block size (LRU on)
	Miss Calls // __find_get_block asking with size 512: never hits, as in Tosatti's test
	Slow Calls // __find_get_block_slow alone (the removal patch)
}

// HeightRow is one row of the index-height sweep.
type HeightRow struct {
	Height int
	Page   uint64
	lookupPaths
}

// HeightSweep measures one cached 4 KiB block on a 32 TiB metadata-only
// device, placed at the smallest page index of each xarray height 0..6
// (height 0: page 0 alone, kept in the index head), with calls lookups per
// path. It answers Willy's question in general: the slow path pays one more
// level per height, the LRU hit pays nothing for it.
func HeightSweep(calls int) ([]HeightRow, error) {
	var rows []HeightRow
	for h := 0; h <= 6; h++ {
		page := uint64(0)
		if h > 0 {
			page = FirstPageOfHeight(h)
		}
		m, d, err := lookupMachine(32 << 40)
		if err != nil {
			return nil, err
		}
		cpu := m.CPU(0)
		paths, err := measurePaths(cpu, d, []uint64{page}, calls)
		if err != nil {
			return nil, err
		}
		rows = append(rows, HeightRow{Height: d.IndexHeight(), Page: page, lookupPaths: paths})
	}
	return rows, nil
}

// CycleRow is one row of the distinct-blocks sweep.
type CycleRow struct {
	N int
	lookupPaths
}

// CycleSweep cycles lookups round-robin over n = 1..maxN distinct cached 4 KiB
// blocks (one per page) of a 1 GiB device, rounds times each. With a 16-slot
// LRU the wanted block is always in the last-used slot of the cycle (n
// compares per hit) until n exceeds 16, when round-robin access evicts every
// block before its turn comes back: every call misses, scans 16 slots, takes
// the slow path and installs (Dave Chinner's point in the thread).
func CycleSweep(maxN, rounds int) ([]CycleRow, error) {
	var rows []CycleRow
	for n := 1; n <= maxN; n++ {
		m, d, err := lookupMachine(1 << 30)
		if err != nil {
			return nil, err
		}
		blocks := make([]uint64, n)
		for i := range blocks {
			blocks[i] = uint64(i)
		}
		paths, err := measurePaths(m.CPU(0), d, blocks, rounds*n)
		if err != nil {
			return nil, err
		}
		rows = append(rows, CycleRow{N: n, lookupPaths: paths})
	}
	return rows, nil
}

// lookupMachine opens a device of size bytes with 4 KiB blocks (grow policy,
// 512-byte logical blocks) on a one-CPU mainline machine; above 64 GiB it is
// metadata-only.
func lookupMachine(size uint64) (*bufcache.Machine, *bufcache.BlockDevice, error) {
	m, err := engine.Build(engine.MachineSpec{Config: bufcache.Config{InitBlocksize: blocksize.PolicyGrow},
		Disk: engine.DiskSpec{Name: "loop0", Size: size, Logical: 512, MetadataOnly: size > 64<<30}})
	return m.Machine, m.Dev, err
}

// measurePaths reads blocks once, then makes calls lookups cycling over them
// through each path (the LRU warmed by one pass first).
func measurePaths(cpu *bufcache.CPU, d *bufcache.BlockDevice, blocks []uint64, calls int) (lookupPaths, error) {
	size := d.BlockSize()
	if size == tosattiSize {
		return lookupPaths{}, fmt.Errorf("workload: lookup paths need a block size other than %d", tosattiSize)
	}
	for _, b := range blocks {
		bh, err := d.Bread(cpu, b, size)
		if err != nil {
			return lookupPaths{}, err
		}
		bufcache.Brelse(cpu, bh)
	}
	cycle := func(f func(uint64) *bufcache.BufferHead) Calls {
		for _, b := range blocks { // warm the LRU
			bufcache.Brelse(cpu, f(b))
		}
		i := 0
		return timedLoop(cpu, calls, func() *bufcache.BufferHead {
			b := blocks[i%len(blocks)]
			i++
			return f(b)
		})
	}
	var p lookupPaths
	p.Hit = cycle(func(b uint64) *bufcache.BufferHead { return d.FindGetBlock(cpu, b, size) })
	p.Miss = cycle(func(b uint64) *bufcache.BufferHead { return d.FindGetBlock(cpu, b, tosattiSize) })
	p.Slow = cycle(func(b uint64) *bufcache.BufferHead { return d.FindGetBlockSlow(cpu, b) })
	return p, nil
}

// PerCall returns events e per call.
func (c Calls) PerCall(e bufcache.Event) float64 { return float64(c.Events[e]) / float64(c.Calls) }

// SimNS returns the simulated nanoseconds per call under p, without harness.
func (c Calls) SimNS(p *timing.Profile) float64 { return p.SimNS(c.Events, 0) / float64(c.Calls) }

// HeightText renders the height sweep under p.
func HeightText(rows []HeightRow, p *timing.Profile) string {
	var sb strings.Builder
	sb.WriteString("index height sweep: one cached 4 KiB block at the first page of each height (sim-ns per call, no harness)\n")
	fmt.Fprintf(&sb, "  %6s %12s %8s %10s %12s %10s\n", "height", "page", "levels", "lru hit", "lru miss", "slow")
	for _, r := range rows {
		fmt.Fprintf(&sb, "  %6d %12d %8.0f %10.1f %12.1f %10.1f\n", r.Height, r.Page,
			r.Slow.PerCall(bufcache.EvIndexLevel), r.Hit.SimNS(p), r.Miss.SimNS(p), r.Slow.SimNS(p))
	}
	return sb.String()
}

// CycleText renders the cycle sweep under p.
func CycleText(rows []CycleRow, p *timing.Profile) string {
	var sb strings.Builder
	sb.WriteString("distinct blocks cycled round-robin, 16-slot LRU (sim-ns per call, no harness)\n")
	fmt.Fprintf(&sb, "  %4s %10s %14s %10s %10s\n", "n", "lru hits", "lru compares", "lru", "slow")
	for _, r := range rows {
		fmt.Fprintf(&sb, "  %4d %9.0f%% %14.1f %10.1f %10.1f\n", r.N, 100*r.Hit.PerCall(bufcache.EvLRUHit),
			r.Hit.PerCall(bufcache.EvLRUSlot), r.Hit.SimNS(p), r.Slow.SimNS(p))
	}
	return sb.String()
}

// FirstPageOfHeight returns the smallest page index an xarray (64 slots per
// node) can only hold in a tree of height h ≥ 1: 64^(h−1).
func FirstPageOfHeight(h int) uint64 { return 1 << (6 * (h - 1)) }
