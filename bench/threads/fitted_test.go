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

// update makes TestFittedProfiles re-record the fitted profiles, and refit
// check the recorded fits on the clock against fits made now.
var (
	update = flag.Bool("update", false, "re-record fitted/*.json from the threads' calibrations (minutes: the fits on the clock run anew)")
	refit  = flag.Bool("refit", false, "check that the recorded fits on the clock, and their leave-one-out, are what fitting anew gives (minutes; .ci/run does)")
)

// TestFittedProfiles re-records fitted/<profile>.json from every thread's
// calibration, and for a thread on the clock its leave-one-out as
// fitted/<profile>.cv.json, when -update is given; with -refit it fits the
// threads on the clock anew and checks that the records are what the fits
// give; otherwise it checks that every thread has a fitted copy (the
// full-size tests compare its values).
func TestFittedProfiles(t *testing.T) {
	for _, th := range All() {
		if !th.Calibrates() {
			continue // nothing fitted: no copy
		}
		if *update || *refit && th.RecordsFit() {
			r, err := th.Run(nil, Options{Refit: true})
			require.NoError(t, err)
			if *refit {
				requireFittedCopy(t, r.Profile)
				if th.RecordsFit() {
					rec, err := recordedCrossValidation(th.Profile)
					require.NoError(t, err)
					assert.Equal(t, rec, r.CrossValidation, "fitted/%s.cv.json is stale; re-record with -update", th.Profile)
				}
				continue
			}
			writeJSON(t, filepath.Join("fitted", th.Profile+".json"), r.Profile)
			if th.RecordsFit() {
				writeJSON(t, filepath.Join("fitted", th.Profile+".cv.json"), r.CrossValidation)
			}
			continue // the binary embeds the copies it was built with
		}
		p, err := Fitted(th.Profile)
		require.NoError(t, err, th.Name)
		assert.Equal(t, th.Profile, p.Name)
		if th.RecordsFit() {
			cv, err := recordedCrossValidation(th.Profile)
			require.NoError(t, err, th.Name)
			assert.NotEmpty(t, cv, th.Name)
		}
	}
	_, err := Fitted("pdp11")
	assert.ErrorContains(t, err, "no fitted copy")
	_, err = recordedCrossValidation("pdp11")
	assert.ErrorContains(t, err, "no recorded leave-one-out")
}

// writeJSON writes v to path as indented JSON.
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
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
