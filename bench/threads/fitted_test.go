package threads

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
)

// update makes TestFittedProfiles re-record the fitted profiles.
var update = flag.Bool("update", false, "re-record fitted/*.json from the threads' calibrations")

// TestFittedProfiles re-records fitted/<profile>.json from every thread's
// calibration when -update is given; otherwise it checks that every thread
// has a fitted copy (the full-size tests compare its values).
func TestFittedProfiles(t *testing.T) {
	for _, th := range All() {
		if !th.Calibrates() {
			continue // nothing fitted: no copy
		}
		if *update {
			r, err := th.Run(nil, Options{})
			require.NoError(t, err)
			b, err := json.MarshalIndent(r.Profile, "", "  ")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join("fitted", th.Profile+".json"), append(b, '\n'), 0o644))
			continue // the binary embeds the copies it was built with
		}
		p, err := Fitted(th.Profile)
		require.NoError(t, err, th.Name)
		assert.Equal(t, th.Profile, p.Name)
	}
	_, err := Fitted("pdp11")
	assert.ErrorContains(t, err, "no fitted copy")
}

// requireFittedCopy checks that the recorded fitted copy of p's profile is
// p: the calibration a full-size reproduction just computed.
func requireFittedCopy(t *testing.T, p *timing.Profile) {
	t.Helper()
	rec, err := Fitted(p.Name)
	require.NoError(t, err)
	for i := range timing.NumParams {
		assert.InEpsilon(t, p.NS[i]+1e-300, rec.NS[i]+1e-300, 1e-9,
			"fitted/%s.json: %s is stale; re-record with go test ./bench/threads -run TestFittedProfiles -update", p.Name, timing.Param(i))
	}
}
