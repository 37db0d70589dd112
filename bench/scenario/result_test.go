package scenario

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompareNames(t *testing.T) {
	names := []string{"rq.write", "bio.write.bytes=4096", "bio.write", "bio.write.bytes=512", "bio.read", "bio.write.bytes=x", "pagecache.add.order=2", "pagecache.add.order=0"}
	var s CounterSet
	for _, n := range names {
		s.Inc(n)
	}
	got := []string{}
	for _, c := range s.Counters() {
		got = append(got, c.Name)
	}
	assert.Equal(t, []string{"bio.read", "bio.write", "bio.write.bytes=512", "bio.write.bytes=4096", "bio.write.bytes=x", "pagecache.add.order=0", "pagecache.add.order=2", "rq.write"}, got)
	tests := []struct {
		a, b string
		want int
	}{
		{"a", "a", 0}, {"a", "b", -1}, {"a=10", "a=9", 1}, {"a=9", "a=10", -1}, {"a=1", "a=x", -1}, {"a=x", "a=1", 1}, {"a", "a=1", -1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, CompareNames(tt.a, tt.b), "%s vs %s", tt.a, tt.b)
	}
}

func TestCountersGetMatch(t *testing.T) {
	var s CounterSet
	s.Add("bio.write", 3)
	s.Add("bio.write.bytes=4096", 3)
	s.Add("rq.flush", 0)
	cs := s.Counters()
	c, ok := cs.Get("bio.write")
	require.True(t, ok)
	assert.Equal(t, C("bio.write", 3), c)
	_, ok = cs.Get("bio.read")
	assert.False(t, ok)
	assert.Equal(t, uint64(0), cs.Value("bio.read"))
	assert.Equal(t, "bio.write=3 bio.write.bytes=4096=3", cs.Match([]string{"bio.*"}).String())
	assert.Equal(t, cs, cs.Match(nil))
	assert.True(t, MatchName(nil, "x"))
	assert.False(t, MatchName([]string{"rq.*"}, "bio.write"))
	var empty CounterSet
	assert.Nil(t, empty.Counters())
}

func TestCounterJSON(t *testing.T) {
	tests := []struct {
		c    Counter
		json string
	}{
		{C("bio.write", 256), `{"name":"bio.write","value":256}`},
		{C("rq.flush", 0), `{"name":"rq.flush","value":0}`},
		{Counter{Name: "merge.back", Min: 2, Max: 5}, `{"name":"merge.back","min":2,"max":5}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.c)
		require.NoError(t, err)
		assert.JSONEq(t, tt.json, string(b))
		var back Counter
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, tt.c, back)
	}
	for _, bad := range []string{`{"value":1}`, `{"name":"x"}`, `{"name":"x","min":3,"max":2}`, `{"name":"x","value":1,"min":1,"max":1}`, `{"name":"x","value":-1}`, `[]`} {
		var c Counter
		assert.Error(t, json.Unmarshal([]byte(bad), &c), bad)
	}
}

func testResult(t *testing.T, writes, merges uint64, errno string) *Result {
	t.Helper()
	s, err := Parse("dd.scn", "# pins\ndevice size=1M\nopen a rdwr\npwrite a off=0 len=4K repeat=2\nfsync a\npread a off=0 len=1K\nclose a\nreport bio.* merge.*\n")
	require.NoError(t, err)
	r := NewResult(s, RunnerKernel)
	r.Ops[0].BlockSize = 4096
	r.Ops[0].Calls = 1
	r.Ops[1].Calls, r.Ops[1].Bytes = 2, 8192
	r.Ops[1].CPU = &Measurement{}
	r.Ops[1].CPU.Add(100)
	r.Ops[1].CPU.Add(300)
	var c CounterSet
	c.Add("bio.write", writes)
	c.Add("merge.back", merges)
	c.Add("sectors.written", writes*8)
	r.Ops[2].Counters = c.Counters()
	r.Ops[2].Calls, r.Ops[2].Errno = 1, errno
	r.Ops[3].Calls, r.Ops[3].Bytes, r.Ops[3].Data = 1, 1024, DataSummary(make([]byte, 1024))
	r.Ops[4].Calls = 1
	r.Fsyncs = []FsyncResult{{Op: 3, FD: "a", Errno: errno}}
	r.Finish()
	return r
}

func TestResultEncodeDecode(t *testing.T) {
	r := testResult(t, 2, 1, "")
	assert.Equal(t, "bio.write=2 merge.back=1 sectors.written=16", r.Total.String())
	b, err := r.Encode()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"schema": "bhsim-result/1"`)
	back, err := DecodeResult(b)
	require.NoError(t, err)
	assert.Equal(t, r, back)
	legacy, err := DecodeResult([]byte(strings.Replace(string(b), `"schema": "bhsim-result/1"`, `"schema": 1`, 1)))
	require.NoError(t, err, "the recordings' bare version still reads")
	assert.Equal(t, r, legacy, "and reads as the named schema")
	r.Tool = &Tool{Name: "bhsim", Version: "v1.0.0", Go: "go1.26.0"}
	b, err = r.Encode()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"tool": {"name": "bhsim", "version": "v1.0.0", "go": "go1.26.0"}`)
	back, err = DecodeResult(b)
	require.NoError(t, err)
	assert.Equal(t, r, back)

	for _, bad := range []struct{ text, want string }{
		{`{}`, `schema none, want "bhsim-result/1" (or 1)`},
		{`{"schema":2}`, `schema 2, want "bhsim-result/1" (or 1)`},
		{`{"schema":"bhsim-result/2"}`, `schema "bhsim-result/2", want`},
		{`{"schema":"1"}`, `schema "1", want`},
		{`nope`, "result: invalid character"},
		{`{"schema":1,"ops":[{"index":2}]}`, "op 1 has index 2"},
		{`{"schema":1,"total":[{"name":"b","value":1},{"name":"a","value":1}]}`, `counters "b" and "a" out of order`},
		{`{"schema":1,"total":[{"name":"b"}]}`, `counter "b": want value`},
	} {
		_, err := DecodeResult([]byte(bad.text))
		require.Error(t, err, bad.text)
		assert.Contains(t, err.Error(), bad.want)
	}
}

func TestMergeRuns(t *testing.T) {
	a, b, c := testResult(t, 2, 1, ""), testResult(t, 2, 3, ""), testResult(t, 2, 2, "EIO")
	m, err := MergeRuns([]*Result{a, b, c})
	require.NoError(t, err)
	assert.Equal(t, 3, m.Runs)
	assert.Equal(t, Counters{C("bio.write", 2), {Name: "merge.back", Min: 1, Max: 3}, C("sectors.written", 16)}, m.Total)
	assert.Equal(t, []string{"merge.back", "op 3 errno"}, m.Varied)
	assert.Equal(t, "", m.Ops[2].Errno, "the first run's errno is kept")
	require.NotNil(t, m.Ops[1].CPU)
	assert.Equal(t, 6, m.Ops[1].CPU.N)
	assert.InDelta(t, 200, m.Ops[1].CPU.MeanNs, 1e-9)
	assert.InDelta(t, 100, m.Ops[1].CPU.StddevNs, 1e-9)
	assert.Equal(t, Counters{C("bio.write", 2), {Name: "merge.back", Min: 1, Max: 3}, C("sectors.written", 16)}, m.Ops[2].Counters)
	assert.Equal(t, uint64(2), a.Total.Value("bio.write"), "inputs unchanged")

	_, err = MergeRuns(nil)
	assert.Error(t, err)
	other := testResult(t, 1, 1, "")
	other.Scenario = "other"
	_, err = MergeRuns([]*Result{a, other})
	assert.ErrorContains(t, err, `"other" (5 ops) is not a run of "dd"`)
}

func TestMeasurement(t *testing.T) {
	var m Measurement
	for _, v := range []int64{10, 20, 30, 40} {
		m.Add(v)
	}
	assert.Equal(t, 4, m.N)
	assert.InDelta(t, 25, m.MeanNs, 1e-9)
	assert.InDelta(t, math.Sqrt(125), m.StddevNs, 1e-9)
	assert.Equal(t, int64(10), m.MinNs)
	assert.Equal(t, int64(40), m.MaxNs)
	m.Merge(Measurement{})
	assert.Equal(t, 4, m.N)
}

func TestMeasurementAddPooled(t *testing.T) {
	tests := []struct {
		name      string
		ns        int64
		n         int
		wantN     int
		wantMean  float64
		wantRange [2]int64
	}{
		{"four calls in 100 ns", 100, 4, 4, 25, [2]int64{25, 25}},
		{"one call", 7, 1, 1, 7, [2]int64{7, 7}},
		{"no call records nothing", 100, 0, 0, 0, [2]int64{0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m Measurement
			m.AddPooled(tc.ns, tc.n)
			assert.Equal(t, tc.wantN, m.N)
			assert.InDelta(t, tc.wantMean, m.MeanNs, 1e-9)
			assert.Equal(t, tc.wantRange, [2]int64{m.MinNs, m.MaxNs})
			assert.Zero(t, m.StddevNs)
		})
	}
	var m Measurement // pooled into samples: the means weigh by their calls
	m.Add(10)
	m.AddPooled(300, 3)
	assert.Equal(t, 4, m.N)
	assert.InDelta(t, 77.5, m.MeanNs, 1e-9)
}

func TestDataSummary(t *testing.T) {
	b := make([]byte, 4096+512)
	for i := range 4096 {
		b[i] = 0xab
	}
	assert.Equal(t, "0xab*4096 0x00*512", DataSummary(b))
	assert.Equal(t, "", DataSummary(nil))
	many := make([]byte, 40)
	for i := range many {
		many[i] = byte(i)
	}
	got := DataSummary(many)
	assert.Contains(t, got, "0x0f*1 ... 40 runs, fnv64a=")
	assert.NotContains(t, got, "0x10*1")
}

// FuzzDecodeResult checks that DecodeResult never panics and that what it
// accepts encodes and decodes back to the same result.
func FuzzDecodeResult(f *testing.F) {
	r := &Result{Schema: ResultSchema, Scenario: "x", Runner: RunnerKernel, Runs: 1,
		Ops:   []OpResult{{Index: 1, Op: "open a rdwr", Calls: 1, BlockSize: 4096, Counters: Counters{C("a", 1)}}},
		Total: Counters{C("a", 1), {Name: "b", Min: 1, Max: 2}}}
	b, err := r.Encode()
	require.NoError(f, err)
	f.Add(b)
	f.Add([]byte(`{"schema":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeResult(data)
		if err != nil {
			return
		}
		out, err := r.Encode()
		require.NoError(t, err)
		again, err := DecodeResult(out)
		require.NoError(t, err)
		require.Equal(t, r, again)
	})
}
