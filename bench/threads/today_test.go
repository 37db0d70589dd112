package threads

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/internal/race"
)

// TestTodayLRU runs the LRU thread, whose 6.18 figures come with it: the
// atomic __find_get_block is 6.4's on 6.18 (the v6.16 change moved only the
// sleeping lookups), so block 1 costs what the table's 6.4 does; block
// 4UL<<30 walks a six-level index and costs more.
func TestTodayLRU(t *testing.T) {
	t.Parallel()
	r := lruRun(t)
	require.Len(t, r.Today, 4)
	for _, line := range r.Today[:2] {
		assert.Equal(t, "6.4", line.ThenKernel)
		assert.InEpsilon(t, line.Then, line.Value, 1e-9, line.What)
	}
	assert.Greater(t, r.Today[2].Value, r.Today[0].Value, "block 4G: a deeper index")
	assert.Contains(t, r.Text(), "the same experiment on Linux 6.18 (predicted")
}

// TestTodayDD runs the two dd threads' 6.18 figures at a small scale under
// their recorded fitted profiles: one figure per column, each a speed.
func TestTodayDD(t *testing.T) {
	if race.Enabled {
		t.Skip("a few seconds of simulation: not under -race")
	}
	t.Parallel()
	for _, tc := range []struct {
		thread string
		lines  int
	}{{"blocksize", 5}, {"iomap", 6}, {"alloc", 2}} {
		t.Run(tc.thread, func(t *testing.T) {
			th, err := ByName(tc.thread)
			require.NoError(t, err)
			p, err := Fitted(th.Profile)
			require.NoError(t, err)
			r := &Reproduction{Profile: p, Table: timing.Table{Unit: "unit"}}
			today, err := todayOf(tc.thread, r, Options{Scale: 0.01})
			require.NoError(t, err)
			require.Len(t, today, tc.lines)
			for _, line := range today {
				assert.Positive(t, line.Value, line.What)
				assert.NotEmpty(t, line.Counted, line.What)
				assert.Equal(t, "unit", line.Unit)
			}
		})
	}
}
