package blk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueueSeqStreams interleaves two sequential streams, as raid10 far-2
// sends a member its near and far copies, and checks which requests pay the
// positioning time with one tracked stream and with several.
func TestQueueSeqStreams(t *testing.T) {
	const sectors = 1024 // 512 KiB requests
	far := uint64(1 << 30)
	seek := 8.5e6 + 30e9/7200
	for _, tc := range []struct {
		streams int
		seeks   int // of the 8 requests
	}{
		{streams: 0, seeks: 8},
		{streams: 1, seeks: 8},
		{streams: 2, seeks: 2},
		{streams: 4, seeks: 2},
	} {
		h := WD8003FFBX()
		h.SeqStreams = tc.streams
		store, err := NewMemDisk("sda", 1<<40, 512)
		require.NoError(t, err)
		q, err := NewQueue("", store, h, DefaultLimits(512, 4096))
		require.NoError(t, err)
		for i := range uint64(4) {
			for _, base := range []uint64{0, far} {
				var b Bio
				b.Reset(OpWrite, base+i*sectors)
				b.AddVec(nil, sectors<<SectorShift)
				b.EndIO = func(*Bio) {}
				q.Submit(&b)
				require.NoError(t, b.Err)
			}
		}
		transfer := 8 * (h.OverheadNS + float64(sectors<<SectorShift)*1e3/h.SeqMBps)
		assert.InDelta(t, transfer+float64(tc.seeks)*seek, q.BusyNS(), 1, "SeqStreams %d", tc.streams)
	}
}

func TestHDDValidateStreams(t *testing.T) {
	for _, n := range []int{-1, MaxStreams + 1} {
		h := WD8003FFBX()
		h.SeqStreams = n
		assert.ErrorIs(t, h.Validate(), ErrInvalidConfig, "SeqStreams %d", n)
	}
	assert.NoError(t, WD8003FFBX().Validate())
}

// TestStreamsFind keeps the newest streams at the front and forgets the
// oldest beyond MaxStreams.
func TestStreamsFind(t *testing.T) {
	var s streams
	_, ok := s.find(0, MaxStreams)
	assert.False(t, ok, "no stream yet")
	for i := range uint64(MaxStreams + 2) {
		s.find(i*100, MaxStreams)
		s.advance(i*100 + 10)
	}
	newest := uint64(MaxStreams+1)*100 + 10
	end, ok := s.find(newest, MaxStreams)
	assert.True(t, ok)
	assert.Equal(t, newest, end, "the newest stream continues")
	assert.Zero(t, s.hit)
	for _, gone := range []uint64{10, 110} {
		s.find(gone, MaxStreams)
		assert.Equal(t, -1, s.hit, "the oldest streams were forgotten")
	}
	s.find(210, MaxStreams)
	assert.Equal(t, MaxStreams-1, s.hit, "the oldest tracked stream")
	s.advance(220)
	assert.Equal(t, uint64(220), s.ends[0], "moved to the front")
	assert.Equal(t, newest, s.ends[1])
}
