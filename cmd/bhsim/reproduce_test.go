package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench"
)

// reproduceDoc is the documented JSON shape of `bhsim reproduce --format json`.
type reproduceDoc struct {
	Tables []struct {
		ID     string `json:"id"`
		Title  string `json:"title"`
		Source string `json:"source"`
		Unit   string `json:"unit"`
		Cells  []struct {
			Row       string   `json:"row"`
			Column    string   `json:"column"`
			Published *float64 `json:"published"`
			Simulated *float64 `json:"simulated"`
			Fitted    *bool    `json:"fitted"`
		} `json:"cells"`
	} `json:"tables"`
}

func TestReproduceText(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"lru", []string{"reproduce", "lru"}, []string{"== lru (profile x86-server)", "__find_get_block_slow", "fitted", "predicted"}},
		{"flags after names, repeated name", []string{"reproduce", "lru", "--profile", "x86-server", "lru"}, []string{"== lru (profile x86-server)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			require.Equal(t, 0, run(tc.args, &out, &errb), errb.String())
			for _, w := range tc.want {
				assert.Contains(t, out.String(), w)
			}
			assert.Equal(t, 1, strings.Count(out.String(), "== lru"), "a thread named twice runs once")
			assert.Empty(t, errb.String())
		})
	}
}

func TestReproduceJSON(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"reproduce", "--format", "json", "lru"}, &out, &errb), errb.String())
	var doc reproduceDoc
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	require.Len(t, doc.Tables, 1)
	tb := doc.Tables[0]
	assert.Equal(t, "lru-tosatti", tb.ID)
	assert.Equal(t, "ns per call", tb.Unit)
	assert.Contains(t, tb.Source, "Tosatti")
	assert.NotEmpty(t, tb.Title)
	require.Len(t, tb.Cells, 2)
	for _, c := range tb.Cells {
		require.NotNil(t, c.Published)
		require.NotNil(t, c.Simulated)
		require.NotNil(t, c.Fitted)
	}
	assert.Equal(t, 68.0, *tb.Cells[0].Published)
	assert.True(t, *tb.Cells[0].Fitted)
	assert.Equal(t, 114.0, *tb.Cells[1].Published)
	assert.False(t, *tb.Cells[1].Fitted)
	assert.Equal(t, "__find_get_block", tb.Cells[1].Column)

	// Only the documented keys, so that a change of shape fails here.
	var raw map[string][]map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &raw))
	var keys []string
	for k := range raw["tables"][0] {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"id", "title", "source", "unit", "cells"}, keys)
	cell := raw["tables"][0]["cells"].([]any)[0].(map[string]any)
	keys = keys[:0]
	for k := range cell {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"row", "column", "published", "simulated", "fitted"}, keys)
}

func TestReproduceCSV(t *testing.T) {
	var out, jsonOut, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"reproduce", "--format", "csv", "lru"}, &out, &errb), errb.String())
	require.Equal(t, 0, run([]string{"reproduce", "--format", "json", "lru"}, &jsonOut, &errb), errb.String())
	rows, err := csv.NewReader(&out).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"table", "row", "column", "published", "simulated", "error", "fitted"}, rows[0])
	var doc reproduceDoc
	require.NoError(t, json.Unmarshal(jsonOut.Bytes(), &doc))
	for i, row := range rows[1:] { // the CSV says what the JSON says
		c := doc.Tables[0].Cells[i]
		assert.Equal(t, "lru-tosatti", row[0])
		assert.Equal(t, c.Row, row[1])
		assert.Equal(t, c.Column, row[2])
		pub, err := strconv.ParseFloat(row[3], 64)
		require.NoError(t, err)
		sim, err := strconv.ParseFloat(row[4], 64)
		require.NoError(t, err)
		rel, err := strconv.ParseFloat(row[5], 64)
		require.NoError(t, err)
		assert.Equal(t, *c.Published, pub)
		assert.Equal(t, *c.Simulated, sim)
		assert.InDelta(t, (sim-pub)/pub, rel, 1e-12)
		assert.Equal(t, strconv.FormatBool(*c.Fitted), row[6])
	}
}

// checkChart checks that dir holds a valid SVG and PNG chart of id.
func checkChart(t *testing.T, dir, id string) {
	t.Helper()
	svg, err := os.ReadFile(filepath.Join(dir, id+".svg"))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(svg, []byte("<?xml")) || bytes.HasPrefix(svg, []byte("<svg")), "%s.svg starts %q", id, svg[:min(20, len(svg))])
	assert.Contains(t, string(svg), "</svg>")
	png, err := os.ReadFile(filepath.Join(dir, id+".png"))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "%s.png has the PNG magic", id)
	assert.Greater(t, len(png), 1000)
}

func TestReproducePlotLRU(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "charts") // created, parents too
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"reproduce", "--plot", dir, "lru"}, &out, &errb), errb.String())
	checkChart(t, dir, "lru-tosatti")
	svg, err := os.ReadFile(filepath.Join(dir, "lru-tosatti.svg"))
	require.NoError(t, err)
	for _, s := range []string{"distinct blocks", "xarray height", "published vs simulated"} {
		assert.Contains(t, string(svg), s)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "one SVG and one PNG for one thread")
	assert.Contains(t, out.String(), "== lru", "the text still goes to stdout")
}

func TestReproducePlotErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	var out, errb bytes.Buffer
	assert.Equal(t, 1, run([]string{"reproduce", "--plot", file, "lru"}, &out, &errb))
	assert.Contains(t, errb.String(), "bhsim reproduce:")
}

// TestRunThreadsIndependent runs the same thread twice at once: the results
// must not depend on the parallelism.
func TestRunThreadsIndependent(t *testing.T) {
	res, err := runThreads([]string{"lru", "lru"}, "")
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, res[0].text, res[1].text)
	assert.Equal(t, res[0].tables, res[1].tables)
	alone, err := runThreads([]string{"lru"}, "")
	require.NoError(t, err)
	assert.Equal(t, alone[0].tables, res[0].tables)
}

func TestFittedProfile(t *testing.T) {
	p, usage, err := fittedProfile("x86-server", false)
	require.NoError(t, err)
	assert.False(t, usage)
	assert.NotContains(t, p.Source[bench.ParamTimer], "fitted")

	p, _, err = fittedProfile("x86-server", true)
	require.NoError(t, err)
	assert.Contains(t, p.Source[bench.ParamTimer], "fitted", "the lru thread fits the timer")

	_, usage, err = fittedProfile("vax", true)
	assert.True(t, usage)
	assert.ErrorContains(t, err, "valid:")

	saved := threads
	t.Cleanup(func() { threads = saved })
	threads = map[string]thread{"lru": saved["lru"]}
	_, usage, err = fittedProfile("helios4", true)
	assert.True(t, usage)
	assert.ErrorContains(t, err, "no thread calibrates profile \"helios4\"")
}

func TestTableFigure(t *testing.T) {
	alloc := bench.Table{ID: "alloc-sean-fu", Title: "writetest", Unit: "s", Cells: []bench.Cell{
		{Row: "write", Column: "mainline", Published: 3.1, Simulated: 3.0, Fitted: true},
		{Row: "write", Column: "circular", Published: 2.6, Simulated: 2.9},
		{Row: "read", Column: "mainline", Published: 1.9, Simulated: 1.8},
		{Row: "read", Column: "circular", Published: 1.7, Simulated: 1.79},
		{Row: "total", Column: "mainline", Published: 5, Simulated: 4.8},
	}}
	helios := bench.Table{ID: "blocksize-helios4", Cells: []bench.Cell{{Row: "5.10.10", Column: "RAID0 W", Published: 1, Simulated: 2}}}
	iomap := bench.Table{ID: "iomap-xu-yang", Cells: []bench.Cell{{Row: "bs=400K", Column: "6.6", Published: 1, Simulated: 2},
		{Row: "bs=800K", Column: "6.6", Published: 1, Simulated: 2}}}
	for _, tc := range []struct {
		name   string
		table  bench.Table
		panels int
		err    string
	}{
		{"any other table: bars", alloc, 1, ""},
		{"helios4: a panel per direction", helios, 0, "no cell 5.10.10/RAID0 R"},
		{"iomap: one panel", iomap, 1, ""},
		{"iomap: bad row", bench.Table{ID: "iomap-xu-yang", Cells: []bench.Cell{{Row: "400K"}}}, 0, "is not bs=<n>K"},
		{"no cells", bench.Table{ID: "empty"}, 0, "no cells"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tableFigure(tc.table)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, f.panels, tc.panels)
			dir := t.TempDir()
			require.NoError(t, f.write(dir))
			checkChart(t, dir, tc.table.ID)
		})
	}
	helios.Cells = append(helios.Cells, bench.Cell{Row: "5.10.10", Column: "RAID0 R", Published: 3, Simulated: 4})
	f, err := tableFigure(helios)
	require.NoError(t, err)
	assert.Len(t, f.panels, 2)
}

func TestWriteFiguresDefault(t *testing.T) {
	dir := t.TempDir()
	res := []*threadResult{{tables: []bench.Table{{ID: "alloc-sean-fu", Unit: "s",
		Cells: []bench.Cell{{Row: "write", Column: "mainline", Published: 3, Simulated: 2.5}}}}}}
	require.NoError(t, writeFigures(dir, res))
	checkChart(t, dir, "alloc-sean-fu")
}
