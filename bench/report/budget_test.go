package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBudget: a run is estimated once, after EstimateAfter, from its rate so
// far; one past RunLimit is cancelled and refused with the estimate, a
// shorter one says how long it takes unless a progress line shows it.
func TestBudget(t *testing.T) {
	tests := []struct {
		name        string
		at          time.Duration // when the report comes
		done, total int
		progress    bool // a progress line is shown
		cancelled   bool
		says        string
	}{
		{"early: nothing yet", 500 * time.Millisecond, 1, 1 << 30, false, false, ""},
		{"absurd: refused", 2 * time.Second, 1000, 1e9, false, true, ""},
		{"absurd on a terminal: refused", 2 * time.Second, 1000, 1e9, true, true, ""},
		{"long in a pipe: estimated", 2 * time.Second, 100, 1000, false, false, "about 20s in all (100 of 1000 blocks done after 2s)"},
		{"long on a terminal: the progress line says it", 2 * time.Second, 100, 1000, true, false, ""},
		{"just under the limit", time.Second, 1, 599, false, false, "about 9m59s in all"},
		{"done: nothing to estimate", 2 * time.Second, 10, 10, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			cancelled, passed := false, 0
			var next func(done, total int)
			if tt.progress {
				next = func(int, int) { passed++ }
			}
			b := NewBudget(&out, "bhsim explain op", "blocks", "a smaller --count", next, func() { cancelled = true })
			b.now = func() time.Time { return b.start.Add(tt.at) }
			b.Report(tt.done, tt.total)
			b.Report(tt.done, tt.total) // estimated once
			assert.Equal(t, tt.cancelled, cancelled)
			switch {
			case tt.progress && tt.cancelled:
				assert.Zero(t, passed, "a refused run's reports do not reach the progress line: its refusal is all it shows")
			case tt.progress:
				assert.Equal(t, 2, passed, "every report reaches the progress line")
			}
			if tt.says == "" {
				assert.Empty(t, out.String())
			} else {
				assert.Contains(t, out.String(), tt.says)
				assert.Equal(t, 1, bytes.Count(out.Bytes(), []byte("\n")), "said once")
			}
			if tt.cancelled {
				assert.ErrorContains(t, b.Refused(), "would take about 555h33m0s")
				assert.ErrorContains(t, b.Refused(), "more than the 10m0s bhsim explain op runs for: ask for less (a smaller --count)")
				var over *OverBudgetError
				if assert.ErrorAs(t, b.Refused(), &over) {
					assert.Equal(t, "bhsim explain op", over.Name)
				}
			} else {
				assert.NoError(t, b.Refused())
			}
		})
	}
}

// TestBudgetErr: a refused run reports the refusal when it succeeded or
// was only cancelled, and its own failure otherwise; a run not refused
// reports what it returned.
func TestBudgetErr(t *testing.T) {
	failed := errors.New("cell failed")
	tests := []struct {
		name    string
		refused bool
		run     error
		want    string // "" for no error
	}{
		{"not refused, succeeded", false, nil, ""},
		{"not refused, failed", false, failed, "cell failed"},
		{"refused, succeeded", true, nil, "would take about"},
		{"refused, cancelled", true, fmt.Errorf("dd: %w", context.Canceled), "would take about"},
		{"refused after its own failure", true, failed, "cell failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBudget(io.Discard, "bhsim sweep", "MiB", "fewer cells", nil, func() {})
			b.now = func() time.Time { return b.start.Add(2 * time.Second) }
			if tt.refused {
				b.Report(1, 1e9)
			}
			err := b.Err(tt.run)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.want)
		})
	}
}
