package blk

import "math/bits"

// physPos is a simulated physical memory position: byte off of page frame pfn,
// normalised so that off is below the page size.
type physPos struct {
	pfn uint64
	off uint64
}

// runs summarises a sequence of memory extents for segment counting: how many
// DMA segments they make, and the first and last physically contiguous runs,
// which are all a neighbour needs to know to join them. The zero value is the
// empty sequence.
type runs struct {
	bytes   uint64  // total length
	segs    uint64  // segments: each run cut into pieces of at most MaxSegmentSize
	head    physPos // start of the first run
	headLen uint64  // length of the first run
	headOK  bool    // the first run's start is known (not on NoPFN)
	tail    physPos // position just past the last run
	tailLen uint64  // length of the last run
	tailOK  bool    // the last run's end is known
	single  bool    // one run only: the first run is the last
}

// segsOf is the number of segments a run of n bytes makes: a shift for the
// power-of-two segment sizes every queue the model builds has (a 64-bit
// division costs tens of cycles, and every bio counts its segments).
func segsOf(n, maxSeg uint64) uint64 {
	if maxSeg&(maxSeg-1) == 0 {
		return (n + maxSeg - 1) >> bits.TrailingZeros64(maxSeg)
	}
	return (n + maxSeg - 1) / maxSeg
}

// extentInto sets *r to the runs of bytes [d, d+n) of v, n > 0: one run
// whose ends are known unless v is on NoPFN or the position overflows the
// frame numbers. The 88-byte record is built where the caller keeps it
// rather than returned and copied (every bio a queue takes has its extent
// computed).
func (l *Limits) extentInto(r *runs, v *Vec, d, n uint32) {
	// Field by field, not a literal: *r = runs{...} builds the value on the
	// stack and copies it with wide loads that wait for its narrow stores.
	r.bytes, r.segs = uint64(n), segsOf(uint64(n), uint64(l.MaxSegmentSize))
	r.headLen, r.tailLen, r.single = uint64(n), uint64(n), true
	if v.PFN == NoPFN {
		r.head, r.headOK, r.tail, r.tailOK = physPos{}, false, physPos{}, false
		return
	}
	shift := l.pageShift()
	mask := uint64(l.PageSize) - 1
	start := uint64(v.Offset) + uint64(d)
	end := start + uint64(n)
	hp, c1 := bits.Add64(v.PFN, start>>shift, 0)
	tp, c2 := bits.Add64(v.PFN, end>>shift, 0)
	r.head, r.headOK = physPos{hp, start & mask}, c1 == 0 && hp != NoPFN
	r.tail, r.tailOK = physPos{tp, end & mask}, r.headOK && c2 == 0 && tp != NoPFN
}

// joins reports whether b's first run continues a's last run in memory.
func (a *runs) joins(b *runs) bool {
	return a.bytes > 0 && b.bytes > 0 && a.tailOK && b.headOK && a.tail == b.head
}

// append adds b after a. With coalesce, b's first run joins a's last run when
// they are physically contiguous (inside a bio, or across bios under
// SegmentsCoalesced); otherwise they stay separate segments. O(1).
func (a *runs) append(b *runs, coalesce bool, maxSeg uint64) {
	switch {
	case b.bytes == 0:
		return
	case a.bytes == 0:
		*a = *b
		return
	case coalesce && a.joins(b):
		merged := a.tailLen + b.headLen
		a.segs = a.segsWith(b, coalesce, maxSeg)
		if a.single {
			a.headLen = merged
		}
		if b.single {
			a.tailLen = merged
		} else {
			a.tailLen = b.tailLen
		}
		a.single = a.single && b.single
	default:
		a.segs += b.segs
		a.tailLen = b.tailLen
		a.single = false
	}
	a.bytes += b.bytes
	a.tail, a.tailOK = b.tail, b.tailOK
}

// segsWith returns the segments a would hold after append(b, coalesce,
// maxSeg), without changing a: what a merge checks against MaxSegments
// before it commits. O(1).
func (a *runs) segsWith(b *runs, coalesce bool, maxSeg uint64) uint64 {
	switch {
	case b.bytes == 0:
		return a.segs
	case a.bytes == 0:
		return b.segs
	case coalesce && a.joins(b):
		return a.segs + b.segs + segsOf(a.tailLen+b.headLen, maxSeg) - segsOf(a.tailLen, maxSeg) - segsOf(b.headLen, maxSeg)
	}
	return a.segs + b.segs
}

// bioRuns returns the runs of bytes [off, off+n) of b, coalescing contiguous
// vectors as bio_add_page and blk_bio_segment_split do. O(vectors).
func (l *Limits) bioRuns(b *Bio, off, n uint32) runs {
	var r, e runs
	for it := b.spans(off, n); it.next(); {
		l.extentInto(&e, it.v, it.d, it.n)
		r.append(&e, true, uint64(l.MaxSegmentSize))
	}
	return r
}

// room is how many bytes of the extent e fit after r before r holds more than
// MaxSegments segments.
func (l *Limits) room(r *runs, e *runs) uint64 {
	maxSeg := uint64(l.MaxSegmentSize)
	free := uint64(l.MaxSegments) - r.segs
	if r.joins(e) {
		return (segsOf(r.tailLen, maxSeg)+free)*maxSeg - r.tailLen
	}
	return free * maxSeg
}

// cut returns the length of the longest part of b starting at byte off that
// one request can carry, and that part's runs: all of the rest of the bio when
// it fits, else a prefix that ends where MaxSectors runs out (on a physical
// block boundary, get_max_io_size) or where one more byte would need segment
// MaxSegments+1, rounded down to the logical block size (blk_bio_segment_split,
// v5.10; the rounding is v6.x's, and keeps every part aligned). A length of 0
// means the memory is too fragmented to carry even one logical block within
// the limits. off must be a multiple of the logical block size. O(vectors).
func (l *Limits) cut(b *Bio, off uint32) (uint32, runs) {
	var r runs
	n := l.cutInto(&r, b, off)
	return n, r
}

// cutInto is cut with the part's runs set in *r, in place (the queue's
// path: one bio a call).
func (l *Limits) cutInto(r *runs, b *Bio, off uint32) uint32 {
	rest := b.size - off
	maxBytes := l.maxIOSectors(b.Sector+uint64(off>>SectorShift)) << SectorShift
	if len(b.vecs) == 1 && rest > 0 { // submit_bh's bio and its clones: the loop below, once, without its iterator
		l.extentInto(r, &b.vecs[0], off, rest)
		if uint64(rest) <= min(maxBytes, l.room(&runs{}, r)) {
			return rest
		}
	}
	*r = runs{}
	var e runs
	for it := b.spans(off, rest); it.next(); {
		l.extentInto(&e, it.v, it.d, it.n)
		fit := min(uint64(it.n), maxBytes-r.bytes, l.room(r, &e))
		if fit < uint64(it.n) {
			n := uint32((r.bytes + fit) &^ (uint64(l.LogicalBlockSize) - 1))
			*r = l.bioRuns(b, off, n)
			return n
		}
		r.append(&e, true, uint64(l.MaxSegmentSize))
	}
	return rest
}
