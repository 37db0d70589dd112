package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// RunLimit is the longest run a Budget lets go on: a run whose estimate,
// taken once it has run for EstimateAfter, passes it is cancelled.
const RunLimit = 10 * time.Minute

// EstimateAfter is how long a run goes before a Budget estimates its total
// time.
const EstimateAfter = time.Second

// Budget watches a run's progress: it passes each report on (to a progress
// line, or nil), estimates the run's total time once it has run for
// EstimateAfter from its rate so far, and then either cancels a run that
// would pass RunLimit or, when no progress line shows it, says on its
// writer how long the run will take. A run shorter than EstimateAfter says
// nothing. Its Report is safe for one caller at a time, as the runs'
// progress callbacks are called.
type Budget struct {
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

// NewBudget returns a budget for the run called name ("bhsim sweep"), whose
// context cancel stops it, starting its clock now. w receives the one-line
// estimate; unit names what the reports count ("dd blocks"), less how to
// ask for a shorter run ("a smaller count"), for the refusal; next, if not
// nil, receives every report (a Progress task).
func NewBudget(w io.Writer, name, unit, less string, next func(done, total int), cancel context.CancelFunc) *Budget {
	return &Budget{w: w, name: name, unit: unit, less: less, next: next, cancel: cancel, start: time.Now(), now: time.Now}
}

// Report is the run's progress callback: done of total units. The first
// report after EstimateAfter with 0 < done < total estimates the run, once;
// the reports of a refused run, from that one on, are not passed on, so
// that its refusal is all it prints. O(1).
func (b *Budget) Report(done, total int) {
	if b.estimate != 0 {
		return
	}
	if elapsed := b.now().Sub(b.start); !b.checked && elapsed >= EstimateAfter && done > 0 && total > done {
		b.checked = true
		est := time.Duration(float64(elapsed) * float64(total) / float64(done))
		switch {
		case est > RunLimit:
			b.estimate = est
			b.cancel()
			return
		case b.next == nil:
			fmt.Fprintf(b.w, "%s: about %s in all (%d of %d %s done after %s)\n", b.name,
				est.Round(time.Second), done, total, b.unit, elapsed.Round(time.Millisecond))
		}
	}
	if b.next != nil {
		b.next(done, total)
	}
}

// OverBudgetError is the refusal of a run whose estimate passed RunLimit.
type OverBudgetError struct {
	// Name is the run's name, Less how to ask for less (NewBudget's).
	Name, Less string
	// Estimate is the run's estimated total time.
	Estimate time.Duration
}

// Error says how long the run would take and how to ask for less.
func (e *OverBudgetError) Error() string {
	return fmt.Sprintf("this run would take about %s (estimated after %s), more than the %s %s runs for: ask for less (%s)",
		e.Estimate.Round(time.Minute), EstimateAfter, RunLimit, e.Name, e.Less)
}

// Refused returns the *OverBudgetError of a run the budget cancelled, or
// nil.
func (b *Budget) Refused() error {
	if b.estimate == 0 {
		return nil
	}
	return &OverBudgetError{Name: b.name, Less: b.less, Estimate: b.estimate}
}

// Err returns the error that ends a run that returned err: the refusal of a
// run the budget cancelled, when the run succeeded or failed only by being
// cancelled; otherwise err, so that a run's own failure, had one come
// first, is the one reported.
func (b *Budget) Err(err error) error {
	if refused := b.Refused(); refused != nil && (err == nil || errors.Is(err, context.Canceled)) {
		return refused
	}
	return err
}
