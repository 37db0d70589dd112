// Package speedtest gates the tests that assert a speed ratio measured in the
// same run (an LRU hit against a mutex pair, a page-cache lookup against a map):
// they run only when BHSIM_SPEED_TESTS=1, without the race detector, so that
// `go test ./...`, which runs packages in parallel, stays deterministic, while
// CI runs them in a step of their own on an otherwise idle machine.
package speedtest

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/bhsim/bhsim/internal/race"
)

// Env is the variable that enables speed tests.
const Env = "BHSIM_SPEED_TESTS"

// Require skips t unless speed tests are enabled and meaningful.
func Require(t testing.TB) {
	t.Helper()
	if race.Enabled {
		t.Skip("speed ratio not meaningful under -race")
	}
	if os.Getenv(Env) != "1" {
		t.Skip("speed test: set " + Env + "=1 (CI runs these serially)")
	}
}

// Ratio returns the median, over rounds, of the ratio of a's to b's cost per
// call, each measured for n calls back to back in every round: pairing the two
// in time lets a load change hit both sides of one ratio alike. It also returns
// the median ns per call of each.
func Ratio(a, b func(), n, rounds int) (ratio, aNS, bNS float64) {
	measure := func(f func()) float64 {
		start := time.Now()
		for range n {
			f()
		}
		return float64(time.Since(start).Nanoseconds()) / float64(n)
	}
	var ratios, as, bs []float64
	for range rounds {
		x, y := measure(a), measure(b)
		ratios, as, bs = append(ratios, x/y), append(as, x), append(bs, y)
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	return med(ratios), med(as), med(bs)
}
