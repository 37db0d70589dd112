package blk

// Plug flush thresholds (include/linux/blkdev.h).
const (
	// PlugMaxRequests is BLK_MAX_REQUEST_COUNT up to v5.15, the kernels of the
	// Helios4 thread: a plug holding this many requests is flushed before it
	// takes another.
	PlugMaxRequests = 16
	// PlugMaxRequests516 is BLK_MAX_REQUEST_COUNT from v5.16 ("block: bump
	// max plugged deferred size from 16 to 32", Jens Axboe, ba0ffdd8ce48).
	PlugMaxRequests516 = 32
	// PlugMaxRequests618 is BLK_MAX_REQUEST_COUNT in v6.18 (block/blk.h),
	// unchanged since v5.16; blk_plug_max_rq_count doubles it for a plug
	// holding requests of several queues. A Version618 plug uses it. The
	// 16-request flushes of the host's loop device are write throttling's
	// ([Limits.WriteThrottleDepth]), not this limit.
	PlugMaxRequests618 = PlugMaxRequests516
	// PlugFlushSize is BLK_PLUG_FLUSH_SIZE: a plug whose newest request is at
	// least this many bytes is flushed before it takes another request.
	PlugFlushSize = 128 << 10
)

// Plug models struct blk_plug (v5.10, v6.18): the per-task list of requests
// that wait, and may grow by merges, between blk_start_plug and
// blk_finish_plug, and the callbacks bio-based devices register on it
// (cb_list, see CheckPlugged) to defer their own work to its flush. The zero
// value is a usable plug that is not started. How it merges and when it is
// flushed follow the [Limits.Version] of the queue of the request at hand; its
// tracepoints (block_plug, block_unplug, block_rq_insert) go to the tracer of
// that queue ([Queue.SetTracer]).
//
// A Plug belongs to one simulated CPU (the task running on it) and is not safe
// for concurrent use; the queues it holds requests for may be shared.
type Plug struct {
	// MaxRequests is the request-count flush threshold; values below 1 mean
	// the version's: PlugMaxRequests (16) for Version510 queues,
	// PlugMaxRequests618 (32, 64 with several queues) for Version618 ones.
	MaxRequests int
	// NewestOnly selects, on Version510 queues, the v5.16+ merge attempt,
	// which tries only the newest plugged request of the bio's queue
	// ("block: only check previous entry for plug merge attempt", quoted from
	// memory). False is v5.10, which tries the plugged requests of that queue
	// from newest to oldest. Version618 queues have their own attempt.
	NewestOnly bool

	depth   int        // blk_start_plug nesting: only the outermost counts
	rqs     []*Request // plugged requests, oldest first
	spare   []*Request // the other list buffer, swapped in by Flush
	cbs     []plugCB   // registered callbacks (cb_list), oldest first
	cbSpare []plugCB   // the other callback buffer, swapped in by Flush
	// worker marks the kthrotld worker's plug of a queue's throttle stage:
	// it holds its requests for the stage (no flush when it fills, no wbt
	// sleep), and its plug events are TraceEvent.Worker's.
	worker bool
	// kthread marks the plug of a kernel thread that writes back (the
	// flusher, kswapd): its plug events are TraceEvent.Worker's too, as a
	// tracer of the task's own plugs (the host runner's, which counts the
	// scenario's thread's) leaves them out. SetKernelThread sets it.
	kthread bool
	rounds  []*Queue // queues holding throttle rounds of this task's bios (Wait)
}

// SetKernelThread marks p as a kernel thread's plug (the flusher's,
// kswapd's): its block_plug and block_unplug events carry
// TraceEvent.Worker, as kthrotld's do; nothing else changes. O(1).
func (p *Plug) SetKernelThread() { p.kthread = true }

// PlugCallback is the callback of struct blk_plug_cb (v5.10): work a
// bio-based device defers to the moment the submitter's plug is flushed. md's
// raid5 registers raid5_unplug, which hands the stripes the task attached
// while plugged to raid5d; raid1 and raid10 defer their write bios the same way.
type PlugCallback interface {
	// Unplug runs once, when p is flushed (Flush, or the outermost Finish),
	// before p's plugged requests are dispatched. It is no longer registered
	// while it runs: a CheckPlugged with its key registers a new callback,
	// which runs in the same flush. It may submit bios, through p or not.
	Unplug(p *Plug)
}

// plugCB is one registered callback and the key it was registered under
// (blk_plug_cb's data).
type plugCB struct {
	key any
	cb  PlugCallback
}

// Start models blk_start_plug (v5.10). Plugs nest: a Start while the plug is
// started only deepens it, and only the matching outermost Finish flushes, as
// a nested blk_start_plug leaves current->plug alone. O(1).
func (p *Plug) Start() { p.depth++ }

// Finish models blk_finish_plug (v5.10): it ends one Start and, when that was
// the outermost, flushes the plug. As in the kernel, which clears
// current->plug only after blk_flush_plug_list, the callbacks run while the
// plug is still started — bios they submit through it wait in it and go out
// with this flush, callbacks they register run in it — and then the plug is
// finished and its requests are dispatched, so bios their completions submit
// through it go out at once. Error: ErrPlugNotStarted when the plug is not
// started (nothing changes).
func (p *Plug) Finish() error {
	if p.depth == 0 {
		return ErrPlugNotStarted
	}
	if p.depth == 1 {
		p.flushCallbacks()
	}
	p.depth--
	if p.depth == 0 {
		p.Flush()
	}
	return nil
}

// Flush models blk_flush_plug_list (v5.10) or __blk_flush_plug (v6.18) as
// blk_finish_plug or an explicit flush calls it: first it runs the registered
// callbacks (flush_plug_callbacks), then it takes the plugged requests off the
// plug — including those the callbacks plugged — and issues them directly in
// the order they were plugged (block_unplug, then block_rq_issue). Requests
// plugged while they are dispatched (by a completion that submits) wait for
// the next flush. Then the throttle rounds this plug's bios went into whose
// ticks the submitter's time has reached go out (Queue.SetThrottle). The
// plug stays started. O(callbacks + requests) plus their
// work and dispatch.
func (p *Plug) Flush() {
	p.flushCallbacks()
	p.flushRequests(false)
	for _, q := range p.rounds {
		q.releaseDue(q.thrNow())
	}
}

// schedule models the flush of a task's plug when the task sleeps
// (sched_submit_work → blk_flush_plug(plug, true)): callbacks, then the
// requests, inserted into their queues (block_rq_insert) and run from there
// rather than issued directly, which in this synchronous model only changes
// the trace.
func (p *Plug) schedule() {
	p.flushCallbacks()
	p.flushRequests(true)
}

// flushRequests takes the plugged requests off the plug and dispatches them in
// order (blk_mq_flush_plug_list), first reporting block_unplug to each queue
// that has a tracer, with its number of requests, and with inserted, each
// request's block_rq_insert. The tracing walk is O(requests²) when a tracer
// is set and the requests are of several queues, O(requests) otherwise.
func (p *Plug) flushRequests(inserted bool) {
	rqs := p.rqs
	p.rqs, p.spare = p.spare[:0], nil
	for i, rq := range rqs {
		if q := rq.q; q.traced&unplugKinds != 0 && !hasQueue(rqs[:i], q) {
			p.traceUnplug(q, rqs[i:], inserted || q.lim.Elevator)
		}
	}
	for i, rq := range rqs {
		rqs[i] = nil
		rq.q.dispatch(rq)
	}
	p.spare = rqs[:0]
}

// traceUnplug reports block_unplug with the number of rqs for q, and with
// inserted, block_rq_insert for each of them, to q's tracer.
func (p *Plug) traceUnplug(q *Queue, rqs []*Request, inserted bool) {
	n := 0
	for _, o := range rqs {
		if o.q == q {
			n++
		}
	}
	q.trace(TraceEvent{Kind: TraceUnplug, Count: n, Worker: p.worker || p.kthread})
	if !inserted || !q.traces(TraceRqInsert) {
		return
	}
	for _, o := range rqs {
		if o.q == q {
			q.traceRq(TraceRqInsert, o, nil)
		}
	}
}

// hasQueue reports whether one of rqs is for q. It looks from the newest, as
// the requests of one queue are usually consecutive. O(len(rqs)).
func hasQueue(rqs []*Request, q *Queue) bool {
	for i := len(rqs) - 1; i >= 0; i-- {
		if rqs[i].q == q {
			return true
		}
	}
	return false
}

// flushCallbacks models flush_plug_callbacks (v5.10): it takes the callback
// list off the plug and runs each callback, newest registration first (as
// blk_check_plugged adds to the head of cb_list), and repeats while the
// callbacks registered new ones. A callback that flushes the plug again runs
// the callbacks registered since, in that inner flush.
func (p *Plug) flushCallbacks() {
	for len(p.cbs) > 0 {
		cbs := p.cbs
		p.cbs, p.cbSpare = p.cbSpare[:0], nil
		for i := len(cbs) - 1; i >= 0; i-- {
			cb := cbs[i].cb
			cbs[i] = plugCB{}
			cb.Unplug(p)
		}
		p.cbSpare = cbs[:0]
	}
}

// CheckPlugged models blk_check_plugged (v5.10), with which a bio-based
// device defers work to the flush of the submitter's plug. With p started it
// returns the callback registered on p under key since p was last flushed;
// when there is none, it registers newCB(key) under key first and returns it.
// The callback runs once, at the next Flush or outermost Finish, before the
// plugged requests are dispatched (see PlugCallback). With p nil or not
// started it returns nil, without calling newCB: the device must do its work
// at once.
//
// key identifies the registration, as blk_plug_cb's (callback, data) pair
// does; it must be comparable (== on an incomparable key panics, as in
// context.WithValue), and is usually the device, a pointer. newCB should be a
// function value that does not capture variables, or one made once, so that
// the call allocates nothing; it may reuse callbacks from a free list. The
// plug keeps its callback list's memory across flushes, so registering
// allocates nothing in steady state. O(registered callbacks).
func (p *Plug) CheckPlugged(key any, newCB func(key any) PlugCallback) PlugCallback {
	if p == nil || p.depth == 0 {
		return nil
	}
	for i := range p.cbs {
		if p.cbs[i].key == key {
			return p.cbs[i].cb
		}
	}
	cb := newCB(key)
	p.cbs = append(p.cbs, plugCB{key: key, cb: cb})
	return cb
}

// Len returns the number of plugged requests (plug->rq_count).
func (p *Plug) Len() int { return len(p.rqs) }

// Active reports whether the plug is started.
func (p *Plug) Active() bool { return p.depth > 0 }

// Requests returns the plugged requests, oldest first. The slice and the
// requests belong to the plug: read them before the next SubmitBio, Flush or
// Finish, do not change or keep them.
func (p *Plug) Requests() []*Request { return p.rqs }

// full reports whether a plug holding n requests is full for a new request of
// q: MaxRequests if set, else the version's BLK_MAX_REQUEST_COUNT (v6.18:
// blk_plug_max_rq_count, doubled when the plugged requests are of several
// queues). O(1), or O(n) for a Version618 plug of 32 to 63 requests.
func (p *Plug) full(q *Queue, n int) bool {
	switch {
	case p.MaxRequests >= 1:
		return n >= p.MaxRequests
	case q.lim.Version < Version618:
		return n >= PlugMaxRequests
	case n < PlugMaxRequests618:
		return false
	}
	return n >= 2*PlugMaxRequests618 || !p.multipleQueues()
}

// multipleQueues reports whether the plugged requests are of more than one
// queue (blk_plug's multiple_queues). O(requests).
func (p *Plug) multipleQueues() bool {
	for _, rq := range p.rqs {
		if rq.q != p.rqs[0].q {
			return true
		}
	}
	return false
}

// merge models blk_attempt_plug_merge: try to merge the whole bio b, whose
// runs are r, into a plugged request of q. v5.10 tries back merges into the
// requests of q from newest to oldest (only the newest with NewestOnly);
// v6.18 tries one request — the newest if it is of q, else the oldest of q —
// for a back or a front merge. O(plugged requests).
func (p *Plug) merge(q *Queue, b *Bio, r *runs) mergeKind {
	if q.lim.Version >= Version618 {
		n := len(p.rqs)
		if n == 0 {
			return mergeNone
		}
		if last := p.rqs[n-1]; last.q == q {
			return last.merge(b, r, true)
		}
		for _, rq := range p.rqs {
			if rq.q == q {
				return rq.merge(b, r, true)
			}
		}
		return mergeNone
	}
	for i := len(p.rqs) - 1; i >= 0; i-- {
		rq := p.rqs[i]
		if rq.q != q {
			continue
		}
		if k := rq.merge(b, r, false); k != mergeNone {
			return k
		}
		if p.NewestOnly {
			return mergeNone
		}
	}
	return mergeNone
}

// add plugs rq (blk_add_rq_to_plug, v5.10 and v6.18): block_plug when the plug
// is empty; otherwise, if it is full or its newest request is at least
// PlugFlushSize bytes, it is flushed first — v5.10 runs the callbacks too
// (blk_flush_plug_list), v6.18 only the requests (blk_mq_flush_plug_list) —
// and block_plug follows.
func (p *Plug) add(rq *Request) {
	q := rq.q
	switch n := len(p.rqs); {
	case n == 0:
		q.trace(TraceEvent{Kind: TracePlug, Worker: p.worker || p.kthread})
	case p.worker: // held for the throttle stage
	case p.full(q, n) || p.rqs[n-1].bytes() >= PlugFlushSize:
		if q.lim.Version >= Version618 {
			p.flushRequests(false)
		} else {
			p.Flush()
		}
		q.trace(TraceEvent{Kind: TracePlug, Worker: p.worker || p.kthread})
	}
	p.rqs = append(p.rqs, rq)
}

// throttle models blk-wbt's wbt_wait (rq_qos_throttle, v6.18) for a new
// request for b on q made by the task holding p: when q throttles writes
// ([Limits.WriteThrottleDepth]) and as many of its write requests as the
// limit for b are in flight — here, waiting in p, as dispatched ones have
// completed — the task sleeps, and its plug is flushed as schedule() flushes
// it. O(plugged requests) when throttling is on, O(1) otherwise.
func (p *Plug) throttle(q *Queue, b *Bio) {
	if q.lim.WriteThrottleDepth != 0 && b.Op == OpWrite {
		p.wbtWait(q, b)
	}
}

// wbtWait is throttle's wait for a write bio on a throttling queue.
func (p *Plug) wbtWait(q *Queue, b *Bio) {
	limit := q.lim.WriteThrottleDepth
	if b.Flags&(FlagSync|FlagIdle) == FlagSync|FlagIdle {
		return
	}
	if b.Flags&FlagSync == 0 && limit > 2 {
		limit = (limit + 1) / 2 // wb_normal: REQ_SYNC is REQ_HIPRIO's, the rest get half
	}
	var inflight uint32
	for _, rq := range p.rqs {
		if rq.q == q && rq.op == OpWrite {
			inflight++
		}
	}
	if inflight >= limit {
		p.schedule()
	}
}

// SubmitBio models submit_bio (v5.10, v6.18) as the current task sees it: with
// p started and d a *Queue, b goes through the queue's plugged path (split at
// the limits, merge into a plugged request of that queue as its
// [Limits.Version] does, or a new plugged request, after a write-throttling
// sleep or flushing a full plug first; a bio with flush flags goes through the
// flush machinery instead, see [Queue]); with p started and d a PlugSubmitter
// (an md array), d.SubmitPlugged(p, b). Otherwise — no plug, a plug not
// started, or another bio-based device — it is d.Submit(b). A bio
// that fails validation completes with the error before SubmitBio returns; the
// others complete when their request is dispatched. d completes b exactly
// once. Cost on a Queue: O(vectors of b + plugged requests), plus the dispatch
// of whatever a flush sends; the per-bio and per-request paths allocate
// nothing in steady state, with a tracer set or not.
func SubmitBio(p *Plug, d Device, b *Bio) {
	if p != nil && p.depth > 0 {
		switch d := d.(type) {
		case *Queue:
			d.submit(p, b)
			return
		case PlugSubmitter:
			d.SubmitPlugged(p, b)
			return
		}
	}
	d.Submit(b)
}

// PlugSubmitter is a bio-based device that hands the submitter's plug on to the
// bios it issues, as md does: its member bios are submitted by the same task,
// under the same plug, and merge in the member queues.
type PlugSubmitter interface {
	Device
	SubmitPlugged(p *Plug, b *Bio)
}
