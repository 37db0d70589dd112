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
// bio.
//
// The stage is for one submitting task on a queue of its own: its rounds
// are released by that task's Plug.Wait and by ReleaseThrottled, and are
// not locked (a Throttle is driven by one goroutine). A queue under an md
// array, whose member bios a daemon's plug submits, or one several CPUs
// submit to, must not have one: a bio held there would wait for a Wait
// that never lists it. Data bios with flush flags go through the flush
// machinery when they are submitted, held or not (the model's writeback
// sends only empty flushes). O(1).
func (q *Queue) SetThrottle(t *Throttle, now func() float64) {
	q.thr, q.thrNow = t, now
	for i := range q.round.open {
		q.round.open[i].plug.worker = true
	}
}

// throttleRound is the kthrotld dispatch rounds being gathered, one per
// direction (the bios the throttle lets go at one pending-timer tick, in
// the worker's plug; a tick's reads and writes never merge), and the
// requests of closed rounds whose ticks have not yet come.
type throttleRound struct {
	open [2]openRound // [0] reads, [1] writes
	// held are the requests of closed rounds, in tick order, with heldAt
	// their ticks.
	held   []*Request
	heldAt []float64
	// woke is when the submitter last woke from a Wait that released
	// rounds: it cannot submit before their ticks.
	woke float64
}

// openRound is one direction's round being gathered.
type openRound struct {
	open bool
	at   float64 // the tick's time, ns
	plug Plug
}

// throttleBio passes bytes [off, off+n) of the data bio b through the
// queue's throttle: the whole bio when off is 0 (blk_throtl_bio, bytes and
// one bio charged), a remainder split off the part before it otherwise
// (one bio charged, at that part's leave time). prev is the plug the part
// before went on, for a remainder. It records the part's leave time in b
// and returns the plug the part goes on in: p, the submitter's, when the
// throttle lets it go at once, else the round of its tick. A remainder of
// a held part is resubmitted by the worker: if it passes, it joins its
// front part's round.
func (q *Queue) throttleBio(p, prev *Plug, b *Bio, off uint32) *Plug {
	d := 0
	if b.Op != OpRead {
		d = 1
	}
	r := &q.round.open[d]
	var at float64
	if off == 0 {
		at = max(q.thrNow(), q.round.woke)
		b.leaveNS = q.thr.Submit(at, d == 1, uint64(b.size), false)
	} else {
		at = b.leaveNS
		b.leaveNS = q.thr.Submit(at, d == 1, 0, true)
	}
	if b.leaveNS <= at {
		if off > 0 && prev == &r.plug {
			return prev // the worker's own resubmission, in its round
		}
		q.releaseDue(at)
		return p
	}
	if r.open && r.at != b.leaveNS {
		q.closeRound(d)
	}
	if !r.open {
		r.open, r.at = true, b.leaveNS
		r.plug.Start()
	}
	if p != nil && p.depth > 0 && !slices.Contains(p.rounds, q) {
		p.rounds = append(p.rounds, q)
	}
	return &r.plug
}

// throttled ends the submission of a bio: a submitter without a started
// plug has its rounds go at once.
func (q *Queue) throttled(p *Plug) {
	if p == nil || p.depth == 0 {
		q.ReleaseThrottled()
	}
}

// closeRound ends direction d's open round, if any: its requests are held
// until its tick, among the other held requests in tick order.
func (q *Queue) closeRound(d int) {
	r, o := &q.round, &q.round.open[d]
	if !o.open {
		return
	}
	o.open = false
	o.plug.depth = 0
	i := len(r.heldAt)
	for i > 0 && r.heldAt[i-1] > o.at {
		i--
	}
	n := len(o.plug.rqs)
	r.held = slices.Insert(r.held, i, o.plug.rqs...)
	r.heldAt = slices.Insert(r.heldAt, i, slices.Repeat([]float64{o.at}, n)...)
	clear(o.plug.rqs)
	o.plug.rqs = o.plug.rqs[:0]
}

// releaseDue closes the open rounds whose tick has come by now and
// dispatches the held requests whose tick is at or before now, in order,
// the worker's plug flushed for each tick (block_unplug).
func (q *Queue) releaseDue(now float64) {
	for d := range q.round.open {
		if o := &q.round.open[d]; o.open && o.at <= now {
			q.closeRound(d)
		}
	}
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
		if q.lim.Elevator && q.traces(TraceRqInsert) {
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

// ReleaseThrottledUntil lets time pass until t (simulated nanoseconds):
// the rounds whose ticks have come by then are dispatched, in tick order,
// as the pending timer would have fired for them while the submitter
// slept without going to sleep for I/O (a writer's pause in
// balance_dirty_pages). O(held requests due) plus their dispatch.
func (q *Queue) ReleaseThrottledUntil(t float64) { q.releaseDue(t) }

// ReleaseThrottled lets time pass until the throttle stage holds nothing:
// the open rounds close and every held request is dispatched, in tick
// order. A caller whose clock moves on between operations calls it, as the
// host runner waits for the device to be idle. O(held requests) plus their
// dispatch.
func (q *Queue) ReleaseThrottled() { q.releaseDue(math.Inf(1)) }

// Wait models the task going to sleep for I/O (io_schedule, whose
// sched_submit_work flushes the plug): Flush, and then, as time passes
// while the task sleeps, every throttle round its bios went into goes out
// (Queue.SetThrottle), and the task wakes no earlier than the last of
// their ticks. The model's wait sites call it before they wait.
func (p *Plug) Wait() {
	p.Flush()
	for len(p.rounds) > 0 {
		q := p.rounds[len(p.rounds)-1]
		p.rounds = p.rounds[:len(p.rounds)-1]
		for d := range q.round.open {
			if o := &q.round.open[d]; o.open {
				q.round.woke = max(q.round.woke, o.at)
			}
		}
		if n := len(q.round.heldAt); n > 0 {
			q.round.woke = max(q.round.woke, q.round.heldAt[n-1])
		}
		q.ReleaseThrottled()
	}
}
