//go:build linux

package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMeasureHarness measures the runner's timing cost without privilege: an
// empty timed interval costs something (two clock readings' worth), a null
// system call something more, and neither is anywhere near the microseconds
// the calibration's cheapest calls take.
func TestMeasureHarness(t *testing.T) {
	h, err := MeasureHarness()
	require.NoError(t, err)
	assert.Positive(t, h.TimerNS, "the clock readings themselves")
	assert.Positive(t, h.SyscallNS, "getppid's entry and exit beyond the empty interval")
	assert.Less(t, h.TimerNS, 20e3)
	assert.Less(t, h.SyscallNS, 20e3)
}
