package blk

import (
	"fmt"
	"sync"

	"github.com/bhsim/bhsim/internal/freelist"
)

// Queue models a request-based block device: a blk-mq queue with the "none"
// scheduler (v5.10) in front of a MemDisk that holds the data and a Model that
// prices each request. It implements Device; Submit without a plug dispatches
// a request at once, SubmitBio with a started Plug lets bios wait and merge.
//
// Dispatch is synchronous: a request's data moves, its service time is added
// to the queue's busy time, it is traced, and its bios complete in order on the
// goroutine that dispatched it, before Submit, Plug.Flush or Plug.Finish
// returns. A Queue is safe for concurrent use by several goroutines, each with
// its own Plug; busy time is deterministic for a deterministic order of
// dispatch.
type Queue struct {
	name  string
	store *MemDisk
	model Model
	lim   Limits

	mu      sync.Mutex
	free    freelist.List[Request] // recycled requests (the tag set)
	streams streams                // where recent sequential streams ended
	stats   QueueStats
	seq     uint64
	trace   traceRing
}

// OpStats counts what a queue served for one operation.
type OpStats struct {
	// Requests is the number of requests dispatched to the device.
	Requests uint64
	// Bios is the number of bio parts those requests carried (a bio split
	// into k parts counts k times).
	Bios uint64
	// Merges is the number of bios back-merged into a plugged request.
	Merges uint64
	// Splits is the number of extra parts made by splitting bios at the
	// queue limits.
	Splits uint64
	// Sectors is the number of 512-byte sectors moved.
	Sectors uint64
}

// QueueStats is a snapshot of a queue's counters.
type QueueStats struct {
	// Read and Write count what was served of each operation.
	Read, Write OpStats
	// Errors counts bios failed at submission (CheckBio, or memory that
	// cannot be split within the limits); they never reach the device.
	Errors uint64
	// BusyNS is the simulated time the device spent serving requests, the
	// sum of the model's service times.
	BusyNS float64
}

// NewQueue returns a queue named name (the store's name when empty) over store,
// priced by model, with limits lim; blk_mq_init_queue with the limits a driver
// sets (v5.10). If model has a Validate() error method, NewQueue calls it.
// Errors wrap ErrInvalidConfig: a nil store or model, a model that fails its
// validation, limits that fail Limits.Validate, or a logical block size other
// than the store's. Tracing starts disabled (see EnableTrace).
func NewQueue(name string, store *MemDisk, model Model, lim Limits) (*Queue, error) {
	if store == nil || model == nil {
		return nil, fmt.Errorf("%w: queue %q needs a store and a model", ErrInvalidConfig, name)
	}
	if v, ok := model.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	if lim.LogicalBlockSize != store.LogicalBlockSize() {
		return nil, fmt.Errorf("%w: limits say logical block %d, store %s has %d",
			ErrInvalidConfig, lim.LogicalBlockSize, store.Name(), store.LogicalBlockSize())
	}
	if name == "" {
		name = store.Name()
	}
	return &Queue{name: name, store: store, model: model, lim: lim}, nil
}

// Name implements Device.
func (q *Queue) Name() string { return q.name }

// Sectors implements Device: the store's capacity.
func (q *Queue) Sectors() uint64 { return q.store.Sectors() }

// LogicalBlockSize implements Device: the store's logical block size.
func (q *Queue) LogicalBlockSize() uint32 { return q.store.LogicalBlockSize() }

// Limits returns the queue's limits.
func (q *Queue) Limits() Limits { return q.lim }

// Submit implements Device: submit_bio without a plug. The bio becomes one
// request (or several, if it exceeds the limits) dispatched before Submit
// returns; a bio that fails validation (CheckBio, or memory that cannot be
// split within the limits: ErrMisaligned) completes with the error. O(vectors
// of b) plus the data copy.
func (q *Queue) Submit(b *Bio) { q.submit(nil, b) }

// Stats returns a snapshot of the queue's counters. O(1).
func (q *Queue) Stats() QueueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stats
}

// BusyNS returns the simulated time the device has spent serving requests,
// the sum of the model's service times. O(1).
func (q *Queue) BusyNS() float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stats.BusyNS
}

// submit models submit_bio_noacct → blk_mq_submit_bio (v5.10) for b:
// validate, split at the limits (__blk_queue_split), try a plug merge
// (blk_attempt_plug_merge), else make a request and plug it or, with no plug,
// dispatch it. The front parts of a split bio are marked REQ_NOMERGE as in the
// kernel: they neither merge into an earlier request nor accept merges; the
// last part's request accepts them. A bio that fails validation, or that
// cannot be split within the limits, completes with the error at once, before
// the bios waiting in the plug, as bio_check_eod's failure does.
func (q *Queue) submit(p *Plug, b *Bio) {
	if err := CheckBio(q, b); err != nil {
		q.fail(b, err)
		return
	}
	if b.Flags&flushFlags != 0 {
		// No volatile write cache: submit_bio_noacct drops the flush flags,
		// and an empty flush has nothing left to do.
		b.Flags &^= flushFlags
		if b.size == 0 {
			b.Complete(nil)
			return
		}
	}
	n, r := q.lim.cut(b, 0)
	if n == b.size {
		if p != nil && p.merge(q, b, &r) {
			return
		}
		q.queue(p, q.request(b, 0, n, r, false))
		return
	}
	if err := q.checkSplit(b, n); err != nil {
		q.fail(b, err)
		return
	}
	for off := uint32(0); ; {
		last := off+n == b.size
		q.queue(p, q.request(b, off, n, r, !last))
		if last {
			return
		}
		off += n
		n, r = q.lim.cut(b, off)
	}
}

// fail completes b with err and counts it.
func (q *Queue) fail(b *Bio, err error) {
	q.mu.Lock()
	q.stats.Errors++
	q.mu.Unlock()
	b.Complete(err)
}

// checkSplit walks the parts of a bio whose first part has length first and
// returns an error wrapping ErrMisaligned if some part would be empty.
func (q *Queue) checkSplit(b *Bio, first uint32) error {
	for off, n := uint32(0), first; ; {
		if n == 0 {
			return fmt.Errorf("%w: %s sector %d: its memory cannot be cut at a %d-byte boundary within %d segments of %d bytes on %s",
				ErrMisaligned, b.Op, b.Sector+uint64(off>>SectorShift), q.lim.LogicalBlockSize, q.lim.MaxSegments, q.lim.MaxSegmentSize, q.name)
		}
		if off += n; off == b.size {
			return nil
		}
		n, _ = q.lim.cut(b, off)
	}
}

// queue plugs rq, or dispatches it when there is no plug.
func (q *Queue) queue(p *Plug, rq *Request) {
	if p == nil {
		q.dispatch(rq)
		return
	}
	p.add(rq)
}

// alloc takes a request from the free list (blk_mq_get_request's tag), or
// makes one.
func (q *Queue) alloc() *Request {
	q.mu.Lock()
	rq := q.free.Get()
	q.mu.Unlock()
	if rq == nil {
		rq = &Request{q: q}
	}
	return rq
}

// recycle returns rq to the free list, dropping its references to bios.
func (q *Queue) recycle(rq *Request) {
	clear(rq.parts)
	rq.parts = rq.parts[:0]
	q.mu.Lock()
	q.free.Put(rq)
	q.mu.Unlock()
}

// request makes a request for bytes [off, off+n) of the validated bio b, whose
// runs are r (blk_mq_bio_to_request).
func (q *Queue) request(b *Bio, off, n uint32, r runs, noMerge bool) *Request {
	rq := q.alloc()
	rq.op, rq.sector, rq.sectors = b.Op, b.Sector+uint64(off>>SectorShift), uint64(n)>>SectorShift
	rq.parts = append(rq.parts, BioPart{Bio: b, Off: off, Len: n})
	rq.runs, rq.merges, rq.noMerge = r, 0, noMerge
	return rq
}

// dispatch serves rq: blk_mq_dispatch_rq_list → the driver's queue_rq → its
// completion, blk_mq_end_request (v5.10), all synchronous. The data moves
// through the store, the model prices the request from where the previous one
// ended, the trace records it, and then every bio whose last part this request
// carries completes, in the order the request holds them. Its bios were
// validated when they were submitted.
func (q *Queue) dispatch(rq *Request) {
	q.store.serveParts(rq.parts)

	q.mu.Lock()
	prev, havePrev := q.streams.find(rq.sector, streamsOf(q.model))
	ns := q.model.Service(prev, havePrev, rq.op, rq.sector, rq.sectors)
	q.streams.advance(rq.sector + rq.sectors)
	q.stats.BusyNS += ns
	st := &q.stats.Read
	if rq.op == OpWrite {
		st = &q.stats.Write
	}
	st.Requests++
	st.Bios += uint64(len(rq.parts))
	st.Merges += rq.merges
	st.Sectors += rq.sectors
	for _, p := range rq.parts {
		if p.Off > 0 {
			st.Splits++
		}
	}
	q.seq++
	q.trace.record(TraceEntry{Seq: q.seq, Op: rq.op, Sector: rq.sector, Sectors: rq.sectors,
		Bios: uint32(len(rq.parts)), Segments: rq.Segments(), ServiceNS: ns})
	q.mu.Unlock()

	for _, p := range rq.parts {
		if p.Off+p.Len == p.Bio.size {
			p.Bio.Complete(nil)
		}
	}
	q.recycle(rq)
}
