package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/host"
)

// bhsim runs the command line args and returns the exit status, stdout and
// stderr.
func bhsim(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	status := run(args, &out, &errb)
	return status, out.String(), errb.String()
}

// TestErrors runs every command-line error: each exits with status 2 and
// one line on stderr naming what is valid, and prints nothing on stdout.
// The cases run in parallel: run keeps no state between calls, and the
// refusals of a run past ten minutes each simulate for a second of wall
// time before they estimate (a slower share of a processor only makes the
// estimate longer).
func TestErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "usage: bhsim COMMAND"},
		{"unknown command", []string{"frobnicate"}, "valid: reproduce, sweep, run, validate, merge, explain, profile, calibrate, clean, web, version"},

		{"reproduce: unknown thread", []string{"reproduce", "nope"}, "valid: alloc, blocksize, iomap, lru, host)"},
		{"reproduce: unknown format", []string{"reproduce", "--format", "xml"}, "valid: text, csv, json"},
		{"reproduce: unknown profile", []string{"reproduce", "--profile", "vax"}, "valid: x86-server, helios4"},
		{"reproduce: missing profile file", []string{"reproduce", "--profile", "/nonexistent/p.json"}, "no such file"},
		{"reproduce: bad cost", []string{"reproduce", "--cost", "bios"}, "want PARAM=NS"},
		{"reproduce: unknown cost", []string{"reproduce", "--cost", "warp=1"}, "unknown parameter \"warp\""},
		{"reproduce: negative cost", []string{"reproduce", "--cost", "bios=-1"}, "want nanoseconds from 0 to 1e15"},
		{"clean: argument", []string{"clean", "stale"}, "clean takes no arguments, got 1"},
		{"web: argument", []string{"web", "now"}, "unexpected argument \"now\" (web takes --addr only)"},
		{"run: a directory", []string{"run", "../../testdata/scenarios"}, "is a directory: run takes one FILE (bhsim validate DIR"},
		{"run: bad flag value", []string{"run", "--cpus=x"}, `invalid value "x" for flag --cpus`},
		{"validate: unknown flag", []string{"validate", "--nope"}, "flag provided but not defined: --nope"},
		{"reproduce: bad flag", []string{"reproduce", "--nope"}, "flags: --cost, --cross-validate, --format, --plot, --profile"},
		{"reproduce: flag without value", []string{"reproduce", "lru", "--format"}, "flag needs an argument"},

		{"sweep: unknown machine", []string{"sweep", "--machine", "vax"}, "valid: helios4, xu-yang"},
		{"sweep: unknown kernel", []string{"sweep", "--kernel", "5.10.10,4.19"}, "--kernel: engine: unknown kernel \"4.19\" (valid: 9011495c9466"},
		{"sweep: unknown layout", []string{"sweep", "--layout", "raid5"}, "unknown layout \"raid5\" (valid: direct, raid0, raid10f2, raid10n2, raid6)"},
		{"sweep: unknown block size", []string{"sweep", "--blocksize", "3000"}, "valid: grow, logical, 512"},
		{"sweep: unknown profile", []string{"sweep", "--profile", "vax"}, "valid: x86-server"},
		{"sweep: unknown costs", []string{"sweep", "--costs", "cheap"}, "unknown costs \"cheap\" (valid: fitted, built-in)"},
		{"sweep: unknown format", []string{"sweep", "--format", "yaml"}, "valid: text, csv, json"},
		{"sweep: unknown op", []string{"sweep", "--op", "trim"}, "unknown op \"trim\" (valid: write, read)"},
		{"sweep: bad bs", []string{"sweep", "--bs", "1Q"}, "--bs: scenario: invalid size \"1Q\""},
		{"sweep: huge bs", []string{"sweep", "--bs", "8G"}, "above the largest the model simulates (64M)"},
		{"sweep: bad size", []string{"sweep", "--size", "0"}, "--size: scenario: invalid size"},
		{"sweep: one CPU", []string{"sweep", "--cpus", "1"}, "2 to 64"},
		{"sweep: bad count", []string{"sweep", "--count", "-3"}, "invalid count"},
		{"sweep: zero count", []string{"sweep", "--count", "0"}, "invalid count \"0\" (a positive number)"},
		{"sweep: count and size", []string{"sweep", "--count", "1", "--size", "1M"}, "not both"},
		{"sweep: dd past the device", []string{"sweep", "--size", "9T"}, "more than the 8.002 TB device holds"},
		{"sweep: argument", []string{"sweep", "raid0"}, "sweep takes flags only"},
		{"sweep: an empty list item", []string{"sweep", "--count", ","}, "an empty item in \",\""},
		{"sweep: a trailing comma", []string{"sweep", "--layout", "raid0,"}, "an empty item in \"raid0,\""},
		{"sweep: a run past ten minutes", []string{"sweep", "--count", "7000000", "--layout", "direct"}, "more than the 10m0s bhsim sweep runs for: ask for less (fewer axis values"},
		{"sweep: bad flag", []string{"sweep", "--preset", "6.6"}, "--kernel"},
		{"sweep: a shard as text", []string{"sweep", "--shard", "0/2"}, "--shard writes json or csv, which bhsim merge joins"},
		{"sweep: a shard past N", []string{"sweep", "--shard", "2/2", "--format", "json"}, `--shard "2/2": want K/N: shard K (from 0) of N`},
		{"sweep: a shard without N", []string{"sweep", "--shard", "1", "--format", "csv"}, `--shard "1": want K/N`},

		{"merge: no files", []string{"merge"}, "name the shards' files"},
		{"merge: a missing file", []string{"merge", "/nonexistent/s0.json"}, "no such file"},
		{"run: a list stepped", []string{"run", "--step", traces + "/sample.csv", traces + "/sample.blkparse"}, "a list of traces runs each as a trace"},
		{"run: a list sharded as text", []string{"run", "--shard", "0/2", traces + "/sample.csv", traces + "/sample.blkparse"}, "--shard writes json or csv"},

		{"explain: no op", []string{"explain"}, "name one operation first (valid: find-get-block-hit"},
		{"explain: flag first", []string{"explain", "--bsize", "512"}, "name one operation first"},
		{"explain: two ops", []string{"explain", "write-page", "find-get-block-hit"}, "name one operation"},
		{"explain: unknown op", []string{"explain", "getblk"}, "unknown operation \"getblk\" (valid: find-get-block-hit"},
		{"explain: unknown profile", []string{"explain", "write-page", "--profile", "vax"}, "valid: x86-server"},
		{"explain: unknown layout", []string{"explain", "write-page", "--layout", "jbod"}, "valid: direct, raid0"},
		{"explain: bad block size", []string{"explain", "write-page", "--bsize", "8192"}, "valid: 512, 1024, 2048, 4096"},
		{"explain: zero block size", []string{"explain", "write-page", "--bsize", "0"}, "valid: 512, 1024, 2048, 4096"},
		{"explain: huge block size", []string{"explain", "write-page", "--bsize", "4294967808"}, "valid: 512, 1024, 2048, 4096"},
		{"explain: zero count", []string{"explain", "write-page", "--count", "0"}, "a positive number, or auto"},
		{"explain: unknown kernel", []string{"explain", "iomap-write-page", "--kernel", "6.1"}, "valid: 6.6, 6.6-revert, 6.6-fix"},
		{"explain: bad bs", []string{"explain", "iomap-write-page", "--bs", "lots"}, "invalid size \"lots\""},
		{"explain: huge bs", []string{"explain", "iomap-write-page", "--bs", "100G"}, "above the largest the model simulates (64M)"},
		{"explain: block past the end", []string{"explain", "find-get-block-slow", "--block", "9999999999999"}, "past the end"},
		{"explain: dd past the device", []string{"explain", "write-page", "--count", "1000000000"}, "more than the 8.002 TB device holds (count at most 7630885)"},
		{"explain: a run past ten minutes", []string{"explain", "write-page", "--count", "7000000"}, "more than the 10m0s bhsim explain write-page runs for: ask for less (a smaller --count)"},
		{"explain: a run past ten minutes at count=auto", []string{"explain", "iomap-write-page", "--bs", "1"}, "ask for less (a smaller --count or a larger --bs)"},
		{"explain: flag of another op", []string{"explain", "write-page", "--bs", "1M"}, "flag provided but not defined: --bs (flags: --bsize, --cost, --costs, --count, --layout, --profile"},
		{"explain: crash-loss takes no profile", []string{"explain", "crash-loss", "--profile", "helios4"}, "flags: --count;"},

		{"profile: nothing", []string{"profile"}, "want list or show NAME"},
		{"profile: unknown", []string{"profile", "show", "vax"}, "valid: x86-server"},
		{"profile: bad costs", []string{"profile", "show", "helios4", "--costs", "x"}, "valid: fitted, built-in"},
		{"profile: file", []string{"profile", "show", "p.json"}, "show takes a built-in profile's name"},

		{"calibrate: no source", []string{"calibrate"}, "want exactly one of --host"},
		{"calibrate: two sources", []string{"calibrate", "--host", "--recorded", "x.json"}, "want exactly one of --host"},
		{"calibrate: runs of a record", []string{"calibrate", "--recorded", "x.json", "--runs", "3"}, "go with --host"},
		{"calibrate: argument", []string{"calibrate", "--host", "now"}, "takes no arguments"},
		{"calibrate: runs", []string{"calibrate", "--host", "--runs", "0"}, "want 1 to 100"},

		{"version: argument", []string{"version", "now"}, "unexpected argument"},
		{"version: format", []string{"version", "--format", "csv"}, "valid: text, json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, out, errs := bhsim(tc.args...)
			assert.Equal(t, 2, status)
			assert.Contains(t, errs, tc.want)
			assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
			assert.NotContains(t, errs, "bhsim sweep: sweep:", "no doubled prefix")
			assert.Empty(t, out)
		})
	}
}

func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"usage: bhsim COMMAND", "reproduce", "version"}},
		{[]string{"reproduce", "--help"}, []string{"\n  --plot DIR", "helios4, xu-yang-board", "blocksize  set_init_blocksize revert (profile helios4)"}},
		{[]string{"sweep", "-h"}, []string{"bhsim sweep --layout raid0,raid6", "x86-server, helios4", "-kernel LIST", "fitted"}},
		{[]string{"explain", "--help"}, []string{"iomap-write-page", "--bsize (default 512)", "--count (default auto)"}},
		{[]string{"explain", "write-page", "--help"}, []string{"-bsize size"}},
		{[]string{"profile", "--help"}, []string{"list | show NAME"}},
		{[]string{"version", "--help"}, []string{"--format text|json"}},
		{[]string{"clean", "--help"}, []string{"usage: bhsim clean\n\nRemoves what host runs", "SIGKILL"}},
		{[]string{"web", "--help"}, []string{"usage: bhsim web [--addr HOST:PORT]", "--addr HOST:PORT", "127.0.0.1:8080"}},
	} {
		status, out, errs := bhsim(tc.args...)
		assert.Equal(t, 0, status, tc.args)
		for _, w := range tc.want {
			assert.Contains(t, out, w, tc.args)
		}
		assert.Empty(t, errs)
	}
	_, out, _ := bhsim("clean", "--help")
	assert.NotContains(t, out, "flags:", "a command without flags lists none")
}

// TestCalibrateHost runs calibrate --host: on this machine's kernel with
// BHSIM_KERNEL=1 as root, where it prints both halves' errors and writes a
// profile every command reads back; without root it says it skipped.
func TestCalibrateHost(t *testing.T) {
	save := filepath.Join(t.TempDir(), "host.json")
	if os.Geteuid() != 0 {
		status, out, _ := bhsim("calibrate", "--host", "--save", save)
		assert.Equal(t, 0, status)
		assert.Contains(t, out, "skipped: it needs root")
		assert.NoFileExists(t, save)
		return
	}
	if os.Getenv("BHSIM_KERNEL") != "1" {
		t.Skip("set BHSIM_KERNEL=1 to calibrate on the host kernel")
	}
	status, out, errs := bhsim("calibrate", "--host", "--runs", "1", "--save", save)
	require.Equal(t, 0, status, errs)
	for _, want := range []string{"fitted cells", "predicted cells", "leave-one-out", "written to " + save} {
		assert.Contains(t, out, want)
	}
	status, out, errs = bhsim("reproduce", "--profile", save, "lru")
	require.Equal(t, 0, status, errs)
	assert.Contains(t, out, "profile x86-host")
}

// TestCalibrateRecorded fits the timed corpus's recorded calibration
// without root: the profile it writes is byte for byte the corpus's
// x86-host.json, which validate prices the corpus with, so that profile is
// this code's fit of what was measured; a record that is not one is
// refused.
func TestCalibrateRecorded(t *testing.T) {
	save := filepath.Join(t.TempDir(), "host.json")
	status, out, errs := bhsim("calibrate", "--recorded", "../../testdata/timed/calibration.json", "--save", save)
	require.Equal(t, 0, status, errs)
	for _, want := range []string{"host calibration on 6.18", "fitted cells", "predicted cells", "leave-one-out", "written to " + save} {
		assert.Contains(t, out, want)
	}
	got, err := os.ReadFile(save)
	require.NoError(t, err)
	want, err := os.ReadFile("../../testdata/timed/x86-host.json")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "refit: go run ./cmd/bhsim calibrate --recorded testdata/timed/calibration.json --save testdata/timed/x86-host.json")

	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"schema": "bhsim-host-calibration/1", "clock": "wall", "runs": 0}`), 0o644))
	status, _, errs = bhsim("calibrate", "--recorded", bad, "--save", save)
	assert.Equal(t, 1, status)
	assert.Contains(t, errs, "want all positive")
}

// TestCleanLive runs bhsim clean on the host: it finds nothing of a live
// process's, and leaves no loop device or tracing instance of its own.
func TestCleanLive(t *testing.T) {
	if os.Getenv("BHSIM_KERNEL") != "1" {
		t.Skip("runs on the host kernel: set BHSIM_KERNEL=1 (as root)")
	}
	if err := host.Check(); err != nil {
		t.Skipf("BHSIM_KERNEL=1 but the host runner cannot run: %v", err)
	}
	status, out, errs := bhsim("clean")
	require.Equal(t, 0, status, errs)
	assert.Regexp(t, `^(removed .*\n)*(clean: nothing left behind by a dead run\n)?$`, out)
	left, err := host.Leftovers(os.Getpid())
	require.NoError(t, err)
	assert.Empty(t, left)
}
