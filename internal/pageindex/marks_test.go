package pageindex

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarksSetClear(t *testing.T) {
	tests := []struct {
		name  string
		index uint64
	}{
		{"lone 0", 0},
		{"small", 9},
		{"deep", 1 << 29},
		{"max", math.MaxUint64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			forEachKind(t, func(t *testing.T, idx Index[folio]) {
				idx.SetMark(tc.index, MarkDirty) // empty slot: no-op
				assert.False(t, idx.Marked(tc.index, MarkDirty))
				assert.Zero(t, idx.CountMarked(MarkDirty))

				f := &folio{tc.index}
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
			f := &folio{i}
			require.True(t, idx.Insert(i, f))
			for m := range NumMarks {
				idx.SetMark(i, m)
			}
			require.True(t, idx.Delete(i, f))
			checkInvariants(t, idx)
			require.True(t, idx.Insert(i, &folio{i}))
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
			if !idx.Insert(i, &folio{i}) {
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
