package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
)

// corpus is the host-kernel scenario corpus, recorded under ../kernel/6.18
// beside it.
const corpus = "../../testdata/scenarios"

// TestValidate sets two corpus scenarios beside their recordings: every
// row equal, summed over both; another kernel preset differs.
func TestValidate(t *testing.T) {
	files, err := ScenarioFiles(filepath.Join(corpus, "dd-bs4k.scn"), filepath.Join(corpus, "bszset-last-close-16k.scn"))
	require.NoError(t, err)
	require.Len(t, files, 2)
	var progress []int
	v, err := Validate(context.Background(), files, Recorded(""), ValidateOptions{On: "recorded",
		Progress: func(done, total int) { progress = append(progress, done, total) }})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 2, 2}, progress)
	assert.Equal(t, ValidateSchema, v.Schema)
	assert.Equal(t, "6.18", v.Model, "a kernel without a name is 6.18")
	assert.True(t, strings.HasPrefix(v.Kernel, "6.18"), v.Kernel)
	require.Len(t, v.Scenarios, 2)
	assert.Equal(t, "dd-bs4k", v.Scenarios[0].Scenario)
	assert.Equal(t, v.Scenarios[0].Total+v.Scenarios[1].Total, v.Summary.Total)
	assert.Equal(t, v.Summary.Total, v.Summary.Equal)
	assert.Zero(t, v.Summary.Differ())
	assert.Equal(t, 2, v.Summary.Scenarios)

	old, err := engine.KernelByName("6.6")
	require.NoError(t, err)
	v, err = Validate(context.Background(), files[1:], Recorded(""), ValidateOptions{Kernel: old})
	require.NoError(t, err, "a row that differs is no error")
	assert.Equal(t, "6.6", v.Model)
	assert.Positive(t, v.Summary.Differ(), "6.6 refuses block sizes above PAGE_SIZE")
}

// TestValidateErrors: a missing recording is a *NoRecordingError (an
// os.ErrNotExist); paths without scenarios are refused.
func TestValidateErrors(t *testing.T) {
	files, err := ScenarioFiles(filepath.Join(corpus, "dd-bs4k.scn"))
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = Validate(context.Background(), files, Recorded(dir), ValidateOptions{})
	var nr *NoRecordingError
	require.ErrorAs(t, err, &nr)
	assert.Equal(t, "dd-bs4k", nr.Scenario)
	assert.Equal(t, dir, nr.Dir)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.EqualError(t, err, "dd-bs4k: no recorded result in "+dir)

	failed := errors.New("no kernel")
	_, err = Validate(context.Background(), files, func(context.Context, string, *scenario.Scenario) (*scenario.Result, error) {
		return nil, failed
	}, ValidateOptions{})
	assert.ErrorIs(t, err, failed)

	_, err = ScenarioFiles(dir)
	assert.ErrorContains(t, err, "no *.scn scenario files")
	_, err = ScenarioFiles(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestValidationWriteText checks which rows each choice prints.
func TestValidationWriteText(t *testing.T) {
	v := Validation{Model: "6.18", Kernel: "6.18 x86_64", On: "recorded", Scenarios: []Comparison{{Scenario: "s", Rows: []Row{
		{Op: 0, Name: "total-equal", Equal: true},
		{Op: 1, Name: "op-equal", Equal: true},
		{Op: 2, Name: "op-differs", Model: "1", Kernel: "2"},
	}}}}
	for _, tt := range []struct {
		rows Rows
		want []string
	}{
		{RowsTotals, []string{"total-equal", "op-differs"}},
		{RowsAll, []string{"total-equal", "op-equal", "op-differs"}},
		{RowsDiff, []string{"op-differs"}},
	} {
		var b bytes.Buffer
		require.NoError(t, v.WriteText(&b, tt.rows))
		for _, name := range []string{"total-equal", "op-equal", "op-differs"} {
			assert.Equal(t, slices.Contains(tt.want, name), strings.Contains(b.String(), name), "%s: %s", tt.rows, name)
		}
		assert.Contains(t, b.String(), "op-differs         1      2       ≠", "a row that differs is marked")
	}
}

// TestValidateSkipsRulesTheKernelCannotApply: a live kernel without a
// scheduler a scenario names (this project's CI kernels have built bfq
// and not) leaves that scenario out, saying why, and compares the others.
func TestValidateSkipsRulesTheKernelCannotApply(t *testing.T) {
	files, err := ScenarioFiles(filepath.Join(corpus, "dd-bs4k.scn"), filepath.Join(corpus, "sparse-pages-bfq.scn"))
	require.NoError(t, err)
	noBFQ := func(ctx context.Context, path string, s *scenario.Scenario) (*scenario.Result, error) {
		if s.Device.Rules.Scheduler == "bfq" {
			return nil, fmt.Errorf("%s: host: sched=bfq: %w: the loop queue offers [none] mq-deadline kyber", s.Name, scenario.ErrRuleUnavailable)
		}
		return Recorded("")(ctx, path, s)
	}
	v, err := Validate(context.Background(), files, noBFQ, ValidateOptions{On: "host"})
	require.NoError(t, err)
	require.Len(t, v.Scenarios, 1)
	assert.Equal(t, "dd-bs4k", v.Scenarios[0].Scenario)
	assert.Equal(t, 1, v.Summary.Scenarios)
	require.Len(t, v.Skipped, 1)
	assert.Equal(t, "sparse-pages-bfq", v.Skipped[0].Scenario)
	assert.Zero(t, v.Summary.Differ())
	var b bytes.Buffer
	require.NoError(t, v.WriteText(&b, RowsDiff))
	assert.Contains(t, b.String(), "skipped sparse-pages-bfq: sparse-pages-bfq: host: sched=bfq: the kernel cannot apply the device rule: the loop queue offers [none] mq-deadline kyber\n")
}

// TestValidateKnownDifferences sets sparse-pages-bs4k beside a kernel side
// whose total of one counter is moved: on the host a counter the known
// differences list is known (the run passes), another is unexpected; a
// recording is held to every value.
func TestValidateKnownDifferences(t *testing.T) {
	files, err := ScenarioFiles(filepath.Join(corpus, "sparse-pages-bs4k.scn"))
	require.NoError(t, err)
	moved := func(counter string) KernelSide {
		return func(ctx context.Context, path string, s *scenario.Scenario) (*scenario.Result, error) {
			r, err := Recorded("")(ctx, path, s)
			if err == nil {
				for i := range r.Total {
					if r.Total[i].Name == counter {
						r.Total[i].Min, r.Total[i].Max = r.Total[i].Min+14, r.Total[i].Max+14
					}
				}
			}
			return r, err
		}
	}
	for _, tt := range []struct {
		name, on, counter string
		known, unexpected int
		summary           string
	}{
		{"host, listed", "host", "rq.insert", 1, 0, "; 1 of the 1 that differ are known differences a live run can show (docs/known-differences.md)\n"},
		{"host, not listed", "host", "rq.get", 0, 1, "within the kernel's range\n"},
		{"recorded, listed", "recorded", "rq.insert", 0, 1, "within the kernel's range\n"},
		{"host, equal", "host", "", 0, 0, "within the kernel's range\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Validate(context.Background(), files, moved(tt.counter), ValidateOptions{On: tt.on})
			require.NoError(t, err)
			assert.Equal(t, tt.known, v.Summary.Known)
			assert.Equal(t, tt.unexpected, v.Summary.Unexpected())
			assert.Equal(t, tt.known+tt.unexpected, v.Summary.Differ())
			var b bytes.Buffer
			require.NoError(t, v.WriteText(&b, RowsDiff))
			assert.True(t, strings.HasSuffix(b.String(), tt.summary), b.String())
			if tt.known > 0 {
				assert.Regexp(t, `sparse-pages-bs4k +total +rq.insert +48 +62 +≠ known\n`, b.String())
			}
		})
	}
}

// TestKnownDifferencesDoc holds LiveDifferences and docs/known-differences.md's
// table "Differences a live run can show" equal: the same scenarios and
// counters, row by row.
func TestKnownDifferencesDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/known-differences.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "## Differences a live run can show\n")
	require.True(t, ok, "known-differences has its table of live differences")
	section, _, _ = strings.Cut(section, "\n## ")
	code := regexp.MustCompile("`([^`]+)`")
	var doc []KnownDifference
	for _, line := range strings.Split(section, "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 4 || !strings.Contains(cols[1], "`") {
			continue
		}
		var d KnownDifference
		for _, m := range code.FindAllStringSubmatch(cols[1], -1) {
			d.Scenarios = append(d.Scenarios, m[1])
		}
		for _, m := range code.FindAllStringSubmatch(cols[2], -1) {
			d.Counters = append(d.Counters, m[1])
		}
		doc = append(doc, d)
	}
	live := LiveDifferences()
	require.Len(t, doc, len(live), "one row per known difference")
	for i, d := range live {
		assert.Equal(t, d.Scenarios, doc[i].Scenarios, "row %d", i+1)
		assert.Equal(t, d.Counters, doc[i].Counters, "row %d", i+1)
		assert.NotEmpty(t, d.Why)
		for _, name := range d.Scenarios {
			_, errScn := os.Stat(filepath.Join(corpus, name+".scn"))
			_, errTimed := os.Stat(filepath.Join(timedCorpus, name+".scn"))
			assert.True(t, errScn == nil || errTimed == nil, "known difference %q names a scenario of testdata/scenarios or testdata/timed", name)
		}
	}
}

// TestKnownDifferenceCovers checks the match of a scenario's counter.
func TestKnownDifferenceCovers(t *testing.T) {
	cases := []struct {
		scenario, counter string
		covered           bool
	}{
		{"read-cold-1m", "rq.read.bytes=790528", true},
		{"read-cold-4k-sector", "rq.read", true},
		{"read-cold-1m", "plug.unplug.rqs", true},
		{"read-cold-1m", "bio.split", true},
		{"read-cold-1m", "pagecache.add.pages", false},
		{"read-cold-1m", "rq.read.bytes", false},
		{"sparse-pages-bs4k", "rq.insert", true},
		{"sparse-pages-bs4k", "rq.get", false},
		{"dd-bs4k", "plug.plug", false},
		{"wberr-fsync-once", "rq.insert", true},
		{"wberr-fsync-once", "rq.get", false},
		{"dd-bs4k", "rq.insert", false},
		{"random-4k-wiops", "rq.insert", true},
		{"random-4k-wbps", "rq.insert", false},
		{"bdi-strict-1m-wbps", "rq.write.bytes=311296", true},
		{"bdi-strict-4m-wbps", "bio.write.bytes=4096", true},
		{"bdi-strict-2m-wiops", "sectors.written", true},
		{"bdi-strict-2m-wiops", "pagecache.dirty", false},
		{"bdi-maxbytes-wbps", "sectors.written", false},
	}
	for _, c := range cases {
		t.Run(c.scenario+"/"+c.counter, func(t *testing.T) {
			got := slices.ContainsFunc(LiveDifferences(), func(d KnownDifference) bool { return d.Covers(c.scenario, c.counter) })
			assert.Equal(t, c.covered, got)
		})
	}
}
