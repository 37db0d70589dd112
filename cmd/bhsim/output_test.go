package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/threads"
	"github.com/bhsim/bhsim/bench/timing"
)

// strictDecode decodes JSON into v refusing unknown fields: the documented
// shape and nothing else.
func strictDecode(t *testing.T, data string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v))
}

func TestReproduceJSON(t *testing.T) {
	status, out, errs := bhsim("reproduce", "--format", "json", "lru")
	require.Equal(t, 0, status, errs)
	var doc report.Reproduce
	strictDecode(t, out, &doc)
	assert.Equal(t, report.ReproduceSchema, doc.Schema)
	assert.Equal(t, "bhsim", doc.Tool.Name)
	assert.NotEmpty(t, doc.Tool.Version)
	require.Len(t, doc.Threads, 1)
	th := doc.Threads[0]
	assert.Equal(t, "lru", th.Name)
	assert.Equal(t, "x86-server", th.Profile)
	assert.Equal(t, "built-in", th.Costs)
	require.Len(t, th.FreeParameters, 1)
	assert.Equal(t, "timer", th.FreeParameters[0].Param)
	assert.Equal(t, 25.0, th.FreeParameters[0].Prior)
	assert.Equal(t, map[string]int{"fitted": 1, "predicted": 1}, th.LabelCounts)
	require.Len(t, th.Tables, 1)
	tb := th.Tables[0]
	assert.Equal(t, "lru-tosatti", tb.ID)
	assert.Equal(t, "ns per call", tb.Unit)
	require.Len(t, tb.Cells, 2)
	assert.Equal(t, 68.0, tb.Cells[0].Published)
	assert.Equal(t, "fitted", tb.Cells[0].Label)
	assert.Equal(t, 114.0, tb.Cells[1].Published)
	assert.Equal(t, "predicted", tb.Cells[1].Label)
	c := tb.Cells[1]
	assert.InDelta(t, 100*(c.Simulated-c.Published)/c.Published, c.ErrorPercent, 1e-9)
	require.Len(t, th.Today, 4, "__find_get_block and the slow path at block 1 and block 4G, on 6.18")
	for _, d := range th.Today {
		assert.Equal(t, "6.18", d.Kernel)
		assert.Equal(t, "predicted", d.Label)
		assert.Equal(t, "ns per call", d.Unit)
		assert.Positive(t, d.Simulated)
	}
}

func TestReproduceCSV(t *testing.T) {
	_, csvOut, _ := bhsim("reproduce", "--format", "csv", "lru")
	_, jsonOut, _ := bhsim("reproduce", "--format", "json", "lru")
	rows, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 7, "two cells and four 6.18 figures")
	assert.Equal(t, []string{"schema", "thread", "profile", "table", "row", "column", "unit", "published", "simulated",
		"error_percent", "label"}, rows[0])
	var doc report.Reproduce
	strictDecode(t, jsonOut, &doc)
	for i, d := range doc.Threads[0].Today {
		assert.Equal(t, []string{report.ReproduceCSVSchema, "lru", "x86-server", "lru-today", "6.18", d.What, d.Unit, "",
			report.Num(d.Simulated), "", "predicted"}, rows[3+i])
	}
	for i, row := range rows[1:3] { // the CSV says what the JSON says
		c := doc.Threads[0].Tables[0].Cells[i]
		assert.Equal(t, []string{report.ReproduceCSVSchema, "lru", "x86-server", "lru-tosatti", c.Row, c.Column, "ns per call"}, row[:7])
		for j, want := range []float64{c.Published, c.Simulated, c.ErrorPercent} {
			got, err := strconv.ParseFloat(row[7+j], 64)
			require.NoError(t, err)
			assert.Equal(t, want, got, "exactly, column %s", rows[0][7+j])
		}
		assert.Equal(t, c.Label, row[10])
	}
}

// TestProfileShowRoundTrip writes a profile with profile show, loads it with
// --profile FILE and with --cost, and checks that an unset profile is the
// built-in one bit for bit.
func TestProfileShowRoundTrip(t *testing.T) {
	status, out, errs := bhsim("profile", "show", "x86-server")
	require.Equal(t, 0, status, errs)
	var p timing.Profile
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	assert.Equal(t, *timing.X86Server(), p, "the built-in profile, bit for bit")

	_, fitted, _ := bhsim("profile", "show", "helios4", "--costs", "fitted")
	var f timing.Profile
	require.NoError(t, json.Unmarshal([]byte(fitted), &f))
	want, err := threads.Fitted("helios4")
	require.NoError(t, err)
	assert.Equal(t, *want, f)

	path := filepath.Join(t.TempDir(), "mine.json")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	_, fromFile, errs := bhsim("explain", "find-get-block-slow", "--profile", path)
	assert.Contains(t, fromFile, "costs: from "+path, errs)
	_, builtin, _ := bhsim("explain", "find-get-block-slow", "--costs", "built-in")
	assert.Equal(t, strings.SplitN(builtin, "\n", 2)[1], strings.SplitN(fromFile, "\n", 2)[1], "the file prices as the built-in profile")

	_, set, _ := bhsim("explain", "find-get-block-slow", "--costs", "built-in", "--cost", "index-levels=100")
	assert.Contains(t, set, "costs: built-in, 1 set by --cost")
	assert.Contains(t, set, "×    100.000 =")

	_, list, _ := bhsim("profile", "list")
	for _, prof := range timing.Profiles() {
		assert.Contains(t, list, prof.Name)
	}
}

func TestVersion(t *testing.T) {
	status, out, _ := bhsim("version")
	require.Equal(t, 0, status)
	assert.Regexp(t, `^bhsim \S+ \(revision .+\) go1\.\d+`, out)
	_, js, _ := bhsim("version", "--format", "json")
	var v report.Tool
	strictDecode(t, js, &v)
	assert.Equal(t, "bhsim", v.Name)
}

// TestExplainDefaults checks that each priced operation defaults to its
// thread's profile with fitted costs and says so first.
func TestExplainDefaults(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"explain", "find-get-block-miss"}, []string{"costs: fitted (profile x86-server)", "LRU hits 0, slots compared 16"}},
		{[]string{"explain", "write-page", "--count", "8"}, []string{"costs: fitted (profile helios4)", "device block size 512, so 8 buffer_head(s) a page"}},
		{[]string{"explain", "read-page", "--layout", "raid0", "--count", "8"}, []string{"costs: fitted (profile helios4)", "read_ahead_kb 4096", "readahead builds no buffer_heads"}},
		{[]string{"explain", "iomap-write-page", "--count", "2", "--costs", "built-in"}, []string{"costs: built-in (profile xu-yang-board)", "kernel 6.6"}},
		{[]string{"explain", "crash-loss", "--count", "8"}, []string{"crash-loss: dd", "after dd's close"}},
	} {
		status, out, errs := bhsim(tc.args...)
		require.Equal(t, 0, status, errs)
		for _, w := range tc.want {
			assert.Contains(t, out, w, tc.args)
		}
	}
}

func TestSweep(t *testing.T) {
	args := []string{"sweep", "--layout", "direct,raid0", "--kernel", "5.10.10,5.10.10+revert", "--count", "16"}
	status, out, errs := bhsim(append(args, "--format", "json")...)
	require.Equal(t, 0, status, errs)
	var doc report.Sweep
	strictDecode(t, out, &doc)
	assert.Equal(t, report.SweepSchema, doc.Schema)
	assert.Equal(t, "fitted", doc.Costs)
	require.Len(t, doc.Rows, 4)
	assert.Equal(t, uint32(512), doc.Rows[0].BlockSize)
	assert.Equal(t, uint32(4096), doc.Rows[2].BlockSize)
	_, text, _ := bhsim(args...)
	assert.Contains(t, text, "profile helios4 (costs: fitted)")
	_, csvOut, _ := bhsim(append(args, "--format", "csv")...)
	rows, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	require.NoError(t, err)
	assert.Len(t, rows, 5)
	assert.Equal(t, report.SweepCSVSchema, rows[1][0])
}

// checkChart checks that dir holds a valid SVG and PNG chart of id.
func checkChart(t *testing.T, dir, id string) {
	t.Helper()
	svg, err := os.ReadFile(filepath.Join(dir, id+".svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "</svg>")
	png, err := os.ReadFile(filepath.Join(dir, id+".png"))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "%s.png has the PNG magic", id)
}

func TestReproducePlot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "charts") // created, parents too
	status, out, errs := bhsim("reproduce", "--plot", dir, "lru")
	require.Equal(t, 0, status, errs)
	checkChart(t, dir, "lru-tosatti")
	svg, err := os.ReadFile(filepath.Join(dir, "lru-tosatti.svg"))
	require.NoError(t, err)
	for _, s := range []string{"distinct blocks", "xarray height", ">published<", ">simulated<"} {
		assert.Contains(t, string(svg), s)
	}
	assert.Contains(t, out, "== lru", "the text still goes to stdout")

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	status, _, errs = bhsim("reproduce", "--plot", file, "lru")
	assert.Equal(t, 1, status)
	assert.Contains(t, errs, "bhsim reproduce:")
}

func TestReproduceCrossValidate(t *testing.T) {
	status, out, errs := bhsim("reproduce", "--cross-validate", "lru")
	require.Equal(t, 0, status, errs)
	assert.Contains(t, out, "no leave-one-out: no fitted cell to spare: 1 parameter(s) for 1 fitted cell(s)")
	_, js, _ := bhsim("reproduce", "--format", "json", "lru")
	var doc report.Reproduce
	strictDecode(t, js, &doc)
	assert.Empty(t, doc.Threads[0].CrossValidation)
	assert.Contains(t, doc.Threads[0].CrossValidationNote, "no leave-one-out")
}

// TestShardMerge: a sweep and a run over a list of traces, each split in
// shards (--shard K/N) and joined again (bhsim merge), print what the run
// unsplit prints, byte for byte, as JSON and as CSV.
func TestShardMerge(t *testing.T) {
	list := []string{traces + "/sample.blkparse", traces + "/sample-v3.iolog", traces + "/sample.csv"}
	for _, tt := range []struct {
		name string
		args []string
		n    int
	}{
		{"sweep", []string{"sweep", "--layout", "direct,raid0,raid6", "--count", "16", "--op", "write,read"}, 4},
		{"run over traces", append([]string{"run"}, list...), 2},
	} {
		for _, format := range []string{"json", "csv"} {
			t.Run(tt.name+" "+format, func(t *testing.T) {
				args := append(slices.Clone(tt.args), "--format", format)
				status, whole, errs := bhsim(args...)
				require.Equal(t, 0, status, errs)
				dir := t.TempDir()
				var files []string
				for k := range tt.n {
					status, out, errs := bhsim(append(slices.Clone(args), "--shard", fmt.Sprintf("%d/%d", k, tt.n))...)
					require.Equal(t, 0, status, errs)
					files = append(files, filepath.Join(dir, fmt.Sprintf("shard-%d.%s", k, format)))
					require.NoError(t, os.WriteFile(files[k], []byte(out), 0o644))
				}
				slices.Reverse(files)
				status, merged, errs := bhsim(append([]string{"merge"}, files...)...)
				require.Equal(t, 0, status, errs)
				assert.Equal(t, whole, merged, "the shards merged are the whole, byte for byte")
				status, _, errs = bhsim(append([]string{"merge"}, files[1:]...)...)
				assert.Equal(t, 2, status, "a shard missing is refused")
				assert.Contains(t, errs, "missing")
			})
		}
	}
}
