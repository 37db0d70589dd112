package blk

import (
	"fmt"

	"github.com/bhsim/bhsim/internal/conc"

	"github.com/bhsim/bhsim/internal/freelist"
)

// Queue models a request-based block device: a blk-mq queue with the "none"
// scheduler (v5.10 or v6.18, [Limits.Version]) in front of a MemDisk that holds
// the data and a Model that prices each request. It implements Device; Submit
// without a plug dispatches a request at once, SubmitBio with a started Plug
// lets bios wait and merge.
//
// Dispatch is synchronous: a request's data moves, its service time is added
// to the queue's busy time, it is traced, and its bios complete in order on the
// goroutine that dispatched it, before Submit, Plug.Flush or Plug.Finish
// returns. A Queue is safe for concurrent use by several goroutines, each with
// its own Plug, until Confine; a confined one (a one-goroutine machine's) for
// one goroutine at a time only. Busy time is deterministic for a
// deterministic order of dispatch.
//
// # Flushes
//
// On a queue with a volatile write cache ([Limits.WriteCache]) the flush
// machinery (blk-flush, v6.18) sequences the bios with flush flags, outside
// any plug and unmerged: an empty preflush bio ([Bio.IsFlush]) gets a request
// (block_getrq) that is never issued itself; the queue issues one flush
// request (OpFlush) for it, and the empty request completes after it. A data
// bio with FlagPreflush is written after a flush request; one with FlagFUA
// is written with FUA if the device supports it ([Limits.FUA]) — as an
// ordinary, unmergeable request, through the plug in v6.18 — and is followed
// by a flush request if not. A flush takes no modelled time (the models price
// transfers) and the MemDisk has no cache to write back. On a queue without a
// write cache the flush flags are dropped and an empty flush completes at
// once, without a request or a trace.
type Queue struct {
	name   string
	store  *MemDisk
	model  Model
	lim    Limits
	tracer Tracer
	traced TraceKinds // the tracepoints reported to tracer (SetTracerKinds)
	// bioTracer is tracer when it is a BioTracer, which takes the bio
	// tracepoints through TraceBio; nil otherwise.
	bioTracer BioTracer

	mu      conc.Mutex
	free    freelist.List[Request] // recycled requests (the tag set)
	streams streams                // where recent sequential streams ended
	stats   QueueStats
	seq     uint64
	ring    traceRing

	// thr, when not nil, is the throttle stage (SetThrottle): thrNow the
	// submitter's time, round the kthrotld round being gathered.
	thr    *Throttle
	thrNow func() float64
	round  throttleRound
}

// OpStats counts what a queue served for one operation.
type OpStats struct {
	// Requests is the number of requests dispatched to the device (and
	// completed, with or without an error).
	Requests uint64
	// Bios is the number of bio parts those requests carried (a bio split
	// into k parts counts k times).
	Bios uint64
	// Merges is the number of bios merged into a plugged request, back or
	// front.
	Merges uint64
	// FrontMerges is the number of those merges that were front merges.
	FrontMerges uint64
	// Splits is the number of extra parts made by splitting bios at the
	// queue limits.
	Splits uint64
	// Sectors is the number of 512-byte sectors the requests covered.
	Sectors uint64
	// Failed is the number of requests completed with an error (the store's
	// ErrNoSpace).
	Failed uint64
}

// QueueStats is a snapshot of a queue's counters.
type QueueStats struct {
	// Read and Write count what was served of each operation: the data
	// requests.
	Read, Write OpStats
	// Flushes is the number of flush requests issued (REQ_OP_FLUSH, one per
	// preflush and one per postflush a FUA write needs).
	Flushes uint64
	// EmptyFlushes is the number of empty preflush bios served by a flush
	// request; each one's own request completes as a write of 0 sectors.
	EmptyFlushes uint64
	// Errors counts bios failed at submission (CheckBio, or memory that
	// cannot be split within the limits); they never reach the device.
	Errors uint64
	// BusyNS is the simulated time the device spent serving requests, the
	// sum of the model's service times.
	BusyNS float64
}

// Sub returns the counters s gained since earlier, a snapshot of the same
// queue taken before it. O(1).
func (s QueueStats) Sub(earlier QueueStats) QueueStats {
	return QueueStats{Read: s.Read.sub(earlier.Read), Write: s.Write.sub(earlier.Write),
		Flushes: s.Flushes - earlier.Flushes, EmptyFlushes: s.EmptyFlushes - earlier.EmptyFlushes,
		Errors: s.Errors - earlier.Errors, BusyNS: s.BusyNS - earlier.BusyNS}
}

// sub returns the counters s gained since earlier.
func (s OpStats) sub(earlier OpStats) OpStats {
	return OpStats{Requests: s.Requests - earlier.Requests, Bios: s.Bios - earlier.Bios, Merges: s.Merges - earlier.Merges,
		FrontMerges: s.FrontMerges - earlier.FrontMerges, Splits: s.Splits - earlier.Splits,
		Sectors: s.Sectors - earlier.Sectors, Failed: s.Failed - earlier.Failed}
}

// BlockStat is /sys/block/<dev>/stat as the kernel keeps it for the queue's
// disk (Documentation/block/stat.rst, v6.18): completed I/O, counted per
// request when it completes, errors included. The fields not listed
// (in-flight, ticks, discards) are not modelled.
type BlockStat struct {
	// ReadIOs, ReadMerges and ReadSectors are fields 1 to 3: read requests
	// completed, bios merged into read requests, sectors read.
	ReadIOs, ReadMerges, ReadSectors uint64
	// WriteIOs, WriteMerges and WriteSectors are fields 5 to 7. An empty
	// preflush bio's request counts as a write I/O of 0 sectors (the flush
	// machinery ends it as an ordinary request), so an fsync that flushes
	// adds one write I/O beside its data requests.
	WriteIOs, WriteMerges, WriteSectors uint64
	// FlushIOs is field 16: flush requests completed.
	FlushIOs uint64
}

// BlockStat returns s as /sys/block/<dev>/stat counts it. O(1).
func (s QueueStats) BlockStat() BlockStat {
	return BlockStat{
		ReadIOs: s.Read.Requests, ReadMerges: s.Read.Merges, ReadSectors: s.Read.Sectors,
		WriteIOs: s.Write.Requests + s.EmptyFlushes, WriteMerges: s.Write.Merges, WriteSectors: s.Write.Sectors,
		FlushIOs: s.Flushes,
	}
}

// NewQueue returns a queue named name (the store's name when empty) over store,
// priced by model, with limits lim; blk_mq_init_queue with the limits a driver
// sets (v5.10). If model has a Validate() error method, NewQueue calls it.
// Errors wrap ErrInvalidConfig: a nil store or model, a model that fails its
// validation, limits that fail Limits.Validate, or a logical block size other
// than the store's. Tracing starts disabled (see SetTracer and EnableTrace).
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

// Confine implements Confiner: q's lock, and its store's, become confined.
func (q *Queue) Confine() {
	q.mu.Confine()
	q.store.Confine()
}

// Confined reports whether q is confined.
func (q *Queue) Confined() bool { return q.mu.Confined() }

// Name implements Device.
func (q *Queue) Name() string { return q.name }

// Sectors implements Device: the store's capacity.
func (q *Queue) Sectors() uint64 { return q.store.Sectors() }

// LogicalBlockSize implements Device: the store's logical block size.
func (q *Queue) LogicalBlockSize() uint32 { return q.store.LogicalBlockSize() }

// Limits returns the queue's limits.
func (q *Queue) Limits() Limits { return q.lim }

// Rotational reports /sys/block/<dev>/queue/rotational (BLK_FEAT_ROTATIONAL):
// whether the queue's model says it is a rotating disk (HDD does; SSD and
// Null do not). O(1).
func (q *Queue) Rotational() bool { return rotational(q.model) }

// rotational reports whether m is a rotating disk's model: it has a
// Rotational() bool method that says so.
func rotational(m Model) bool {
	r, ok := m.(interface{ Rotational() bool })
	return ok && r.Rotational()
}

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

// BlockStat returns the queue's /sys/block/<dev>/stat counters:
// Stats().BlockStat(). O(1).
func (q *Queue) BlockStat() BlockStat { return q.Stats().BlockStat() }

// BusyNS returns the simulated time the device has spent serving requests,
// the sum of the model's service times. O(1).
func (q *Queue) BusyNS() float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stats.BusyNS
}

// flushSeq is what the flush machinery does for a bio (blk_flush_policy).
type flushSeq uint8

const (
	seqPreflush  flushSeq = 1 << iota // a flush request before the data
	seqPostflush                      // a flush request after the data (FUA emulated)
	seqBypass                         // v5.10: a FUA write the device takes, issued at once
)

// flushSeq returns what b, a validated data bio on a queue with a write
// cache, needs of the flush machinery.
func (q *Queue) flushSeq(b *Bio) flushSeq {
	var s flushSeq
	if b.Flags&FlagPreflush != 0 {
		s |= seqPreflush
	}
	if b.Flags&FlagFUA != 0 && !q.lim.FUA {
		s |= seqPostflush
	}
	if s == 0 && b.Flags&FlagFUA != 0 && q.lim.Version < Version618 {
		s = seqBypass
	}
	return s
}

// submit models submit_bio_noacct → blk_mq_submit_bio (v5.10, v6.18) for b:
// validate, drop the flush flags without a write cache, trace, hand flushes to
// the flush machinery, split at the limits (__blk_queue_split,
// bio_split_to_limits), try a plug merge (blk_attempt_plug_merge), else make
// a request and plug it or, with no plug, dispatch it. The front parts of a
// split bio are marked REQ_NOMERGE as in the kernel: they neither merge into
// an earlier request nor accept merges; the last part's request accepts them.
// A bio that fails validation, or that cannot be split within the limits,
// completes with the error at once, before the bios waiting in the plug, as
// bio_check_eod's failure does.
func (q *Queue) submit(p *Plug, b *Bio) {
	if !bioFits(b, uint64(q.lim.LogicalBlockSize), q.store.Sectors()) { // the limits' logical block size is the store's (NewQueue)
		if err := CheckBio(q, b); err != nil {
			q.fail(b, err)
			return
		}
	}
	var seq flushSeq
	if b.Flags&flushFlags != 0 {
		if !q.lim.WriteCache {
			// No volatile write cache: submit_bio_noacct drops the flush
			// flags, and an empty flush has nothing left to do.
			b.Flags &^= flushFlags
			if b.size == 0 {
				b.Complete(nil)
				return
			}
		} else if b.size == 0 {
			b.Err = nil
			q.traceBio(TraceBioQueue, b, 0, 0)
			q.emptyFlush(b)
			return
		} else {
			seq = q.flushSeq(b)
		}
	}
	b.Err = nil // the first error of its parts, until it completes
	task := p
	if q.thr != nil {
		p = q.throttleBio(task, nil, b, 0)
		defer q.throttled(task)
	} else {
		b.leaveNS = 0
	}
	q.traceBio(TraceBioQueue, b, 0, b.size)
	var r runs
	n := q.lim.cutInto(&r, b, 0)
	if n == b.size {
		if p != nil && seq == 0 {
			switch p.merge(q, b, &r) {
			case mergeBack:
				q.traceBio(TraceBioBackmerge, b, 0, b.size)
				return
			case mergeFront:
				q.traceBio(TraceBioFrontmerge, b, 0, b.size)
				return
			}
		}
		q.start(p, b, 0, n, &r, false, seq)
		return
	}
	if err := q.checkSplit(b, n); err != nil {
		q.fail(b, err)
		return
	}
	for off := uint32(0); ; {
		last := off+n == b.size
		if !last {
			q.traceBio(TraceSplit, b, off, n)
		}
		q.start(p, b, off, n, &r, !last, seq)
		if last {
			return
		}
		off += n
		n = q.lim.cutInto(&r, b, off)
		if q.thr != nil { // the remainder, resubmitted, is checked again
			p = q.throttleBio(task, p, b, off)
		}
	}
}

// start makes the request for bytes [off, off+n) of b, whose runs are r, and
// sends it on: through the flush machinery (seq), into the plug, or to the
// device. A task holding a plug may first sleep in write throttling
// (Plug.throttle, in blk_mq_get_new_requests's rq_qos_throttle).
func (q *Queue) start(p *Plug, b *Bio, off, n uint32, r *runs, noMerge bool, seq flushSeq) {
	if p != nil && !p.worker {
		p.throttle(q, b)
	}
	rq := q.request(b, off, n, r, noMerge)
	switch {
	case seq&(seqPreflush|seqPostflush) != 0:
		q.dispatchSeq(rq, seq)
	case p == nil || seq == seqBypass:
		if q.lim.Elevator && q.traces(TraceRqInsert) && seq == 0 {
			q.traceRq(TraceRqInsert, rq, nil)
		}
		q.dispatch(rq)
	default:
		p.add(rq)
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
// runs are r (blk_mq_bio_to_request), and traces block_getrq. The flush flags
// the flush machinery consumes (the preflush, an emulated FUA) are not the
// request's; one it keeps (a FUA the device takes) makes it unmergeable.
func (q *Queue) request(b *Bio, off, n uint32, r *runs, noMerge bool) *Request {
	q.traceBio(TraceGetRq, b, off, n)
	rq := q.alloc()
	rq.op, rq.sector, rq.sectors = b.Op, b.Sector+uint64(off>>SectorShift), uint64(n)>>SectorShift
	rq.flags = b.Flags &^ FlagPreflush
	if !q.lim.FUA {
		rq.flags &^= FlagFUA
	}
	rq.parts = append(rq.parts, BioPart{Bio: b, Off: off, Len: n})
	rq.runs, rq.merges, rq.frontMerges = *r, 0, 0
	rq.noMerge = noMerge || rq.flags&FlagFUA != 0
	rq.ready = b.leaveNS
	return rq
}

// dispatch serves rq and completes it: blk_mq_dispatch_rq_list (or
// blk_mq_request_issue_directly) → the driver's queue_rq → its completion,
// blk_mq_end_request (v5.10, v6.18), all synchronous.
func (q *Queue) dispatch(rq *Request) { q.finish(rq, q.serve(rq)) }

// serve issues rq to the device and lets it complete: the data moves through
// the store, the model prices the request from where the previous one ended,
// the counters and the request log take it, and the tracer sees
// block_rq_issue and block_rq_complete. It returns the store's error (the
// request failed: ErrNoSpace). Its bios were validated when they were
// submitted; they are not completed here.
func (q *Queue) serve(rq *Request) error {
	err := q.store.serveParts(rq.parts)

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
	st.FrontMerges += rq.frontMerges
	st.Sectors += rq.sectors
	if err != nil {
		st.Failed++
	}
	for _, p := range rq.parts {
		if p.Off > 0 {
			st.Splits++
		}
	}
	q.seq++
	q.ring.record(TraceEntry{Seq: q.seq, Op: rq.op, Sector: rq.sector, Sectors: rq.sectors,
		Bios: uint32(len(rq.parts)), Segments: rq.Segments(), ServiceNS: ns})
	q.mu.Unlock()

	if q.traced&rqServedKinds != 0 {
		e := TraceEvent{Kind: TraceRqIssue, Op: rq.op, Flags: rq.flags, Sector: rq.sector, Bytes: rq.bytes(),
			Count: len(rq.parts), Segments: rq.Segments(), ServiceNS: ns, ReadyNS: rq.ready}
		q.trace(e)
		e.Kind, e.Segments, e.ServiceNS, e.ReadyNS, e.Err = TraceRqComplete, 0, 0, 0, err
		q.trace(e)
	}
	return err
}

// finish completes, in the order rq holds them, every bio whose last part rq
// carries, with the first error any of its parts met (bio_chain passes a
// split part's error to the whole bio), and recycles rq.
func (q *Queue) finish(rq *Request, err error) {
	for _, p := range rq.parts {
		b := p.Bio
		if err != nil && b.Err == nil {
			b.Err = err
		}
		if p.Off+p.Len == b.size {
			b.Complete(b.Err)
		}
	}
	q.recycle(rq)
}

// dispatchSeq runs the flush sequence of a data request (blk_insert_flush →
// blk_flush_complete_seq, v6.18): a flush request first for a preflush, the
// data, a flush request after it for an emulated FUA unless the data failed,
// then the request's final completion (block_rq_complete of 0 bytes) and its
// bios'.
func (q *Queue) dispatchSeq(rq *Request, seq flushSeq) {
	if seq&seqPreflush != 0 {
		q.flush()
	}
	err := q.serve(rq)
	if seq&seqPostflush != 0 && err == nil {
		q.flush()
	}
	if q.traces(TraceRqComplete) {
		q.tracer.Trace(TraceEvent{Kind: TraceRqComplete, Op: rq.op, Flags: rq.flags, Sector: rq.sector,
			Count: len(rq.parts), Err: err})
	}
	q.finish(rq, err)
}

// emptyFlush serves an empty preflush bio on a queue with a write cache: its
// request (block_getrq, never issued), one flush request, then the empty
// request's completion and the bio's (blk_insert_flush with a policy of
// REQ_FSEQ_PREFLUSH alone). O(1).
func (q *Queue) emptyFlush(b *Bio) {
	q.traceBio(TraceGetRq, b, 0, 0)
	q.flush()
	q.mu.Lock()
	q.stats.EmptyFlushes++
	q.mu.Unlock()
	q.trace(TraceEvent{Kind: TraceRqComplete, Op: OpWrite, Flags: b.Flags &^ flushFlags, Sector: b.Sector})
	b.Complete(nil)
}

// flush issues one flush request (blk_kick_flush's flush_rq) and lets it
// complete: it is counted and traced (Op OpFlush, Flags FlagPreflush, as the
// kernel traces "FF"), and takes no modelled time.
func (q *Queue) flush() {
	q.mu.Lock()
	q.stats.Flushes++
	q.seq++
	q.ring.record(TraceEntry{Seq: q.seq, Op: OpFlush})
	q.mu.Unlock()
	q.trace(TraceEvent{Kind: TraceRqIssue, Op: OpFlush, Flags: FlagPreflush})
	q.trace(TraceEvent{Kind: TraceRqComplete, Op: OpFlush, Flags: FlagPreflush})
}
