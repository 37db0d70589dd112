package pageindex

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toWriteback swaps the dirty mark for the writeback mark, as
// __folio_start_writeback does.
func toWriteback(_ *folio, m Marks) Marks {
	return m&^MarkDirty.Bit() | MarkWriteback.Bit()
}

func TestConcurrentReadersNeverSeeAnotherIndex(t *testing.T) {
	// Each writer owns some indices; together they make the xarray grow from
	// a lone item to height 11 and shrink back, over and over.
	owned := [][]uint64{
		{0, 64, 1 << 29, math.MaxUint64},
		{1, 4095, 1<<29 + 1, 1 << 40},
		{63, 4096, 1 << 36, 1 << 63},
	}
	var probes []uint64
	for _, set := range owned {
		for _, i := range set {
			probes = append(probes, i, i^1, i^64, i^(1<<12))
		}
	}
	const rounds = 200
	forEachKind(t, func(t *testing.T, idx Index[folio]) {
		var done atomic.Bool
		var bad atomic.Int64
		var readers, writers sync.WaitGroup
		for range 2 {
			readers.Go(func() {
				for !done.Load() {
					for _, i := range probes {
						f, levels := idx.Load(i)
						w := idx.Warm(i)
						if (f != nil && f.index != i) || (w != nil && w.index != i) || levels < 0 || levels > 11 {
							bad.Add(1)
						}
					}
				}
			})
		}
		readers.Go(func() { // the locked read paths race with the writers too
			for !done.Load() {
				if i, f, ok := idx.Next(1); ok && f.index != i {
					bad.Add(1)
				}
				if i, f, ok := idx.NextMarked(0, MarkDirty); ok && f.index != i {
					bad.Add(1)
				}
				b := idx.FindMarked(1, MarkWriteback)
				for k, f := range b.Items[:b.N] {
					if f == nil || f.index < 1 || (k > 0 && f.index <= b.Items[k-1].index) {
						bad.Add(1)
					}
				}
				_ = idx.Marked(1<<29, MarkDirty)
				_ = idx.CountMarked(MarkDirty) + idx.Len() + idx.Height() + idx.Nodes()
			}
		})
		for _, set := range owned {
			writers.Go(func() {
				for range rounds {
					items := make([]*folio, len(set))
					for k, i := range set {
						items[k] = &folio{index: i}
						if !idx.Insert(i, items[k]) {
							bad.Add(1)
						}
						idx.SetMark(i, MarkDirty)
					}
					for k, i := range set {
						if !idx.UpdateMarks(i, items[k], toWriteback) {
							bad.Add(1)
						}
						idx.ClearMark(i, MarkWriteback)
						if !idx.Delete(i, items[k]) {
							bad.Add(1)
						}
					}
				}
			})
		}
		writers.Wait()
		done.Store(true)
		readers.Wait()
		require.Zero(t, bad.Load(), "a reader saw an item of another index, or a writer was refused")
		checkInvariants(t, idx)
		assert.Zero(t, idx.Len())
		assert.Zero(t, idx.Nodes())
		assert.Zero(t, idx.Height())
	})
}

// TestConcurrentLargeEntries races lock-free readers over every index of a
// few ranges against writers that insert each range as one large entry,
// split it, and delete the parts, as the page cache adds a large folio,
// splits it and truncates it. A reader must only ever get an item that
// covers the index it asked for.
func TestConcurrentLargeEntries(t *testing.T) {
	type rng struct {
		base  uint64
		order uint8
	}
	ranges := []rng{{0, 2}, {64, 6}, {1 << 20, 9}, {math.MaxUint64 - 255, 8}}
	const rounds = 100
	forEachKind(t, func(t *testing.T, idx Index[folio]) {
		var done atomic.Bool
		var bad atomic.Int64
		var readers, writers sync.WaitGroup
		for r := range 2 {
			readers.Go(func() {
				for !done.Load() {
					for _, g := range ranges {
						for i := uint64(r); i < uint64(1)<<g.order; i += 3 {
							if f, _ := idx.Load(g.base + i); f != nil && !f.covers(g.base+i) {
								bad.Add(1)
							}
						}
					}
				}
			})
		}
		for _, g := range ranges {
			writers.Go(func() {
				for range rounds {
					big := &folio{index: g.base, order: g.order}
					if !idx.InsertOrder(g.base, g.order, big) {
						bad.Add(1)
					}
					idx.SetMark(g.base, MarkDirty)
					half := g.order - 1
					var parts []*folio
					if !idx.Split(g.base, big, g.order, half, func(k int) *folio {
						f := &folio{index: g.base + uint64(k)<<half, order: half}
						parts = append(parts, f)
						return f
					}) {
						bad.Add(1)
					}
					for _, f := range parts {
						if !idx.Marked(f.index, MarkDirty) || !idx.Delete(f.index, f) {
							bad.Add(1)
						}
					}
				}
			})
		}
		writers.Wait()
		done.Store(true)
		readers.Wait()
		require.Zero(t, bad.Load(), "a reader saw an item not covering its index, or a writer was refused")
		checkInvariants(t, idx)
		assert.Zero(t, idx.Len())
		assert.Zero(t, idx.Nodes())
	})
}
