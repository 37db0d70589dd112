package blk

import (
	"bufio"
	"fmt"
	"io"

	"github.com/bhsim/bhsim/internal/enum"
)

// TraceKind names a block-layer tracepoint (include/trace/events/block.h,
// v6.18) that a queue reports to its [Tracer].
type TraceKind uint8

const (
	// TraceBioQueue is block_bio_queue: a bio entered the queue
	// (submit_bio_noacct_nocheck), once per bio, whatever splits follow.
	// Sector, Bytes: the bio's. Not reported for bios that fail CheckBio, nor
	// for an empty flush on a queue without a write cache (dropped before).
	TraceBioQueue TraceKind = iota
	// TraceBioBackmerge is block_bio_backmerge: the bio was appended to a
	// plugged request. Sector, Bytes: the bio's.
	TraceBioBackmerge
	// TraceBioFrontmerge is block_bio_frontmerge: the bio was put in front
	// of a plugged request (Version618 only). Sector, Bytes: the bio's.
	TraceBioFrontmerge
	// TraceSplit is block_split: the bio exceeded the limits and a front
	// part was split off (bio_submit_split), once per part but the last.
	// Sector, Bytes: the front part's.
	TraceSplit
	// TraceGetRq is block_getrq: a request was made for the bio (or the part
	// of it). Sector, Bytes: the bio's or part's; an empty flush's has 0
	// bytes.
	TraceGetRq
	// TraceRqInsert is block_rq_insert: a plugged request was inserted into
	// the queue rather than issued directly, because the task holding the
	// plug slept (write throttling, see [Limits.WriteThrottleDepth]). Sector,
	// Bytes, Count (bios): the request's.
	TraceRqInsert
	// TraceRqIssue is block_rq_issue: the request went to the driver.
	// Sector, Bytes, Count (bio parts), Segments and ServiceNS (the model's
	// price) are the request's. A flush request has Op OpFlush, Flags
	// FlagPreflush and no bytes.
	TraceRqIssue
	// TraceRqComplete is block_rq_complete: the driver completed the
	// request, with Err (nil, or an error whose [Errno] the tracepoint
	// prints negated). A request of the flush machinery completes twice:
	// the flush request, then the original empty request; a data request
	// sequenced with flushes completes when its data is written and again,
	// with 0 bytes, at the end of the sequence.
	TraceRqComplete
	// TracePlug is block_plug: the first request was added to an empty
	// plug (blk_add_rq_to_plug), including right after the plug was flushed
	// to make room. Only Kind is set.
	TracePlug
	// TraceUnplug is block_unplug: the plug was flushed with Count requests
	// for this queue (a plug holding requests of several queues reports one
	// event to each).
	TraceUnplug
)

// traceKindNames names the kinds after their tracepoints.
var traceKindNames = enum.New[TraceKind]("trace", []string{
	TraceBioQueue: "block_bio_queue", TraceBioBackmerge: "block_bio_backmerge",
	TraceBioFrontmerge: "block_bio_frontmerge", TraceSplit: "block_split",
	TraceGetRq: "block_getrq", TraceRqInsert: "block_rq_insert", TraceRqIssue: "block_rq_issue",
	TraceRqComplete: "block_rq_complete", TracePlug: "block_plug", TraceUnplug: "block_unplug"}...)

// String returns the tracepoint's name ("block_rq_issue"; "trace(n)" for
// another value).
func (k TraceKind) String() string { return traceKindNames.String(k) }

// TraceEvent is one tracepoint hit. Which fields are set depends on Kind
// (see [TraceKind]); the others are zero.
type TraceEvent struct {
	Kind TraceKind
	// Op and Flags are the bio's or request's operation and REQ_* flags
	// (a request has its first bio's flags, less those the flush machinery
	// consumed).
	Op    Op
	Flags BioFlags
	// Sector and Bytes are the bio's, part's or request's range.
	Sector uint64
	Bytes  uint64
	// Count is the number of requests of a TraceUnplug, and the number of
	// bio parts a request carries for TraceRqInsert, TraceRqIssue and
	// TraceRqComplete.
	Count int
	// Segments is the request's segment count under the queue's
	// SegmentAccounting (TraceRqIssue).
	Segments uint32
	// ServiceNS is the model's price of the request (TraceRqIssue).
	ServiceNS float64
	// ReadyNS is, on a queue with a throttle stage (Queue.SetThrottle),
	// when the last of the request's bio parts left the throttle, in
	// simulated nanoseconds (TraceRqIssue); 0 without one.
	ReadyNS float64
	// Worker marks the plug events (TracePlug, TraceUnplug) of a kernel
	// worker's plug — kthrotld's, which submits what the throttle
	// released, or a writeback thread's (Plug.SetKernelThread) — rather
	// than the submitting task's.
	Worker bool
	// Err is the completion error of a TraceRqComplete.
	Err error
}

// Tracer receives a queue's tracepoint hits ([Queue.SetTracer]): the model of
// a tracing instance with the block events enabled for one device. Trace is
// called synchronously, on the goroutine that submits, flushes or dispatches,
// outside the queue's lock, in the order the hits happen on that goroutine;
// goroutines submitting to one queue concurrently call it concurrently. It
// must not keep pointers into e beyond the call (Err may be kept), and may
// submit to no queue.
type Tracer interface {
	Trace(e TraceEvent)
}

// BioTracer is a Tracer that takes the bio tracepoints (block_bio_queue,
// block_bio_backmerge, block_bio_frontmerge, block_split, block_getrq)
// through TraceBio, whose arguments are the only fields such an event
// sets: a queue whose tracer is a BioTracer calls TraceBio for them, with
// the contract of Trace, and Trace for the others. It spares a tracer
// that every bio reaches (the workload engine's clock) the event's copy,
// which, passed whole, the CPU stalls on. TraceBio(k, op, flags, sector,
// bytes) is Trace(TraceEvent{Kind: k, Op: op, Flags: flags, Sector:
// sector, Bytes: bytes}).
type BioTracer interface {
	Tracer
	TraceBio(k TraceKind, op Op, flags BioFlags, sector, bytes uint64)
}

// TraceFunc adapts a function to a Tracer.
type TraceFunc func(TraceEvent)

// Trace implements Tracer: f(e).
func (f TraceFunc) Trace(e TraceEvent) { f(e) }

// TraceKinds is a set of trace kinds: the block events a tracing instance
// has enabled (events/block/<event>/enable). The zero value is empty.
type TraceKinds uint16

// AllTraceKinds holds every TraceKind.
const AllTraceKinds TraceKinds = 1<<(TraceUnplug+1) - 1

// Sets of tracepoints a queue reports together, as constants, so that the
// per-request tests of its hot paths cost one and: a request's issue and
// completion (Queue.serve), and a plug flush's unplug and inserts
// (Plug.flushRequests).
const (
	rqServedKinds TraceKinds = 1<<TraceRqIssue | 1<<TraceRqComplete
	unplugKinds   TraceKinds = 1<<TraceUnplug | 1<<TraceRqInsert
)

// TraceKindsOf returns the set of ks. O(len(ks)).
func TraceKindsOf(ks ...TraceKind) TraceKinds {
	var s TraceKinds
	for _, k := range ks {
		s |= 1 << k
	}
	return s
}

// Has reports whether k is in s. O(1).
func (s TraceKinds) Has(k TraceKind) bool { return s&(1<<k) != 0 }

// SetTracer makes the queue report all its tracepoint hits to t (nil: none,
// the default): SetTracerKinds(t, AllTraceKinds). O(1).
func (q *Queue) SetTracer(t Tracer) { q.SetTracerKinds(t, AllTraceKinds) }

// SetTracerKinds makes the queue report to t its hits of the tracepoints in
// kinds, as a tracing instance reports only the events enabled in it (t
// nil or kinds empty: none, the default). A tracepoint outside kinds costs
// one test of the set and builds no event; one in it allocates nothing
// beyond what t does. The plug events (TracePlug, TraceUnplug) of a task's
// plug go to the tracer of the queue the requests are for, as the kernel's
// tracepoints take that queue. SetTracerKinds must not be called while
// another goroutine submits to the queue or flushes a plug holding its
// requests. O(1).
func (q *Queue) SetTracerKinds(t Tracer, kinds TraceKinds) {
	q.tracer, q.traced = t, kinds&AllTraceKinds
	q.bioTracer, _ = t.(BioTracer)
	if t == nil {
		q.traced = 0
	}
}

// traces reports whether the queue reports the tracepoint k to a tracer.
// O(1); it inlines.
func (q *Queue) traces(k TraceKind) bool { return q.traced.Has(k) }

// trace reports e to the queue's tracer, if it takes e's kind. The test
// inlines; the call does not.
func (q *Queue) trace(e TraceEvent) {
	if q.traces(e.Kind) {
		q.tracer.Trace(e)
	}
}

// traceBio reports a bio tracepoint for bytes [off, off+n) of b, if the
// queue's tracer takes k.
func (q *Queue) traceBio(k TraceKind, b *Bio, off, n uint32) {
	if q.traces(k) {
		q.emitBio(k, b, off, n)
	}
}

// emitBio is traceBio's report: TraceBio of a BioTracer, Trace of
// another.
func (q *Queue) emitBio(k TraceKind, b *Bio, off, n uint32) {
	sector := b.Sector + uint64(off>>SectorShift)
	if q.bioTracer != nil {
		q.bioTracer.TraceBio(k, b.Op, b.Flags, sector, uint64(n))
		return
	}
	q.tracer.Trace(TraceEvent{Kind: k, Op: b.Op, Flags: b.Flags, Sector: sector, Bytes: uint64(n)})
}

// traceRq reports a request tracepoint for rq.
func (q *Queue) traceRq(k TraceKind, rq *Request, err error) {
	q.tracer.Trace(TraceEvent{Kind: k, Op: rq.op, Flags: rq.flags, Sector: rq.sector,
		Bytes: rq.bytes(), Count: len(rq.parts), Err: err})
}

// TraceEntry records one request dispatched to the device, like a blktrace
// "D" (issue) event: what [Queue.EnableTrace]'s bounded log keeps of each
// TraceRqIssue.
type TraceEntry struct {
	// Seq numbers the queue's dispatched requests from 1; a gap in a trace
	// shows entries the bounded trace dropped.
	Seq uint64
	// Op, Sector and Sectors are the request's operation and sector range
	// (a flush request: OpFlush, 0, 0).
	Op      Op
	Sector  uint64
	Sectors uint64
	// Bios is the number of bio parts the request carried.
	Bios uint32
	// Segments is the request's segment count under the queue's accounting.
	Segments uint32
	// ServiceNS is the model's price for the request.
	ServiceNS float64
}

// traceRing keeps the newest len(buf) entries.
type traceRing struct {
	buf  []TraceEntry
	next int  // where the next entry goes
	full bool // buf has wrapped
}

// record stores e, overwriting the oldest entry when full; nothing when the
// trace is disabled. O(1), no allocation.
func (t *traceRing) record(e TraceEntry) {
	if len(t.buf) == 0 {
		return
	}
	t.buf[t.next] = e
	t.next++
	if t.next == len(t.buf) {
		t.next, t.full = 0, true
	}
}

// entries returns a copy of the kept entries, oldest first.
func (t *traceRing) entries() []TraceEntry {
	if !t.full {
		return append([]TraceEntry(nil), t.buf[:t.next]...)
	}
	return append(append(make([]TraceEntry, 0, len(t.buf)), t.buf[t.next:]...), t.buf[:t.next]...)
}

// EnableTrace makes the queue keep the newest n dispatched requests, dropping
// what it had recorded; n ≤ 0 disables the trace (the default). It is a
// bounded log of the TraceRqIssue hits, kept under the queue's lock and
// numbered, beside whatever Tracer is set. Memory is bounded by n entries
// whatever the length of the run. O(n).
func (q *Queue) EnableTrace(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ring = traceRing{}
	if n > 0 {
		q.ring.buf = make([]TraceEntry, n)
	}
}

// Trace returns a copy of the recorded requests, oldest first. O(entries).
func (q *Queue) Trace() []TraceEntry {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ring.entries()
}

// WriteTrace writes the recorded requests to w, oldest first, one line each in
// a blkparse-like format:
//
//	sda 7 D W 2048 + 1024 [bios 128, segs 128] 2066.0 us
//
// The fields are the queue's name, the sequence number, the action (always D,
// issued to the driver), R, W or F (a flush request), the first sector, "+" and the number of
// sectors, the bio parts and segments the request carried, and the model's
// service time in microseconds with one decimal. It returns the first write
// error. O(entries).
func (q *Queue) WriteTrace(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, e := range q.Trace() {
		rw := 'R'
		switch e.Op {
		case OpWrite:
			rw = 'W'
		case OpFlush:
			rw = 'F'
		}
		fmt.Fprintf(bw, "%s %d D %c %d + %d [bios %d, segs %d] %.1f us\n",
			q.name, e.Seq, rw, e.Sector, e.Sectors, e.Bios, e.Segments, e.ServiceNS/1e3)
	}
	return bw.Flush()
}
