package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBudget: a run is estimated once, after estimateAfter, from its rate so
// far; one past runLimit is cancelled and refused with the estimate, a
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
			b := newBudget(&out, "explain op", "blocks", "a smaller --count", next, func() { cancelled = true })
			b.now = func() time.Time { return b.start.Add(tt.at) }
			b.report(tt.done, tt.total)
			b.report(tt.done, tt.total) // estimated once
			assert.Equal(t, tt.cancelled, cancelled)
			if tt.progress {
				assert.Equal(t, 2, passed, "every report reaches the progress line")
			}
			if tt.says == "" {
				assert.Empty(t, out.String())
			} else {
				assert.Contains(t, out.String(), tt.says)
				assert.Equal(t, 1, bytes.Count(out.Bytes(), []byte("\n")), "said once")
			}
			if tt.cancelled {
				assert.ErrorContains(t, b.refused(), "would take about 555h33m0s")
				assert.ErrorContains(t, b.refused(), "more than the 10m0s bhsim explain op runs for: ask for less (a smaller --count)")
				assert.ErrorAs(t, b.refused(), new(usageError))
			} else {
				assert.NoError(t, b.refused())
			}
		})
	}
}
