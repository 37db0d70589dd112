package blk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBioRunsSegments(t *testing.T) {
	type vec struct {
		n      uint32
		pfn    uint64
		offset uint32
	}
	tests := []struct {
		name string
		vecs []vec
		want uint64
	}{
		{"one vector", []vec{{4096, 1, 0}}, 1},
		{"same page, adjacent", []vec{{512, 1, 0}, {512, 1, 512}, {3072, 1, 1024}}, 1},
		{"same page, hole", []vec{{512, 1, 0}, {512, 1, 1024}}, 2},
		{"same page, backwards", []vec{{512, 1, 512}, {512, 1, 0}}, 2},
		{"next page after page end", []vec{{1024, 1, 3072}, {4096, 2, 0}}, 1},
		{"next page, first short of the end", []vec{{1024, 1, 2048}, {4096, 2, 0}}, 2},
		{"next page, not at offset 0", []vec{{4096, 1, 0}, {512, 2, 512}}, 2},
		{"page after next", []vec{{4096, 1, 0}, {4096, 3, 0}}, 2},
		{"offset past the page end normalises", []vec{{4096, 1, 0}, {512, 1, 4096}}, 1},
		{"multi-page vector", []vec{{8192, 1, 0}, {4096, 3, 0}}, 1},
		{"no pfn never joins", []vec{{512, NoPFN, 0}, {512, NoPFN, 512}}, 2},
		{"no pfn after a page", []vec{{4096, NoPFN - 1, 0}, {4096, NoPFN, 0}}, 2},
		{"64 KiB run is one segment", []vec{{32768, 10, 0}, {32768, 18, 0}}, 1},
		{"a run past 64 KiB is cut", []vec{{32768, 10, 0}, {32768, 18, 0}, {4096, 26, 0}}, 2},
		{"48K+48K+48K contiguous", []vec{{49152, 10, 0}, {49152, 22, 0}, {49152, 34, 0}}, 3},
		{"40K+40K+40K contiguous", []vec{{40960, 10, 0}, {40960, 20, 0}, {40960, 30, 0}}, 2},
		{"one huge vector", []vec{{1 << 20, 10, 0}}, 16},
		{"empty vector skipped", []vec{{512, 1, 0}, {0, 9, 0}, {512, 1, 512}}, 1},
	}
	l := DefaultLimits(512, 4096)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b Bio
			b.Reset(OpWrite, 0)
			for _, v := range tc.vecs {
				b.AddPage(nil, v.n, v.pfn, v.offset)
			}
			r := l.bioRuns(&b, 0, b.Size())
			assert.Equal(t, tc.want, r.segs)
			assert.Equal(t, uint64(b.Size()), r.bytes)
		})
	}
}

func TestRunsAppendAcrossBios(t *testing.T) {
	// Eight 512-byte pieces of one page: joined when coalescing, separate
	// otherwise; appending is associative with the one-pass count.
	l := DefaultLimits(512, 4096)
	for _, coalesce := range []bool{false, true} {
		var r runs
		for i := range 8 {
			var b Bio
			b.Reset(OpWrite, uint64(i))
			b.AddPage(nil, 512, 7, uint32(512*i))
			br := l.bioRuns(&b, 0, 512)
			r.append(&br, coalesce, DefMaxSegmentSize)
		}
		want := uint64(8)
		if coalesce {
			want = 1
		}
		assert.Equal(t, want, r.segs, "coalesce %v", coalesce)
		assert.Equal(t, uint64(4096), r.bytes)
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		name   string
		lim    func(*Limits)
		sector uint64
		pages  int
		pfns   pfnPattern
		off    uint32
		want   uint32
	}{
		{"fits", nil, 0, 128, scattered, 0, 128 * 4096},
		{"cut at 128 segments", nil, 0, 129, scattered, 0, 128 * 4096},
		{"rest after a cut", nil, 0, 129, scattered, 128 * 4096, 4096},
		{"cut at max sectors", nil, 0, 400, contiguous, 0, 2560 << 9},
		{"cut inside a page at max sectors", func(l *Limits) { l.MaxSectors, l.PhysicalBlockSize = 12, 512 }, 0, 2, contiguous, 0, 12 << 9},
		{"physical alignment", func(l *Limits) { l.MaxSectors = 16 }, 4, 8, contiguous, 0, 12 << 9},
		{"max sectors rounds down to a physical block", func(l *Limits) { l.MaxSectors = 12 }, 0, 2, contiguous, 0, 8 << 9},
		{"segment cut inside a vector, logical-aligned", func(l *Limits) {
			l.MaxSegments, l.LogicalBlockSize = 1, 4096
		}, 0, 1, func(int) uint64 { return 0 }, 0, 4096},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := DefaultLimits(512, 4096)
			if tc.lim != nil {
				tc.lim(&l)
			}
			require.NoError(t, l.Validate())
			var b Bio
			b.Reset(OpWrite, tc.sector)
			for i := range tc.pages {
				b.AddPage(nil, 4096, tc.pfns(i), 0)
			}
			n, r := l.cut(&b, tc.off)
			assert.Equal(t, tc.want, n)
			assert.Equal(t, uint64(n), r.bytes)
			assert.LessOrEqual(t, r.segs, uint64(l.MaxSegments))
		})
	}
}

func TestSegmentCutInsideVectorOfHugeVector(t *testing.T) {
	// A 1 MiB vector with one 4 KiB segment allowed: the cut is one segment.
	l := DefaultLimits(4096, 4096)
	l.MaxSegments, l.MaxSegmentSize = 1, 4096
	var b Bio
	b.Reset(OpWrite, 0)
	b.AddPage(nil, 1<<20, 100, 0)
	n, r := l.cut(&b, 0)
	assert.Equal(t, uint32(4096), n)
	assert.Equal(t, uint64(1), r.segs)
}

func TestAddVecAndAddPage(t *testing.T) {
	var b Bio
	b.Reset(OpWrite, 0)
	data := make([]byte, 512)
	b.AddVec(data, 512)
	b.AddPage(nil, 1024, 42, 512)
	assert.Equal(t, []Vec{{Data: data, Len: 512, PFN: NoPFN}, {Len: 1024, PFN: 42, Offset: 512}}, b.Vecs())
	assert.Equal(t, uint32(1536), b.Size())
	assert.Panics(t, func() { b.AddPage(make([]byte, 10), 512, 1, 0) })
	assert.Panics(t, func() { b.AddVec(make([]byte, 10), 512) })
}

func TestSpans(t *testing.T) {
	var b Bio
	b.Reset(OpWrite, 0)
	b.AddVec(nil, 100)
	b.AddVec(nil, 0)
	b.AddVec(nil, 200)
	b.AddVec(nil, 300)
	type got struct{ vec, d, n uint32 }
	tests := []struct {
		off, n uint32
		want   []got
	}{
		{0, 600, []got{{0, 0, 100}, {2, 0, 200}, {3, 0, 300}}},
		{50, 100, []got{{0, 50, 50}, {2, 0, 50}}},
		{100, 200, []got{{2, 0, 200}}},
		{299, 2, []got{{2, 199, 1}, {3, 0, 1}}},
		{600, 0, nil},
	}
	for _, tc := range tests {
		var out []got
		for it := b.spans(tc.off, tc.n); it.next(); {
			idx := uint32(0)
			for i := range b.vecs {
				if &b.vecs[i] == it.v {
					idx = uint32(i)
				}
			}
			out = append(out, got{idx, it.d, it.n})
		}
		assert.Equal(t, tc.want, out, "[%d, +%d)", tc.off, tc.n)
	}
}
