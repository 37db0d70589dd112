package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/scenario"
)

// TestCheckBounds: the host refuses, with a *scenario.BoundError naming its
// bound and the model's, what the language allows past its own bounds; the
// corpus is within them.
func TestCheckBounds(t *testing.T) {
	for _, tt := range []struct {
		name, text, want string
	}{
		{"within", "device size=1G\nopen a rdwr\npwrite a off=0 len=1M repeat=32\npread a off=0 len=1M repeat=32\n", ""},
		{"device", "device size=1025M\n", "host runner: device size of 1025M is over its bound of 1G (its private tmpfs, sized to the device, and the device's page cache live in memory; the model takes up to 1T)"},
		{"device of the model's bound", "device size=1T\n", "device size of 1T is over its bound of 1G"},
		{"I/O", "device size=1G\nopen a rdwr\npwrite a off=0 len=1M repeat=64\npread a off=0 len=4K\n", "host runner: pwrite and pread total of 65540K is over its bound of 64M (its private tmpfs, sized to the device, and the device's page cache live in memory; the model takes up to 256M)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Parse("t.scn", tt.text)
			require.NoError(t, err, "the language allows it")
			err = CheckBounds(s)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			var be *scenario.BoundError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, "host", be.Runner)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	ruled, err := scenario.Parse("ruled.scn", "device size=1G wbps=20M riops=200 sched=mq-deadline wbt=off max_bytes=8M strict_limit=1\n")
	require.NoError(t, err)
	assert.NoError(t, CheckBounds(ruled), "the host applies device rules")
	scns, err := scenario.ParseDir("../../testdata/scenarios")
	require.NoError(t, err)
	for _, s := range scns {
		assert.NoError(t, CheckBounds(s), s.Name)
	}
}
