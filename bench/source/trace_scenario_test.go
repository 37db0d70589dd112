package source

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/scenario"
)

const traceScenarioText = `# A scenario as a trace.
device size=64M sector=512
open a rdwr
blkbszset a 1K   # not I/O
pwrite a off=0 len=4K repeat=3 stride=8K fill=0xab

pwrite a off=1M len=0
pread a off=1000 len=100
report bio.*
fsync a
open b rdonly
fdatasync b
dropcaches b
close b
close a
`

func TestScenarioTextReader(t *testing.T) {
	r, err := NewScenarioTextReader("t.scn", traceScenarioText)
	require.NoError(t, err)
	assert.Equal(t, int64(64<<20), r.Scenario().Device.Size)
	got, err := ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, []IO{
		{Kind: IOWrite, Offset: 0, Length: 4096, Line: 5},
		{Kind: IOWrite, Offset: 8192, Length: 4096, Line: 5},
		{Kind: IOWrite, Offset: 16384, Length: 4096, Line: 5},
		{Kind: IORead, Offset: 1000, Length: 100, Line: 8},
		{Kind: IOFsync, Line: 10},
		{Kind: IOFdatasync, Line: 12},
	}, got)
	// After the end, still io.EOF.
	_, err = r.Next()
	assert.Equal(t, errorString(err), "EOF")

	_, err = NewScenarioTextReader("bad.scn", "device size=64M\npwrite a off=0 len=1\n")
	assert.ErrorContains(t, err, `bad.scn:2: pwrite: unknown fd "a"`)
}

func errorString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestScenarioReader(t *testing.T) {
	s := &scenario.Scenario{
		Name:   "built",
		Device: scenario.Device{Size: 1 << 20},
		Ops: []scenario.Op{
			scenario.Open{FD: "a", Mode: scenario.ReadWriteMode},
			scenario.Read{FD: "a", Off: 512, Len: 512, Repeat: 2},
			scenario.Fsync{FD: "a"},
		},
	}
	r, err := NewScenarioReader(s)
	require.NoError(t, err)
	got, err := ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, []IO{
		{Kind: IORead, Offset: 512, Length: 512},
		{Kind: IORead, Offset: 1024, Length: 512},
		{Kind: IOFsync},
	}, got, "a Go-built scenario has no lines")

	_, err = NewScenarioReader(nil)
	assert.Error(t, err)
	_, err = NewScenarioReader(&scenario.Scenario{Device: scenario.Device{Size: 1 << 20}, Ops: []scenario.Op{scenario.Fsync{FD: "a"}}})
	assert.ErrorContains(t, err, "unknown fd")
	_, err = NewScenarioReader(&scenario.Scenario{Device: scenario.Device{Size: 1 << 20}, Ops: []scenario.Op{scenario.Open{FD: "a"}, scenario.Write{FD: "a", Off: -1, Len: 1}}})
	assert.ErrorContains(t, err, "off=-1")
}

// TestScenarioCorpusAsTraces reads every corpus scenario as a trace: its
// records move the bytes of its pwrite and pread lines, length × calls.
func TestScenarioCorpusAsTraces(t *testing.T) {
	scenarios, err := scenario.ParseDir("../../testdata/scenarios")
	require.NoError(t, err)
	require.NotEmpty(t, scenarios)
	for _, s := range scenarios {
		r, err := NewScenarioReader(s)
		require.NoError(t, err, s.Name)
		sum, err := SummarizeTrace(r)
		require.NoError(t, err, s.Name)
		var want uint64
		for _, op := range s.Ops {
			switch o := op.(type) {
			case scenario.Write:
				want += uint64(o.Len) * uint64(o.Calls())
			case scenario.Read:
				want += uint64(o.Len) * uint64(o.Calls())
			}
		}
		assert.Equal(t, want, sum.Bytes[IOWrite]+sum.Bytes[IORead], s.Name)
	}
}
