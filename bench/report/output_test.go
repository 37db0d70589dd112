package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
)

func TestToolString(t *testing.T) {
	for _, tt := range []struct {
		tool Tool
		want string
	}{
		{Tool{Name: "bhsim", Version: "(devel)", Go: "go1.26.0"}, "bhsim (devel) (revision unknown) go1.26.0"},
		{Tool{Name: "bhsim", Version: "v1.2.0", Revision: "abc", Go: "go1.26.0"}, "bhsim v1.2.0 (revision abc) go1.26.0"},
		{Tool{Name: "bhsim", Version: "v1.2.0", Revision: "abc", Modified: true, Go: "go1.26.0"}, "bhsim v1.2.0 (revision abc, modified) go1.26.0"},
	} {
		assert.Equal(t, tt.want, tt.tool.String())
	}
	cur := CurrentTool()
	assert.Equal(t, "bhsim", cur.Name)
	assert.True(t, strings.HasPrefix(cur.Go, "go"), cur.Go)
}

// TestToolOf checks where the version and revision come from: the build
// information, else what the linker set.
func TestToolOf(t *testing.T) {
	devel := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}}
	installed := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}
	for _, tt := range []struct {
		name              string
		bi                *debug.BuildInfo
		ok                bool
		version, revision string
		want              string
	}{
		{"no build information", nil, false, "", "", "bhsim (unknown) (revision unknown)"},
		{"-buildvcs=false", devel, true, "", "", "bhsim (devel) (revision unknown)"},
		{"-buildvcs=false, linker-set", devel, true, "v0.1.0", "def", "bhsim v0.1.0 (revision def)"},
		{"stamped", stamped, true, "", "def", "bhsim (devel) (revision abc, modified)"},
		{"installed at a version", installed, true, "", "", "bhsim v1.2.0 (revision unknown)"},
		{"linker-set wins over the module's", installed, true, "v9", "", "bhsim v9 (revision unknown)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := toolOf(tt.bi, tt.ok, tt.version, tt.revision)
			assert.Equal(t, tt.want+" "+runtime.Version(), got.String())
		})
	}
}

func TestWriteCSVAndNum(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, "s/1", []string{"a", "b"}, [][]string{{"x,y", Num(0.1)}, {"z", Num(1e21)}}))
	assert.Equal(t, "schema,a,b\ns/1,\"x,y\",0.1\ns/1,z,1e+21\n", b.String())
}

// TestWriteJSONFile writes a profile and reads it back as --profile FILE
// does.
func TestWriteJSONFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.json")
	require.NoError(t, WriteJSONFile(path, timing.Helios4()))
	p, err := timing.LoadProfile(path)
	require.NoError(t, err)
	assert.Equal(t, *timing.Helios4(), *p)
	assert.Error(t, WriteJSONFile(filepath.Join(path, "below-a-file"), 1))
}

func TestThreadsNamed(t *testing.T) {
	for _, tt := range []struct {
		names []string
		want  []string
		err   string
	}{
		{nil, []string{"alloc", "blocksize", "iomap", "lru", "host"}, ""},
		{[]string{"lru", "alloc", "lru"}, []string{"lru", "alloc"}, ""},
		{[]string{"lru", "nope"}, nil, "valid: alloc, blocksize, iomap, lru, host"},
	} {
		ths, err := ThreadsNamed(tt.names...)
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err)
			continue
		}
		require.NoError(t, err)
		var got []string
		for _, th := range ths {
			got = append(got, th.Name)
		}
		assert.Equal(t, tt.want, got, tt.names)
	}
}

// TestReproduceLRU runs the smallest thread and renders it every way: the
// JSON has its tables and 6.18 figures, the CSV a row per cell and figure,
// the text the thread's own, and its figure is drawn.
func TestReproduceLRU(t *testing.T) {
	ths, err := ThreadsNamed("lru")
	require.NoError(t, err)
	var buf bytes.Buffer
	prog := NewProgress(&buf, "bhsim reproduce", "lru")
	rs, err := RunThreads(context.Background(), ths, []*timing.Profile{nil}, false, prog)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	doc := ReproduceOf(Tool{Name: "bhsim"}, ths, rs, []string{"built-in"})
	require.Len(t, doc.Threads, 1)
	th := doc.Threads[0]
	assert.Equal(t, "lru", th.Name)
	assert.Equal(t, ths[0].Subject, th.Subject)
	assert.Equal(t, map[string]int{"fitted": 1, "predicted": 1}, th.LabelCounts)
	require.Len(t, th.Tables, 1)
	c := th.Tables[0].Cells[1]
	assert.InDelta(t, 100*(c.Simulated-c.Published)/c.Published, c.ErrorPercent, 1e-9)

	var js bytes.Buffer
	require.NoError(t, WriteJSON(&js, doc))
	var back Reproduce
	dec := json.NewDecoder(&js)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&back))
	assert.Equal(t, doc, back, "the JSON reads back as written")

	var cb bytes.Buffer
	require.NoError(t, doc.WriteCSV(&cb))
	rows, err := csv.NewReader(&cb).ReadAll()
	require.NoError(t, err)
	assert.Len(t, rows, 1+len(th.Tables[0].Cells)+len(th.Today))
	assert.Equal(t, []string{ReproduceCSVSchema, "lru", "x86-server", "lru-today"}, rows[len(rows)-1][:4])

	var text bytes.Buffer
	require.NoError(t, WriteReproduceText(&text, rs, true))
	assert.Equal(t, rs[0].Text()+"\n"+rs[0].CrossValidationText(), text.String())

	dir := filepath.Join(t.TempDir(), "new")
	require.NoError(t, WriteFigures(dir, rs...))
	checkChart(t, dir, "lru-tosatti")
}

// TestRunOutputs runs a small generated workload and writes its text, CSV
// and charts.
func TestRunOutputs(t *testing.T) {
	s := DefaultWorkloadSpec()
	s.Gen, s.Seed = "random:dev=4M,n=500,reads=0.5,fsync=50", "1"
	w, err := s.Workload()
	require.NoError(t, err)
	o, err := s.Options()
	require.NoError(t, err)
	r, err := engine.Run(context.Background(), w, o)
	require.NoError(t, err)

	var text bytes.Buffer
	require.NoError(t, WriteRunText(&text, r))
	for _, want := range []string{r.Header(), "latency, simulated µs", "p99.9", "throughput over simulated time", "fsync"} {
		assert.Contains(t, text.String(), want)
	}
	var js bytes.Buffer
	require.NoError(t, WriteRunJSON(&js, r))
	var doc struct {
		Schema string `json:"schema"`
		Tool   Tool   `json:"tool"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &doc))
	assert.Equal(t, engine.RunSchema, doc.Schema)
	assert.Equal(t, CurrentTool(), doc.Tool)
	assert.Nil(t, r.Tool, "the result given is not changed")
	var cb bytes.Buffer
	require.NoError(t, WriteRunCSV(&cb, r))
	rows, err := csv.NewReader(&cb).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"schema", "workload", "section", "name", "metric", "value"}, rows[0])
	assert.Contains(t, rows, []string{RunCSVSchema, r.Workload, "run", "", "seed", "1"})

	dir := filepath.Join(t.TempDir(), "charts")
	require.NoError(t, WriteRunCharts(dir, r))
	for _, f := range []string{"latency-cdf.svg", "latency-cdf.png", "throughput.svg", "throughput.png"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Greater(t, st.Size(), int64(1000), f)
	}
}

// TestResultOutputs runs a corpus scenario on the model and writes it
// every way.
func TestResultOutputs(t *testing.T) {
	s, err := scenario.ParseFile(filepath.Join(corpus, "rmw-uncached-bs4k.scn"))
	require.NoError(t, err)
	r, err := engine.RunModel(context.Background(), s, engine.ModelOptions{})
	require.NoError(t, err)
	var text bytes.Buffer
	require.NoError(t, WriteResultText(&text, r))
	for _, w := range []string{"scenario rmw-uncached-bs4k on the model (kernel 6.18", "2. pwrite a off=1K len=512 fill=0x11",
		"ledger", "fsync at op 3 on a: ok"} {
		assert.Contains(t, text.String(), w)
	}
	var js bytes.Buffer
	require.NoError(t, WriteResultJSON(&js, r))
	assert.Nil(t, r.Tool, "the result given is not changed")
	back, err := scenario.DecodeResult(js.Bytes())
	require.NoError(t, err)
	require.NotNil(t, back.Tool, "the result names its writer, as the other outputs do")
	assert.Equal(t, CurrentTool(), *back.Tool)
	back.Tool = nil
	assert.Equal(t, r, back)
	assert.Contains(t, js.String(), `"schema": "bhsim-result/1"`)
	var cb bytes.Buffer
	require.NoError(t, WriteResultCSV(&cb, r))
	rows, err := csv.NewReader(&cb).ReadAll()
	require.NoError(t, err)
	assert.Contains(t, rows, []string{ResultCSVSchema, "rmw-uncached-bs4k", "model", "3", "fsync a", "result", "errno", "ok"})
}

// TestSweepOutputs sweeps two cells and writes them every way.
func TestSweepOutputs(t *testing.T) {
	m, err := workload.DDMachineByName("helios4")
	require.NoError(t, err)
	g := workload.DDGrid{Base: m.Base}
	require.NoError(t, g.SetAxis("layout", []string{"direct", "raid0"}))
	require.NoError(t, g.SetAxis("count", []string{"16"}))
	p := timing.Helios4()
	rows, err := workload.SweepDD(g, p, workload.SweepOptions{})
	require.NoError(t, err)
	doc := SweepOf(Tool{Name: "bhsim"}, m, p, "built-in", rows)
	require.Len(t, doc.Rows, 2)
	assert.Equal(t, "direct", doc.Rows[0].Layout)
	assert.Equal(t, uint64(16), doc.Rows[1].Count)
	assert.Equal(t, "write", doc.Rows[1].Op)
	var text bytes.Buffer
	require.NoError(t, doc.WriteText(&text))
	assert.True(t, strings.HasPrefix(text.String(), "dd sweep on "+m.Description+"\nprofile helios4 (costs: built-in): "+p.Description+"\n"))
	var cb bytes.Buffer
	require.NoError(t, doc.WriteCSV(&cb))
	cells, err := csv.NewReader(&cb).ReadAll()
	require.NoError(t, err)
	require.Len(t, cells, 3)
	assert.Equal(t, []string{SweepCSVSchema, "helios4", "helios4", "built-in"}, cells[2][:4])
	assert.Equal(t, "raid0", cells[2][6])
}

func TestWriteExplanationAndProfiles(t *testing.T) {
	op, err := workload.ExplainOpByName("find-get-block-miss")
	require.NoError(t, err)
	args, err := op.Parse(nil)
	require.NoError(t, err)
	e, err := op.Build(context.Background(), args, nil, nil)
	require.NoError(t, err)
	p := timing.X86Server()
	var b bytes.Buffer
	require.NoError(t, WriteExplanation(&b, e, p, "built-in"))
	assert.Equal(t, "costs: built-in (profile x86-server)\n"+e.Text(p), b.String())
	b.Reset()
	require.NoError(t, WriteProfiles(&b, timing.Profiles()))
	assert.Equal(t, len(timing.Profiles()), strings.Count(b.String(), "\n"))
	assert.Contains(t, b.String(), "helios4        ")
}

func TestWriteExplainOps(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteExplainOps(&b, workload.ExplainOps()))
	out := b.String()
	for _, op := range workload.ExplainOps() {
		assert.Contains(t, out, "  "+op.Name+": "+op.Summary+"\n")
	}
	assert.Contains(t, out, "\n      --bsize (default 512): the device's block size: 512, 1024, 2048 or 4096\n", "an argument as its flag, without the usage's backquotes")
	assert.Contains(t, out, "\n      profile helios4\n")
	assert.NotContains(t, out, "`")
}
