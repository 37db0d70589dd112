package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/host"
	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/scenario"
)

// corpus is the host-kernel scenario corpus, recorded under
// ../kernel/6.18 beside it.
const corpus = "../../testdata/scenarios"

// TestRunFormats runs one corpus scenario in every format: the text names
// the runner and kernel and prints each operation's outcome; the JSON is
// the result RunModel returns; the CSV has one row per value.
func TestRunFormats(t *testing.T) {
	file := filepath.Join(corpus, "rmw-uncached-bs4k.scn")
	s, err := scenario.ParseFile(file)
	require.NoError(t, err)
	want, err := engine.RunModel(context.Background(), s, engine.ModelOptions{})
	require.NoError(t, err)

	status, out, errs := bhsim("run", file)
	require.Equal(t, 0, status, errs)
	for _, w := range []string{"scenario rmw-uncached-bs4k on the model (kernel 6.18", "2. pwrite a off=1K len=512 fill=0x11",
		"rmw.read.bios 1,", "ledger", "fsync at op 3 on a: ok", "data 0x00*1024 0x11*512 0x00*2560"} {
		assert.Contains(t, out, w)
	}

	status, out, errs = bhsim("run", "--format", "json", file)
	require.Equal(t, 0, status, errs)
	got, err := scenario.DecodeResult([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, scenario.ResultSchema, got.Schema)
	require.NotNil(t, got.Tool, "the result names its writer, as every output does")
	assert.Equal(t, report.CurrentTool(), *got.Tool)
	got.Tool = nil
	assert.Equal(t, want, got)

	status, out, errs = bhsim("run", "--format", "csv", "--kernel", "5.10.10", file)
	require.Equal(t, 0, status, errs)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"schema", "scenario", "runner", "op", "operation", "kind", "name", "value"}, rows[0])
	assert.Contains(t, rows, []string{report.ResultCSVSchema, "rmw-uncached-bs4k", "model", "1", "open a rdwr", "result", "block_size", "512"},
		"5.10.10's set_init_blocksize takes the logical block size")
	assert.Contains(t, rows, []string{report.ResultCSVSchema, "rmw-uncached-bs4k", "model", "4", "pread a off=0 len=4K", "counter", "bio.read", "7"},
		"a cold read of 512-byte blocks: one bio per block not already read")
}

// summaryLine matches validate's summary.
var summaryLine = regexp.MustCompile(`(\d+) of (\d+) values equal over (\d+) scenarios`)

// TestValidateRecorded compares the whole corpus with its recordings: the
// summary counts every value, and every value is equal (the model
// reproduces Linux 6.18 on the corpus; docs/known-differences.md says what
// a live run may show beyond the recorded ranges). The JSON says the same.
func TestValidateRecorded(t *testing.T) {
	status, out, errs := bhsim("validate", corpus)
	require.Equal(t, 0, status, "%s\n%s", errs, out)
	m := summaryLine.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	equal, _ := strconv.Atoi(m[1])
	total, _ := strconv.Atoi(m[2])
	scenarios, _ := strconv.Atoi(m[3])
	assert.GreaterOrEqual(t, scenarios, 40)
	assert.Greater(t, total, 40*scenarios, "many values per scenario")
	assert.Equal(t, total, equal)
	assert.Contains(t, out, "dd-bs4k                    total  bio.write ")
	assert.NotContains(t, out, "model's prices", "no recording of this corpus holds times")

	status, out, errs = bhsim("validate", "--format", "json", "--rows", "diff", corpus)
	require.Equal(t, 0, status, errs)
	var v report.Validation
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, report.ValidateSchema, v.Schema)
	assert.Equal(t, scenarios, v.Summary.Scenarios)
	assert.Equal(t, total, v.Summary.Total)
	assert.Equal(t, v.Summary.Total, v.Summary.Deterministic+v.Summary.Ranged)
	assert.Positive(t, v.Summary.Ranged, "the kernel varied on some readahead counters")
	assert.True(t, strings.HasPrefix(v.Kernel, "6.18"), v.Kernel)
}

// TestValidateTimedPrices validates a scenario of the timed corpus: its
// times are priced by the corpus's own calibration, which the output names.
func TestValidateTimedPrices(t *testing.T) {
	status, out, errs := bhsim("validate", "../../testdata/timed/dd-wbps-bs4k.scn")
	require.Equal(t, 0, status, "%s\n%s", errs, out)
	assert.Contains(t, out, "model's disk: the loop device measured with the recording")
	assert.Contains(t, out, "model's prices: x86-host: this machine's kernel (6.18")
	assert.NotContains(t, out, "calibrated before the first scenario", "a recording is priced by its own sitting's calibration")
	assert.Contains(t, out, "timed values within")
}

// TestValidateDetects gives validate a recording of another scenario, and
// a model of another kernel: it prints the differing rows, exits 1 and says
// how many differ.
func TestValidateDetects(t *testing.T) {
	dir := t.TempDir()
	scn, rec := filepath.Join(dir, "scenarios"), filepath.Join(dir, "kernel", "6.18")
	require.NoError(t, os.MkdirAll(scn, 0o755))
	require.NoError(t, os.MkdirAll(rec, 0o755))
	b, err := os.ReadFile(filepath.Join(corpus, "dd-bs4k.scn"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(scn, "dd-bs4k.scn"), b, 0o644))
	other, err := os.ReadFile(filepath.Join(corpus, "..", "kernel", "6.18", "dd-bs16k.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(rec, "dd-bs4k.json"), other, 0o644))

	status, out, errs := bhsim("validate", "--rows", "diff", scn)
	assert.Equal(t, 1, status)
	assert.Contains(t, out, "≠")
	assert.NotContains(t, out, " =\n", "--rows diff prints only differences")
	assert.Contains(t, errs, "compared values differ")

	status, _, errs = bhsim("validate", "--kernel", "6.6", filepath.Join(corpus, "bszset-last-close-16k.scn"))
	assert.Equal(t, 1, status, "v6.6 refuses block sizes above PAGE_SIZE")
	assert.Contains(t, errs, "compared values differ")

	status, _, errs = bhsim("validate", "--recorded", t.TempDir(), filepath.Join(corpus, "dd-bs4k.scn"))
	assert.Equal(t, 1, status)
	assert.Contains(t, errs, "no recorded result in")
}

// TestRunValidateErrors checks the command-line mistakes of run and
// validate: status 2 and one line naming what is valid.
func TestRunValidateErrors(t *testing.T) {
	file := filepath.Join(corpus, "dd-bs4k.scn")
	bad := filepath.Join(t.TempDir(), "bad.scn")
	require.NoError(t, os.WriteFile(bad, []byte("device size=1M\npwrite a off=0 len=1\n"), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"run: no file", []string{"run"}, "want one scenario FILE"},
		{"run: two files", []string{"run", file, file}, "want one scenario FILE"},
		{"run: missing file", []string{"run", "/nonexistent.scn"}, "no such file"},
		{"run: bad scenario", []string{"run", bad}, "bad.scn:2"},
		{"run: unknown on", []string{"run", "--on", "vm", file}, "valid: model, host"},
		{"run: unknown kernel", []string{"run", "--kernel", "2.6", file}, "valid: 9011495c9466"},
		{"run: runs on the model", []string{"run", "--runs", "3", file}, "--runs and --trace-buffer-kb apply to --on host"},
		{"run: a trace buffer on the model", []string{"run", "--trace-buffer-kb", "65536", file}, "--runs and --trace-buffer-kb apply to --on host"},
		{"run: a trace buffer for a workload", []string{"run", "--trace-buffer-kb", "65536", "--gen", "random:dev=1M,n=10"}, "a workload of one's own runs on the model"},
		{"run: kernel on the host", []string{"run", "--on", "host", "--kernel", "6.6", file}, "--kernel applies to --on model"},
		{"run: zero runs", []string{"run", "--on", "host", "--runs", "0", file}, "want 1 to 100"},
		{"run: format", []string{"run", "--format", "xml", file}, "valid: text, csv, json"},
		{"validate: nothing", []string{"validate"}, "want at least one scenario DIR or FILE"},
		{"validate: empty dir", []string{"validate", t.TempDir()}, "no *.scn scenario files"},
		{"validate: unknown on", []string{"validate", "--on", "vm", file}, "valid: recorded, host"},
		{"validate: rows", []string{"validate", "--rows", "some", file}, "valid: totals, all, diff"},
		{"validate: format", []string{"validate", "--format", "csv", file}, "valid: text, json"},
		{"validate: runs of a recording", []string{"validate", "--runs", "0", file}, "--runs and --trace-buffer-kb apply to --on host"},
		{"validate: a trace buffer of a recording", []string{"validate", "--trace-buffer-kb", "65536", file}, "--runs and --trace-buffer-kb apply to --on host"},
		{"validate: recording on the host", []string{"validate", "--on", "host", "--recorded", ".", file}, "--recorded applies to --on recorded"},
		{"validate: kernel", []string{"validate", "--kernel", "7.0", file}, "valid: 9011495c9466"},
		{"validate: runs", []string{"validate", "--on", "host", "--runs", "101", file}, "want 1 to 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, errs := bhsim(tc.args...)
			assert.Equal(t, 2, status)
			assert.Contains(t, errs, tc.want)
			assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
			assert.Empty(t, out)
		})
	}
}

// TestValidateHost runs two corpus scenarios on the live kernel (with
// BHSIM_KERNEL=1, as root) beside the model, and one of the timed corpus,
// priced by a calibration measured before it (fsyncs of a clean device:
// no data pages, whose removals a single live run can see vary), and
// checks that each run left no loop device, mount, tracing instance or
// directory behind.
func TestValidateHost(t *testing.T) {
	if os.Getenv("BHSIM_KERNEL") != "1" {
		t.Skip("set BHSIM_KERNEL=1 to validate on the host kernel (needs root, loop devices and tracefs)")
	}
	if err := host.Check(); err != nil {
		t.Skipf("BHSIM_KERNEL=1 but the host runner cannot run: %v", err)
	}
	status, out, errs := bhsim("validate", "--on", "host", "--runs", "1",
		filepath.Join(corpus, "dd-bs4k.scn"), filepath.Join(corpus, "bszset-last-close-16k.scn"))
	assert.Equal(t, 0, status, "%s\n%s", errs, out)
	assert.Regexp(t, summaryLine, out)
	left, err := host.Leftovers(os.Getpid())
	require.NoError(t, err)
	assert.Empty(t, left)

	status, out, errs = bhsim("validate", "--on", "host", "--runs", "1", "../../testdata/timed/fsync-flushes-wiops.scn")
	assert.Equal(t, 0, status, "%s\n%s", errs, out)
	assert.Contains(t, out, "calibrated before the first scenario", "a live run is priced by a calibration of its own sitting")
	assert.Contains(t, out, "model's disk: the host's loop device, measured now")
	left, err = host.Leftovers(os.Getpid())
	require.NoError(t, err)
	assert.Empty(t, left)

	status, out, _ = bhsim("run", "--on", "host", filepath.Join(corpus, "rmw-uncached-bs4k.scn"))
	assert.Equal(t, 0, status)
	assert.Contains(t, out, "on the kernel")
	assert.Contains(t, out, "ns per call")
	left, err = host.Leftovers(os.Getpid())
	require.NoError(t, err)
	assert.Empty(t, left)
}
