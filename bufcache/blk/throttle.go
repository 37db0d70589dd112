package blk

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// DefaultHZ is the jiffy rate a [Throttle] counts in when none is given:
// CONFIG_HZ=250, the host kernel's (and Debian's) configuration.
const DefaultHZ = 250

// ThrottleRules are the blk-throttle limits of one device's root group: what
// cgroup v1's blkio.throttle.{read,write}_{bps,iops}_device files (or v2's
// io.max) set. A zero field is no rule in that direction.
type ThrottleRules struct {
	// ReadBPS and WriteBPS are bytes per second.
	ReadBPS, WriteBPS uint64
	// ReadIOPS and WriteIOPS are bios per second.
	ReadIOPS, WriteIOPS uint32
}

// Any reports whether some rule is set.
func (r ThrottleRules) Any() bool {
	return r.ReadBPS != 0 || r.WriteBPS != 0 || r.ReadIOPS != 0 || r.WriteIOPS != 0
}

// ErrThrottleHZ is NewThrottle's error for a jiffy rate outside 24..10000
// (the kernel's CONFIG_HZ choices are 100, 250, 300 and 1000).
var ErrThrottleHZ = errors.New("blk: throttle HZ must be from 24 to 10000")

// Throttle models blk-throttle (block/blk-throttle.c, Linux 6.18) for the
// bios of one device's root group — the group a cgroup v1 rule on the
// device's MAJ:MIN in the blkio root applies to, and the one the flusher's
// writeback is charged to there. It answers one question: when does a bio
// submitted at a given time leave the throttle for the request layer?
//
// The model keeps, per direction, what the kernel's throtl_grp keeps: a
// slice (start and end in jiffies; 100 ms, DFL_THROTL_SLICE = HZ/10), the
// bytes and bios dispatched in it, and a FIFO of waiting bios. A bio is
// checked when it arrives with nothing waiting (tg_within_limit) and
// otherwise when it reaches the head of the queue; the allowance is the rate
// times the slice's elapsed jiffies rounded up to whole slices, so the first
// bios of a fresh slice pass at once (a burst of one slice's worth); a bio
// over the allowance waits the jiffies its excess needs (at least one, and
// for iops at least HZ/limit+1), on the pending timer, which the timer
// wheel fires one jiffy after the expiry it is given (more for expiries past
// 63 jiffies; the throttle arms it at most 8 slices ahead). Dispatching a bio
// charges it and trims the slice once two slices have passed, keeping one.
// Bytes are charged once per bio; a bio the request layer splits charges
// one more bio per part ([Throttle.Submit] with split set), as 6.18's
// BIO_BPS_THROTTLED rule does. An empty flush bio is a write of no bytes:
// an iops rule counts it. Below HZ/(HZ/10) = 10 iops a slice allows no
// whole bio, and the trim then forgives every bio dispatched
// (throtl_trim_iops), so such a rule lets more through than it names: under the
// host kernel's 5 iops rule the second of a run of fsyncs passed at once
// after the first had waited 208 ms, and the model's does the same.
//
// Simplifications, each small against the time it paces: the model's
// jiffies are 0 at time 0 (the kernel's phase is arbitrary); each bio's
// leave time is computed when it is submitted, so a bio that arrives while
// others wait has its bytes charged when it reaches the head instead of on
// arrival; the two directions do not share the pending timer (in the
// kernel, a read's timer may let a ready write go a jiffy early); the
// kthrotld worker that issues released bios costs no time; a rule is in
// place from before the first bio, so the first bio starts a fresh slice.
//
// A Throttle is driven by one goroutine. Submit allocates nothing.
type Throttle struct {
	hz, slice int64 // jiffies per second, jiffies per slice
	tickNS    float64
	dir       [2]throttleDir // [0] reads, [1] writes
}

// throttleDir is one direction's state (struct throtl_grp's [rw] fields).
type throttleDir struct {
	bps  uint64 // 0: no rule
	iops uint32 // 0: no rule

	started              bool  // a slice exists (before the first bio it does not)
	sliceStart, sliceEnd int64 // jiffies, inclusive
	bytesDisp, ioDisp    int64

	// lastLeave is when the last bio left (ns); lastTick reports whether it
	// left on a timer tick (the queue was not empty), lastJiffy that tick.
	// any reports whether a bio has passed.
	lastLeave float64
	lastTick  bool
	lastJiffy int64
	any       bool
}

// NewThrottle returns the throttle of rules at hz jiffies per second (0
// means DefaultHZ). Errors: ErrThrottleHZ. O(1).
func NewThrottle(rules ThrottleRules, hz int) (*Throttle, error) {
	if hz == 0 {
		hz = DefaultHZ
	}
	if hz < 24 || hz > 10000 {
		return nil, fmt.Errorf("%w: got %d", ErrThrottleHZ, hz)
	}
	t := &Throttle{hz: int64(hz), slice: int64(hz) / 10, tickNS: 1e9 / float64(hz)}
	t.dir[0].bps, t.dir[0].iops = rules.ReadBPS, rules.ReadIOPS
	t.dir[1].bps, t.dir[1].iops = rules.WriteBPS, rules.WriteIOPS
	return t, nil
}

// Submit passes one bio through the throttle: a read or a write (writes
// include flushes) of bytes, submitted at ns nanoseconds, and returns when
// it leaves for the request layer (at >= the submission). split marks a
// further part of the bio submitted just before it, which the request layer
// split off: it charges one bio and no bytes, and the kernel resubmits it
// when the part before it has left, so it is submitted then. Submissions of
// one direction should come in time order: one before the last bio's
// leave time waits behind it if that bio waited (it is queued), and is
// taken as submitted at that leave time if it passed at once. Models blk_throtl_bio, tg_within_limit, tg_dispatch_time,
// throtl_pending_timer_fn and throtl_trim_slice (6.18). Amortised O(1) per
// bio plus the timer re-arms of waits over 8 slices.
func (t *Throttle) Submit(ns float64, write bool, bytes uint64, split bool) float64 {
	d := &t.dir[0]
	if write {
		d = &t.dir[1]
	}
	if d.any && ns < d.lastLeave && (split || !d.lastTick) {
		ns = d.lastLeave // a split part, or a submission out of order
	}
	if d.iops == 0 && (d.bps == 0 || split) {
		return ns // blk_should_throtl: no rule counts this bio
	}
	b := throttleBio{bytes: bytes, bpsDone: split || d.bps == 0}
	now, queued := t.jiffy(ns), d.any && ns < d.lastLeave
	if queued {
		// It waits behind the bio that left last, and is checked as the
		// new head in the same dispatch round.
		now = d.lastJiffy
	}
	leave, j := ns, now
	if t.dispatchTime(d, now, &b, queued) == 0 {
		d.ioDisp++
		t.trim(d, now)
		if queued {
			leave = float64(now) * t.tickNS
		}
	} else {
		j = t.wait(d, now, &b)
		leave = float64(j) * t.tickNS
	}
	d.any, d.lastLeave, d.lastTick, d.lastJiffy = true, leave, leave != ns || queued, j
	return leave
}

// throttleBio is the state of the bio being throttled: its size and
// whether its bytes are charged (BIO_TG_BPS_THROTTLED, or a split part's
// BIO_BPS_THROTTLED).
type throttleBio struct {
	bytes   uint64
	bpsDone bool
}

// wait queues b at jiffy now and returns the jiffy of the timer tick that
// dispatches it: tg_update_disptime, throtl_schedule_pending_timer and the
// pending timer's rounds, each checking b again (tg_dispatch_time) until it
// passes; then b is charged (throtl_charge_iops_bio) and the slice trimmed.
func (t *Throttle) wait(d *throttleDir, now int64, b *throttleBio) int64 {
	disp := now + t.dispatchTime(d, now, b, true)
	for inTimer := false; ; inTimer = true {
		fire := t.timerFire(now, min(disp, now+8*t.slice), inTimer)
		now = fire
		if now < disp {
			continue // the timer was capped at 8 slices: re-armed
		}
		w := t.dispatchTime(d, now, b, true)
		if w == 0 {
			d.ioDisp++
			t.trim(d, now)
			return now
		}
		disp = now + t.dispatchTime(d, now, b, true)
	}
}

// timerFire is the jiffy a timer armed at jiffy now for expiry exp fires
// on: the timer wheel (kernel/time/timer.c, calc_wheel_index) rounds an
// expiry up past its level's granularity — 1 jiffy below 63 jiffies ahead
// of the wheel's clock, 8 below 504, 64 beyond — so that no timer fires
// early. The wheel's clock is now when a task arms the timer, and now+1
// when the timer's own function re-arms it (inTimer): the wheel has moved
// past the jiffy it is running.
func (t *Throttle) timerFire(now, exp int64, inTimer bool) int64 {
	delta := exp - now
	if inTimer {
		delta--
	}
	switch {
	case delta < 0:
		return now + 1
	case delta < 63:
		return exp + 1
	case delta < 504:
		return (exp>>3 + 1) << 3
	default:
		return (exp>>6 + 1) << 6
	}
}

// jiffy is the jiffy under way at ns.
func (t *Throttle) jiffy(ns float64) int64 {
	return int64(math.Floor(ns/t.tickNS + 1e-9)) // a tick's own time is its jiffy
}

// dispatchTime is tg_dispatch_time: the jiffies b must wait at jiffy now,
// checking bytes first and, once they pass, charging them and checking the
// bio count. queued says whether bios wait in this direction (then the
// slice is extended, never restarted).
func (t *Throttle) dispatchTime(d *throttleDir, now int64, b *throttleBio, queued bool) int64 {
	if d.bps != 0 && !b.bpsDone {
		t.updateSlice(d, now, queued)
		w := t.bpsWait(d, now, b.bytes)
		t.extend(d, now+w)
		if w != 0 {
			return w
		}
		b.bpsDone = true
		d.bytesDisp += int64(b.bytes)
	}
	if d.iops == 0 {
		return 0
	}
	t.updateSlice(d, now, queued)
	w := t.iopsWait(d, now)
	t.extend(d, now+w)
	return w
}

// updateSlice is tg_update_slice: a new slice when the last one is over and
// nothing waits, else the slice extended to a slice from now.
func (t *Throttle) updateSlice(d *throttleDir, now int64, queued bool) {
	if t.sliceUsed(d, now) && !queued {
		d.started, d.sliceStart, d.sliceEnd = true, now, now+t.slice
		d.bytesDisp, d.ioDisp = 0, 0
		return
	}
	t.extend(d, now+t.slice)
}

// sliceUsed is throtl_slice_used: now is outside [start, end].
func (t *Throttle) sliceUsed(d *throttleDir, now int64) bool {
	return !d.started || now < d.sliceStart || now > d.sliceEnd
}

// extend is throtl_extend_slice: the slice's end moved out to end, rounded
// up to a whole slice; never moved in.
func (t *Throttle) extend(d *throttleDir, end int64) {
	if d.sliceEnd < end {
		d.sliceEnd = roundUp(end, t.slice)
	}
}

// bpsWait is tg_within_bps_limit.
func (t *Throttle) bpsWait(d *throttleDir, now int64, size uint64) int64 {
	elapsed := now - d.sliceStart
	rnd := elapsed
	if rnd == 0 {
		rnd = t.slice
	}
	rnd = roundUp(rnd, t.slice)
	allowed, ok := t.allowed(d.bps, rnd)
	if !ok || (allowed > 0 && d.bytesDisp+int64(size) <= allowed) {
		return 0
	}
	extra := uint64(d.bytesDisp + int64(size) - allowed)
	hi, lo := bits.Mul64(extra, uint64(t.hz))
	w := int64(math.MaxInt64 / 2) // a wait past any run; the sum below cannot wrap
	if hi < d.bps {
		q, _ := bits.Div64(hi, lo, d.bps)
		w = int64(min(q, math.MaxInt64/2))
	}
	return max(w, 1) + rnd - elapsed
}

// iopsWait is tg_within_iops_limit.
func (t *Throttle) iopsWait(d *throttleDir, now int64) int64 {
	elapsed := now - d.sliceStart
	rnd := roundUp(elapsed+1, t.slice)
	allowed := min(int64(d.iops)*rnd/t.hz, math.MaxUint32)
	if allowed > 0 && d.ioDisp+1 <= allowed {
		return 0
	}
	return max(rnd-elapsed, t.hz/int64(d.iops)+1)
}

// allowed is calculate_bytes_allowed: rate × jiffies / HZ bytes, and false
// when that does not fit (the kernel then lets the bio pass).
func (t *Throttle) allowed(rate uint64, jiffies int64) (int64, bool) {
	hi, lo := bits.Mul64(rate, uint64(jiffies))
	if hi >= uint64(t.hz) {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, uint64(t.hz))
	if q > math.MaxInt64 {
		return 0, false
	}
	return int64(q), true
}

// trim is throtl_trim_slice after a bio was dispatched at jiffy now: the
// slice's end set a slice ahead and, once two whole slices have passed, all
// but one of them dropped with the bytes and bios they allowed.
func (t *Throttle) trim(d *throttleDir, now int64) {
	if t.sliceUsed(d, now) {
		return
	}
	d.sliceEnd = roundUp(now+t.slice, t.slice)
	elapsed := (now - d.sliceStart) / t.slice * t.slice
	if elapsed < 2*t.slice {
		return
	}
	elapsed -= t.slice
	var bt, it int64
	if d.bps != 0 {
		bt, _ = t.allowed(d.bps, elapsed)
		bt, d.bytesDisp = trimmed(bt, d.bytesDisp)
	}
	if d.iops != 0 {
		it, d.ioDisp = trimmed(int64(d.iops)*elapsed/t.hz, d.ioDisp)
	}
	if bt == 0 && it == 0 {
		return
	}
	d.sliceStart += elapsed
}

// trimmed takes up to allowance from disp (throtl_trim_bps and _iops): it
// returns what was taken and what is left.
func trimmed(allowance, disp int64) (taken, left int64) {
	if allowance <= 0 || disp < allowance {
		return disp, 0
	}
	return allowance, disp - allowance
}

// roundUp is x rounded up to a multiple of m (m > 0, x >= 0).
func roundUp(x, m int64) int64 { return (x + m - 1) / m * m }
