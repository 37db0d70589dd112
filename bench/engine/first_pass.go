package engine

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/bhsim/bhsim/bench/source"
)

// errPassStopped ends the pass over a part after an earlier part failed:
// its records no longer matter.
var errPassStopped = errors.New("engine: an earlier part of the trace failed")

// summarizeParts reads parts, consecutive parts of one trace
// (source.OpenTraceParts), to their ends and sums their records, and
// returns them too when together they fit maxHeld bytes held
// (heldRecords; nil otherwise); it closes each part. One part is parsed
// in a goroutine of its own (source.Prefetch) while this one sums;
// several are each parsed and summed by a goroutine of their own, at
// once, and a part stops early once an earlier one has failed. The error is that of the
// first part that failed: the whole trace's first. O(records); memory
// O(maxHeld).
func summarizeParts(parts []*source.Trace, maxHeld int64) (source.TraceSummary, *heldRecords, error) {
	budget := new(atomic.Int64)
	budget.Store(maxHeld)
	if len(parts) == 1 {
		pf := source.Prefetch(parts[0]) // the parsing on another CPU than the summing
		defer pf.Close()
		return summarizeHolding(pf, budget, nil)
	}
	type result struct {
		sum  source.TraceSummary
		held *heldRecords
		err  error
	}
	res := make([]result, len(parts))
	var failed atomic.Int64 // the first part known to have failed
	failed.Store(int64(len(parts)))
	var wg sync.WaitGroup
	for k, p := range parts {
		wg.Go(func() {
			defer p.Close()
			r := &res[k]
			r.sum, r.held, r.err = summarizeHolding(p, budget, func() bool { return failed.Load() < int64(k) })
			for f := failed.Load(); r.err != nil && int64(k) < f; f = failed.Load() {
				if failed.CompareAndSwap(f, int64(k)) {
					break
				}
			}
		})
	}
	wg.Wait()
	var sum source.TraceSummary
	held := &heldRecords{budget: budget}
	for _, r := range res {
		if r.err != nil {
			return sum, nil, r.err
		}
		sum.Merge(r.sum)
		if r.held == nil {
			held = nil
		} else if held != nil {
			held.join(r.held)
		}
	}
	return sum, held, nil
}

// summarizeHolding reads t to its end and sums its records, and returns
// them held too when budget has room for them (heldRecords; nil
// otherwise). stopped,
// when not nil, is asked every stopEvery records whether to stop; then it
// returns errPassStopped. O(records); memory O(budget).
func summarizeHolding(t source.IOReader, budget *atomic.Int64, stopped func() bool) (source.TraceSummary, *heldRecords, error) {
	var s source.TraceSummary
	held := &heldRecords{budget: budget}
	for {
		if stopped != nil && s.Records%stopEvery == 0 && stopped() {
			return s, nil, errPassStopped
		}
		rec, err := t.Next()
		if err == io.EOF {
			if held != nil && !held.close() {
				held = nil
			}
			return s, held, nil
		}
		if err != nil {
			return s, nil, err
		}
		s.Add(rec)
		if held != nil && !held.add(rec) {
			held = nil
		}
	}
}

// stopEvery is how many records a part's pass reads between asks whether
// an earlier part failed.
const stopEvery = 4096
