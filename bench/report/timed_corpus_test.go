package report

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
)

// timedCorpus is the timed corpus: scenarios on devices of known speed,
// recorded on Linux 6.18 with their elapsed times in kernel/6.18 inside it,
// and x86-host.json, the host calibration of the machine that recorded
// them, fitted without them (bhsim calibrate --host).
const timedCorpus = "../../testdata/timed"

// requestFamilies are the counters of how bios become requests: under a
// throttle rule the kernel's released bios enter kthrotld's plug a timer
// tick at a time, which the model does not follow (docs/known-
// differences.md, "Throttle rules"). Every other counter must agree.
var requestFamilies = []string{"rq.", "merge.", "plug.", "stat.read.ios", "stat.read.merges", "stat.write.ios", "stat.write.merges"}

// TestValidateTimedCorpus holds the model's clock to the timed corpus: at
// least 60 timed values, at least 80 % of them inside the kernel's range
// widened by 5 %, and no counter beyond the request families differing.
func TestValidateTimedCorpus(t *testing.T) {
	files, err := ScenarioFiles(timedCorpus)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 30)
	p, err := timing.LoadProfile(filepath.Join(timedCorpus, "x86-host.json"))
	require.NoError(t, err)
	v, err := Validate(context.Background(), files, Recorded(""), ValidateOptions{On: "recorded", Profile: p})
	require.NoError(t, err)
	s := v.Summary
	t.Logf("%d of %d timed values within; %d of %d counter rows equal", s.TimedWithin, s.Timed, s.Equal, s.Total)
	assert.GreaterOrEqual(t, s.Timed, 60)
	assert.GreaterOrEqual(t, float64(s.TimedWithin), 0.8*float64(s.Timed))
	for _, c := range v.Scenarios {
		for _, r := range c.Rows {
			if r.Equal {
				continue
			}
			known := false
			for _, f := range requestFamilies {
				known = known || strings.HasPrefix(r.Name, f)
			}
			assert.True(t, known, "%s op %d %s: model %s, kernel %s", c.Scenario, r.Op, r.Name, r.Model, r.Kernel)
		}
	}
}
