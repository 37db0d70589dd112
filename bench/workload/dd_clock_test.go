package workload

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/internal/race"
)

// TestDDOnTheClock checks the curves' shapes the threads are about on the
// clock, each dd as dd runs it (its reads of /dev/zero and its last
// close): the Helios4's writes at 4096-byte buffers faster than at 512 on
// one disk and on RAID6 (a fifth of the thread's 2000 MiB, past the
// background threshold), and Xu Yang's board falling as dd's bs grows on
// 6.6 and flat with the fix (an eighth of his 4 GiB). The tables
// themselves are bench/threads'.
func TestDDOnTheClock(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("a GiB of dd on the clock: not in -short or -race runs")
	}
	t.Parallel()
	mbps := func(t *testing.T, p *timing.Profile, dds ...DD) []float64 {
		var out []float64
		for _, d := range dds {
			r, err := d.OnClock(context.Background(), p, nil)
			require.NoError(t, err)
			require.Positive(t, r.LastCloseNS, "the run ends with the last close")
			out = append(out, r.MBps)
		}
		return out
	}
	t.Run("set_init_blocksize on the Helios4", func(t *testing.T) {
		for _, l := range []Layout{LayoutDirect, LayoutRaid6} {
			var dds []DD
			for _, k := range []string{"5.10.10", "5.10.10+revert"} {
				d := Helios4DD(l, engine.MustKernel(k), false)
				d.Count /= 5
				dds = append(dds, d)
			}
			v := mbps(t, timing.Helios4(), dds...)
			assert.Greater(t, v[1]/v[0], 1.2, "%s: the revert is faster", l)
		}
	})
	t.Run("iomap on Xu Yang's board", func(t *testing.T) {
		var dds []DD
		for _, k := range []string{"6.6", "6.6-fix"} {
			for _, bs := range []uint64{4 << 10, 1 << 20, 16 << 20} {
				dds = append(dds, IMX8BoardDD(engine.MustKernel(k), bs, 0.125))
			}
		}
		v := mbps(t, timing.IMX8Board(), dds...)
		assert.Greater(t, v[0], 1.3*v[2], "6.6 falls as bs grows")
		assert.InEpsilon(t, v[3], v[5], 0.05, "the fix is flat")
	})
}

// TestDDOnClockRefuses checks that OnClock refuses what Run refuses, with
// ErrInvalidDD, and a kernel it does not know.
func TestDDOnClockRefuses(t *testing.T) {
	good := Helios4DD(LayoutDirect, engine.MustKernel("5.10.10"), false)
	for _, tc := range []struct {
		name string
		edit func(d *DD)
	}{
		{"one CPU", func(d *DD) { d.CPUs = 1 }},
		{"no count", func(d *DD) { d.Count = 0 }},
		{"bs too large", func(d *DD) { d.BS = MaxBS + 1 }},
		{"no disk", func(d *DD) { d.Disk = nil }},
		{"an array of no members", func(d *DD) { d.Layout, d.Members = LayoutRaid0, 0 }},
		{"an unknown kernel", func(d *DD) { d.Kernel = engine.Kernel{Name: "2.4"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := good
			tc.edit(&d)
			_, err := d.OnClock(context.Background(), timing.Helios4(), nil)
			assert.ErrorIs(t, err, ErrInvalidDD)
		})
	}
}

// TestClockMemory checks that the engine's page cache from clockMemory
// holds exactly the folios asked for.
func TestClockMemory(t *testing.T) {
	for _, folios := range []int{1, 3, 163840, 393216, 1<<20 + 7} {
		mem := clockMemory(folios)
		assert.Equal(t, uint64(folios), mem/4*3/4096, "%d folios", folios)
	}
	assert.Zero(t, clockMemory(0), "the engine's default")
}

// TestDDOnClockSetsBlocksize checks a dd whose block size is set after its
// open: 16 KiB blocks on 6.18, whose rules take blocks above a page, and
// refused on 5.10.10, whose rules stop at a page, before a run, as Start
// refuses it; and a dd larger than its disk, refused too.
func TestDDOnClockSetsBlocksize(t *testing.T) {
	d := IMX8BoardDD(engine.MustKernel("6.18"), 1<<20, 1.0/256)
	d.SetBlocksize = 16384
	r, err := d.OnClock(context.Background(), timing.IMX8Board(), nil)
	require.NoError(t, err)
	assert.Equal(t, uint32(16384), r.BlockSize)
	d.Kernel = engine.MustKernel("5.10.10")
	_, err = d.OnClock(context.Background(), timing.IMX8Board(), nil)
	assert.ErrorIs(t, err, ErrInvalidDD, "refused before a run, as Start refuses it")
	assert.ErrorIs(t, err, blocksize.ErrAbovePageSize)
	d.Count = 1 << 30
	_, err = d.OnClock(context.Background(), timing.IMX8Board(), nil)
	assert.ErrorContains(t, err, "more than the 64 GB device holds")
}

// BenchmarkDDOnClock runs whole dd's on the engine's clock, as reproduce's
// Helios4 table does (DD.OnClock: the writes from /dev/zero,
// writeback, the last close), for both block-size policies on a single
// disk and on RAID10: at 512-byte buffers a bio a buffer, which the
// clock places one by one. One op is one dd of 256 MiB, past the
// background threshold; ns/op is Go's time for it.
func BenchmarkDDOnClock(b *testing.B) {
	p := timing.Helios4()
	for _, pol := range []struct{ name, kernel string }{{"logical", "5.10.10"}, {"grow", "5.10.10+revert"}} {
		for _, l := range []Layout{LayoutDirect, LayoutRaid10N2} {
			b.Run(fmt.Sprintf("policy=%s/dev=%s", pol.name, l), func(b *testing.B) {
				dd := Helios4DD(l, engine.MustKernel(pol.kernel), false)
				dd.Count = 256
				b.SetBytes(int64(dd.BS * dd.Count))
				for b.Loop() {
					if _, err := dd.OnClock(context.Background(), p, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
