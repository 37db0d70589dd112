package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withStdin runs f with standard input reading text through a pipe.
func withStdin(t *testing.T, text string, f func()) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = saved; r.Close() }()
	go func() { w.Write([]byte(text)); w.Close() }()
	f()
}

// TestRunPublicTraces runs each public format's sample, compressed ones,
// standard input and a FIFO, each told from its content or forced.
func TestRunPublicTraces(t *testing.T) {
	zst, err := os.ReadFile(filepath.Join(traces, "sample.csv.zst"))
	require.NoError(t, err)
	opaque := filepath.Join(t.TempDir(), "trace.bin")
	require.NoError(t, os.WriteFile(opaque, zst, 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"msr", []string{filepath.Join(traces, "msr-hm_0.csv")}, []string{"(trace (msr))", "\n6 ops", "3547M device"}},
		{"spc", []string{filepath.Join(traces, "financial.spc")}, []string{"(trace (spc))", "\n6 ops"}},
		{"alibaba", []string{filepath.Join(traces, "alibaba-419.csv")}, []string{"(trace (alibaba))", "\n5 ops"}},
		{"disksim", []string{filepath.Join(traces, "sample.disksim")}, []string{"(trace (disksim))", "\n5 ops"}},
		{"fio log", []string{filepath.Join(traces, "fio-randrw_clat.1.log")}, []string{"(trace (fiolog))", "\n6 ops", "discard"}},
		{"libcachesim", []string{filepath.Join(traces, "libcachesim.csv")}, []string{"(trace (columns))", "\n5 ops"}},
		{"columns forced", []string{"--csv-columns", "time=1:ms,op=2,length=3,offset=4:sector", filepath.Join(traces, "libcachesim.csv")},
			[]string{"(trace (columns))", "\n5 ops"}},
		{"saved blkparse", []string{filepath.Join(traces, "saved.blkparse")}, []string{"(trace (blkparse))", "\n2 ops"}},
		{"zstd by magic", []string{"--dev", "64K", "--lbs", "1K", opaque}, []string{"(trace (csv))", "\n7 ops"}},
		{"format forced", []string{"--trace-format", "spc", filepath.Join(traces, "financial.spc")}, []string{"(trace (spc))"}},
		{"no stall", []string{"--replay-no-stall", "--disk", "null", filepath.Join(traces, "msr-hm_0.csv")}, []string{"\n6 ops"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, errs := bhsim(append([]string{"run"}, tc.args...)...)
			require.Equal(t, 0, status, errs)
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
		})
	}

	// Read in one pass, a trace prints what its two passes print.
	for _, name := range []string{"msr-hm_0.csv", "sample.blkparse", "sample.csv.zst"} {
		args := []string{"run", "--dev", "64G", "--cpus", "4", filepath.Join(traces, name)}
		status, two, errs := bhsim(args...)
		require.Equal(t, 0, status, errs)
		status, one, errs := bhsim(append(args, "--one-pass")...)
		require.Equal(t, 0, status, errs)
		assert.Equal(t, two, one, name)
	}

	// The MSR sample's events span 5.3 s of its 2007 clock: 5.3 s simulated.
	_, out, _ := bhsim("run", "--disk", "null", filepath.Join(traces, "msr-hm_0.csv"))
	assert.Contains(t, out, "in 5.332 s simulated")
	_, out, _ = bhsim("run", "--disk", "null", "--replay-time-scale", "200%", filepath.Join(traces, "msr-hm_0.csv"))
	assert.Contains(t, out, "in 2.666 s simulated", "fio's 200%: twice the rate")

	withStdin(t, string(zst), func() {
		status, out, errs := bhsim("run", "--dev", "64K", "--cpus", "2", "-")
		require.Equal(t, 0, status, errs)
		assert.Contains(t, out, "workload - (trace (csv))")
		assert.Contains(t, out, "\n7 ops")
	})

	fifo := filepath.Join(t.TempDir(), "trace.fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.WriteString(strings.Repeat("write,0,4K\n", 100))
			f.Close()
		}
	}()
	status, out, errs := bhsim("run", "--dev", "1M", fifo)
	require.Equal(t, 0, status, errs)
	assert.Contains(t, out, "\n100 ops")
}

// TestRunTraceRefusals: what a trace cannot give is refused with status 2
// and a message naming the format, the limit or the flag.
func TestRunTraceRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	fioNoOffsets := write("job_lat.1.log", "1, 120384, 0, 4096, 0\n2, 98816, 1, 4096, 0\n")
	orphans := write("old.blkparse", strings.Repeat("  8,0    0        1     0.000000000   697  M  WS 100 + 8 [jbd2]\n", 6))
	truncated := write("cut.blkparse", "  8,0    0        1     0.000000000   697  Q  WS 223490 +\n")
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"fio log without offsets", []string{fioNoOffsets}, "", "cannot be replayed: fio writes offsets with log_offset=1"},
		{"stdin without --dev", []string{"-"}, "write,0,4K\n", "bhsim run: -: is read in one pass (standard input, a pipe or a FIFO), so its device size cannot come from a first pass over it: give the device's size (--dev)"},
		{"stdin on a second CPU", []string{"--dev", "1M", "-"}, "write,0,4K,0\nwrite,0,4K,3\n", "-:2: a record of CPU 3, but a trace read in one pass runs on 1 CPU unless told how many: its CPUs are not known before its end; give the CPUs to run on (--cpus)"},
		{"stdin with a curve", []string{"--dev", "1M", "--mrc", "4", "-"}, "write,0,4K\n", "a miss-ratio curve reruns the workload"},
		{"merges without their Q", []string{orphans}, "", "replay its D (issued) events (--replay D) instead"},
		{"truncated after SECTOR +", []string{truncated}, "", `cut.blkparse:1: blkparse: "223490 +" is truncated`},
		{"unknown format", []string{"--trace-format", "pcap", fioNoOffsets}, "", `--trace-format "pcap": unknown trace format "pcap" (want blkparse, fio, csv, scenario, msr, spc, alibaba, disksim, fiolog, columns)`},
		{"bad columns", []string{"--csv-columns", "offset=0", fioNoOffsets}, "", `--csv-columns "offset=0": a column map needs a length column`},
		{"bad time scale", []string{"--replay-time-scale", "0", filepath.Join(traces, "msr-hm_0.csv")}, "", `--replay-time-scale "0": want a positive factor`},
		{"columns of a generator", []string{"--csv-columns", "length=0", "--gen", "seq:dev=1M,n=1"}, "", "--csv-columns choose what of a trace FILE"},
		{"one pass without --dev", []string{"--one-pass", fioNoOffsets}, "", "is to be read in one pass (--one-pass), so its device size cannot come from a first pass over it: give the device's size (--dev)"},
		{"one pass with --step", []string{"--one-pass", "--dev", "64M", "--step", filepath.Join(traces, "msr-hm_0.csv")}, "", "a trace read in one pass (--one-pass) cannot be counted first"},
		{"one pass with a curve", []string{"--one-pass", "--dev", "64G", "--mrc", "4", filepath.Join(traces, "msr-hm_0.csv")}, "", "is read in one pass (standard input, a pipe, or a file read as one)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func() {
				status, out, errs := bhsim(append([]string{"run"}, tc.args...)...)
				assert.Equal(t, 2, status, errs)
				assert.Contains(t, errs, tc.want)
				assert.NotContains(t, errs, "TraceDevice.Size")
				assert.Empty(t, out)
			}
			if tc.stdin != "" {
				withStdin(t, tc.stdin, run)
				return
			}
			run()
		})
	}
}
