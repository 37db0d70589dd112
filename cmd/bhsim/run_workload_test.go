package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/report"
)

// traces is the shipped trace samples' directory.
const traces = "../../bench/source/testdata/traces"

func TestRunWorkloadOutputs(t *testing.T) {
	gen := []string{"run", "--gen", "random:dev=16M,n=3000,reads=0.3,cpus=2,fsync=100", "-s", "5"}
	status, text, errs := bhsim(gen...)
	require.Equal(t, 0, status, errs)
	for _, want := range []string{"seed 5", "profile x86-server, built-in costs", "p99.9", "bottleneck bound", "disk (ssd)",
		"throughput over simulated time", "fsync"} {
		assert.Contains(t, text, want)
	}
	_, again, _ := bhsim(gen...)
	assert.Equal(t, text, again, "the same seed prints the same bytes")
	_, other, _ := bhsim("run", "--gen", "random:dev=16M,n=3000,reads=0.3,cpus=2,fsync=100", "-s", "6")
	assert.NotEqual(t, text, other)

	status, js, errs := bhsim(append(gen, "--format", "json")...)
	require.Equal(t, 0, status, errs)
	var r engine.RunResult
	require.NoError(t, json.Unmarshal([]byte(js), &r))
	assert.Equal(t, engine.RunSchema, r.Schema)
	require.NotNil(t, r.Seed)
	assert.Equal(t, uint64(5), *r.Seed)
	assert.Equal(t, 2, r.CPUs)

	status, csv, errs := bhsim(append(gen, "--format", "csv")...)
	require.Equal(t, 0, status, errs)
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	assert.Equal(t, "schema,workload,section,name,metric,value", lines[0])
	assert.Contains(t, csv, report.RunCSVSchema+",")
	assert.Contains(t, csv, ",run,,seed,5\n")
	assert.Contains(t, csv, ",latency,read,p999_ns,")
}

func TestRunWorkloadInputs(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"blkparse", []string{filepath.Join(traces, "sample.blkparse")}, "(trace (blkparse))"},
		{"fio v2", []string{filepath.Join(traces, "sample-v2.iolog")}, "(trace (fio))"},
		{"fio v3", []string{filepath.Join(traces, "sample-v3.iolog")}, "(trace (fio))"},
		{"csv", []string{"--dev", "64K", "--lbs", "1K", filepath.Join(traces, "sample.csv")}, "64K device"},
		{"scenario", []string{"--dist", "../../testdata/scenarios/dd-bs4k.scn"}, "(trace (scenario))"},
		{"buffers", []string{"--access", "buffers", "--mrc", "1,4", "--gen", "zipf:dev=1M,n=2000,size=1K,seed=1", "--lbs", "1K"}, "miss-ratio curve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, errs := bhsim(append([]string{"run"}, tc.args...)...)
			require.Equal(t, 0, status, errs)
			assert.Contains(t, out, tc.want)
			assert.Contains(t, out, "latency, simulated µs")
			assert.Regexp(t, `\(all \d+ CPUs: the busy time of every CPU and of kswapd, shared over them`, out, "the all-CPU line is explained")
		})
	}
}

func TestRunStepQuiz(t *testing.T) {
	status, quiz, errs := bhsim("run", "--step", "--quiz", "-s", "3")
	require.Equal(t, 0, status, errs)
	assert.Contains(t, quiz, "seed 3")
	assert.Contains(t, quiz, "Cost:   ?")
	assert.Contains(t, quiz, "--show for the answers")
	_, show, _ := bhsim("run", "--step", "--quiz", "--show", "-s", "3")
	assert.NotContains(t, show, "?")
	assert.Contains(t, show, "Access: page")
	golden, err := os.ReadFile("../../bench/engine/testdata/step/quiz-seed3-show.golden")
	require.NoError(t, err)
	assert.Equal(t, string(golden), show, "the CLI's fresh problem is the library's golden one")
}

func TestRunPlot(t *testing.T) {
	dir := t.TempDir()
	status, _, errs := bhsim("run", "--gen", "random:dev=4M,n=500,reads=0.5,seed=1", "--plot", dir)
	require.Equal(t, 0, status, errs)
	for _, f := range []string{"latency-cdf.svg", "latency-cdf.png", "throughput.svg", "throughput.png"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Greater(t, st.Size(), int64(1000), f)
	}
}

func TestRunWorkloadErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("write,0,4K\nwrite,4K,4K\nrd,0,4K\n"), 0o644))
	empty := filepath.Join(t.TempDir(), "empty.csv")
	require.NoError(t, os.WriteFile(empty, []byte("# no records\n"), 0o644))
	long := filepath.Join(t.TempDir(), "long.csv")
	require.NoError(t, os.WriteFile(long, []byte("write,0,4K\nwrite,1M,4K\n"), 0o644))
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		want   string
	}{
		{"bad record", []string{bad}, 2, "bad.csv:3: csv: unknown op"},
		{"empty trace", []string{empty}, 2, "empty.csv: no records"},
		{"record past the device", []string{"--dev", "64K", long}, 2, "long.csv:2: write of 4096 bytes at offset 1048576 ends at 1052672, past the device's end"},
		{"step as json", []string{"--step", "--format", "json", "--gen", "seq:dev=1M,n=1"}, 2, "--step prints text"},
		{"mrc with an empty item", []string{"--mrc", "1,,4", "--gen", "seq:dev=1M,n=1"}, 2, "an empty item"},
		{"bad spec", []string{"--gen", "random:n=5"}, 2, "dev="},
		{"gen and file", []string{"--gen", "seq:dev=1M,n=1", bad}, 2, "not both"},
		{"seed of a trace", []string{"-s", "4", bad}, 2, "-s applies to a generator"},
		{"bad seed", []string{"--gen", "seq:dev=1M,n=1", "-s", "x"}, 2, "want a decimal seed"},
		{"quiz alone", []string{"--quiz", "--gen", "seq:dev=1M,n=1"}, 2, "apply to --step"},
		{"show alone", []string{"--step", "--show", "--gen", "seq:dev=1M,n=1"}, 2, "--show reveals"},
		{"disk", []string{"--disk", "tape", "--gen", "seq:dev=1M,n=1"}, 2, "want ssd, hdd or null"},
		{"access", []string{"--access", "mmap", "--gen", "seq:dev=1M,n=1"}, 2, "want auto, pagecache or buffers"},
		{"mrc", []string{"--mrc", "x", "--gen", "seq:dev=1M,n=1"}, 2, "--mrc"},
		{"cpus", []string{"--cpus", "-1", "--gen", "seq:dev=1M,n=1"}, 2, "CPUs"},
		{"host", []string{"--on", "host", "--gen", "seq:dev=1M,n=1"}, 2, "runs on the model"},
		{"long step", []string{"--step", "--gen", "seq:dev=1M,n=20000"}, 2, "more than 10000"},
		{"cpus of a scenario", []string{"--cpus", "4", "../../testdata/scenarios/dd-bs4k.scn"}, 2, "--cpus applies to a scenario run as a workload: add --dist"},
		{"profile of a scenario", []string{"--profile", "helios4", "../../testdata/scenarios/dd-bs4k.scn"}, 2, "--profile applies to a scenario run as a workload"},
		{"lbs of a scenario", []string{"--dist", "--lbs", "1K", "../../testdata/scenarios/dd-bs4k.scn"}, 2, "--dev, --lbs and --rules describe a trace's or a generator's device"},
		{"rules of a scenario", []string{"--dist", "--rules", "wbps=8M", "../../testdata/scenarios/dd-bs4k.scn"}, 2, "a scenario's is its device line"},
		{"rules below a bound", []string{"--rules", "wbps=8", "--gen", "seq:dev=1M,n=1"}, 2, `--rules "wbps=8": wbps=8 is below the bound`},
		{"rules of another key", []string{"--rules", "size=1M", "--gen", "seq:dev=1M,n=1"}, 2, `--rules "size=1M": unknown key`},
		{"dev of a generator", []string{"--gen", "seq:dev=1M,n=1", "--dev", "2M"}, 2, "--dev is a trace's device size"},
		{"lbs not a power of two", []string{"--lbs", "3K", bad}, 2, "not a power of two from 512 to 4K"},
		{"lbs above a page", []string{"--lbs", "8K", bad}, 2, "not a power of two from 512 to 4K"},
		{"device of partial sectors", []string{"--gen", "seq:dev=7,n=1,size=3"}, 2, "not a whole number of 512-byte sectors"},
		{"queue depth", []string{"--qd", "-1", "--gen", "seq:dev=1M,n=1"}, 2, "queue depth -1"},
		{"replay action", []string{"--replay", "X", bad}, 2, `--replay "X": want Q, D, I or C`},
		{"show without step or FILE", []string{"--show", "-s", "3"}, 2, "--quiz and --show apply to --step"},
		{"seed without step or FILE", []string{"-s", "3"}, 2, "makes a fresh problem with --step only (bhsim run --step -s 3)"},
		{"trace device of a generator", []string{"--trace-dev", "8,0", "--gen", "seq:dev=1M,n=1"}, 2, "choose what of a trace FILE to replay and how to read it"},
		{"trace device of CSV", []string{"--trace-dev", "8,0", bad}, 2, "applies to a trace whose records name devices (blkparse, msr, spc, alibaba, disksim, columns), not to a csv one"},
		{"trace device it does not hold", []string{"--trace-dev", "8,0", filepath.Join(traces, "sample.blkparse")}, 2, "no records of device 8,0"},
		{"replay of a CSV trace", []string{"--replay", "Q", bad}, 2, "applies to a blkparse trace, not to a csv one"},
		{"trace device of a fresh problem", []string{"--step", "-s", "3", "--trace-dev", "8,0"}, 2, "choose what of a trace FILE to replay and how to read it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, errs := bhsim(append([]string{"run"}, tc.args...)...)
			assert.Equal(t, tc.status, status)
			assert.Contains(t, errs, tc.want)
			assert.Empty(t, out)
		})
	}
}

// TestRunTraceSelectFlags: --trace-dev, --replay and --trace-file replay
// the chosen device, action and file of traces that hold several (each
// choice gives its own count of operations).
func TestRunTraceSelectFlags(t *testing.T) {
	dir := t.TempDir()
	blk := filepath.Join(dir, "two.blkparse")
	require.NoError(t, os.WriteFile(blk, []byte("  8,0    0        1     0.000000000     1  Q   W 0 + 8 [a]\n"+
		"  8,16   0        2     0.000000100     1  Q   W 8 + 8 [a]\n"+
		"  8,16   0        3     0.000000200     1  Q   W 16 + 8 [a]\n"+
		"  8,16   0        4     0.000000300     1  D   W 8 + 16 [a]\n"), 0o644))
	fio := filepath.Join(dir, "two.iolog")
	require.NoError(t, os.WriteFile(fio, []byte("fio version 2 iolog\n/dev/sdb add\n/dev/sdc add\n/dev/sdb open\n/dev/sdc open\n"+
		"/dev/sdb write 0 512\n/dev/sdc write 4096 1024\n/dev/sdc write 8192 1024\n/dev/sdc read 0 512\n"), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"the first device", []string{"--trace-dev", "8,0", blk}, "\n1 ops"},
		{"the second device", []string{"--trace-dev", "8,16", blk}, "\n2 ops"},
		{"its issued requests", []string{"--trace-dev", "8,16", "--replay", "D", blk}, "\n1 ops"},
		{"the first file", []string{"--trace-file", "/dev/sdb", fio}, "\n1 ops"},
		{"the second file", []string{"--trace-file", "/dev/sdc", fio}, "\n3 ops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, errs := bhsim(append([]string{"run"}, tc.args...)...)
			require.Equal(t, 0, status, errs)
			assert.Contains(t, out, tc.want)
		})
	}
	status, _, errs := bhsim("run", blk)
	assert.Equal(t, 2, status)
	assert.Contains(t, errs, "(choose one with --trace-dev)")
	assert.NotContains(t, errs, "TraceSelect.Device", "the flag, not the library's field")
	status, _, errs = bhsim("run", fio)
	assert.Equal(t, 2, status)
	assert.Contains(t, errs, "(choose one with --trace-file)", "the flag that sets the library's field")
}

// TestRunOverBudget: a workload estimated past report.RunLimit is refused,
// as sweep and explain refuse one, with status 2, one line on stderr and
// how to ask for less. It takes the second the estimate waits for
// (report.EstimateAfter).
func TestRunOverBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the budget's estimate: not under -short")
	}
	status, out, errs := bhsim("run", "--gen", "random:dev=1G,n=100000000000")
	assert.Equal(t, 2, status, errs)
	assert.Empty(t, out)
	assert.Regexp(t, `^bhsim run: this run would take about \d+h\d+m0s .*more than the 10m0s bhsim run runs for: ask for less \(a smaller n=, or a shorter trace\)\n$`, errs)
}

// TestRunRules: --rules gives a generator's device a known speed: 4 MiB of
// writes and an fsync at wbps=8M take half a second, give or take a
// slice of the rule (100 ms), where the bare SSD takes milliseconds; the
// header and the JSON name the rules, and the rule is the bound.
func TestRunRules(t *testing.T) {
	gen := []string{"run", "--gen", "seq:dev=16M,n=64,size=64K,reads=0,fsync=64", "--format", "json"}
	durations := map[string]float64{}
	for _, rules := range []string{"", "wbps=8M"} {
		args := gen
		if rules != "" {
			args = append(append([]string{}, gen...), "--rules", rules)
		}
		status, js, errs := bhsim(args...)
		require.Equal(t, 0, status, errs)
		var r engine.RunResult
		require.NoError(t, json.Unmarshal([]byte(js), &r))
		assert.Equal(t, rules, r.Rules)
		durations[rules] = r.DurationNS / 1e6
		if rules != "" {
			assert.Equal(t, "blk-throttle (writes)", r.Bound.Resource)
		}
	}
	assert.Less(t, durations[""], 50.0, "the SSD alone: %v ms", durations[""])
	assert.InDelta(t, 500, durations["wbps=8M"], 100, "4 MiB at 8 MiB/s: %v ms", durations["wbps=8M"])
	status, text, errs := bhsim("run", "--gen", "seq:dev=16M,n=8,size=64K,reads=0", "--rules", "wbps=8M strict_limit=1 max_bytes=1M")
	require.Equal(t, 0, status, errs)
	assert.Contains(t, text, "device rules wbps=8M max_bytes=1M strict_limit=1")
}
