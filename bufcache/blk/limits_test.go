package blk

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDefaultLimits(t *testing.T) {
	l := DefaultLimits(512, 4096)
	assert.Equal(t, Limits{MaxSectors: 2560, MaxSegments: 128, MaxSegmentSize: 65536,
		LogicalBlockSize: 512, PhysicalBlockSize: 4096, PageSize: 4096,
		SegmentAccounting: SegmentsPerBio}, l)
	assert.NoError(t, l.Validate())
	assert.NoError(t, DefaultLimits(4096, 4096).Validate())
	assert.NoError(t, DefaultLimits(65536, 65536).Validate())
}

func TestLimitsValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Limits)
		ok   bool
	}{
		{"defaults", func(*Limits) {}, true},
		{"logical not a power of two", func(l *Limits) { l.LogicalBlockSize = 1536 }, false},
		{"logical too small", func(l *Limits) { l.LogicalBlockSize = 256 }, false},
		{"physical below logical", func(l *Limits) { l.LogicalBlockSize, l.PhysicalBlockSize = 4096, 512 }, false},
		{"physical too large", func(l *Limits) { l.PhysicalBlockSize = 1 << 17 }, false},
		{"16K pages", func(l *Limits) { l.PageSize = 16384 }, true},
		{"page too small", func(l *Limits) { l.PageSize = 2048 }, false},
		{"page not a power of two", func(l *Limits) { l.PageSize = 12288 }, false},
		{"no segments", func(l *Limits) { l.MaxSegments = 0 }, false},
		{"one segment", func(l *Limits) { l.MaxSegments = 1 }, true},
		{"segment below a page", func(l *Limits) { l.MaxSegmentSize = 2048 }, false},
		{"max sectors below a page", func(l *Limits) { l.MaxSectors = 7 }, false},
		{"max sectors of one page", func(l *Limits) { l.MaxSectors = 8 }, true},
		{"max sectors below a physical block", func(l *Limits) { l.PhysicalBlockSize, l.MaxSectors = 65536, 64 }, false},
		{"max sectors not whole logical blocks", func(l *Limits) { l.LogicalBlockSize, l.PhysicalBlockSize, l.MaxSectors = 4096, 4096, 2561 }, false},
		{"coalesced", func(l *Limits) { l.SegmentAccounting = SegmentsCoalesced }, true},
		{"unknown accounting", func(l *Limits) { l.SegmentAccounting = 2 }, false},
		{"6.18", func(l *Limits) { l.Version = Version618 }, true},
		{"unknown version", func(l *Limits) { l.Version = 2 }, false},
		{"write cache", func(l *Limits) { l.WriteCache = true }, true},
		{"write cache with FUA", func(l *Limits) { l.WriteCache, l.FUA = true, true }, true},
		{"FUA without a write cache", func(l *Limits) { l.FUA = true }, false},
		{"write throttling", func(l *Limits) { l.WriteThrottleDepth = 1 }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := DefaultLimits(512, 4096)
			tc.edit(&l)
			err := l.Validate()
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, ErrInvalidConfig)
			}
		})
	}
}

func TestMaxIOSectors(t *testing.T) {
	tests := []struct {
		physical uint32
		sector   uint64
		want     uint64
	}{
		{512, 0, 2560},
		{512, 3, 2560},
		{4096, 0, 2560},
		{4096, 1, 2559},
		{4096, 7, 2553},
		{4096, 8, 2560},
		{65536, 0, 2560},
		{65536, 100, 2460},
	}
	for _, tc := range tests {
		l := DefaultLimits(512, tc.physical)
		got := l.maxIOSectors(tc.sector)
		assert.Equal(t, tc.want, got, "physical %d sector %d", tc.physical, tc.sector)
		assert.Zero(t, (tc.sector+got)%uint64(tc.physical>>SectorShift), "ends on a physical block")
	}
}

func TestSegmentAccountingString(t *testing.T) {
	assert.Equal(t, "per-bio", SegmentsPerBio.String())
	assert.Equal(t, "coalesced", SegmentsCoalesced.String())
	assert.Equal(t, "accounting(9)", SegmentAccounting(9).String())
}
