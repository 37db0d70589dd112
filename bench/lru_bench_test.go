package bench

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// BenchmarkFindGetBlock looks up one cached block, asking with the device's
// block size, through each path: the LRU (hits), the slow path alone, a machine
// without the LRU (Tosatti's patch) and an isolated CPU (6.6+). Block 4G is
// page 2^29 with 512-byte blocks (height 5) and page 2^32 with 4 KiB blocks
// (height 6).
func BenchmarkFindGetBlock(b *testing.B) {
	for _, path := range []string{"lru", "slow", "nolru", "isolated"} {
		for _, blk := range []struct {
			name  string
			block uint64
		}{{"1", 1}, {"4G", 4 << 30}} {
			for _, size := range []uint32{512, 4096} {
				b.Run(fmt.Sprintf("path=%s/block=%s/size=%d", path, blk.name, size), func(b *testing.B) {
					cfg := bufcache.Config{}
					if path == "nolru" {
						cfg.LRU = bufcache.LRURemoved
					}
					m, d := openLookup(b, cfg, size, blk.block)
					if path == "isolated" {
						m.SetIsolated(0, true)
					}
					cpu := m.CPU(0)
					find := func() *bufcache.BufferHead { return d.FindGetBlock(cpu, blk.block, size) }
					if path == "slow" {
						find = func() *bufcache.BufferHead { return d.FindGetBlockSlow(cpu, blk.block) }
					}
					bufcache.Brelse(cpu, find()) // install into the LRU
					b.ReportAllocs()
					before := cpu.Events()
					for b.Loop() {
						bufcache.Brelse(cpu, find())
					}
					reportSim(b, cpu.Events().Sub(before), lookupEvents...)
				})
			}
		}
	}
}

// BenchmarkLookupModule is the bh-LRU thread's test module on the model: a
// 1 GiB loop device with 4 KiB blocks, __find_get_block(bdev, 1, 512)
// against __find_get_block_slow(bdev, 1). The size never matches, so the
// first pays an LRU miss on top of the second, in Go time as in simulated
// time.
func BenchmarkLookupModule(b *testing.B) {
	for _, call := range []string{"find_get_block", "find_get_block_slow"} {
		b.Run("call="+call, func(b *testing.B) {
			s := workload.PostedLookupModule()
			m, err := bufcache.NewMachine(s.Kernel.Configure(bufcache.Config{}))
			require.NoError(b, err)
			disk, err := blk.NewMemDisk("loop0", s.DeviceBytes, s.Logical)
			require.NoError(b, err)
			d, err := m.Open(disk, bufcache.DeviceOptions{})
			require.NoError(b, err)
			cpu := m.CPU(0)
			bh, err := d.Bread(cpu, s.Block, d.BlockSize())
			require.NoError(b, err)
			bufcache.Brelse(cpu, bh)
			b.ReportAllocs()
			before := cpu.Events()
			for b.Loop() {
				if call == "find_get_block" {
					bh = d.FindGetBlock(cpu, s.Block, s.Size)
				} else {
					bh = d.FindGetBlockSlow(cpu, s.Block)
				}
				bufcache.Brelse(cpu, bh)
			}
			reportSim(b, cpu.Events().Sub(before), lookupEvents...)
		})
	}
}

// BenchmarkFindGetBlockCycle cycles lookups over n distinct cached blocks (one
// per page) with the 16-slot LRU and with the slow path: hits cost n compares
// up to n = 16, and every call misses beyond.
func BenchmarkFindGetBlockCycle(b *testing.B) {
	for _, path := range []string{"lru", "slow"} {
		for n := 1; n <= 20; n++ {
			b.Run(fmt.Sprintf("path=%s/n=%d", path, n), func(b *testing.B) {
				m, err := bufcache.NewMachine(bufcache.Config{InitBlocksize: blocksize.PolicyGrow})
				require.NoError(b, err)
				disk, err := blk.NewMemDisk("loop0", 1<<30, 512)
				require.NoError(b, err)
				d, err := m.Open(disk, bufcache.DeviceOptions{MetadataOnly: true})
				require.NoError(b, err)
				cpu := m.CPU(0)
				for i := range n {
					bh, err := d.Bread(cpu, uint64(i), 4096)
					require.NoError(b, err)
					bufcache.Brelse(cpu, bh)
				}
				b.ReportAllocs()
				before := cpu.Events()
				i := 0
				for b.Loop() {
					block := uint64(i % n)
					i++
					if path == "lru" {
						bufcache.Brelse(cpu, d.FindGetBlock(cpu, block, 4096))
					} else {
						bufcache.Brelse(cpu, d.FindGetBlockSlow(cpu, block))
					}
				}
				reportSim(b, cpu.Events().Sub(before), append(lookupEvents, bufcache.EvLRUHit)...)
			})
		}
	}
}

// BenchmarkInvalidateBhLrus measures one round of invalidate_bh_lrus on
// machines whose CPUs each hold one buffer in their LRU: every CPU looks the
// block up (an LRU miss after the last invalidation: the slow path, then an
// install that refills its slot), then CPU 0 invalidates: it flushes its own LRU
// and interrupts every other CPU. The refill is part of the op so that the run
// stays short; lru-ipis/op counts the interrupts (cpus−1) and sim-ns/op prices
// the whole round, which the IPIs dominate.
func BenchmarkInvalidateBhLrus(b *testing.B) {
	for _, cpus := range []int{2, 8, 64, 256} {
		b.Run(fmt.Sprintf("cpus=%d", cpus), func(b *testing.B) {
			m, err := bufcache.NewMachine(bufcache.Config{CPUs: cpus})
			require.NoError(b, err)
			disk, err := blk.NewMemDisk("loop0", 1<<30, 512)
			require.NoError(b, err)
			d, err := m.Open(disk, bufcache.DeviceOptions{MetadataOnly: true})
			require.NoError(b, err)
			bh, err := d.Bread(m.CPU(0), 0, 4096)
			require.NoError(b, err)
			bufcache.Brelse(m.CPU(0), bh)
			round := func() {
				for i := range cpus {
					bufcache.Brelse(m.CPU(i), d.FindGetBlock(m.CPU(i), 0, 4096))
				}
				m.InvalidateBhLRUs(m.CPU(0))
			}
			round() // every later round starts from empty LRUs: each op is the same
			b.ReportAllocs()
			before := m.Events()
			for b.Loop() {
				round()
			}
			reportSim(b, m.Events().Sub(before), bufcache.EvLRUIPI)
		})
	}
}
