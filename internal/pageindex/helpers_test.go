package pageindex

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// folio is the test item: it records the first index it was stored under
// and its order, so a reader can tell whether it was handed an item that
// does not cover the index it asked for.
type folio struct {
	index uint64
	order uint8
}

// covers reports whether f's entry covers index i.
func (f *folio) covers(i uint64) bool { return i >= f.index && i-f.index < uint64(1)<<f.order }

// end returns the index after f's entry, and false when f reaches the top of
// the index space.
func (f *folio) end() (uint64, bool) { return nextAfter(f.index + (uint64(1)<<f.order - 1)) }

// kinds lists every implementation the shared suites run against.
var kinds = []Kind{KindXArray, KindBTree}

// forEachKind runs fn as a subtest per implementation, on a fresh index.
func forEachKind(t *testing.T, fn func(t *testing.T, idx Index[folio])) {
	t.Helper()
	for _, k := range kinds {
		t.Run("kind="+k.String(), func(t *testing.T) { fn(t, New[folio](k)) })
	}
}

// nextAfter returns the start for the search after one that found index, and
// false when index is the last possible one.
func nextAfter(index uint64) (uint64, bool) {
	if index == math.MaxUint64 {
		return 0, false
	}
	return index + 1, true
}

// collect returns the first indices of the entries Next (or NextMarked when
// marked) finds walking from 0 entry by entry, checking that each item covers
// the index it was found at.
func collect(t *testing.T, idx Index[folio], m Mark, marked bool) []uint64 {
	t.Helper()
	var got []uint64
	for start, more := uint64(0), true; more; {
		var (
			i  uint64
			f  *folio
			ok bool
		)
		if marked {
			i, f, ok = idx.NextMarked(start, m)
		} else {
			i, f, ok = idx.Next(start)
		}
		if !ok {
			break
		}
		require.GreaterOrEqual(t, i, start)
		require.NotNil(t, f)
		require.True(t, f.covers(i), "entry %+v found at %d", *f, i)
		require.True(t, i == f.index || i == start, "entry %+v found at %d searching from %d", *f, i, start)
		if i == f.index {
			got = append(got, i)
		}
		start, more = f.end()
	}
	return got
}

// collectBatches returns the indices of the items FindMarked finds walking
// from 0 batch by batch, checking that each batch is in index order, starts
// at or after its start and leaves no item in a slot beyond N.
func collectBatches(t *testing.T, idx Index[folio], m Mark) []uint64 {
	t.Helper()
	var got []uint64
	for start := uint64(0); ; {
		b := idx.FindMarked(start, m)
		require.LessOrEqual(t, b.N, BatchSize)
		for i, f := range b.Items[:b.N] {
			require.NotNil(t, f)
			require.GreaterOrEqual(t, f.index, start)
			if i > 0 {
				require.Greater(t, f.index, b.Items[i-1].index)
			}
			got = append(got, f.index)
		}
		for _, f := range b.Items[b.N:] {
			require.Nil(t, f)
		}
		if b.Done {
			return got
		}
		require.Equal(t, BatchSize, b.N, "a short batch is the last")
		require.Equal(t, b.Items[b.N-1].index+1, b.Next)
		start = b.Next
	}
}

// checkInvariants runs the structural checker of the xarray (a no-op for
// other kinds) and fails the test on the first broken invariant.
func checkInvariants(t *testing.T, idx Index[folio]) {
	t.Helper()
	if x, ok := idx.(*XArray[folio]); ok {
		require.NoError(t, x.check())
	}
}
