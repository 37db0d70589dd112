package pageindex

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBTreeHeightBound(t *testing.T) {
	tests := []struct {
		n, d, want int
	}{
		{0, 32, 0},
		{1, 32, 1},
		{62, 32, 1},
		{63, 32, 2}, // 2d−1 items can already need a second level
		{2*32*32 - 2, 32, 2},
		{2*32*32 - 1, 32, 3},
		{4096, 32, 3},
		{1, 2, 1},
		{2, 2, 1},
		{3, 2, 2},
		{6, 2, 2},
		{7, 2, 3},
		{math.MaxInt, 32, 13},
		{math.MaxInt, math.MaxInt / 2, 2},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, btreeHeightBound(tc.n, tc.d), "n=%d d=%d", tc.n, tc.d)
	}
}

func TestBTreeNodesBound(t *testing.T) {
	tests := []struct {
		n, d, want int
	}{
		{0, 32, 0},
		{1, 32, 1},
		{31, 32, 1},
		{32, 32, 2},
		{4096, 32, 133},
		{7, 2, 7},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, btreeNodesBound(tc.n, tc.d), "n=%d d=%d", tc.n, tc.d)
	}
}

func TestNewBTreeDegree(t *testing.T) {
	tests := []struct {
		asked, want int
	}{
		{-1, defaultBTreeDegree},
		{0, defaultBTreeDegree},
		{1, defaultBTreeDegree},
		{2, 2},
		{100, 100},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, NewBTree[folio](tc.asked).degree, "NewBTree(%d)", tc.asked)
	}
}

func TestBTreeHeightAndNodesFollowLen(t *testing.T) {
	bt := NewBTree[folio](2)
	for i := range uint64(7) {
		bt.Insert(i, &folio{index: i})
		bt.SetMark(i, MarkDirty)
	}
	assert.Equal(t, 3, bt.Height())
	_, levels := bt.Load(3)
	assert.Equal(t, 3, levels)
	assert.Equal(t, 2*7, bt.Nodes(), "items and the dirty set, one item per node at worst")
}
