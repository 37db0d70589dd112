package blk

// BioPart is the part of a bio that a request carries: bytes [Off, Off+Len) of
// Bio. A bio within the queue's limits is carried whole (Off 0, Len its size);
// a larger one is split into parts carried by consecutive requests, as
// bio_split makes a new bio for each front part in the kernel.
type BioPart struct {
	Bio      *Bio
	Off, Len uint32
}

// Request models struct request (v5.10) of a request-based queue: one I/O of
// contiguous sectors that the driver serves as a unit, built from one bio and
// grown by back-merging further bios into it while it waits in a plug. The
// queue creates, recycles and completes requests; callers see them through
// Plug.Requests and must not keep them after the plug flushes.
type Request struct {
	q       *Queue
	op      Op
	sector  uint64
	sectors uint64
	parts   []BioPart
	runs    runs   // segment accounting of what the request holds
	merges  uint64 // bios back-merged into the request
	noMerge bool   // REQ_NOMERGE: the front part of a split bio
}

// Op returns the request's operation.
func (r *Request) Op() Op { return r.op }

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

// backMerge appends the whole bio b, whose runs are br, if it continues the
// request: bio_attempt_back_merge with ll_back_merge_fn (v5.10). The bio must
// start where the request ends, have the same operation, and keep the request
// within MaxSectors and MaxSegments. O(1) plus the part slice's append, which
// reuses the recycled request's capacity.
func (r *Request) backMerge(b *Bio, br *runs) bool {
	l := &r.q.lim
	if r.noMerge || r.op != b.Op || r.sector+r.sectors != b.Sector ||
		r.sectors+b.Sectors() > uint64(l.MaxSectors) {
		return false
	}
	merged := r.runs
	merged.append(*br, l.SegmentAccounting == SegmentsCoalesced, uint64(l.MaxSegmentSize))
	if merged.segs > uint64(l.MaxSegments) {
		return false
	}
	r.runs = merged
	r.sectors += b.Sectors()
	r.parts = append(r.parts, BioPart{Bio: b, Off: 0, Len: b.size})
	r.merges++
	return true
}

// bytes is the request's length in bytes (blk_rq_bytes).
func (r *Request) bytes() uint64 { return r.sectors << SectorShift }
