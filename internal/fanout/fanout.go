// Package fanout runs independent pieces of work on a bounded number of
// goroutines: the one way bhsim runs simulations in parallel (each on its own
// machine, so results never depend on the parallelism).
package fanout

import (
	"context"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Run calls do(ctx, i) for every i in [0, n) on at most workers goroutines
// (GOMAXPROCS when workers ≤ 0) and, if progress is not nil, progress(done, n)
// after each call, one call at a time. It waits for every started call and
// returns the error of the lowest i that failed; once ctx is done it starts no
// more calls and returns ctx's error unless a call failed first in index
// order. O(n) goroutine starts.
func Run(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error, progress func(done, total int)) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, n)
	var g errgroup.Group
	g.SetLimit(workers)
	var mu sync.Mutex
	done := 0
	var stopped error
	for i := range n {
		if err := ctx.Err(); err != nil {
			stopped = err
			break
		}
		g.Go(func() error {
			errs[i] = do(ctx, i)
			if progress != nil {
				mu.Lock()
				done++
				progress(done, n)
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait() // every call's error is in errs
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return stopped
}

// Slots bounds how many pieces of work run at once across every caller that
// shares it, where Run's workers bound one call: several Runs side by side
// (bhsim reproduce's threads) then keep every processor busy until the last
// piece of each is done, and no more pieces at a time than Slots allows.
// Use NewSlots: the zero value has no slot, and its Do never returns.
type Slots struct{ c chan struct{} }

// NewSlots returns Slots for n pieces at once (GOMAXPROCS at the time of the
// call when n ≤ 0).
func NewSlots(n int) *Slots {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return &Slots{c: make(chan struct{}, n)}
}

// Do waits for a free slot, calls do in it, and returns do's error. It
// allocates nothing.
func (s *Slots) Do(do func() error) error {
	s.c <- struct{}{}
	defer func() { <-s.c }()
	return do()
}
