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
// blk_finish_plug. The zero value is a usable plug that is not started.
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

	depth int        // blk_start_plug nesting: only the outermost counts
	rqs   []*Request // plugged requests, oldest first
	spare []*Request // the other list buffer, swapped in by Flush
}

// Start models blk_start_plug (v5.10). Plugs nest: a Start while the plug is
// started only deepens it, and only the matching outermost Finish flushes, as
// a nested blk_start_plug leaves current->plug alone. O(1).
func (p *Plug) Start() { p.depth++ }

// Finish models blk_finish_plug (v5.10): it ends one Start and, when that was
// the outermost, flushes the plug. Error: ErrPlugNotStarted when the plug is
// not started (nothing changes).
func (p *Plug) Finish() error {
	if p.depth == 0 {
		return ErrPlugNotStarted
	}
	p.depth--
	if p.depth == 0 {
		p.Flush()
	}
	return nil
}

// Flush models blk_flush_plug_list (v5.10), as schedule() or a full plug calls
// it: it takes the plugged requests off the plug and dispatches them in the
// order they were plugged. Requests plugged while it runs (by a completion that
// submits) wait for the next flush. The plug stays started. O(requests) plus
// their dispatch.
func (p *Plug) Flush() {
	rqs := p.rqs
	p.rqs, p.spare = p.spare[:0], nil
	for i, rq := range rqs {
		rqs[i] = nil
		rq.q.dispatch(rq)
	}
	p.spare = rqs[:0]
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
