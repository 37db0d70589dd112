package engine

import (
	"fmt"
	"math/bits"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
)

// eventTap follows one CPU's event counters from operation to operation:
// seen holds the counts as of the last sync or take, and take prices the
// kinds that moved since (CPU.TakeMoved: the tap is the CPU's one follower),
// reading only those, with no copy of the counters beyond sync's.
type eventTap struct {
	cpu  *bufcache.CPU
	seen bufcache.Counters
}

// newEventTap starts a tap of cpu at its current counts. It panics when
// cpu already has a tap (CPU.Follow): a programming error, which would
// leave each tap blind to what the other took.
func newEventTap(cpu *bufcache.CPU) eventTap {
	if !cpu.Follow() {
		panic(fmt.Sprintf("engine: a second event tap on cpu%d: a CPU's moved kinds (bufcache.CPU.TakeMoved) have one follower", cpu.ID()))
	}
	return eventTap{cpu: cpu, seen: cpu.Events()}
}

// sync brings seen up to the CPU's counts, leaving out of the next take what
// was counted between operations. O(kinds that moved).
func (t *eventTap) sync() {
	for m := t.cpu.TakeMoved(); m != 0; m &= m - 1 {
		e := bufcache.Event(bits.TrailingZeros64(m))
		t.seen[e] = t.cpu.Event(e)
	}
}

// take returns the simulated nanoseconds under p of what the CPU counted
// since the last sync or take — SimNS of the counters' difference, to the
// bit: the kinds in the same order, those that did not move adding nothing
// — and the bh LRU lookups and hits among it, and brings seen up to date.
// O(kinds that moved), no allocation.
func (t *eventTap) take(p *timing.Profile) (ns float64, lruLook, lruHits uint64) {
	look, hits := t.seen[bufcache.EvLRULookup], t.seen[bufcache.EvLRUHit]
	for m := t.cpu.TakeMoved(); m != 0; m &= m - 1 {
		e := bufcache.Event(bits.TrailingZeros64(m))
		if now := t.cpu.Event(e); now != t.seen[e] {
			ns += float64(now-t.seen[e]) * p.NS[e]
			t.seen[e] = now
		}
	}
	return ns, t.seen[bufcache.EvLRULookup] - look, t.seen[bufcache.EvLRUHit] - hits
}

// peek returns the simulated nanoseconds under p of what the CPU counted
// since the last sync or take, as take would, without moving seen: the
// CPU time of a call so far. O(kinds that moved), no allocation.
func (t *eventTap) peek(p *timing.Profile) (ns float64) {
	for m := t.cpu.Moved(); m != 0; m &= m - 1 {
		e := bufcache.Event(bits.TrailingZeros64(m))
		if now := t.cpu.Event(e); now != t.seen[e] {
			ns += float64(now-t.seen[e]) * p.NS[e]
		}
	}
	return ns
}

// copied returns the bytes the CPU copied since the last sync or take
// (bufcache.EvCopyByte): the stream of its work that the memory bus's
// load stretches (memBus). O(1).
func (t *eventTap) copied() uint64 {
	return t.cpu.Event(bufcache.EvCopyByte) - t.seen[bufcache.EvCopyByte]
}
