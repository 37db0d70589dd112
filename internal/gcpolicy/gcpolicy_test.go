package gcpolicy

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestApply checks that Apply sets the policy, and leaves a setting the
// environment gave as it is.
func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name, gogc, limit string
		percent           int
		bytes             int64
	}{
		{"no environment", "", "", Percent, MemoryLimit},
		{"GOGC set", "150", "", 150, MemoryLimit},
		{"GOMEMLIMIT set", "", "1GiB", Percent, 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			percent, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
			defer func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) }()
			t.Setenv("GOGC", tc.gogc)
			t.Setenv("GOMEMLIMIT", tc.limit)
			// what the runtime would have applied from the environment
			debug.SetGCPercent(map[bool]int{true: 150, false: 100}[tc.gogc != ""])
			debug.SetMemoryLimit(map[bool]int64{true: 1 << 30, false: 1 << 62}[tc.limit != ""])
			Apply()
			assert.Equal(t, tc.percent, debug.SetGCPercent(-1))
			assert.Equal(t, tc.bytes, debug.SetMemoryLimit(-1))
		})
	}
}
