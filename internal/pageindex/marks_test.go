package pageindex

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// markIndexCases are the indices the mark tests put a lone item at: the
// first slot, a small index, one deep in the tree and the last.
var markIndexCases = []struct {
	name  string
	index uint64
}{
	{"lone 0", 0},
	{"small", 9},
	{"deep", 1 << 29},
	{"max", math.MaxUint64},
}

func TestMarksSetClear(t *testing.T) {
	for _, tc := range markIndexCases {
		t.Run(tc.name, func(t *testing.T) {
			forEachKind(t, func(t *testing.T, idx Index[folio]) {
				idx.SetMark(tc.index, MarkDirty) // empty slot: no-op
				assert.False(t, idx.Marked(tc.index, MarkDirty))
				assert.Zero(t, idx.CountMarked(MarkDirty))

				f := &folio{index: tc.index}
				require.True(t, idx.Insert(tc.index, f))
				for m := range NumMarks {
					assert.False(t, idx.Marked(tc.index, m), "fresh items carry no mark")
				}
				idx.SetMark(tc.index, MarkWriteback)
				idx.SetMark(tc.index, MarkWriteback) // idempotent
				idx.SetMark(tc.index, NumMarks)      // invalid: no-op
				idx.SetMark(tc.index+1, MarkDirty)   // empty neighbour: no-op
				checkInvariants(t, idx)
				assert.True(t, idx.Marked(tc.index, MarkWriteback))
				assert.False(t, idx.Marked(tc.index, MarkDirty))
				assert.False(t, idx.Marked(tc.index, NumMarks))
				assert.Equal(t, 1, idx.CountMarked(MarkWriteback))
				assert.Zero(t, idx.CountMarked(MarkDirty))
				assert.Zero(t, idx.CountMarked(NumMarks))
				_, _, ok := idx.NextMarked(0, NumMarks)
				assert.False(t, ok)

				idx.ClearMark(tc.index, MarkDirty) // not set: no-op
				idx.ClearMark(tc.index, NumMarks)  // invalid: no-op
				assert.Equal(t, 1, idx.CountMarked(MarkWriteback))
				idx.ClearMark(tc.index, MarkWriteback)
				checkInvariants(t, idx)
				assert.False(t, idx.Marked(tc.index, MarkWriteback))
				assert.Zero(t, idx.CountMarked(MarkWriteback))
				_, _, ok = idx.NextMarked(0, MarkWriteback)
				assert.False(t, ok)
			})
		})
	}
}

func TestMarksClearedOnDelete(t *testing.T) {
	forEachKind(t, func(t *testing.T, idx Index[folio]) {
		for _, i := range []uint64{0, 70, 1 << 29} {
			f := &folio{index: i}
			require.True(t, idx.Insert(i, f))
			for m := range NumMarks {
				idx.SetMark(i, m)
			}
			require.True(t, idx.Delete(i, f))
			checkInvariants(t, idx)
			require.True(t, idx.Insert(i, &folio{index: i}))
			for m := range NumMarks {
				assert.False(t, idx.Marked(i, m), "index %#x mark %d survived Delete", i, m)
			}
		}
		for m := range NumMarks {
			assert.Zero(t, idx.CountMarked(m))
			_, _, ok := idx.NextMarked(0, m)
			assert.False(t, ok)
		}
	})
}

func TestNextMarkedInIndexOrder(t *testing.T) {
	seed := uint64(4096)
	t.Logf("seed %d", seed)
	forEachKind(t, func(t *testing.T, idx Index[folio]) {
		rng := rand.New(rand.NewPCG(seed, seed))
		var want [NumMarks][]uint64
		var all []uint64
		for range 3000 {
			i := randomIndex(rng)
			if !idx.Insert(i, &folio{index: i}) {
				continue
			}
			all = append(all, i)
			for m := range NumMarks {
				if rng.IntN(3) == 0 {
					idx.SetMark(i, m)
					want[m] = append(want[m], i)
				}
			}
		}
		// Clear the mark again on some items, as writeback does.
		for m := range NumMarks {
			kept := want[m][:0]
			for _, i := range want[m] {
				if rng.IntN(4) == 0 {
					idx.ClearMark(i, m)
				} else {
					kept = append(kept, i)
				}
			}
			want[m] = kept
		}
		checkInvariants(t, idx)
		slices.Sort(all)
		assert.Equal(t, all, collect(t, idx, 0, false))
		for m := range NumMarks {
			slices.Sort(want[m])
			require.NotEmpty(t, want[m])
			assert.Equal(t, want[m], collect(t, idx, m, true), "mark %d", m)
			assert.Equal(t, len(want[m]), idx.CountMarked(m), "mark %d", m)
			for _, i := range want[m] {
				assert.True(t, idx.Marked(i, m))
			}
		}
	})
}

func TestUpdateMarks(t *testing.T) {
	for _, tc := range markIndexCases {
		t.Run(tc.name, func(t *testing.T) {
			forEachKind(t, func(t *testing.T, idx Index[folio]) {
				f, other := &folio{index: tc.index}, &folio{index: tc.index}
				never := func(*folio, Marks) Marks {
					t.Error("fn called for an item the index does not hold")
					return allMarks
				}
				assert.False(t, idx.UpdateMarks(tc.index, f, never), "empty slot")
				require.True(t, idx.Insert(tc.index, f))
				assert.False(t, idx.UpdateMarks(tc.index, other, never), "another item at the index")
				assert.False(t, idx.UpdateMarks(tc.index, nil, never), "nil item")
				assert.False(t, idx.UpdateMarks(tc.index^1, f, never), "the item, at another index")

				// A swap in one step, as __folio_start_writeback does it:
				// dirty off, writeback on; bits that name no mark are dropped.
				idx.SetMark(tc.index, MarkDirty)
				var seen Marks
				assert.True(t, idx.UpdateMarks(tc.index, f, func(got *folio, m Marks) Marks {
					assert.Same(t, f, got)
					seen = m
					return m&^MarkDirty.Bit() | MarkWriteback.Bit() | 0xf0
				}))
				assert.Equal(t, MarkDirty.Bit(), seen)
				checkInvariants(t, idx)
				assert.False(t, idx.Marked(tc.index, MarkDirty))
				assert.True(t, idx.Marked(tc.index, MarkWriteback))
				assert.Zero(t, idx.CountMarked(MarkDirty))
				assert.Equal(t, 1, idx.CountMarked(MarkWriteback))
				i, got, ok := idx.NextMarked(0, MarkWriteback)
				assert.True(t, ok)
				assert.Equal(t, tc.index, i)
				assert.Same(t, f, got)
				_, _, ok = idx.NextMarked(0, MarkDirty)
				assert.False(t, ok, "the cleared mark left no trace in the ancestors")

				// Returning the marks unchanged changes nothing.
				assert.True(t, idx.UpdateMarks(tc.index, f, func(_ *folio, m Marks) Marks { return m }))
				assert.Equal(t, 1, idx.CountMarked(MarkWriteback))
				assert.True(t, idx.UpdateMarks(tc.index, f, func(*folio, Marks) Marks { return 0 }))
				checkInvariants(t, idx)
				for m := range NumMarks {
					assert.Zero(t, idx.CountMarked(m))
					assert.False(t, idx.Marked(tc.index, m))
				}
			})
		})
	}
}

func TestMarksBits(t *testing.T) {
	tests := []struct {
		mark Mark
		want Marks
	}{
		{MarkDirty, 1},
		{MarkWriteback, 2},
		{MarkToWrite, 4},
		{NumMarks, 0},
		{200, 0},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.mark.Bit(), "mark %d", tc.mark)
		assert.Equal(t, tc.want != 0, allMarks.Has(tc.mark), "mark %d", tc.mark)
		assert.False(t, Marks(0).Has(tc.mark))
	}
}

func TestFindMarked(t *testing.T) {
	// Dense runs that fill several batches within one leaf and across
	// leaves, a sparse tail far into the index space, and the last index.
	var marked []uint64
	for i := range uint64(40) {
		marked = append(marked, 60+i) // crosses the leaf boundary at 64
	}
	marked = append(marked, 4095, 4096, 1<<29, 1<<40, math.MaxUint64-1, math.MaxUint64)
	tests := []struct {
		name     string
		start    uint64
		wantN    int
		wantNext uint64
		wantDone bool
	}{
		{"first batch", 0, BatchSize, 60 + BatchSize, false},
		{"across the leaf boundary", 55, BatchSize, 60 + BatchSize, false},
		{"up to the second-last index", 90, BatchSize, math.MaxUint64, false},
		{"short last batch", 1 << 29, 4, 0, true},
		{"only the last index", math.MaxUint64, 1, 0, true},
		{"past everything marked", 1<<40 + 1, 2, 0, true},
	}
	forEachKind(t, func(t *testing.T, idx Index[folio]) {
		for _, i := range marked {
			require.True(t, idx.Insert(i, &folio{index: i}))
			idx.SetMark(i, MarkToWrite)
			require.True(t, idx.Insert(i^1<<20, &folio{index: i ^ 1<<20}), "an unmarked neighbour")
		}
		for _, tc := range tests {
			b := idx.FindMarked(tc.start, MarkToWrite)
			assert.Equal(t, tc.wantN, b.N, tc.name)
			assert.Equal(t, tc.wantDone, b.Done, tc.name)
			if !tc.wantDone {
				assert.Equal(t, tc.wantNext, b.Next, tc.name)
			}
			for _, f := range b.Items[:b.N] {
				assert.True(t, idx.Marked(f.index, MarkToWrite), tc.name)
				assert.GreaterOrEqual(t, f.index, tc.start, tc.name)
			}
		}
		assert.Equal(t, marked, collectBatches(t, idx, MarkToWrite))
		assert.Equal(t, marked, collect(t, idx, MarkToWrite, true))
		b := idx.FindMarked(0, NumMarks)
		assert.True(t, b.Done, "an invalid mark finds nothing")
		assert.Zero(t, b.N)
		b = idx.FindMarked(0, MarkDirty)
		assert.True(t, b.Done, "no item carries the mark")
		assert.Zero(t, b.N)
	})
}
