package threads

import (
	"embed"
	"encoding/json"
	"fmt"

	"github.com/bhsim/bhsim/bench/timing"
)

// fittedFiles holds each built-in profile as its thread calibrates it, one
// fitted/<profile>.json a profile, and for a thread on the clock the fit's
// leave-one-out, fitted/<profile>.cv.json (written by `go test
// ./bench/threads -run TestFittedProfiles -update`; the threads' full-size
// tests fail when a priced fit's copy is not what the calibration gives,
// and `-refit`, which .ci/run passes, when a fit on the clock's is not).
//
//go:embed fitted/*.json
var fittedFiles embed.FS

// Fitted returns the built-in profile called name as the thread measured on
// that machine calibrates it, from the recorded copy: what Calibrated
// computes, without running the reproduction. Errors: a profile no thread
// calibrates (the error names those that have a fitted copy).
func Fitted(name string) (*timing.Profile, error) {
	b, err := fittedFiles.ReadFile("fitted/" + name + ".json")
	if err != nil {
		var names []string
		for _, t := range All() {
			if t.Calibrates() {
				names = append(names, t.Profile)
			}
		}
		return nil, fmt.Errorf("threads: no fitted copy of profile %q (fitted: %v)", name, names)
	}
	var p timing.Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("threads: fitted/%s.json: %w", name, err)
	}
	return &p, nil
}
