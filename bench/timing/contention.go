package timing

import (
	"math"

	"github.com/bhsim/bhsim/bufcache"
)

// Contention is the state of a run's memory bus under a profile with a
// memory-stall share (ParamMemStall): the bus's busy share of the run's
// time, from which every CPU's time follows (BusyNS). The zero Contention is
// an idle bus: every load takes its demand.
type Contention struct {
	// Utilisation is ρ = M / T: the memory load's demand M over the run's
	// time T. 0 when the profile has no memory-stall share or the run no
	// memory load.
	Utilisation float64
}

// Contended solves a run's memory contention under p.
//
// A CPU's demand D (BusyNS) splits into the work that waits for DRAM, S,
// and the rest, D − S. S holds the CPU's streams over data — copies
// (bufcache.EvCopyByte), clears (ParamZeroByte) and RAID6 parity
// (ParamParityByte), which run at the bus's pace — and the memory-stall
// share k of everything else: the cache misses of kernel code that walks
// structures the data streams have pushed out of the caches. Every access
// that reaches DRAM queues at the memory controller behind the others, so
// with the bus busy a share ρ of the time it takes 1 / (1 − ρ) as long as
// on an idle bus (the M/M/1 approximation of a memory controller's queue).
// A CPU then needs
//
//	t(ρ) = (D − S) + S / (1 − ρ)
//
// and the run, whose time T is the longest of its loads' times, has
// ρ = M / T. For each CPU, t(M/T) ≤ T holds exactly when T is at least the
// larger root of (T − (D − S))·(T − M) = S·T, so T is the largest of those
// roots and of the other loads' demands (the memory load's own M among
// them): a closed form, no iteration. With k = 0 and no streams the root is
// max(D, M) and Contended reduces to the plain bottleneck; with streams a
// CPU that copies can no longer run at its idle-bus speed while the DMA and
// the other CPUs keep the bus busy, which the plain model lets it.
//
// Returns the zero Contention when p's share is 0 or loads have no
// LoadMemory load. O(loads · parameters).
func (p *Profile) Contended(loads []Load) Contention {
	k := p.NS[ParamMemStall]
	mem := -1
	for i := range loads {
		if loads[i].Kind == LoadMemory {
			mem = i
			break
		}
	}
	if k <= 0 || mem < 0 {
		return Contention{}
	}
	m := p.BusyNS(&loads[mem])
	if m <= 0 {
		return Contention{}
	}
	t := 0.0
	for i := range loads {
		l := &loads[i]
		d := p.BusyNS(l)
		if l.Kind == LoadCPU {
			s := p.stallNS(l)
			b := d + m // (D − S) + S + M
			d = (b + math.Sqrt(b*b-4*(d-s)*m)) / 2
		}
		t = max(t, d)
	}
	return Contention{Utilisation: m / t}
}

// BusyNS returns l's time under p at c's memory load: a CPU's demand with
// its memory-bound part stretched by 1 / (1 − ρ) (see Contended), any other
// load's demand (Profile.BusyNS).
func (c Contention) BusyNS(p *Profile, l *Load) float64 {
	d := p.BusyNS(l)
	if c.Utilisation == 0 || l.Kind != LoadCPU {
		return d
	}
	return Stretched(d, p.stallNS(l), c.Utilisation)
}

// Stretched is the time of d ns of CPU work, s ns of it waiting for DRAM
// (its streams over data and its memory-stall share of the rest: see
// Contended), on a memory bus busy a share rho of the time: the waits take
// 1 / (1 − rho) as long as on an idle bus, d − s + s / (1 − rho).
// Precondition: 0 ≤ s ≤ d, 0 ≤ rho < 1. O(1).
func Stretched(d, s, rho float64) float64 {
	if s == 0 || rho == 0 {
		return d
	}
	return d - s + s/(1-rho)
}

// StallNS is the part of d ns of CPU work that waits for DRAM under p: its
// streams over data, stream ns of it, and p's memory-stall share of the
// rest (Contended); 0 when p has no memory-stall share, which keeps the
// plain bottleneck model. O(1).
func (p *Profile) StallNS(d, stream float64) float64 {
	k := p.NS[ParamMemStall]
	if k <= 0 {
		return 0
	}
	return stream + k*(d-stream)
}

// streamParams are the CPU work that moves data at the memory bus's pace.
var streamParams = [...]Param{Ev(bufcache.EvCopyByte), ParamZeroByte, ParamParityByte}

// stallNS is the part of l's demand under p that waits for DRAM: its streams
// and p's memory-stall share of the rest, per server (StallNS).
func (p *Profile) stallNS(l *Load) float64 {
	stream := 0.0
	for _, q := range streamParams {
		stream += l.Q[q] * p.NS[q]
	}
	if l.Servers > 1 {
		stream /= l.Servers
	}
	return p.StallNS(p.BusyNS(l), stream)
}
