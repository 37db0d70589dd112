package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bench/timing"
)

// traces is the shipped trace samples' directory.
const traces = "../source/testdata/traces"

// TestCostsResolve resolves profiles by name and file, with built-in and
// fitted costs and costs set one by one, and checks the description and the
// errors, a bad single cost naming its field.
func TestCostsResolve(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.json")
	require.NoError(t, WriteJSONFile(file, timing.Helios4()))
	tests := []struct {
		name      string
		c         Costs
		profile   string // the profile's name, or "" for an error
		costs     string // the description, or the error's text
		wantField bool   // the error is a *FieldError of Costs.Set
	}{
		{"the default, built-in", Costs{}, "x86-server", "built-in", false},
		{"fitted", Costs{Profile: "helios4", Costs: "fitted"}, "helios4", "fitted", false},
		{"a file", Costs{Profile: file, Costs: "fitted"}, "helios4", "from " + file, false},
		{"set one by one", Costs{Costs: "built-in", Set: []string{"bios=1500", "timer=3"}, SetBy: "--cost"}, "x86-server", "built-in, 2 set by --cost", false},
		{"set, named by default", Costs{Set: []string{"bios=1500"}}, "x86-server", "built-in, 1 set by Costs.Set", false},
		{"unknown profile", Costs{Profile: "vax"}, "", "unknown profile \"vax\"", false},
		{"unknown costs", Costs{Costs: "cheap"}, "", "unknown costs \"cheap\" (valid: fitted, built-in)", false},
		{"not PARAM=NS", Costs{Set: []string{"bios"}}, "", "Costs.Set \"bios\": want PARAM=NS, e.g. bios=1500", true},
		{"unknown parameter", Costs{Set: []string{"warp=1"}}, "", "unknown parameter \"warp\"", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, desc, err := tt.c.Resolve("x86-server")
			if tt.profile == "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.costs)
				var fe *FieldError
				assert.Equal(t, tt.wantField, errors.As(err, &fe))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.profile, p.Name)
			assert.Equal(t, tt.costs, desc)
		})
	}
	p, _, err := Costs{Set: []string{"bios=1500"}}.Resolve("x86-server")
	require.NoError(t, err)
	want := timing.X86Server()
	require.NoError(t, want.SetCost("bios", 1500, "set by Costs.Set"))
	assert.Equal(t, *want, *p, "the set cost, sourced to what set it")
}

// TestWorkloadSpec builds workloads from generators and traces and checks
// that a bad value is a *FieldError naming its field and value.
func TestWorkloadSpec(t *testing.T) {
	csv := filepath.Join(traces, "sample.csv")
	tests := []struct {
		name    string
		edit    func(s *WorkloadSpec)
		records uint64 // want this many records, when no error (0: some)
		field   string // the *FieldError's field, or "" for another error
		err     string // the error's text, "" for none
	}{
		{"a generator", func(s *WorkloadSpec) { s.Gen = "seq:dev=1M,n=5" }, 5, "", ""},
		{"a generator with a seed", func(s *WorkloadSpec) { s.Gen, s.Seed = "random:dev=1M,n=3", "9" }, 3, "", ""},
		{"a trace", func(s *WorkloadSpec) { s.File, s.Dev, s.LBS = csv, "64K", "1K" }, 0, "", ""},
		{"both", func(s *WorkloadSpec) { s.Gen, s.File = "seq:dev=1M,n=5", csv }, 0, "", "both Gen and File are set"},
		{"a seed for a file", func(s *WorkloadSpec) { s.File, s.Seed = csv, "3" }, 0, "", "Seed is set for a File"},
		{"a bad seed", func(s *WorkloadSpec) { s.Gen, s.Seed = "seq:dev=1M,n=5", "x" }, 0, "WorkloadSpec.Seed", `WorkloadSpec.Seed "x": want a decimal seed`},
		{"a bad device size", func(s *WorkloadSpec) { s.File, s.Dev = csv, "lots" }, 0, "WorkloadSpec.Dev", `WorkloadSpec.Dev "lots": scenario: invalid size`},
		{"a logical block above a page", func(s *WorkloadSpec) { s.Gen, s.LBS = "seq:dev=1M,n=5", "8K" }, 0, "WorkloadSpec.LBS", "not a power of two from 512 to 4K"},
		{"an unknown action", func(s *WorkloadSpec) { s.File, s.Replay = filepath.Join(traces, "sample.blkparse"), "X" }, 0, "WorkloadSpec.Replay", `WorkloadSpec.Replay "X": want Q, D, I or C`},
		{"a bad generator", func(s *WorkloadSpec) { s.Gen = "random:n=5" }, 0, "", "dev="},
		{"a public format", func(s *WorkloadSpec) { s.File = filepath.Join(traces, "financial.spc") }, 6, "", ""},
		{"a format forced", func(s *WorkloadSpec) { s.File, s.TraceFormat = filepath.Join(traces, "financial.spc"), "msr" }, 0, "", "financial.spc:1: msr: 5 fields, want at least 6"},
		{"an unknown format", func(s *WorkloadSpec) { s.File, s.TraceFormat = csv, "pcap" }, 0, "WorkloadSpec.TraceFormat", `WorkloadSpec.TraceFormat "pcap": unknown trace format "pcap" (want blkparse, fio, csv`},
		{"a column map", func(s *WorkloadSpec) {
			s.File, s.CSVColumns = filepath.Join(traces, "libcachesim.csv"), "time=1:ms,op=2,length=3,offset=4:sector"
		}, 5, "", ""},
		{"a bad column map", func(s *WorkloadSpec) { s.File, s.CSVColumns = csv, "offset=0" }, 0, "WorkloadSpec.CSVColumns", "needs a length column"},
		{"a column map for another format", func(s *WorkloadSpec) { s.File, s.CSVColumns, s.TraceFormat = csv, "offset=0,length=1", "csv" }, 0, "", "a column map applies to a column-mapped CSV (format columns), not to a csv trace"},
		{"a device of an SPC trace", func(s *WorkloadSpec) { s.File, s.TraceDevice = filepath.Join(traces, "financial.spc"), "3" }, 0, "", "no records of device 3 (the trace's devices are the values of its device column"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultWorkloadSpec()
			tt.edit(&s)
			w, err := s.Workload()
			if tt.err == "" {
				require.NoError(t, err)
				assert.Positive(t, w.Records)
				if tt.records > 0 {
					assert.Equal(t, tt.records, w.Records)
				}
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			var fe *FieldError
			if tt.field == "" {
				assert.False(t, errors.As(err, &fe), "not a field's error: %v", err)
				return
			}
			require.True(t, errors.As(err, &fe))
			assert.Equal(t, tt.field, fe.Field)
		})
	}
}

// TestWorkloadSpecOnePass: OnePass reads a trace file once, as it runs
// (engine.TraceDevice.OnePass), and needs the device's size; without it a
// file is read first for its records.
func TestWorkloadSpecOnePass(t *testing.T) {
	csv := filepath.Join(traces, "sample.csv")
	tests := []struct {
		name string
		edit func(s *WorkloadSpec)
		one  bool
		err  string
	}{
		{"one pass", func(s *WorkloadSpec) { s.Dev, s.OnePass = "64K", true }, true, ""},
		{"one pass on given CPUs", func(s *WorkloadSpec) { s.Dev, s.CPUs, s.OnePass = "64K", 2, true }, true, ""},
		{"two passes, whatever is given", func(s *WorkloadSpec) { s.Dev, s.CPUs = "64K", 2 }, false, ""},
		{"one pass without the device's size", func(s *WorkloadSpec) { s.OnePass = true }, false, "is to be read in one pass (TraceDevice.OnePass)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultWorkloadSpec()
			s.File = csv
			tt.edit(&s)
			w, err := s.Workload()
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.one, w.Streamed)
			assert.Equal(t, !tt.one, w.Records > 0, "a first pass counts the records")
		})
	}
}

// TestWorkloadSpecOptions checks the defaults' options and the fields'
// errors.
func TestWorkloadSpecOptions(t *testing.T) {
	o, err := DefaultWorkloadSpec().Options()
	require.NoError(t, err)
	assert.Equal(t, "6.18", o.Kernel.Name)
	assert.Equal(t, "x86-server", o.Profile.Name)
	assert.Equal(t, "built-in", o.ProfileCosts)
	assert.Equal(t, "ssd", o.Disk.Name)
	assert.Equal(t, uint64(2<<30), o.MemoryBytes)
	for _, tt := range []struct {
		name  string
		edit  func(s *WorkloadSpec)
		field string
		err   string
	}{
		{"kernel", func(s *WorkloadSpec) { s.Kernel = "2.6" }, "", "unknown kernel \"2.6\""},
		{"disk", func(s *WorkloadSpec) { s.Disk = "tape" }, "", "want ssd, hdd or null"},
		{"access", func(s *WorkloadSpec) { s.Access = "mmap" }, "", "want auto, pagecache or buffers"},
		{"memory", func(s *WorkloadSpec) { s.Memory = "lots" }, "WorkloadSpec.Memory", "invalid size"},
		{"mrc", func(s *WorkloadSpec) { s.MRC = []string{"4", "x"} }, "WorkloadSpec.MRC", `WorkloadSpec.MRC "x": want LRU sizes`},
		{"a cost", func(s *WorkloadSpec) { s.Costs.Set = []string{"bios"} }, "Costs.Set", "want PARAM=NS"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultWorkloadSpec()
			tt.edit(&s)
			_, err := s.Options()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			var fe *FieldError
			if assert.Equal(t, tt.field != "", errors.As(err, &fe)) && tt.field != "" {
				assert.Equal(t, tt.field, fe.Field)
			}
		})
	}
	s := DefaultWorkloadSpec()
	s.MRC = []string{"1", "4"}
	o, err = s.Options()
	require.NoError(t, err)
	assert.Equal(t, []int{1, 4}, o.MRCSizes)
	for _, tt := range []struct {
		v    string
		want float64
	}{{"", 0}, {"2", 2}, {"0.25", 0.25}, {"200%", 0.5}, {"50%", 2}} {
		s := DefaultWorkloadSpec()
		s.ReplayTimeScale, s.ReplayNoStall = tt.v, true
		o, err := s.Options()
		require.NoError(t, err, tt.v)
		assert.Equal(t, tt.want, o.ReplayTimeScale, tt.v)
		assert.True(t, o.ReplayNoStall)
	}
	for _, v := range []string{"0", "-1", "x", "Inf", "%", "0%"} {
		s := DefaultWorkloadSpec()
		s.ReplayTimeScale = v
		_, err := s.Options()
		var fe *FieldError
		require.True(t, errors.As(err, &fe), v)
		assert.Equal(t, "WorkloadSpec.ReplayTimeScale", fe.Field)
	}
}

func TestIsScenarioFile(t *testing.T) {
	dir := t.TempDir()
	unnamed := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(unnamed, []byte("device size=1M\nopen a rdwr\n"), 0o644))
	fifo := filepath.Join(dir, "trace.scn") // a stream: a trace, whatever its name, and not opened
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, tt := range []struct {
		path string
		want bool
	}{
		{"../../testdata/scenarios/dd-bs4k.scn", true},
		{unnamed, true},
		{filepath.Join(traces, "sample.csv"), false},
		{filepath.Join(traces, "sample.blkparse"), false},
		{filepath.Join(dir, "missing.scn"), true},
		{filepath.Join(dir, "missing.csv"), false},
		{"-", false},
		{fifo, false},
	} {
		assert.Equal(t, tt.want, IsScenarioFile(tt.path), tt.path)
	}
}

// TestIsInputError: the input's faults are refusals, a failed read is not.
func TestIsInputError(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{fmt.Errorf("x: %w", engine.ErrRunOptions), true},
		{&source.TraceError{Line: 3, Msg: "unknown op"}, true},
		{&source.TraceError{Msg: "no records", Err: source.ErrNoRecords}, true},
		{&source.TraceError{Line: 3, Msg: "reading: EIO", Err: errors.New("EIO")}, false},
		{errors.New("boom"), false},
	} {
		assert.Equal(t, tt.want, IsInputError(tt.err), "%v", tt.err)
	}
}
