package blk

// BioPart is the part of a bio that a request carries: bytes [Off, Off+Len) of
// Bio. A bio within the queue's limits is carried whole (Off 0, Len its size);
// a larger one is split into parts carried by consecutive requests, as
// bio_split makes a new bio for each front part in the kernel.
type BioPart struct {
	Bio      *Bio
	Off, Len uint32
}

// Request models struct request (v5.10, v6.18) of a request-based queue: one
// I/O of contiguous sectors that the driver serves as a unit, built from one
// bio and grown by merging further bios into it while it waits in a plug. The
// queue creates, recycles and completes requests; callers see them through
// Plug.Requests and must not keep them after the plug flushes.
type Request struct {
	q           *Queue
	op          Op
	flags       BioFlags // the first bio's, less what the flush machinery consumed
	sector      uint64
	sectors     uint64
	parts       []BioPart
	runs        runs    // segment accounting of what the request holds
	merges      uint64  // bios merged into the request
	frontMerges uint64  // of those, front merges
	noMerge     bool    // REQ_NOMERGE: a split's front part, or a flush flag
	ready       float64 // when its last bio part left the throttle stage (ns), 0 without one
}

// Op returns the request's operation.
func (r *Request) Op() Op { return r.op }

// Flags returns the request's REQ_* flags: its first bio's.
func (r *Request) Flags() BioFlags { return r.flags }

// Sector returns the request's first sector (blk_rq_pos).
func (r *Request) Sector() uint64 { return r.sector }

// Sectors returns the request's length in sectors (blk_rq_sectors).
func (r *Request) Sectors() uint64 { return r.sectors }

// Segments returns the request's segment count under the queue's
// SegmentAccounting (nr_phys_segments for SegmentsPerBio).
func (r *Request) Segments() uint32 { return uint32(r.runs.segs) }

// Bios returns the bio parts the request carries, in order. The slice belongs
// to the request: read it, do not change it or keep it.
func (r *Request) Bios() []BioPart { return r.parts }

// mergeKind is what a merge attempt did.
type mergeKind uint8

const (
	mergeNone mergeKind = iota
	mergeBack
	mergeFront
)

// merge tries to merge the whole bio b, whose runs are br, into the request:
// blk_attempt_bio_merge → blk_try_merge (v5.10, v6.18). A back merge
// (bio_attempt_back_merge with ll_back_merge_fn) appends a bio that starts
// where the request ends; with front, a front merge (bio_attempt_front_merge
// with ll_front_merge_fn) puts a bio that ends where the request starts in
// front of it. Either needs the same operation, a mergeable request and bio
// (neither REQ_NOMERGE nor a flush flag), and keeps the request within
// MaxSectors and MaxSegments. O(1) for a back merge, O(bios of the request)
// for a front one; the part slice reuses the recycled request's capacity.
func (r *Request) merge(b *Bio, br *runs, front bool) mergeKind {
	back := r.sector+r.sectors == b.Sector
	if !back && (!front || b.Sector+b.Sectors() != r.sector) {
		return mergeNone
	}
	l := &r.q.lim
	if r.noMerge || r.op != b.Op || b.Flags&flushFlags != 0 ||
		r.sectors+b.Sectors() > uint64(l.MaxSectors) {
		return mergeNone
	}
	coalesce, maxSeg := l.SegmentAccounting == SegmentsCoalesced, uint64(l.MaxSegmentSize)
	if back {
		if r.runs.segsWith(br, coalesce, maxSeg) > uint64(l.MaxSegments) {
			return mergeNone
		}
		r.runs.append(br, coalesce, maxSeg)
		r.sectors += b.Sectors()
		r.parts = append(r.parts, BioPart{Bio: b, Off: 0, Len: b.size})
		r.merges++
		if b.leaveNS > r.ready { // max, without its NaN and signed-zero cases: times are finite and not negative
			r.ready = b.leaveNS
		}
		return mergeBack
	}
	merged := *br
	merged.append(&r.runs, coalesce, maxSeg)
	if merged.segs > uint64(l.MaxSegments) {
		return mergeNone
	}
	r.runs = merged
	r.sector = b.Sector
	r.sectors += b.Sectors()
	r.parts = append(r.parts, BioPart{})
	copy(r.parts[1:], r.parts)
	r.parts[0] = BioPart{Bio: b, Off: 0, Len: b.size}
	r.merges++
	r.frontMerges++
	r.ready = max(r.ready, b.leaveNS)
	return mergeFront
}

// bytes is the request's length in bytes (blk_rq_bytes).
func (r *Request) bytes() uint64 { return r.sectors << SectorShift }
