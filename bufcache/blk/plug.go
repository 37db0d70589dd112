package blk

// Plug flush thresholds (include/linux/blkdev.h).
const (
	// PlugMaxRequests is BLK_MAX_REQUEST_COUNT up to v5.15, the kernels of the
	// Helios4 thread: a plug holding this many requests is flushed before it
	// takes another.
	PlugMaxRequests = 16
	// PlugMaxRequests516 is BLK_MAX_REQUEST_COUNT from about v5.16 (Jens
	// Axboe's plug rework, quoted from memory).
	PlugMaxRequests516 = 32
	// PlugFlushSize is BLK_PLUG_FLUSH_SIZE: a plug whose newest request is at
	// least this many bytes is flushed before it takes another request.
	PlugFlushSize = 128 << 10
)

// Plug models struct blk_plug (v5.10): the per-task list of requests that
// wait, and may grow by back merges, between blk_start_plug and
// blk_finish_plug, and the callbacks bio-based devices register on it
// (cb_list, see CheckPlugged) to defer their own work to its flush. The zero
// value is a usable plug that is not started.
//
// A Plug belongs to one simulated CPU (the task running on it) and is not safe
// for concurrent use; the queues it holds requests for may be shared.
type Plug struct {
	// MaxRequests is the request-count flush threshold; values below 1 mean
	// PlugMaxRequests (16, v5.10). Set PlugMaxRequests516 for v5.16 and later.
	MaxRequests int
	// NewestOnly selects the v5.16+ merge attempt, which tries only the
	// newest plugged request of the bio's queue ("block: only check previous
	// entry for plug merge attempt", quoted from memory). False is v5.10, which
	// tries the plugged requests of that queue from newest to oldest.
	NewestOnly bool

	depth   int        // blk_start_plug nesting: only the outermost counts
	rqs     []*Request // plugged requests, oldest first
	spare   []*Request // the other list buffer, swapped in by Flush
	cbs     []plugCB   // registered callbacks (cb_list), oldest first
	cbSpare []plugCB   // the other callback buffer, swapped in by Flush
}

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

// Flush models blk_flush_plug_list (v5.10), as schedule() or a full plug calls
// it: first it runs the registered callbacks (flush_plug_callbacks), then it
// takes the plugged requests off the plug — including those the callbacks
// plugged — and dispatches them in the order they were plugged. Requests
// plugged while they are dispatched (by a completion that submits) wait for
// the next flush. The plug stays started. O(callbacks + requests) plus their
// work and dispatch.
func (p *Plug) Flush() {
	p.flushCallbacks()
	rqs := p.rqs
	p.rqs, p.spare = p.spare[:0], nil
	for i, rq := range rqs {
		rqs[i] = nil
		rq.q.dispatch(rq)
	}
	p.spare = rqs[:0]
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

// maxRequests is the request-count threshold in force.
func (p *Plug) maxRequests() int {
	if p.MaxRequests < 1 {
		return PlugMaxRequests
	}
	return p.MaxRequests
}

// merge models blk_attempt_plug_merge (v5.10): try to back-merge the whole
// bio b, whose runs are r, into a plugged request of q, newest first. Front
// merges are not modelled. O(plugged requests).
func (p *Plug) merge(q *Queue, b *Bio, r *runs) bool {
	for i := len(p.rqs) - 1; i >= 0; i-- {
		rq := p.rqs[i]
		if rq.q != q {
			continue
		}
		if rq.backMerge(b, r) {
			return true
		}
		if p.NewestOnly {
			return false
		}
	}
	return false
}

// add plugs rq, first flushing the plug if it already holds MaxRequests
// requests or its newest request is at least PlugFlushSize bytes
// (blk_mq_submit_bio's plug branch with blk_add_rq_to_plug, v5.10).
func (p *Plug) add(rq *Request) {
	if n := len(p.rqs); n > 0 && (n >= p.maxRequests() || p.rqs[n-1].bytes() >= PlugFlushSize) {
		p.Flush()
	}
	p.rqs = append(p.rqs, rq)
}

// SubmitBio models submit_bio (v5.10) as the current task sees it: with p
// started and d a *Queue, b goes through the queue's plugged path (split at the
// limits, back-merge into a plugged request of that queue, or a new plugged
// request, flushing a full plug first); with p started and d a PlugSubmitter
// (an md array), d.SubmitPlugged(p, b). Otherwise — no plug, a plug not
// started, or another bio-based device — it is d.Submit(b). A bio
// that fails validation completes with the error before SubmitBio returns; the
// others complete when their request is dispatched. d completes b exactly
// once. Cost on a Queue: O(vectors of b + plugged requests), plus the dispatch
// of whatever a flush sends; a back merge allocates nothing in steady state.
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
