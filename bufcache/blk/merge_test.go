package blk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pfnPattern gives the page frame of the i-th page of a stream.
type pfnPattern func(i int) uint64

var (
	contiguous pfnPattern = func(i int) uint64 { return 1000 + uint64(i) }
	scattered  pfnPattern = func(i int) uint64 { return 1000 + 2*uint64(i) }
)

// stream submits count sequential write bios of bsize bytes from sector 0
// through one plug, page i of the stream on pfns(i), and returns the shapes of
// the dispatched requests.
func stream(t *testing.T, lim Limits, count int, bsize uint32, pfns pfnPattern) []reqShape {
	t.Helper()
	q := newQueue(t, "sda", 64<<20, Null{}, lim)
	q.EnableTrace(1 << 12)
	c := newCompletions()
	var p Plug
	p.Start()
	for i := range count {
		pos := uint64(i) * uint64(bsize)
		page, off := int(pos/4096), uint32(pos%4096)
		SubmitBio(&p, q, c.pageBio(i, OpWrite, pos>>SectorShift, bsize, pfns(page), off))
	}
	require.NoError(t, p.Finish())
	require.Len(t, c.order, count)
	return shapes(q)
}

// repeat returns n copies of s.
func repeat(s reqShape, n int) []reqShape {
	out := make([]reqShape, n)
	for i := range out {
		out[i] = s
		out[i].Sector = uint64(i) * s.Sectors
	}
	return out
}

func TestBackMergeShapes(t *testing.T) {
	tests := []struct {
		name  string
		acct  SegmentAccounting
		count int
		bsize uint32
		pfns  pfnPattern
		want  []reqShape
	}{
		{"512B bios of one page, per-bio", SegmentsPerBio, 8, 512, scattered,
			[]reqShape{{0, 8, 8, 8}}},
		{"512B bios of one page, coalesced", SegmentsCoalesced, 8, 512, scattered,
			[]reqShape{{0, 8, 8, 1}}},
		// The kernel's accounting stops 512-byte bios at 128 bios = 64 KiB.
		{"512B bios of scattered pages, per-bio", SegmentsPerBio, 512, 512, scattered,
			repeat(reqShape{0, 128, 128, 128}, 4)},
		// Coalesced: one segment per page, so 128 pages = 512 KiB.
		{"512B bios of scattered pages, coalesced", SegmentsCoalesced, 2048, 512, scattered,
			repeat(reqShape{0, 1024, 1024, 128}, 2)},
		// MaxSegments binds before MaxSectors: 128 segments = 512 KiB.
		{"4K bios of scattered pages, per-bio", SegmentsPerBio, 256, 4096, scattered,
			repeat(reqShape{0, 1024, 128, 128}, 2)},
		{"4K bios of scattered pages, coalesced", SegmentsCoalesced, 256, 4096, scattered,
			repeat(reqShape{0, 1024, 128, 128}, 2)},
		// Contiguous pages: coalesced runs of 64 KiB, MaxSectors binds at 2560.
		{"4K bios of contiguous pages, coalesced", SegmentsCoalesced, 640, 4096, contiguous,
			repeat(reqShape{0, 2560, 320, 20}, 2)},
		// The kernel does not coalesce across bios: still 128 bios.
		{"4K bios of contiguous pages, per-bio", SegmentsPerBio, 256, 4096, contiguous,
			repeat(reqShape{0, 1024, 128, 128}, 2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, stream(t, limits(tc.acct), tc.count, tc.bsize, tc.pfns))
		})
	}
}

func TestBackMergeBreaks(t *testing.T) {
	type sub struct {
		queue  int // 0 or 1
		op     Op
		sector uint64
	}
	tests := []struct {
		name string
		subs []sub
		want [2][]reqShape // per queue
	}{
		{"sequential", []sub{{0, OpWrite, 0}, {0, OpWrite, 8}, {0, OpWrite, 16}},
			[2][]reqShape{{{0, 24, 3, 3}}, nil}},
		{"gap", []sub{{0, OpWrite, 0}, {0, OpWrite, 16}},
			[2][]reqShape{{{0, 8, 1, 1}, {16, 8, 1, 1}}, nil}},
		{"backwards", []sub{{0, OpWrite, 8}, {0, OpWrite, 0}},
			[2][]reqShape{{{8, 8, 1, 1}, {0, 8, 1, 1}}, nil}},
		{"op change", []sub{{0, OpWrite, 0}, {0, OpRead, 8}},
			[2][]reqShape{{{0, 8, 1, 1}, {8, 8, 1, 1}}, nil}},
		{"other queue", []sub{{0, OpWrite, 0}, {1, OpWrite, 8}},
			[2][]reqShape{{{0, 8, 1, 1}}, {{8, 8, 1, 1}}}},
		{"merge past another queue's request", []sub{{0, OpWrite, 0}, {1, OpWrite, 0}, {0, OpWrite, 8}},
			[2][]reqShape{{{0, 16, 2, 2}}, {{0, 8, 1, 1}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			qs := [2]*Queue{
				newQueue(t, "sda", 1<<20, Null{}, DefaultLimits(512, 4096)),
				newQueue(t, "sdb", 1<<20, Null{}, DefaultLimits(512, 4096)),
			}
			for _, q := range qs {
				q.EnableTrace(16)
			}
			c := newCompletions()
			var p Plug
			p.Start()
			for i, s := range tc.subs {
				SubmitBio(&p, qs[s.queue], c.pageBio(i, s.op, s.sector, 4096, uint64(10*i), 0))
			}
			require.NoError(t, p.Finish())
			for i, q := range qs {
				assert.Equal(t, tc.want[i], shapes(q), "queue %s", q.Name())
			}
		})
	}
}

func TestPlugMergeScan(t *testing.T) {
	// Two interleaved streams on one queue: A at 0, B at 1000, then A's next
	// bio. v5.10 scans every plugged request and merges it into A; the
	// newest-only variant tries B alone and starts a new request.
	tests := []struct {
		name       string
		newestOnly bool
		want       []reqShape
	}{
		{"v5.10 scans all", false, []reqShape{{0, 16, 2, 2}, {1000, 8, 1, 1}}},
		{"newest only", true, []reqShape{{0, 8, 1, 1}, {1000, 8, 1, 1}, {8, 8, 1, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t, "sda", 1<<20, Null{}, DefaultLimits(512, 4096))
			q.EnableTrace(16)
			c := newCompletions()
			p := Plug{NewestOnly: tc.newestOnly}
			p.Start()
			for i, s := range []uint64{0, 1000, 8} {
				SubmitBio(&p, q, c.pageBio(i, OpWrite, s, 4096, uint64(10*i), 0))
			}
			require.NoError(t, p.Finish())
			assert.Equal(t, tc.want, shapes(q))
			assert.Equal(t, uint64(len(tc.want)), q.Stats().Write.Requests)
			assert.Equal(t, uint64(3-len(tc.want)), q.Stats().Write.Merges)
		})
	}
}

func TestSplitLargeBios(t *testing.T) {
	// One bio of many 4 KiB pages is cut at the limits, the front parts are
	// not mergeable, and the last part accepts the next bio.
	tests := []struct {
		name  string
		pages int
		pfns  pfnPattern
		want  []reqShape
	}{
		{"300 scattered pages: cut at 128 segments", 300, scattered,
			[]reqShape{{0, 1024, 1, 128}, {1024, 1024, 1, 128}, {2048, 352 + 8, 2, 45}}},
		{"400 contiguous pages: cut at max_sectors", 400, contiguous,
			[]reqShape{{0, 2560, 1, 20}, {2560, 640 + 8, 2, 5 + 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t, "sda", 64<<20, Null{}, DefaultLimits(512, 4096))
			q.EnableTrace(16)
			c := newCompletions()
			big := c.bio(0, OpWrite, 0)
			for i := range tc.pages {
				big.AddPage(nil, 4096, tc.pfns(i), 0)
			}
			next := c.pageBio(1, OpWrite, uint64(tc.pages)*8, 4096, 1, 0)
			var p Plug
			p.Start()
			SubmitBio(&p, q, big)
			SubmitBio(&p, q, next)
			require.NoError(t, p.Finish())
			assert.Equal(t, tc.want, shapes(q))
			assert.Equal(t, []int{0, 1}, c.order)
			st := q.Stats().Write
			assert.Equal(t, uint64(len(tc.want)-1), st.Splits)
			assert.Equal(t, uint64(1), st.Merges)
		})
	}
}

func TestSplitAlignsToPhysicalBlock(t *testing.T) {
	// A bio starting one logical block into a physical block is cut so that
	// its first request ends on a physical-block boundary.
	q := newQueue(t, "sda", 64<<20, Null{}, DefaultLimits(512, 4096))
	q.EnableTrace(16)
	c := newCompletions()
	b := c.bio(0, OpWrite, 1)
	b.AddPage(nil, 3000<<SectorShift, 5000, 0)
	q.Submit(b)
	assert.Equal(t, []reqShape{{1, 2559, 1, 20}, {2560, 441, 1, 4}}, shapes(q))
	assert.Equal(t, []int{0}, c.order)
	assert.NoError(t, c.errs[0])
}

func TestUnsplittableBioFails(t *testing.T) {
	// 4096-byte logical blocks, two segments of at most 4 KiB, memory in
	// 1 KiB pieces on separate frames: no request can hold a logical block.
	lim := DefaultLimits(4096, 4096)
	lim.MaxSegments = 2
	q := newQueue(t, "sda", 1<<20, Null{}, lim)
	c := newCompletions()
	b := c.bio(0, OpWrite, 0)
	for i := range 8 {
		b.AddPage(nil, 1024, uint64(2*i), 0)
	}
	q.Submit(b)
	require.Equal(t, []int{0}, c.order)
	assert.ErrorIs(t, c.errs[0], ErrMisaligned)
	assert.Equal(t, uint64(1), q.Stats().Errors)
	assert.Zero(t, q.Stats().Write.Requests)
}
