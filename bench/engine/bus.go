package engine

import (
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
)

// memBus is the machine's memory bus on the clock: what the bound solves
// in closed form for a whole run (timing.Profile.Contended), kept as the
// run goes.
// Every pass over data moves bytes through the memory controller — a
// CPU's copy (copy_from_user or copy_to_user: a load and a store of each
// byte, bufcache.EvCopyByte counting it once), a clear of a read from
// /dev/zero (a store of each byte, RunOptions.FromZero) and a request's
// DMA (one transfer of its bytes) — each byte taking timing.ParamMemByte
// of the bus. Its utilisation ρ is the bus work so far over the time it spans:
// the run's start to the later of the moment asked about and the end of
// the last work put on it (a request's completion may lie ahead of the
// CPU that placed it). A CPU's work is then stretched as Contended
// stretches a CPU's demand: the part that waits for DRAM — its copies and
// clears, and the profile's memory-stall share of the rest (timing.Profile.StallNS) —
// takes 1 / (1 − ρ) as long (timing.Stretched). In a run whose loads hold
// steady ρ tends to Contended's M / T; a run whose load changes sees the
// average so far, not the load of the moment. With a profile whose
// memory-stall share is 0 (the x86 ones) nothing is stretched and the
// clock is the plain one.
//
// The bus has no queue of its own: ρ is held below maxBusShare, the
// bound a run whose bus work outgrew its time (which Contended's fixed
// point cannot reach) would otherwise pass.
type memBus struct {
	p *timing.Profile
	// bytes is the bytes moved so far (timing.ParamMemByte's quantity in
	// the run's memory load); until is the end of the last work on it.
	bytes, until float64
}

// maxBusShare bounds the bus's utilisation (see memBus).
const maxBusShare = 0.95

// share is ρ at t: the bus's work so far over the time it spans. O(1).
func (b *memBus) share(t float64) float64 {
	span := max(t, b.until)
	if span <= 0 || b.bytes == 0 {
		return 0
	}
	return min(b.bytes*b.p.NS[timing.ParamMemByte]/span, maxBusShare)
}

// streams are the passes over data in a piece of CPU work, which move
// bytes through the memory controller at its pace: bytes copied
// (copy_from_user or copy_to_user, bufcache.EvCopyByte: a load and a store
// each) and bytes cleared (read_zero's clear_user of a read from
// /dev/zero, timing.ParamZeroByte: a store each) and, for raid5d's work
// (mdTap), the bytes of RAID6 parity computed (timing.ParamParityByte) and
// every byte its passes move.
type streams struct {
	copied, zeroed, parity uint64
	moved                  float64
}

// ns is the CPU time of s's passes under p.
func (s streams) ns(p *timing.Profile) float64 {
	return float64(s.copied)*p.NS[timing.Ev(bufcache.EvCopyByte)] + float64(s.zeroed)*p.NS[timing.ParamZeroByte] +
		float64(s.parity)*p.NS[timing.ParamParityByte]
}

// bytes is the bytes s's passes move through the memory controller.
func (s streams) bytes() float64 { return 2*float64(s.copied) + float64(s.zeroed) + s.moved }

// stretch returns the time of ns of CPU work from at whose passes over
// data are s, at the bus's load at at (see memBus). It changes nothing.
// O(1).
func (b *memBus) stretch(at, ns float64, s streams) float64 {
	stall := b.p.StallNS(ns, s.ns(b.p))
	if stall == 0 {
		return ns
	}
	return timing.Stretched(ns, stall, b.share(at))
}

// cpu is stretch for CPU work that the clock places now: it also puts its
// passes over data on the bus until the work's end. O(1).
func (b *memBus) cpu(at, ns float64, s streams) float64 {
	ns = b.stretch(at, ns, s)
	if n := s.bytes(); n > 0 {
		b.bytes += n
		b.until = max(b.until, at+ns)
	}
	return ns
}

// dma puts a request's transfer of n bytes, which ends at end, on the bus.
// O(1).
func (b *memBus) dma(n uint64, end float64) {
	if n > 0 {
		b.bytes += float64(n)
		b.until = max(b.until, end)
	}
}
