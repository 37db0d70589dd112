package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
)

func TestParseShard(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Shard
		err  bool
	}{
		{"", Shard{}, false},
		{"0/1", Shard{0, 1, 0}, false},
		{"3/8", Shard{3, 8, 0}, false},
		{"1048575/1048576", Shard{1048575, 1048576, 0}, false},
		{"8/8", Shard{}, true},
		{"-1/8", Shard{}, true},
		{"0/0", Shard{}, true},
		{"0/1048577", Shard{}, true},
		{"3", Shard{}, true},
		{"a/b", Shard{}, true},
		{"1/2/3", Shard{}, true},
		{" 1/2", Shard{}, true},
	} {
		got, err := ParseShard(tt.in)
		if tt.err {
			var fe *FieldError
			require.ErrorAs(t, err, &fe, tt.in)
			assert.Equal(t, "Shard", fe.Field)
			assert.ErrorContains(t, err, "want K/N", tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

// TestShardCells: shard K of N holds the cells i mod N = K, however N
// compares with the number of cells.
func TestShardCells(t *testing.T) {
	for _, tt := range []struct {
		shard  Shard
		cells  int
		has    []int
		absent []int
	}{
		{Shard{0, 3, 0}, 7, []int{0, 3, 6}, []int{1, 2, 4, 5}},
		{Shard{2, 3, 0}, 7, []int{2, 5}, []int{0, 6}},
		{Shard{4, 8, 0}, 3, nil, []int{0, 1, 2}},
		{Shard{}, 3, []int{0, 1, 2}, nil},
	} {
		sh := tt.shard.Of(tt.cells)
		for _, i := range tt.has {
			assert.True(t, tt.shard.Has(i), "%+v has %d", tt.shard, i)
		}
		for _, i := range tt.absent {
			assert.False(t, tt.shard.Has(i), "%+v lacks %d", tt.shard, i)
		}
		if tt.shard.Count == 0 {
			assert.Nil(t, sh, "the whole is no shard")
			continue
		}
		assert.Equal(t, len(tt.has), sh.size())
		assert.Equal(t, tt.cells, sh.Cells)
	}
}

// sweepOutputs runs a 12-cell sweep whole and in n shards and writes each
// as JSON and CSV into dir: whole.json, whole.csv, shard-K.json/.csv.
func sweepOutputs(t *testing.T, dir string, n int) {
	t.Helper()
	m, err := workload.DDMachineByName("helios4")
	require.NoError(t, err)
	g, err := SweepGrid(m, map[string]*List{"layout": {"direct", "raid0", "raid6"}, "kernel": {"5.10.10", "5.10.10+revert"},
		"op": {"write", "read"}, "count": {"16"}})
	require.NoError(t, err)
	cells, err := g.Cells()
	require.NoError(t, err)
	require.Len(t, cells, 12)
	p := timing.Helios4()
	tool := Tool{Name: "bhsim", Version: "v1", Go: "go1.26"}
	write := func(name string, s Sweep) {
		var js, cs bytes.Buffer
		require.NoError(t, WriteJSON(&js, s))
		require.NoError(t, s.WriteCSV(&cs))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), js.Bytes(), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".csv"), cs.Bytes(), 0o644))
	}
	rows, err := workload.SweepDD(g, p, workload.SweepOptions{})
	require.NoError(t, err)
	write("whole", SweepOf(tool, m, p, "fitted", rows))
	for k := range n {
		rows, err := workload.SweepDD(g, p, workload.SweepOptions{Shard: k, Shards: n})
		require.NoError(t, err)
		s := SweepOf(tool, m, p, "fitted", rows)
		s.Shard = Shard{Index: k, Count: n}.Of(len(cells))
		write("shard-"+string(rune('a'+k)), s)
	}
}

// TestMergeSweep: a sweep's shards merged, JSON or CSV, in any order, are
// the whole sweep's output byte for byte, for N below, at and above the
// number of cells.
func TestMergeSweep(t *testing.T) {
	for _, n := range []int{1, 5, 12, 15} {
		dir := t.TempDir()
		sweepOutputs(t, dir, n)
		for _, ext := range []string{".json", ".csv"} {
			files, err := filepath.Glob(filepath.Join(dir, "shard-*"+ext))
			require.NoError(t, err)
			require.Len(t, files, n)
			for i, j := 0, len(files)-1; i < j; i, j = i+1, j-1 { // any order
				files[i], files[j] = files[j], files[i]
			}
			var got bytes.Buffer
			require.NoError(t, MergeFiles(&got, files...), "%d shards %s", n, ext)
			want, err := os.ReadFile(filepath.Join(dir, "whole"+ext))
			require.NoError(t, err)
			assert.Equal(t, string(want), got.String(), "%d shards %s: merged is the whole", n, ext)
		}
	}
}

// TestMergeRefuses: files that are not the N shards of one run are refused,
// saying why.
func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	sweepOutputs(t, dir, 3)
	f := func(name string) string { return filepath.Join(dir, name) }
	other := f("other.json")
	b, err := os.ReadFile(f("shard-b.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(other, bytes.Replace(b, []byte(`"costs": "fitted"`), []byte(`"costs": "built-in"`), 1), 0o644))
	short := f("short.csv")
	c, err := os.ReadFile(f("shard-b.csv"))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(c), "\n")
	require.NoError(t, os.WriteFile(short, []byte(strings.Join(lines[:len(lines)-2], "")), 0o644))
	for _, tt := range []struct {
		name  string
		files []string
		want  string
	}{
		{"a shard missing", []string{f("shard-a.json"), f("shard-c.json")}, "shard 1/3 is missing (give all 3)"},
		{"a shard twice", []string{f("shard-a.json"), f("shard-a.json"), f("shard-b.json"), f("shard-c.json")}, "are both shard 0/3"},
		{"not a shard", []string{f("whole.json")}, "is not a shard"},
		{"another run", []string{f("shard-a.json"), other, f("shard-c.json")}, "differ beyond their shards"},
		{"JSON and CSV", []string{f("shard-a.json"), f("shard-b.csv")}, "invalid character"},
		{"a CSV shard missing", []string{f("shard-a.csv"), f("shard-b.csv")}, "cell 2 of 12 is in none of the files"},
		{"a CSV shard twice", []string{f("shard-a.csv"), f("shard-a.csv"), f("shard-b.csv"), f("shard-c.csv")}, "a shard given twice"},
		{"a cut CSV shard", []string{f("shard-a.csv"), short, f("shard-c.csv")}, "is in none of the files"},
		{"a whole CSV", []string{f("whole.csv")}, "written with --shard"},
		{"no file", nil, "no files to merge"},
		{"a missing file", []string{f("nope.json")}, "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := MergeFiles(&out, tt.files...)
			assert.ErrorContains(t, err, tt.want)
			assert.Empty(t, out.String(), "nothing written")
		})
	}
	profile := f("profile.json")
	require.NoError(t, WriteJSONFile(profile, timing.Helios4()))
	assert.ErrorContains(t, MergeFiles(&bytes.Buffer{}, profile), `schema "bhsim-profile/1": want the JSON of a sweep`)
}

// TestRunFilesMerge runs three traces as a list, whole and in two shards:
// merged, the shards are the whole byte for byte, JSON and CSV; the text
// holds every run.
func TestRunFilesMerge(t *testing.T) {
	traces := "../source/testdata/traces/"
	files := []string{traces + "sample.blkparse", traces + "sample-v3.iolog", traces + "sample.csv"}
	spec := DefaultWorkloadSpec()
	o, err := spec.Options()
	require.NoError(t, err)
	tool := Tool{Name: "bhsim", Version: "v1", Go: "go1.26"}
	dir := t.TempDir()
	write := func(name string, l RunList) {
		var js, cs bytes.Buffer
		require.NoError(t, WriteJSON(&js, l))
		require.NoError(t, l.WriteCSV(&cs))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), js.Bytes(), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".csv"), cs.Bytes(), 0o644))
	}
	var progress []int
	whole, err := RunFiles(context.Background(), spec, o, files, Shard{}, tool, func(done, total int) { progress = append(progress, done, total) })
	require.NoError(t, err)
	require.Len(t, whole.Runs, 3)
	assert.Equal(t, []int{1, 3, 2, 3, 3, 3}, progress)
	assert.Equal(t, RunListSchema, whole.Schema)
	write("whole", whole)
	for k := range 2 {
		l, err := RunFiles(context.Background(), spec, o, files, Shard{Index: k, Count: 2}, tool, nil)
		require.NoError(t, err)
		assert.Len(t, l.Runs, 2-k)
		write("shard-"+string(rune('a'+k)), l)
	}
	for _, ext := range []string{".json", ".csv"} {
		var got bytes.Buffer
		require.NoError(t, MergeFiles(&got, filepath.Join(dir, "shard-b"+ext), filepath.Join(dir, "shard-a"+ext)))
		want, err := os.ReadFile(filepath.Join(dir, "whole"+ext))
		require.NoError(t, err)
		assert.Equal(t, string(want), got.String(), "merged %s is the whole", ext)
	}
	var text bytes.Buffer
	require.NoError(t, whole.WriteText(&text))
	for _, r := range whole.Runs {
		assert.Contains(t, text.String(), r.Header())
	}
	_, err = RunFiles(context.Background(), spec, o, []string{traces + "nope.csv"}, Shard{}, tool, nil)
	assert.ErrorContains(t, err, "nope.csv")
}

// FuzzMergeCSV: MergeFiles never panics on a file's text (CSV or JSON),
// and what it accepts as one shard of CSV it writes without
// ShardCSVColumns.
func FuzzMergeCSV(f *testing.F) {
	f.Add("schema,a,cell,cells\nbhsim-sweep-csv/1,x,0,1\n")
	f.Add("schema,a,cell,cells\nbhsim-sweep-csv/1,x,1,2\nbhsim-sweep-csv/1,y,0,2\n")
	f.Add("{\"schema\":\"bhsim-sweep/1\",\"shard\":{\"index\":0,\"count\":1,\"cells\":0}}")
	f.Add("schema,a,cell,cells\nbhsim-run-dist-csv/1,x,0,99999999999\n")
	f.Fuzz(func(t *testing.T, text string) {
		name := filepath.Join(t.TempDir(), "shard")
		require.NoError(t, os.WriteFile(name, []byte(text), 0o644))
		var out bytes.Buffer
		if err := MergeFiles(&out, name); err != nil || strings.HasPrefix(strings.TrimSpace(text), "{") {
			return
		}
		in, err := csv.NewReader(strings.NewReader(text)).Read()
		require.NoError(t, err)
		merged, err := csv.NewReader(&out).Read()
		require.NoError(t, err)
		assert.Len(t, merged, len(in)-len(ShardCSVColumns), "the header without the shard's columns")
	})
}

// FuzzParseShard: ParseShard never panics, and what it accepts is a shard
// that holds cell Index and prints back as it was given.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "3/8", "8/8", "", "-1/2", "1/2/3", "99999999999999999999/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil || s == "" {
			return
		}
		require.True(t, sh.Index >= 0 && sh.Index < sh.Count && sh.Count <= MaxShards)
		require.True(t, sh.Has(sh.Index))
	})
}
