package pageindex

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadAllocatesNothing(t *testing.T) {
	probes := []struct {
		name  string
		index uint64
	}{
		{"hit lone 0", 0},
		{"hit deep", 1 << 29},
		{"miss in range", 1<<29 + 1},
		{"miss beyond range", 1 << 40},
	}
	forEachKind(t, func(t *testing.T, idx Index[folio]) {
		require.True(t, idx.Insert(1<<29, &folio{index: 1 << 29}))
		require.True(t, idx.Insert(0, &folio{index: 0}))
		for _, p := range probes {
			allocs := testing.AllocsPerRun(1000, func() { idx.Load(p.index) })
			assert.Zero(t, allocs, p.name)
		}
	})
}

func TestXArrayWritesInPlaceAllocateNothing(t *testing.T) {
	x := NewXArray[folio]()
	keep, f := &folio{index: 1 << 29}, &folio{index: 1<<29 + 1}
	require.True(t, x.Insert(1<<29, keep)) // keeps the leaf alive
	ops := []struct {
		name string
		fn   func()
	}{
		{"insert and delete in an existing leaf", func() {
			x.Insert(1<<29+1, f)
			x.Delete(1<<29+1, f)
		}},
		{"set and clear a mark", func() {
			x.SetMark(1<<29, MarkDirty)
			x.ClearMark(1<<29, MarkDirty)
		}},
		{"marked", func() { x.Marked(1<<29, MarkDirty) }},
		{"next", func() { x.Next(1) }},
		{"next marked", func() { x.NextMarked(1, MarkWriteback) }},
		{"count marked", func() { x.CountMarked(MarkDirty) }},
	}
	for _, op := range ops {
		assert.Zero(t, testing.AllocsPerRun(1000, op.fn), op.name)
	}
}

func TestUpdateAndFindMarkedAllocateNothing(t *testing.T) {
	forEachKind(t, func(t *testing.T, idx Index[folio]) {
		items := make([]*folio, 2*BatchSize)
		for i := range items {
			items[i] = &folio{index: uint64(i) << 10}
			require.True(t, idx.Insert(items[i].index, items[i]))
		}
		toggle := func(_ *folio, m Marks) Marks { return m ^ MarkDirty.Bit() }
		ops := []struct {
			name string
			fn   func()
		}{
			{"update marks", func() { idx.UpdateMarks(items[3].index, items[3], toggle) }},
			{"update marks, refused", func() { idx.UpdateMarks(items[3].index, items[4], toggle) }},
			{"find marked, full batch", func() { idx.FindMarked(0, MarkWriteback) }},
		}
		for _, f := range items {
			idx.SetMark(f.index, MarkWriteback)
		}
		for _, op := range ops {
			assert.Zero(t, testing.AllocsPerRun(1000, op.fn), op.name)
		}
	})
}
