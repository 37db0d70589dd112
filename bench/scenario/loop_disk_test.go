package scenario

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoopDiskFit: a direction's latency and rate come from its two
// request sizes — a device of 20 µs a request and 2 GB/s gives them back.
func TestLoopDiskFit(t *testing.T) {
	const lat, mbps = 20e3, 2000.0
	d := LoopDiskTimes{SmallNS: lat + LoopDiskSmall*1e3/mbps, LargeNS: lat + LoopDiskLarge*1e3/mbps}
	assert.InDelta(t, mbps, d.MBps(), 1e-9)
	assert.InDelta(t, lat, d.LatencyNS(), 1e-6)
}

// TestLoopDiskRoundTripAndRefusals: Encode's file decodes to the same
// measurement; a file the model could not use is refused, saying why.
func TestLoopDiskRoundTripAndRefusals(t *testing.T) {
	good := func() *LoopDisk {
		return &LoopDisk{Schema: LoopDiskSchema, Kernel: "6.18.44", Machine: "x86_64", Runs: 3,
			Read: LoopDiskTimes{SmallNS: 16e3, LargeNS: 280e3}, Write: LoopDiskTimes{SmallNS: 18e3, LargeNS: 400e3}}
	}
	b, err := good().Encode()
	require.NoError(t, err)
	back, err := DecodeLoopDisk(b)
	require.NoError(t, err)
	assert.Equal(t, good(), back)
	assert.Contains(t, back.String(), "reads 15.0 µs + 3956 MB/s")

	for _, tc := range []struct {
		name string
		edit func(l *LoopDisk)
		want string
	}{
		{"another schema", func(l *LoopDisk) { l.Schema = "bhsim-result/1" }, "want \"bhsim-loop-disk/1\""},
		{"no runs", func(l *LoopDisk) { l.Runs = 0 }, "0 runs"},
		{"a NaN time", func(l *LoopDisk) { l.Read.SmallNS = math.NaN() }, "read times"},
		{"large no slower than small", func(l *LoopDisk) { l.Write.LargeNS = l.Write.SmallNS }, "no slower"},
		{"a negative latency", func(l *LoopDisk) { l.Write.SmallNS, l.Write.LargeNS = 100, 400e3 }, "less than their transfer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := good()
			tc.edit(l)
			_, err := l.Encode()
			assert.ErrorContains(t, err, tc.want)
		})
	}
	_, err = DecodeLoopDisk([]byte(`{"schema":"bhsim-loop-disk/1","runs":1,"extra":1}`))
	assert.ErrorContains(t, err, "unknown field")
	for _, tail := range []string{"{}", "}", "x", `"more"`} {
		_, err = DecodeLoopDisk(append(append([]byte{}, b...), tail...))
		assert.ErrorContains(t, err, "data after the object", "trailing %q", tail)
	}
	_, err = DecodeLoopDisk(append(append([]byte{}, b...), " \n\t"...))
	assert.NoError(t, err, "trailing white space")
}

// TestLoopDiskMatchesResult: a measurement belongs to the sitting of a
// result of the same kernel and machine.
func TestLoopDiskMatchesResult(t *testing.T) {
	l := &LoopDisk{Kernel: "6.18.44-a", Machine: "x86_64"}
	for _, tc := range []struct {
		name            string
		kernel, machine string
		want            string
	}{
		{"same", "6.18.44-a", "x86_64", ""},
		{"unnamed", "", "", ""},
		{"another build", "6.18.44-b", "x86_64", "measured on 6.18.44-a x86_64, but s was recorded on 6.18.44-b x86_64"},
		{"another machine", "6.18.44-a", "aarch64", "recorded on 6.18.44-a aarch64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := l.MatchesResult(&Result{Scenario: "s", Kernel: tc.kernel, Machine: tc.machine})
			if tc.want == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.want)
			}
		})
	}
}
