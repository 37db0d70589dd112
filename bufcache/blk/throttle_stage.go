package blk

import (
	"math"
	"slices"
)

// The throttle stage of a queue: blk-throttle in front of the request layer,
// as Linux 6.18 has it (block/blk-throttle.c), deciding which requests the
// bios form. A bio its rule lets go at once goes on to the submitter's plug;
// one it holds waits in the throttle, and the pending timer's round that
// lets it go hands it to the kthrotld worker, which submits everything that
// round released under a plug of its own (blk_throtl_dispatch_work_fn). So
// the bios of one round merge with each other, and with nothing else: a
// dd's writeback under a byte rule leaves in rounds of one slice's
// allowance, each round a few requests of up to the queue's maximum and a
// remainder, where without the rule the task's plug would have merged the
// whole stream into maximum-sized requests.
//
// The model's block layer is synchronous — a request completes when it is
// dispatched — and its submitter runs ahead of the rounds' ticks. So a
// round is gathered while bios of its tick arrive, then held, its requests
// formed, until its tick comes: its requests are dispatched once the
// submitter's time has reached the tick (checked when a bio passes at once
// and when the submitter's plug is flushed), when the submitter goes to
// sleep for I/O (Plug.Wait: time passes while it sleeps), or when its
// caller lets time pass (Queue.ReleaseThrottled); a submitter without a
// started plug has its rounds go at once. Requests therefore reach the
// device in the order of their ticks, after the task's own, and each
// carries its ready time (TraceEvent.ReadyNS): when the last of its bio
// parts left the throttle, the time it can reach the disk.
//
// The worker's plug does not sleep in write-back throttling (wbt): the
// recordings show only the task's sleeps — a scattered 4 KiB write mix
// under a 1 MiB/s rule inserted 16 requests on Linux 6.18, the one sleep of
// the task's plug, while its rounds of about 25 requests each inserted none.

// SetThrottle puts t in front of q's request layer (see the comment above):
// every data bio is checked against t when it is submitted, at the
// simulated time now returns (nanoseconds), and its parts the request
// layer splits off are checked as 6.18 checks a split's remainder. now is
// called for each data bio submitted and at each flush of a plug its bios
// went through; it must not submit. Empty flush bios are not checked here:
// their time is when the writes before them completed, which only the
// caller's clock knows, so the caller passes them through t itself
// (Throttle.Submit). A nil t removes the stage. Call it before the first
// bio. O(1).
func (q *Queue) SetThrottle(t *Throttle, now func() float64) {
	q.thr, q.thrNow = t, now
	q.round.plug.worker = true
}

// throttleRound is the kthrotld dispatch round being gathered (the bios
// the throttle lets go at one pending-timer tick, in the worker's plug)
// and the rounds gathered whose ticks have not yet come.
type throttleRound struct {
	open bool
	at   float64 // the tick's time, ns
	plug Plug
	// held are the requests of closed rounds, in tick order, with heldAt
	// their ticks.
	held   []*Request
	heldAt []float64
}

// throttleBio passes bytes [off, off+n) of the data bio b through the
// queue's throttle: the whole bio when off is 0 (blk_throtl_bio, bytes and
// one bio charged), a remainder split off the part before it otherwise
// (one bio charged, at that part's leave time). It records the part's leave
// time in b and returns the plug the part goes on in: p when the throttle
// lets it go at once, else the round of its tick.
func (q *Queue) throttleBio(p *Plug, b *Bio, off uint32) *Plug {
	write := b.Op != OpRead
	var at float64
	if off == 0 {
		at = q.thrNow()
		b.leaveNS = q.thr.Submit(at, write, uint64(b.size), false)
	} else {
		at = b.leaveNS
		b.leaveNS = q.thr.Submit(at, write, 0, true)
	}
	if b.leaveNS <= at {
		if q.round.open && q.round.at <= at {
			q.closeRound() // its tick has come
		}
		q.dispatchHeld(at)
		return p
	}
	if q.round.open && q.round.at != b.leaveNS {
		q.closeRound()
	}
	if !q.round.open {
		q.round.open, q.round.at = true, b.leaveNS
		q.round.plug.Start()
	}
	if p != nil && p.depth > 0 && !slices.Contains(p.rounds, q) {
		p.rounds = append(p.rounds, q)
	}
	return &q.round.plug
}

// throttled ends the submission of a part: a submitter without a started
// plug has its round go at once.
func (q *Queue) throttled(p *Plug) {
	if q.round.open && (p == nil || p.depth == 0) {
		q.ReleaseThrottled()
	}
}

// closeRound ends the open round, if any: its requests are held until
// its tick.
func (q *Queue) closeRound() {
	r := &q.round
	if !r.open {
		return
	}
	r.open = false
	r.plug.depth = 0
	for _, rq := range r.plug.rqs {
		r.held, r.heldAt = append(r.held, rq), append(r.heldAt, r.at)
	}
	r.plug.rqs = r.plug.rqs[:0]
}

// dispatchHeld dispatches the held requests whose tick is at or before
// now, in order, the worker's plug flushed for each round (block_unplug).
func (q *Queue) dispatchHeld(now float64) {
	r := &q.round
	n := 0
	for n < len(r.held) && r.heldAt[n] <= now {
		n++
	}
	if n == 0 {
		return
	}
	rqs, ats := r.held[:n], r.heldAt[:n]
	for i := 0; i < n; {
		j := i + 1
		for j < n && ats[j] == ats[i] {
			j++
		}
		q.trace(TraceEvent{Kind: TraceUnplug, Count: j - i, Worker: true})
		if q.lim.Elevator && q.tracer != nil {
			for _, rq := range rqs[i:j] {
				q.traceRq(TraceRqInsert, rq, nil)
			}
		}
		for _, rq := range rqs[i:j] {
			q.dispatch(rq)
		}
		i = j
	}
	k := copy(r.held, r.held[n:])
	clear(r.held[k:])
	r.held, r.heldAt = r.held[:k], r.heldAt[:copy(r.heldAt, r.heldAt[n:])]
}

// ReleaseThrottled lets time pass until the throttle stage holds nothing:
// the open round closes and every held request is dispatched, in tick
// order. A caller whose clock moves on between operations calls it, as the
// host runner waits for the device to be idle. O(held requests) plus their
// dispatch.
func (q *Queue) ReleaseThrottled() {
	q.closeRound()
	q.dispatchHeld(math.Inf(1))
}

// releaseDue dispatches the held requests whose tick the submitter's time
// has reached: at the flush of a plug whose bios went into rounds.
func (q *Queue) releaseDue() {
	q.dispatchHeld(q.thrNow())
}

// Wait models the task going to sleep for I/O (io_schedule, whose
// sched_submit_work flushes the plug): Flush, and then, as time passes
// while the task sleeps, every throttle round its bios went into goes out
// (Queue.SetThrottle). The model's wait sites call it before they wait.
func (p *Plug) Wait() {
	p.Flush()
	for len(p.rounds) > 0 {
		q := p.rounds[len(p.rounds)-1]
		p.rounds = p.rounds[:len(p.rounds)-1]
		q.ReleaseThrottled()
	}
}
