package blk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBioResetClearsWhatHoldsMemory: Reset leaves no vector that still
// points at an earlier I/O's memory, in each of its three cases — the inline
// array the last I/O used part of, a grown array (whose capacity it keeps),
// and a copy of a Bio, whose vectors are the original's inline array (which
// it must not touch).
func TestBioResetClearsWhatHoldsMemory(t *testing.T) {
	buf := make([]byte, 512)
	noData := func(t *testing.T, vs []Vec) {
		t.Helper()
		for i, v := range vs {
			assert.Nil(t, v.Data, "vector %d still holds memory", i)
		}
	}

	var b Bio
	b.Reset(OpWrite, 0)
	require.True(t, b.AddVec(buf, 512))
	require.True(t, b.AddVec(buf, 512))
	b.Reset(OpWrite, 8)
	noData(t, b.inline[:])
	assert.Zero(t, b.size)
	assert.Empty(t, b.vecs)

	var g Bio
	g.Reset(OpWrite, 0)
	for range MaxInlineVecs + 2 {
		require.True(t, g.AddVec(buf, 512))
	}
	grown := cap(g.vecs)
	require.Greater(t, grown, MaxInlineVecs)
	g.Reset(OpRead, 0)
	noData(t, g.inline[:])
	noData(t, g.vecs[:grown])
	assert.Equal(t, grown, cap(g.vecs), "the grown array is kept")

	var o Bio
	o.Reset(OpWrite, 0)
	require.True(t, o.AddVec(buf, 512))
	c := o // c.vecs is o's inline array
	c.Reset(OpWrite, 0)
	noData(t, c.inline[:])
	assert.NotNil(t, o.inline[0].Data, "the original's vectors are untouched")
	require.True(t, c.AddVec(buf, 512))
	assert.Same(t, &c.inline[0], &c.vecs[0], "the copy uses its own inline array after Reset")
}
