package blk

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/bhsim/bhsim/internal/enum"
)

// FaultyDevice wraps a Device and fails chosen bios, the way a failing drive
// (or dm-flakey, or the fail_make_request fault-injection attribute) does.
// Faults are chosen per operation, read or write:
//
//   - by sector range ([FaultyDevice.FailSectors]): every bio that touches the
//     range fails, until [FaultyDevice.Heal] — a bad region of the medium;
//   - by count ([FaultyDevice.FailNth]): the nth bio of that operation the
//     device receives fails, once — a transient error;
//   - at random ([FaultyDevice.FailRate]): each bio fails with a probability,
//     drawn from a generator seeded at NewFaultyDevice — the same seed and the
//     same order of submission give the same failures;
//   - all writes ([FaultyDevice.SetReadOnly]): a disk that turns
//     write-protected under the host, mid-run.
//
// A failed bio completes with an error that wraps ErrIO and ErrInjected (or
// ErrReadOnly) and names the rule; [FaultyDevice.Faults] lists every failure
// with its sector range, so that a test can tell which data is lost.
//
// # Where the failure happens
//
// A bio that fails never reaches the device beneath: it completes with the
// error inside Submit (or SubmitBio), before the bios waiting in the
// submitter's plug, as a bio failing submit_bio_noacct's checks does, and the
// medium keeps its old contents. The bios that pass go to the device beneath
// through the same plug, so over a [Queue] they still merge among themselves:
// the wrapper sees bios, not requests, and a failed bio in the middle of a
// sequential stream leaves a hole, splitting what would have been one request
// into two. In the kernel the driver fails a request, and every bio merged into
// it gets the error unless the driver reports a partial completion
// (blk_update_request with the bytes done); the model fails exactly the bio
// chosen, as a drive that reports the failing sector does. Counting is by bio
// too: the nth bio is the nth valid bio of that operation submitted to this
// device, whatever request it would have joined. Bios that fail CheckBio are
// completed with CheckBio's error and not counted; flushes ([Bio.IsFlush]) are
// passed on, never failed and not counted.
//
// # What the layers above do with a failure
//
// This is how the model handles the errors, as the kernel does (the tests
// TestFault* of package bufcache and TestDegraded* of package md check each
// against an oracle):
//
//   - bufcache, failed writeback (end_buffer_async_write): the buffer loses
//     BH_Uptodate and gets BH_Write_EIO, its folio PG_error, and it is no
//     longer dirty — the write is lost, nobody retries it. The next
//     SyncBlockdev of the device returns bufcache.ErrIO, once; the one after
//     returns nil (AS_EIO's test-and-clear). The folio stays uptodate, so
//     read(2) keeps returning the bytes that never reached the disk until the
//     folio is evicted, while Bread of that buffer, no longer uptodate, reads
//     the disk again and returns the old contents.
//   - bufcache, failed read: Bread returns bufcache.ErrIO and holds no
//     reference; read(2) retries a failed readahead bio page by page
//     (filemap_read_folio), so a transient error is not seen, and a
//     persistent one returns the bytes read before it and ErrIO.
//   - md raid0: the array's bio fails with the member's error.
//   - md raid10 and raid6: the member is marked faulty (md_error) and the
//     array goes on degraded: a read is served by the other copy (raid10) or
//     reconstructed from the other members' data and parity (raid6), writes
//     skip the faulty member; the array's bio succeeds as long as the data
//     still has a copy, or enough parity. Array.Failed and Array.Degraded
//     report the state.
//
// Nothing panics on an injected failure. A FaultyDevice is safe for concurrent
// use; its rules may change mid-run. Deciding a bio's fate costs O(rules) and
// allocates only for a failure.
type FaultyDevice struct {
	inner Device
	seed  uint64

	mu       sync.Mutex
	rng      *rand.Rand
	ranges   []faultRange
	nth      []faultNth
	rate     [2]float64 // per operation
	readOnly bool
	seen     [2]uint64 // valid bios received, per operation
	failed   [2]uint64 // of those, failed
	bios     uint64    // valid bios received
	faults   []Fault
}

// faultRange fails the bios of op that touch sectors [start, end).
type faultRange struct {
	op         Op
	start, end uint64
}

// faultNth fails the nth bio of op.
type faultNth struct {
	op Op
	n  uint64
}

// FaultCause says which rule failed a bio.
type FaultCause uint8

const (
	// CauseReadOnly: a write to a device made read-only.
	CauseReadOnly FaultCause = iota
	// CauseSectors: the bio touched a failing sector range.
	CauseSectors
	// CauseNth: the bio was the nth of its operation.
	CauseNth
	// CauseRandom: the random draw failed the bio.
	CauseRandom
)

// causeNames names the causes for String.
var causeNames = enum.New[FaultCause]("cause", []string{CauseReadOnly: "read-only", CauseSectors: "sectors",
	CauseNth: "nth", CauseRandom: "random"}...)

// String returns "read-only", "sectors", "nth" or "random" ("cause(n)" for
// another value).
func (c FaultCause) String() string { return causeNames.String(c) }

// Fault records one failed bio.
type Fault struct {
	// Seq is the bio's number among every valid bio the device received,
	// from 1.
	Seq uint64
	// N is the bio's number among the valid bios of its operation, from 1.
	N uint64
	// Op, Sector and Sectors are the bio's operation and sector range.
	Op      Op
	Sector  uint64
	Sectors uint64
	// Cause is the rule that failed it; when several match, the first of
	// read-only, sectors, nth, random.
	Cause FaultCause
}

// FaultStats counts the valid bios a FaultyDevice received and failed.
type FaultStats struct {
	Reads, Writes             uint64
	FailedReads, FailedWrites uint64
}

// NewFaultyDevice returns a FaultyDevice over inner that fails nothing yet.
// seed seeds the generator of FailRate; record it (Seed returns it) to
// reproduce a run. Errors: ErrInvalidConfig for a nil inner. O(1).
func NewFaultyDevice(inner Device, seed uint64) (*FaultyDevice, error) {
	if inner == nil {
		return nil, fmt.Errorf("%w: a FaultyDevice needs a device beneath", ErrInvalidConfig)
	}
	return &FaultyDevice{inner: inner, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}, nil
}

// Name implements Device: the name of the device beneath.
func (f *FaultyDevice) Name() string { return f.inner.Name() }

// Sectors implements Device: the capacity of the device beneath.
func (f *FaultyDevice) Sectors() uint64 { return f.inner.Sectors() }

// LogicalBlockSize implements Device: that of the device beneath.
func (f *FaultyDevice) LogicalBlockSize() uint32 { return f.inner.LogicalBlockSize() }

// Inner returns the device beneath.
func (f *FaultyDevice) Inner() Device { return f.inner }

// Seed returns the seed of the random failures.
func (f *FaultyDevice) Seed() uint64 { return f.seed }

// Submit implements Device: b fails, completing before Submit returns, or goes
// to the device beneath with no plug.
func (f *FaultyDevice) Submit(b *Bio) { f.submit(nil, b) }

// SubmitPlugged implements PlugSubmitter: b fails, completing before
// SubmitPlugged returns, or goes to the device beneath through p, where it can
// merge with the other bios that passed (SubmitBio).
func (f *FaultyDevice) SubmitPlugged(p *Plug, b *Bio) { f.submit(p, b) }

// submit validates b, decides its fate and fails it or passes it on. A flush
// touches no sector: no rule fails it, it is not counted, and it goes to the
// device beneath.
func (f *FaultyDevice) submit(p *Plug, b *Bio) {
	if err := CheckBio(f, b); err != nil {
		b.Complete(err)
		return
	}
	if b.IsFlush() {
		SubmitBio(p, f.inner, b)
		return
	}
	if err := f.decide(b); err != nil {
		b.Complete(err)
		return
	}
	SubmitBio(p, f.inner, b)
}

// decide counts the valid bio b and returns the error it fails with, or nil.
// The random draw is made for every bio of an operation with a rate, whatever
// the other rules say, so that the sequence of draws depends only on the seed
// and the order of submission.
func (f *FaultyDevice) decide(b *Bio) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	op := b.Op
	f.bios++
	f.seen[op]++
	n := f.seen[op]
	random := f.rate[op] > 0 && f.rng.Float64() < f.rate[op]
	nth := f.takeNth(op, n) // used up whatever fails the bio
	end := b.Sector + b.Sectors()
	var cause FaultCause
	switch {
	case op == OpWrite && f.readOnly:
		cause = CauseReadOnly
	case f.inRange(op, b.Sector, end):
		cause = CauseSectors
	case nth:
		cause = CauseNth
	case random:
		cause = CauseRandom
	default:
		return nil
	}
	f.failed[op]++
	f.faults = append(f.faults, Fault{Seq: f.bios, N: n, Op: op, Sector: b.Sector, Sectors: b.Sectors(), Cause: cause})
	if cause == CauseReadOnly {
		return fmt.Errorf("%w: %w: write sectors [%d, %d) on %s", ErrIO, ErrReadOnly, b.Sector, end, f.Name())
	}
	return fmt.Errorf("%w: %w: %s sectors [%d, %d) on %s (%s, %s bio %d, seed %d)",
		ErrIO, ErrInjected, op, b.Sector, end, f.Name(), cause, op, n, f.seed)
}

// inRange reports whether a failing range of op overlaps [start, end).
func (f *FaultyDevice) inRange(op Op, start, end uint64) bool {
	for _, r := range f.ranges {
		if r.op == op && start < r.end && r.start < end {
			return true
		}
	}
	return false
}

// takeNth removes and reports an nth rule for bio n of op.
func (f *FaultyDevice) takeNth(op Op, n uint64) bool {
	for i, r := range f.nth {
		if r.op == op && r.n == n {
			f.nth = append(f.nth[:i], f.nth[i+1:]...)
			return true
		}
	}
	return false
}

// checkOp returns an error wrapping ErrInvalidConfig unless op is OpRead or
// OpWrite.
func checkOp(op Op) error {
	if op != OpRead && op != OpWrite {
		return fmt.Errorf("%w: cannot inject faults into %s bios", ErrInvalidConfig, op)
	}
	return nil
}

// FailSectors makes every later bio of op that touches sectors [start, end)
// fail, until Heal. Errors (nothing changes): ErrInvalidConfig for an op other
// than OpRead and OpWrite, an empty range, or one reaching past the device's
// end. O(1).
func (f *FaultyDevice) FailSectors(op Op, start, end uint64) error {
	if err := checkOp(op); err != nil {
		return err
	}
	if start >= end || end > f.Sectors() {
		return fmt.Errorf("%w: sectors [%d, %d) on %s of %d sectors", ErrInvalidConfig, start, end, f.Name(), f.Sectors())
	}
	f.mu.Lock()
	f.ranges = append(f.ranges, faultRange{op: op, start: start, end: end})
	f.mu.Unlock()
	return nil
}

// FailNth makes the nth valid bio of op that the device receives (counting
// from 1 since NewFaultyDevice) fail, once. Errors (nothing changes):
// ErrInvalidConfig for an op other than OpRead and OpWrite, or an n the device
// has already counted past. O(1).
func (f *FaultyDevice) FailNth(op Op, n uint64) error {
	if err := checkOp(op); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n <= f.seen[op] {
		return fmt.Errorf("%w: %s bio %d on %s: %d already received", ErrInvalidConfig, op, n, f.Name(), f.seen[op])
	}
	f.nth = append(f.nth, faultNth{op: op, n: n})
	return nil
}

// FailRate makes each later bio of op fail with probability rate, drawn from
// the device's seeded generator; 0 stops random failures of op. Errors
// (nothing changes): ErrInvalidConfig for an op other than OpRead and OpWrite,
// or a rate outside [0, 1] (NaN included). O(1).
func (f *FaultyDevice) FailRate(op Op, rate float64) error {
	if err := checkOp(op); err != nil {
		return err
	}
	if !(rate >= 0 && rate <= 1) { // NaN too
		return fmt.Errorf("%w: failure rate %v is outside [0, 1]", ErrInvalidConfig, rate)
	}
	f.mu.Lock()
	f.rate[op] = rate
	f.mu.Unlock()
	return nil
}

// SetReadOnly makes every later write fail with ErrReadOnly (ro true), or lets
// writes through again (ro false). Reads are unaffected. O(1).
func (f *FaultyDevice) SetReadOnly(ro bool) {
	f.mu.Lock()
	f.readOnly = ro
	f.mu.Unlock()
}

// Heal removes every rule: no failing ranges, no pending nth failures, no
// random failures, writable. The counts and the record of past faults stay.
// O(1).
func (f *FaultyDevice) Heal() {
	f.mu.Lock()
	f.ranges, f.nth, f.rate, f.readOnly = nil, nil, [2]float64{}, false
	f.mu.Unlock()
}

// Faults returns every failure injected so far, in order. Memory grows with
// the failures injected. O(failures).
func (f *FaultyDevice) Faults() []Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Fault(nil), f.faults...)
}

// Stats returns the counts of valid bios received and failed. O(1).
func (f *FaultyDevice) Stats() FaultStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return FaultStats{Reads: f.seen[OpRead], Writes: f.seen[OpWrite],
		FailedReads: f.failed[OpRead], FailedWrites: f.failed[OpWrite]}
}
