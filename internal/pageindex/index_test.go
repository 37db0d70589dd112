package pageindex

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// indexCases are the indices the shape tests store, with the xarray height a
// tree holding only that index has (height h covers indices below 64^h).
var indexCases = []struct {
	name    string
	index   uint64
	xHeight int
}{
	{"0", 0, 0}, // lone in the head
	{"1", 1, 1},
	{"63", 63, 1},
	{"64", 64, 2},
	{"4095", 4095, 2},
	{"4096", 4096, 3},
	{"2^29/block-4G", 1 << 29, 5}, // 512-byte block 4G lives on page 2^29
	{"2^36", 1 << 36, 7},
	{"2^63", 1 << 63, 11},
	{"max", math.MaxUint64, 11},
}

// wantHeight is the Height an index of kind k holding n items must report
// when the xarray's answer would be xHeight.
func wantHeight(k Kind, xHeight, n int) int {
	if k == KindXArray {
		return xHeight
	}
	return btreeHeightBound(n, defaultBTreeDegree)
}

func TestStoreLoadDeleteSingle(t *testing.T) {
	for _, tc := range indexCases {
		t.Run("index="+tc.name, func(t *testing.T) {
			forEachKind(t, func(t *testing.T, idx Index[folio]) {
				f := &folio{index: tc.index}
				require.True(t, idx.Insert(tc.index, f))
				checkInvariants(t, idx)
				assert.Equal(t, 1, idx.Len())
				assert.Equal(t, wantHeight(idx.Kind(), tc.xHeight, 1), idx.Height())
				if idx.Kind() == KindXArray {
					assert.Equal(t, tc.xHeight, idx.Nodes(), "one node per level on the path")
				} else {
					assert.Equal(t, 1, idx.Nodes())
				}

				got, levels := idx.Load(tc.index)
				assert.Same(t, f, got)
				assert.Equal(t, idx.Height(), levels, "a stored index costs the full height")

				got, _ = idx.Load(tc.index ^ 1)
				assert.Nil(t, got, "the neighbouring index holds nothing")
				if idx.Kind() == KindXArray && tc.xHeight < 11 {
					got, levels := idx.Load(maxIndexFor(tc.xHeight) + 1)
					assert.Nil(t, got)
					assert.Zero(t, levels, "an index beyond the tree's range is answered by the head")
				}

				require.True(t, idx.Delete(tc.index, f))
				checkInvariants(t, idx)
				got, levels = idx.Load(tc.index)
				assert.Nil(t, got)
				assert.Zero(t, levels)
				assert.Zero(t, idx.Len())
				assert.Zero(t, idx.Height())
				assert.Zero(t, idx.Nodes())
			})
		})
	}
}

func TestHeightGrowsAndShrinks(t *testing.T) {
	forEachKind(t, func(t *testing.T, idx Index[folio]) {
		folios := make([]*folio, len(indexCases))
		for i, tc := range indexCases {
			folios[i] = &folio{index: tc.index}
			require.True(t, idx.Insert(tc.index, folios[i]))
			checkInvariants(t, idx)
			assert.Equal(t, wantHeight(idx.Kind(), tc.xHeight, i+1), idx.Height(), "after inserting %s", tc.name)
			for j := range i + 1 {
				got, levels := idx.Load(indexCases[j].index)
				require.Same(t, folios[j], got)
				assert.Equal(t, idx.Height(), levels, "the tree is as deep for every item")
			}
		}
		for i := len(indexCases) - 1; i >= 0; i-- {
			tc := indexCases[i]
			require.True(t, idx.Delete(tc.index, folios[i]))
			checkInvariants(t, idx)
			xHeight := 0
			if i > 0 {
				xHeight = indexCases[i-1].xHeight
			}
			assert.Equal(t, wantHeight(idx.Kind(), xHeight, i), idx.Height(), "after deleting %s", tc.name)
		}
		assert.Zero(t, idx.Nodes())
	})
}

func TestInsertOccupiedAndDeleteWrongItem(t *testing.T) {
	tests := []struct {
		name  string
		index uint64
		other uint64 // another stored index
	}{
		{"lone 0", 0, 1 << 40},
		{"0 in tree", 0, 5},
		{"small", 7, 0},
		{"deep", 1 << 29, 3},
		{"max", math.MaxUint64, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			forEachKind(t, func(t *testing.T, idx Index[folio]) {
				f, o := &folio{index: tc.index}, &folio{index: tc.other}
				require.True(t, idx.Insert(tc.index, f))
				if tc.name != "lone 0" {
					require.True(t, idx.Insert(tc.other, o))
				}
				n, h, nodes := idx.Len(), idx.Height(), idx.Nodes()

				assert.False(t, idx.Insert(tc.index, &folio{index: tc.index}), "occupied slot (-EEXIST)")
				assert.False(t, idx.Insert(tc.index+2, nil), "nil is never stored")
				assert.False(t, idx.Delete(tc.index, &folio{index: tc.index}), "a different item of the same index")
				assert.False(t, idx.Delete(tc.index, o), "another index's item")
				assert.False(t, idx.Delete(tc.index, nil))
				assert.False(t, idx.Delete(tc.index+1, f), "right item, wrong index")
				checkInvariants(t, idx)

				got, _ := idx.Load(tc.index)
				assert.Same(t, f, got, "refused operations change nothing")
				assert.Equal(t, n, idx.Len())
				assert.Equal(t, h, idx.Height())
				assert.Equal(t, nodes, idx.Nodes())
			})
		})
	}
}

func TestDeleteEverythingShrinksToEmpty(t *testing.T) {
	seed := uint64(20230626)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	forEachKind(t, func(t *testing.T, idx Index[folio]) {
		stored := map[uint64]*folio{}
		for range 2000 {
			i := randomIndex(rng)
			f := &folio{index: i}
			if idx.Insert(i, f) {
				stored[i] = f
			}
		}
		require.Equal(t, len(stored), idx.Len())
		checkInvariants(t, idx)
		for i, f := range stored {
			require.True(t, idx.Delete(i, f))
		}
		checkInvariants(t, idx)
		assert.Zero(t, idx.Len())
		assert.Zero(t, idx.Nodes())
		assert.Zero(t, idx.Height())
		_, _, ok := idx.Next(0)
		assert.False(t, ok)
	})
}

// randomIndex draws an index from a mix of ranges: the first pages, around
// the 64^h height boundaries, around page 2^29, and anywhere in 64 bits, so
// that collisions, shared nodes and tall trees all occur.
func randomIndex(rng *rand.Rand) uint64 {
	switch rng.IntN(5) {
	case 0:
		return rng.Uint64N(128)
	case 1:
		return uint64(1)<<(chunkShift*(1+rng.UintN(10))) + rng.Uint64N(8) - 4
	case 2:
		return 1<<29 + rng.Uint64N(256)
	case 3:
		return math.MaxUint64 - rng.Uint64N(8)
	default:
		return rng.Uint64()
	}
}

func TestNext(t *testing.T) {
	forEachKind(t, func(t *testing.T, idx Index[folio]) {
		stored := []uint64{0, 3, 64, 4096, 1 << 29, 1<<29 + 1, 1 << 63, math.MaxUint64}
		for _, i := range stored {
			require.True(t, idx.Insert(i, &folio{index: i}))
		}
		assert.Equal(t, stored, collect(t, idx, 0, false))
		tests := []struct {
			start uint64
			want  uint64
			ok    bool
		}{
			{0, 0, true},
			{1, 3, true},
			{4, 64, true},
			{65, 4096, true},
			{4097, 1 << 29, true},
			{1<<29 + 2, 1 << 63, true},
			{1<<63 + 1, math.MaxUint64, true},
			{math.MaxUint64, math.MaxUint64, true},
		}
		for _, tc := range tests {
			i, f, ok := idx.Next(tc.start)
			require.Equal(t, tc.ok, ok, "Next(%#x)", tc.start)
			assert.Equal(t, tc.want, i, "Next(%#x)", tc.start)
			assert.Equal(t, tc.want, f.index)
		}
		require.True(t, idx.Delete(math.MaxUint64, mustLoad(t, idx, math.MaxUint64)))
		_, _, ok := idx.Next(1<<63 + 1)
		assert.False(t, ok, "nothing at or after 2^63+1")
	})
}

// mustLoad returns the item at index, failing the test if there is none.
func mustLoad(t *testing.T, idx Index[folio], index uint64) *folio {
	t.Helper()
	f, _ := idx.Load(index)
	require.NotNil(t, f, "index %#x", index)
	return f
}
