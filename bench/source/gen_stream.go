package source

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/bhsim/bhsim/bench/scenario"
)

// NewGenerator validates the configuration and returns its stream of
// records (Line 0, At 0: each I/O is issued when its CPU is free). The same
// configuration, seed included, gives the same stream every time.
//
// How the stream is drawn, so that it can be reproduced by hand: each
// stream (one, or one per CPU with PerCPU) has its own PCG
// (math/rand/v2's NewPCG(Seed, 0x9e3779b97f4a7c15+stream)); for each I/O it
// draws, in this order, the size (unless fixed), whether it is a read
// (unless ReadFraction is 0 or 1), then the offset. Integers below n use
// Lemire's multiply-and-reject on PCG outputs, fractions are the top 53
// bits of one output; the zipf ranks use rejection-inversion sampling
// (Hörmann and Derflinger, 1996), valid for every θ > 0.
func NewGenerator(cfg Generator) (IOReader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := cfg.Normalize()
	s := &genStream{cfg: g, writes: make([]int, g.CPUs)}
	_, s.maxSize = g.Size.minMax()
	if g.Size.Kind == SizeWeighted {
		sum := 0.0
		for _, w := range g.Size.Weights {
			sum += w
			s.cumul = append(s.cumul, sum)
		}
	}
	nstreams := 1
	if g.PerCPU {
		nstreams = g.CPUs
	}
	// Stream i's region is [bound(i), bound(i+1)): the device cut in
	// nstreams, each cut aligned down, so the regions do not overlap.
	per := g.DeviceSize / uint64(nstreams)
	bound := func(i int) uint64 {
		if i == nstreams {
			return g.DeviceSize
		}
		b := uint64(i) * per
		return b - b%g.Align
	}
	for i := 0; i < nstreams; i++ {
		lo, hi := bound(i), bound(i+1)
		if hi-lo < s.maxSize {
			return nil, &GenError{Key: "cpus", Field: "CPUs", Msg: fmt.Sprintf("CPU %d's region of the device, %s aligned to %s, is smaller than the largest request (%s)",
				i, scenario.FormatDDSize(hi-lo), scenario.FormatDDSize(g.Align), scenario.FormatDDSize(s.maxSize))}
		}
		st := genState{rng: rand.NewPCG(g.Seed, 0x9e3779b97f4a7c15+uint64(i)), lo: lo, hi: hi, cursor: lo}
		st.slots = (hi-lo-s.maxSize)/g.Align + 1
		switch g.Pattern {
		case GenZipf:
			st.zipf = newGenZipf(g.Theta, st.slots)
		case GenHotCold:
			st.hot = uint64(float64(st.slots) * g.HotSpace)
			st.hot = max(1, min(st.hot, st.slots))
		}
		if g.Scatter {
			st.perm = newGenPerm(st.slots, g.Seed+uint64(i))
		}
		s.streams = append(s.streams, st)
	}
	return s, nil
}

// genStream is a generator's stream.
type genStream struct {
	cfg     Generator
	streams []genState
	maxSize uint64
	cumul   []float64 // cumulative weights of a weighted size list
	n       uint64    // I/Os so far
	bytes   uint64
	writes  []int // writes since the last sync, per CPU
	sync    IO    // a sync to return next
	hasSync bool
	done    bool
}

// genState is one stream's state: its random numbers and its region.
type genState struct {
	rng            *rand.PCG
	lo, hi, cursor uint64
	slots, hot     uint64
	zipf           *genZipf
	perm           genPerm
}

// Next returns the next record, io.EOF after the last.
func (s *genStream) Next() (IO, error) {
	if s.hasSync {
		s.hasSync = false
		return s.sync, nil
	}
	if s.done {
		return IO{}, io.EOF
	}
	g := &s.cfg
	var st *genState
	cpu := int(s.n % uint64(g.CPUs))
	if g.PerCPU {
		st = &s.streams[cpu]
	} else {
		st = &s.streams[0]
	}
	// The draws, in NewGenerator's order: the size, read or write, the
	// offset.
	rec := IO{Kind: IOWrite, CPU: cpu}
	rec.Length = s.size(st)
	switch {
	case g.ReadFraction >= 1:
		rec.Kind = IORead
	case g.ReadFraction > 0 && genFloat(st.rng) < g.ReadFraction:
		rec.Kind = IORead
	}
	rec.Offset = s.offset(st, rec.Length)
	s.n++
	s.bytes += rec.Length
	if g.Count != 0 && s.n >= g.Count || g.Bytes != 0 && s.bytes >= g.Bytes {
		s.done = true
	}
	if rec.Kind == IOWrite && g.FsyncEvery > 0 {
		s.countWrite(cpu)
	}
	return rec, nil
}

// size draws the length of stream st's next I/O from the size
// distribution (no draw for a fixed size).
func (s *genStream) size(st *genState) uint64 {
	d := &s.cfg.Size
	switch d.Kind {
	case SizeFixed:
		return d.Sizes[0]
	case SizeUniform:
		k := genBelow(st.rng, (d.Max-d.Min)/d.Step+1)
		return d.Min + k*d.Step
	case SizeWeighted:
		u := genFloat(st.rng) * s.cumul[len(s.cumul)-1]
		i := 0
		for i < len(s.cumul)-1 && !(u < s.cumul[i]) {
			i++
		}
		for d.Weights[i] == 0 && i > 0 { // never pick a zero weight
			i--
		}
		return d.Sizes[i]
	}
	return 0
}

// offset draws the offset of stream st's next I/O, of length bytes, by
// the pattern: the stream's cursor (back to its start when the I/O would
// pass its end), or an aligned slot of its region, permuted with Scatter.
func (s *genStream) offset(st *genState, length uint64) uint64 {
	g := &s.cfg
	var slot uint64
	switch g.Pattern {
	case GenSequential:
		if st.cursor+length > st.hi {
			st.cursor = st.lo
		}
		off := st.cursor
		st.cursor += length
		return off
	case GenRandom:
		slot = genBelow(st.rng, st.slots)
	case GenZipf:
		slot = st.zipf.sample(st.rng) - 1
	case GenHotCold:
		if st.hot == st.slots || genFloat(st.rng) < g.HotIO {
			slot = genBelow(st.rng, st.hot)
		} else {
			slot = st.hot + genBelow(st.rng, st.slots-st.hot)
		}
	}
	if g.Scatter {
		slot = st.perm.apply(slot)
	}
	return st.lo + slot*g.Align
}

// countWrite counts a write of CPU cpu and, every FsyncEvery writes of
// it, queues its fsync (or fdatasync) as the next record.
func (s *genStream) countWrite(cpu int) {
	s.writes[cpu]++
	if s.writes[cpu] == s.cfg.FsyncEvery {
		s.writes[cpu] = 0
		k := IOFsync
		if s.cfg.Fdatasync {
			k = IOFdatasync
		}
		s.sync, s.hasSync = IO{Kind: k, CPU: cpu}, true
	}
}

// genBelow returns a uniform integer in [0, n), n > 0: Lemire's
// multiply-shift with rejection of the biased low products.
func genBelow(r *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// genFloat returns a uniform fraction in [0, 1) from the top 53 bits of one
// output.
func genFloat(r *rand.PCG) float64 {
	return float64(r.Uint64()>>11) * 0x1p-53
}

// genZipf samples ranks 1..n with P(k) ∝ k^−s by rejection-inversion
// (W. Hörmann, G. Derflinger, "Rejection-inversion to generate variates
// from monotone discrete distributions", ACM TOMACS 6(3), 1996): invert
// the integral H of the continuous density h(x) = x^−s, accept the rank
// nearest the inverse unless it falls in the small region where the
// continuous hat exceeds the discrete mass. Unlike math/rand's Zipf it
// works for every s > 0, including the θ < 1 of YCSB-style workloads.
type genZipf struct {
	s, n      float64
	count     uint64  // n as an integer
	hx1, hn   float64 // H(1.5) − 1 and H(n + 0.5)
	threshold float64
}

func newGenZipf(s float64, n uint64) *genZipf {
	z := &genZipf{s: s, n: float64(n), count: n}
	z.hx1 = z.bigH(1.5) - 1
	z.hn = z.bigH(z.n + 0.5)
	z.threshold = 2 - z.bigHInv(z.bigH(2.5)-z.h(2))
	return z
}

// h is the density x^−s.
func (z *genZipf) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// bigH is ∫₁ˣ h = (x^(1−s) − 1)/(1−s), computed stably near s = 1.
func (z *genZipf) bigH(x float64) float64 {
	lx := math.Log(x)
	return genExpm1Over((1-z.s)*lx) * lx
}

// bigHInv inverts bigH.
func (z *genZipf) bigHInv(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		t = -1 // rounding: stay in log1p's domain
	}
	return math.Exp(genLog1pOver(t) * x)
}

// genLog1pOver is log(1+x)/x, 1 at 0.
func genLog1pOver(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// genExpm1Over is (e^x − 1)/x, 1 at 0.
func genExpm1Over(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x/3*(1+0.25*x))
}

// sample returns a rank from 1 to n.
func (z *genZipf) sample(r *rand.PCG) uint64 {
	for {
		u := z.hn + genFloat(r)*(z.hx1-z.hn)
		x := z.bigHInv(u)
		k := math.Floor(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > z.n {
			k = z.n
		}
		if k-x <= z.threshold || u >= z.bigH(k+0.5)-z.h(k) {
			return min(uint64(k), z.count) // float64(n) may round above n
		}
	}
}

// genPerm is a fixed permutation of [0, n): x → (a·x + c) mod n with a
// coprime to n, a near n/φ so that neighbouring ranks land far apart.
type genPerm struct{ n, a, c uint64 }

func newGenPerm(n, seed uint64) genPerm {
	if n <= 1 {
		return genPerm{n: n, a: 1}
	}
	a := uint64(float64(n)*0.6180339887498949) | 1
	if a >= n {
		a = 1
	}
	for genGCD(a, n) != 1 {
		a++
		if a >= n {
			a = 1
		}
	}
	return genPerm{n: n, a: a, c: (seed * 0x9e3779b97f4a7c15) % n}
}

func (p genPerm) apply(x uint64) uint64 {
	if p.n <= 1 {
		return 0
	}
	hi, lo := bits.Mul64(p.a, x)
	_, rem := bits.Div64(hi%p.n, lo, p.n)
	rem += p.c % p.n
	if rem >= p.n || rem < p.c%p.n { // wrapped past n (or past 2^64)
		rem -= p.n
	}
	return rem
}

func genGCD(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
