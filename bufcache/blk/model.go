package blk

import (
	"fmt"
	"math"
)

// Model prices one request: the simulated time, in nanoseconds, the device
// needs to serve op on sectors [sector, sector+sectors) when the previous
// request it served ended at sector prevEnd (havePrev is false for the first
// request, whose head position is unknown; for a StreamModel, prevEnd is the
// end of the tracked stream the request continues, if any). A Model must be deterministic and
// return a finite, non-negative time; a Queue calls it under its lock, one
// request at a time. A model may have a Validate() error method, which
// NewQueue calls.
type Model interface {
	Service(prevEnd uint64, havePrev bool, op Op, sector, sectors uint64) float64
}

// transferNS is the time to move sectors at mbps decimal megabytes per second
// (the unit dd reports).
func transferNS(sectors uint64, mbps float64) float64 {
	return float64(sectors<<SectorShift) * 1e3 / mbps
}

// finite reports whether v is a finite number at least lo.
func finite(v, lo float64) bool { return v >= lo && !math.IsInf(v, 0) }

// HDD models a rotating disk: service = OverheadNS (command processing) +
// positioning + transfer at SeqMBps. A request that starts where the previous
// one ended needs no positioning. One that starts behind it, and the first,
// pays AvgSeekNS plus half a rotation at RPM, the textbook average rotational
// latency. One that starts a gap ahead pays the smaller of that and the time
// the gap takes to pass under the head at the media rate (a RAID6 member
// skipping its parity chunks waits; a far jump seeks). The seek does not grow
// with distance: for the sequential streams this package studies only whether
// a request is sequential, or nearly, matters. With SeqStreams > 1 a
// request that continues any of the newest SeqStreams streams is sequential. Reads and writes cost
// the same (a drive with its write cache on).
type HDD struct {
	// SeqMBps is the sustained media rate in decimal MB/s.
	SeqMBps float64
	// OverheadNS is the per-request command overhead.
	OverheadNS float64
	// AvgSeekNS is the average seek time.
	AvgSeekNS float64
	// RPM is the spindle speed.
	RPM float64
	// SeqStreams is how many interleaved sequential streams the drive serves
	// without repositioning (0 or 1: only a request that starts where the
	// previous one ended is sequential). A drive with its write cache on
	// gathers the writes of a few streams and writes each out in order, as
	// raid10 far-2's two copies on one member need; see StreamModel.
	SeqStreams int
}

// Streams implements StreamModel.
func (h HDD) Streams() int { return h.SeqStreams }

// Rotational reports true: a Queue timed by an HDD is rotational.
func (HDD) Rotational() bool { return true }

// WD8003FFBX returns the HDD model of the Helios4 thread's disk, a WD Red Pro
// 8 TB at 7200 rpm with a 256 MB cache. SeqMBps is the datasheet's maximum
// sustained transfer rate for that model, 235 MB/s (WD Red Pro product
// specifications); the thread's own single-disk dd measured more (255–257
// MB/s), which the model does not use: a published figure is never a model
// input. OverheadNS (10 µs) and AvgSeekNS (8.5 ms) are stated assumptions
// typical of a 7200 rpm SATA disk with NCQ and its write cache on (WD
// publishes no seek time for the Red Pro), not measurements; so is
// SeqStreams (4): a 256 MB cache drive serves a few interleaved sequential
// streams without a seek per switch.
func WD8003FFBX() HDD {
	return HDD{SeqMBps: 235, OverheadNS: 10e3, AvgSeekNS: 8.5e6, RPM: 7200, SeqStreams: 4}
}

// Service implements Model. O(1).
func (h HDD) Service(prevEnd uint64, havePrev bool, _ Op, sector, sectors uint64) float64 {
	ns := h.OverheadNS + transferNS(sectors, h.SeqMBps)
	switch {
	case !havePrev || sector < prevEnd:
		ns += h.positionNS()
	case sector > prevEnd: // a gap ahead: let it pass under the head, or seek
		ns += min(transferNS(sector-prevEnd, h.SeqMBps), h.positionNS())
	}
	return ns
}

// positionNS is a seek plus the average rotational delay, half a revolution.
func (h HDD) positionNS() float64 { return h.AvgSeekNS + 30e9/h.RPM }

// Validate returns an error wrapping ErrInvalidConfig unless SeqMBps and RPM
// are positive and finite, OverheadNS and AvgSeekNS non-negative and finite,
// and SeqStreams in [0, MaxStreams].
func (h HDD) Validate() error {
	if !finite(h.SeqMBps, math.SmallestNonzeroFloat64) || !finite(h.RPM, math.SmallestNonzeroFloat64) ||
		!finite(h.OverheadNS, 0) || !finite(h.AvgSeekNS, 0) || h.SeqStreams < 0 || h.SeqStreams > MaxStreams {
		return fmt.Errorf("%w: HDD model %+v", ErrInvalidConfig, h)
	}
	return nil
}

// SSD models a solid-state disk: service = LatencyNS + transfer at MBps,
// wherever the request starts.
type SSD struct {
	// MBps is the transfer rate in decimal MB/s.
	MBps float64
	// LatencyNS is the per-request latency.
	LatencyNS float64
}

// Service implements Model. O(1).
func (s SSD) Service(_ uint64, _ bool, _ Op, _, sectors uint64) float64 {
	return s.LatencyNS + transferNS(sectors, s.MBps)
}

// Validate returns an error wrapping ErrInvalidConfig unless MBps is positive
// and finite and LatencyNS non-negative and finite.
func (s SSD) Validate() error {
	if !finite(s.MBps, math.SmallestNonzeroFloat64) || !finite(s.LatencyNS, 0) {
		return fmt.Errorf("%w: SSD model %+v", ErrInvalidConfig, s)
	}
	return nil
}

// Null is a device that takes no time: the model for studying CPU cost alone,
// or a RAM disk.
type Null struct{}

// Service implements Model: always 0.
func (Null) Service(uint64, bool, Op, uint64, uint64) float64 { return 0 }

// ReadWrite prices reads with Read and the other requests, writes and
// flushes, with Write: a device whose two directions differ,
// as a loop device over tmpfs does (a write to a hole allocates the
// backing file's page; a read copies one out).
type ReadWrite struct {
	Read, Write SSD
}

// Service implements Model. O(1).
func (rw ReadWrite) Service(prevEnd uint64, havePrev bool, op Op, sector, sectors uint64) float64 {
	if op == OpRead {
		return rw.Read.Service(prevEnd, havePrev, op, sector, sectors)
	}
	return rw.Write.Service(prevEnd, havePrev, op, sector, sectors)
}

// Validate returns an error wrapping ErrInvalidConfig unless both
// directions' SSDs validate.
func (rw ReadWrite) Validate() error {
	if rw.Read.Validate() != nil || rw.Write.Validate() != nil {
		return fmt.Errorf("%w: read/write model %+v", ErrInvalidConfig, rw)
	}
	return nil
}
