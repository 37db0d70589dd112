package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// runLimit is the longest run explain or sweep carries out: a run whose estimate,
// taken once it has run for estimateAfter, passes it stops there and is
// refused with the estimate.
const runLimit = 10 * time.Minute

// estimateAfter is how long a run goes before its total time is estimated.
const estimateAfter = time.Second

// budget watches a run's progress: it passes each report on (to a progress
// line, or nil), estimates the run's total time once it has run for
// estimateAfter, and then either cancels a run that would pass runLimit or,
// when no progress line shows it, says on w how long the run will take. A
// run shorter than estimateAfter says nothing.
type budget struct {
	w        io.Writer
	name     string
	unit     string // what the reports count ("dd blocks")
	less     string // how to ask for less, for the refusal
	next     func(done, total int)
	cancel   context.CancelFunc
	start    time.Time
	now      func() time.Time
	checked  bool
	estimate time.Duration // set when the run was refused
}

// newBudget returns a budget for command name's run, whose context cancel
// stops it; unit names what its reports count ("dd blocks"), less how to
// ask for a shorter run ("a smaller --count").
func newBudget(w io.Writer, name, unit, less string, next func(done, total int), cancel context.CancelFunc) *budget {
	return &budget{w: w, name: name, unit: unit, less: less, next: next, cancel: cancel, start: time.Now(), now: time.Now}
}

// report is the run's progress callback.
func (b *budget) report(done, total int) {
	if b.next != nil {
		b.next(done, total)
	}
	elapsed := b.now().Sub(b.start)
	if b.checked || elapsed < estimateAfter || done <= 0 || total <= done {
		return
	}
	b.checked = true
	est := time.Duration(float64(elapsed) * float64(total) / float64(done))
	switch {
	case est > runLimit:
		b.estimate = est
		b.cancel()
	case b.next == nil:
		fmt.Fprintf(b.w, "bhsim %s: about %s in all (%d of %d %s done after %s)\n", b.name,
			est.Round(time.Second), done, total, b.unit, elapsed.Round(time.Millisecond))
	}
}

// refused returns the error for a run that the budget stopped, or nil.
func (b *budget) refused() error {
	if b.estimate == 0 {
		return nil
	}
	return usagef("this run would take about %s (estimated after %s), more than the %s bhsim %s runs for: ask for less (%s)",
		b.estimate.Round(time.Minute), estimateAfter, runLimit, b.name, b.less)
}
