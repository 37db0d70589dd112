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
						if (f != nil && f.index != i) || levels < 0 || levels > 11 {
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
						items[k] = &folio{i}
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
