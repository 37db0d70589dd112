package engine

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestEventTapPricesAsSimNS: a tap's take prices what its CPU counted since
// the last sync or take exactly as SimNS prices the counters' difference
// (to the bit, for every profile), counts its bh LRU lookups and hits, and
// sync leaves out what was counted between operations.
func TestEventTapPricesAsSimNS(t *testing.T) {
	for _, p := range timing.Profiles() {
		// a machine a profile: a CPU has one tap
		m, err := bufcache.NewMachine(bufcache.Config{})
		require.NoError(t, err)
		disk, err := blk.NewMemDisk("sda", 4<<20, 512)
		require.NoError(t, err)
		d, err := m.Open(disk, bufcache.DeviceOptions{})
		require.NoError(t, err)
		cpu := m.CPU(0)
		write := func(off uint64) error {
			it, err := bufcache.NewUserBuf(make([]byte, 16384), 0, 4096).Iter(0, 16384)
			require.NoError(t, err)
			_, err = d.Write(cpu, off, it)
			return err
		}
		buf := make([]byte, 8192)
		ops := []struct {
			name    string
			between func() error // counted between operations: left out by sync
			op      func() error
		}{
			{"a write", nil, func() error { return write(0) }},
			{"a sync after a write between", func() error { return write(1 << 20) }, func() error { return d.SyncBlockdev(cpu) }},
			{"a cold read", nil, func() error { _, err := d.Read(cpu, 2<<20, buf); return err }},
			{"getblk twice: an LRU miss, then a hit", nil, func() error {
				for range 2 {
					bh, err := d.Getblk(cpu, 3, 4096)
					if err != nil {
						return err
					}
					bufcache.Brelse(cpu, bh)
				}
				return nil
			}},
			{"nothing", func() error { _, err := d.Read(cpu, 0, buf); return err }, func() error { return nil }},
		}
		tap := newEventTap(cpu)
		for _, tc := range ops {
			t.Run(p.Name+"/"+tc.name, func(t *testing.T) {
				if tc.between != nil {
					require.NoError(t, tc.between())
				}
				tap.sync()
				before := cpu.Events()
				require.NoError(t, tc.op())
				diff := cpu.Events().Sub(before)
				peeked := tap.peek(p)
				ns, look, hits := tap.take(p)
				want := p.SimNS(diff, 0)
				assert.Equal(t, math.Float64bits(want), math.Float64bits(peeked), "peek: %v ns against SimNS's %v", peeked, want)
				assert.Equal(t, math.Float64bits(want), math.Float64bits(ns), "%v ns against SimNS's %v", ns, want)
				assert.Equal(t, diff[bufcache.EvLRULookup], look, "LRU lookups")
				assert.Equal(t, diff[bufcache.EvLRUHit], hits, "LRU hits")
				again, _, _ := tap.take(p)
				assert.Zero(t, again, "taken: nothing more to price")
			})
		}
	}
}

// TestEventTapOneACPU: a CPU's moved kinds have one follower, so a second
// tap on a CPU is refused.
func TestEventTapOneACPU(t *testing.T) {
	m, err := bufcache.NewMachine(bufcache.Config{CPUs: 2})
	require.NoError(t, err)
	newEventTap(m.CPU(0))
	newEventTap(m.CPU(1))
	assert.PanicsWithValue(t, "engine: a second event tap on cpu0: a CPU's moved kinds (bufcache.CPU.TakeMoved) have one follower",
		func() { newEventTap(m.CPU(0)) })
}
