//go:build linux

package host

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMeasureLoopDisk measures the loop disk on the live kernel: each
// direction gives a latency and a rate a loop device over tmpfs can have
// (a request between 1 µs and 1 ms, at least 100 MB/s), and nothing of
// the measurement is left behind; a cancelled context stops it, also
// cleaning up.
func TestMeasureLoopDisk(t *testing.T) {
	needKernel(t)
	l, err := MeasureLoopDisk(context.Background(), 2)
	require.NoError(t, err)
	assert.Equal(t, 2, l.Runs)
	for _, d := range []struct {
		name string
		lat  float64
		mbps float64
	}{{"read", l.Read.LatencyNS(), l.Read.MBps()}, {"write", l.Write.LatencyNS(), l.Write.MBps()}} {
		assert.GreaterOrEqual(t, d.lat, 1e3, "%s latency", d.name)
		assert.Less(t, d.lat, 1e6, "%s latency", d.name)
		assert.Greater(t, d.mbps, 100.0, "%s rate", d.name)
	}
	t.Logf("loop disk: %s", l)
	assertNoLeftovers(t, os.Getpid())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = MeasureLoopDisk(ctx, 1)
	assert.ErrorIs(t, err, context.Canceled)
	assertNoLeftovers(t, os.Getpid())
}
