package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompareEqualAndRange(t *testing.T) {
	model := testResult(t, 2, 2, "")
	model.Runner = RunnerModel
	k1, k2 := testResult(t, 2, 1, ""), testResult(t, 2, 3, "")
	kernel, err := MergeRuns([]*Result{k1, k2})
	require.NoError(t, err)

	c := Compare(model, kernel)
	assert.Equal(t, "dd", c.Scenario)
	s := c.Summary()
	assert.Equal(t, s.Total, s.Equal, c.String())
	// total: bio.write, merge.back (sectors.written is not reported)
	assert.Equal(t, 2, s.CounterRows)
	var names []string
	for _, r := range c.Rows {
		if r.Op == 0 {
			names = append(names, r.Name)
		}
	}
	assert.Equal(t, []string{"bio.write", "merge.back", "fsync[a]"}, names)
	for _, r := range c.Rows {
		if r.Name == "merge.back" && r.Op == 0 {
			assert.Equal(t, "2", r.Model)
			assert.Equal(t, "1..3", r.Kernel)
			assert.True(t, r.Ranged)
		}
		if r.Name == "bio.write" {
			assert.False(t, r.Ranged, "both runs agreed")
		}
	}
	assert.Positive(t, s.Ranged)
	assert.Equal(t, s.Ranged, s.RangedEqual)

	outside := testResult(t, 2, 4, "")
	s = Compare(outside, kernel).Summary()
	assert.Less(t, s.RangedEqual, s.Ranged, "4 lies outside 1..3")
	assert.Equal(t, Summary{Equal: 2 * s.Equal, Total: 2 * s.Total, CountersEqual: 2 * s.CountersEqual, CounterRows: 2 * s.CounterRows,
		ResultsEqual: 2 * s.ResultsEqual, ResultRows: 2 * s.ResultRows, RangedEqual: 2 * s.RangedEqual, Ranged: 2 * s.Ranged}, s.Add(s))
}

func TestCompareDifferences(t *testing.T) {
	model := testResult(t, 16, 0, "EIO")
	kernel := testResult(t, 2, 1, "")
	model.Ops[0].BlockSize = 512
	model.Ops[3].Data = "0xaa*1024"
	c := Compare(model, kernel)
	diffs := map[string]Row{}
	for _, r := range c.Differences() {
		diffs[r.Name+"@"+string(rune('0'+r.Op))] = r
	}
	assert.Equal(t, Row{Kind: RowCounter, Op: 0, Name: "bio.write", Model: "16", Kernel: "2"}, diffs["bio.write@0"])
	assert.Equal(t, Row{Kind: RowCounter, Op: 0, Name: "merge.back", Model: "0", Kernel: "1"}, diffs["merge.back@0"])
	assert.Equal(t, Row{Kind: RowResult, Op: 3, Name: "errno", Model: "EIO", Kernel: "ok"}, diffs["errno@3"])
	assert.Equal(t, Row{Kind: RowResult, Op: 1, Name: "block_size", Model: "512", Kernel: "4096"}, diffs["block_size@1"])
	assert.Equal(t, Row{Kind: RowResult, Op: 4, Name: "data", Model: "0xaa*1024", Kernel: "0x00*1024"}, diffs["data@4"])
	assert.Equal(t, Row{Kind: RowResult, Name: "fsync[a]", Model: "EIO", Kernel: "ok"}, diffs["fsync[a]@0"])
	s := c.Summary()
	assert.Equal(t, 0, s.CountersEqual)
	assert.Equal(t, 2, s.CounterRows)
	assert.Less(t, s.Equal, s.Total)
	assert.Contains(t, c.String(), "dd: ")
	assert.Contains(t, c.String(), "  total bio.write: model 16, kernel 2\n")
	assert.Contains(t, c.String(), "  op 3 errno: model EIO, kernel ok\n")
}

func TestCompareMismatchedOps(t *testing.T) {
	model := testResult(t, 2, 1, "")
	kernel := testResult(t, 2, 1, "")
	model.Ops = model.Ops[:3]
	kernel.Ops[1].Op = "pwrite a off=0 len=8K"
	c := Compare(model, kernel)
	var ops []Row
	for _, r := range c.Rows {
		if r.Name == "op" {
			ops = append(ops, r)
		}
	}
	require.Len(t, ops, 3)
	assert.Equal(t, Row{Kind: RowResult, Op: 2, Name: "op", Model: "pwrite a off=0 len=4K repeat=2", Kernel: "pwrite a off=0 len=8K"}, ops[0])
	assert.Equal(t, "(missing)", ops[1].Model)
}

func TestCompareAll(t *testing.T) {
	a := testResult(t, 2, 1, "")
	b := testResult(t, 2, 1, "")
	b.Scenario = "only-model"
	k := testResult(t, 2, 1, "")
	k2 := testResult(t, 2, 1, "")
	k2.Scenario = "only-kernel"
	cs := CompareAll([]*Result{a, b}, []*Result{k, k2})
	require.Len(t, cs, 3)
	assert.Equal(t, "dd", cs[0].Scenario)
	assert.Equal(t, cs[0].Summary().Total, cs[0].Summary().Equal)
	assert.Equal(t, "only-kernel", cs[1].Scenario)
	assert.Equal(t, "(no result)", cs[1].Rows[0].Model)
	assert.Equal(t, "only-model", cs[2].Scenario)
	assert.Equal(t, "(no result)", cs[2].Rows[0].Kernel)
}
