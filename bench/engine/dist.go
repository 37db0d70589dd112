package engine

import (
	"math"
	"math/bits"
)

// histSubBits is log2 of the sub-buckets per power of two of a latency
// histogram: 32, so a bucket is at most 1/32 (3.1 %) of its lower bound
// wide.
const histSubBits = 5

// histBuckets is the number of buckets: values below 64 are exact, then 32
// per power of two up to 2^64.
const histBuckets = (65 - histSubBits) << histSubBits

// latencyHist is a log-linear histogram of nanosecond latencies (the
// HdrHistogram idea): fixed memory whatever the number of values, exact
// below 64 ns, above that each bucket 1/32 of its lower bound wide. It
// keeps the exact minimum, maximum and sum. Add allocates nothing.
type latencyHist struct {
	counts   [histBuckets]uint64
	n        uint64
	min, max uint64
	sum      float64
}

// histIndex is the bucket of v. O(1).
func histIndex(v uint64) int {
	if v < 2<<histSubBits {
		return int(v)
	}
	shift := bits.Len64(v) - (histSubBits + 1)
	return (shift+1)<<histSubBits + int(v>>shift) - 1<<histSubBits
}

// histUpper is the largest value of bucket i. O(1).
func histUpper(i int) uint64 {
	if i < 2<<histSubBits {
		return uint64(i)
	}
	shift := i>>histSubBits - 1
	mant := uint64(i - (shift+1)<<histSubBits + 1<<histSubBits)
	return (mant+1)<<shift - 1
}

// add records one latency of ns nanoseconds, rounded up to a whole
// nanosecond (negative values count as 0).
func (h *latencyHist) add(ns float64) {
	v := uint64(0)
	if ns > 0 {
		v = uint64(math.Ceil(ns))
	}
	h.counts[histIndex(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += float64(v)
}

// quantile is the smallest bucket bound below which at least a fraction q
// of the values lie, capped at the maximum: an upper bound within 3.1 % of
// the exact quantile. 0 for an empty histogram. O(buckets).
func (h *latencyHist) quantile(q float64) uint64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(histUpper(i), h.max)
		}
	}
	return h.max
}

// Latency summarises the simulated latencies of one kind of operation, in
// nanoseconds: the count, the mean, the exact minimum and maximum, and the
// quantiles p50, p90, p99 and p99.9 as upper bounds of the histogram
// buckets they fall in (within 3.1 % of the exact value; exact below 64 ns).
type Latency struct {
	N      uint64  `json:"n"`
	MeanNS float64 `json:"mean_ns"`
	MinNS  uint64  `json:"min_ns"`
	P50NS  uint64  `json:"p50_ns"`
	P90NS  uint64  `json:"p90_ns"`
	P99NS  uint64  `json:"p99_ns"`
	P999NS uint64  `json:"p999_ns"`
	MaxNS  uint64  `json:"max_ns"`
	// CDF is the distribution, one point per nonempty histogram bucket
	// (at most 1920), in increasing NS.
	CDF []CDFPoint `json:"cdf"`
}

// CDFPoint is one step of a latency distribution: Fraction of the
// operations took at most NS nanoseconds.
type CDFPoint struct {
	NS       uint64  `json:"ns"`
	Fraction float64 `json:"fraction"`
}

// summary is the histogram's Latency with its CDF (one point per nonempty
// bucket). O(buckets).
func (h *latencyHist) summary() Latency {
	l := Latency{N: h.n, MinNS: h.min, MaxNS: h.max,
		P50NS: h.quantile(0.5), P90NS: h.quantile(0.9), P99NS: h.quantile(0.99), P999NS: h.quantile(0.999)}
	if h.n == 0 {
		return l
	}
	l.MeanNS = h.sum / float64(h.n)
	var seen uint64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += c
		l.CDF = append(l.CDF, CDFPoint{NS: min(histUpper(i), h.max), Fraction: float64(seen) / float64(h.n)})
	}
	return l
}

// timelineBins bounds the bins of a throughput timeline.
const timelineBins = 200

// timeline sums the bytes operations complete per bin of simulated time.
// The bins start 1 µs wide and double (merging pairs) whenever a
// completion falls past the last, so that at most timelineBins bins cover
// the run whatever its length. add allocates nothing once the bins exist.
type timeline struct {
	widthNS float64
	bytes   [timelineBins]float64
	ops     [timelineBins]uint64
	used    int
}

// add counts an operation of n bytes completing at simulated time t ns.
func (tl *timeline) add(t float64, n uint64) {
	if tl.widthNS == 0 {
		tl.widthNS = 1e3
	}
	for t >= tl.widthNS*timelineBins {
		for i := 0; i < timelineBins/2; i++ {
			tl.bytes[i] = tl.bytes[2*i] + tl.bytes[2*i+1]
			tl.ops[i] = tl.ops[2*i] + tl.ops[2*i+1]
		}
		clear(tl.bytes[timelineBins/2:])
		clear(tl.ops[timelineBins/2:])
		tl.widthNS *= 2
		tl.used = (tl.used + 1) / 2
	}
	i := int(t / tl.widthNS)
	tl.bytes[i] += float64(n)
	tl.ops[i]++
	tl.used = max(tl.used, i+1)
}

// ThroughputBin is the work that completed in one interval of simulated
// time: [StartNS, StartNS+WidthNS), its bytes read and written, its
// operations of every kind, and the rates in decimal MB/s and operations
// per second.
type ThroughputBin struct {
	StartNS float64 `json:"start_ns"`
	WidthNS float64 `json:"width_ns"`
	Bytes   float64 `json:"bytes"`
	Ops     uint64  `json:"ops"`
	MBps    float64 `json:"mb_per_s"`
	IOPS    float64 `json:"iops"`
}

// bins lists the bins up to the last used one.
func (tl *timeline) bins() []ThroughputBin {
	out := make([]ThroughputBin, tl.used)
	for i := range out {
		out[i] = ThroughputBin{StartNS: float64(i) * tl.widthNS, WidthNS: tl.widthNS, Bytes: tl.bytes[i], Ops: tl.ops[i],
			MBps: tl.bytes[i] * 1e3 / tl.widthNS, IOPS: float64(tl.ops[i]) * 1e9 / tl.widthNS}
	}
	return out
}
