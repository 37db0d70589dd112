package pageindex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opCode names one Index operation the oracle-checked sequences perform.
type opCode uint8

const (
	opInsert      opCode = iota // Insert a fresh item
	opDelete                    // Delete the stored item (or a fresh one if empty)
	opDeleteWrong               // Delete a fresh item that is never the stored one
	opSetMark
	opClearMark
	opMarked
	opNext
	opNextMarked
	opLoad
	opUpdateMarks      // UpdateMarks on the stored item: toggle the mark
	opUpdateMarksWrong // UpdateMarks with a fresh item: refused, fn not called
	opFindMarked
	opSplit // Split the entry at index into two halves (or order 0)
	numOps
)

// op is one step of a checked sequence. mark may be NumMarks, an invalid
// mark, to check that it is ignored; order is the order of an inserted entry
// (or of the parts of a split, 0 meaning half the entry's).
type op struct {
	code  opCode
	index uint64
	mark  Mark
	order uint8
}

func (o op) String() string {
	return fmt.Sprintf("op%d(%#x, mark %d, order %d)", o.code, o.index, o.mark, o.order)
}

// oracle is the reference model: a map of items, their sorted indices, and
// one set per mark.
type oracle struct {
	items map[uint64]*folio
	keys  []uint64
	marks [NumMarks]map[uint64]bool
}

func newOracle() *oracle {
	o := &oracle{items: map[uint64]*folio{}}
	for m := range o.marks {
		o.marks[m] = map[uint64]bool{}
	}
	return o
}

// covering returns the entry covering index i, or nil.
func (o *oracle) covering(i uint64) *folio {
	k, found := slices.BinarySearch(o.keys, i)
	if found {
		return o.items[i]
	}
	if k == 0 {
		return nil
	}
	if f := o.items[o.keys[k-1]]; f.covers(i) {
		return f
	}
	return nil
}

// insert records f as stored.
func (o *oracle) insert(f *folio) {
	o.items[f.index] = f
	i, _ := slices.BinarySearch(o.keys, f.index)
	o.keys = slices.Insert(o.keys, i, f.index)
}

// free reports whether no entry covers any index of [index, index+2^order).
func (o *oracle) free(index uint64, order uint8) bool {
	last := index + (uint64(1)<<order - 1)
	if o.covering(index) != nil {
		return false
	}
	k, _ := slices.BinarySearch(o.keys, index)
	return k == len(o.keys) || o.keys[k] > last
}

// next returns the first index >= start an entry covers (start itself when
// one covers it), or, if marked, the first entry's first index carrying m.
func (o *oracle) next(start uint64, m Mark, marked bool) (uint64, bool) {
	if marked && !m.valid() {
		return 0, false
	}
	if !marked && o.covering(start) != nil {
		return start, true
	}
	i, _ := slices.BinarySearch(o.keys, start)
	for _, k := range o.keys[i:] {
		if !marked || o.marks[m][k] {
			return k, true
		}
	}
	return 0, false
}

// apply performs op on idx and on the oracle and fails the test if their
// answers differ.
func (o *oracle) apply(t *testing.T, idx Index[folio], p op) {
	t.Helper()
	stored := o.items[p.index]
	switch p.code {
	case opInsert:
		f := &folio{index: p.index, order: p.order}
		ok := p.order < 64 && p.index&(uint64(1)<<p.order-1) == 0 && o.free(p.index, p.order)
		if p.order == 0 {
			require.Equal(t, ok, idx.Insert(p.index, f), "%v", p)
		} else {
			require.Equal(t, ok, idx.InsertOrder(p.index, p.order, f), "%v", p)
		}
		if ok {
			o.insert(f)
		}
	case opDelete:
		if stored == nil {
			require.False(t, idx.Delete(p.index, &folio{index: p.index}), "%v", p)
			if c := o.covering(p.index); c != nil {
				require.False(t, idx.Delete(p.index, c), "%v: not the entry's first index", p)
			}
			return
		}
		require.True(t, idx.Delete(p.index, stored), "%v", p)
		delete(o.items, p.index)
		i, _ := slices.BinarySearch(o.keys, p.index)
		o.keys = slices.Delete(o.keys, i, i+1)
		for m := range o.marks {
			delete(o.marks[m], p.index)
		}
	case opDeleteWrong:
		require.False(t, idx.Delete(p.index, &folio{index: p.index}), "%v", p)
	case opSetMark:
		idx.SetMark(p.index, p.mark)
		if stored != nil && p.mark.valid() {
			o.marks[p.mark][p.index] = true
		}
	case opClearMark:
		idx.ClearMark(p.index, p.mark)
		if p.mark.valid() {
			delete(o.marks[p.mark], p.index)
		}
	case opMarked:
		require.Equal(t, p.mark.valid() && o.marks[p.mark][p.index], idx.Marked(p.index, p.mark), "%v", p)
	case opNext, opNextMarked:
		marked := p.code == opNextMarked
		want, wantOK := o.next(p.index, p.mark, marked)
		var (
			got   uint64
			item  *folio
			gotOK bool
		)
		if marked {
			got, item, gotOK = idx.NextMarked(p.index, p.mark)
		} else {
			got, item, gotOK = idx.Next(p.index)
		}
		require.Equal(t, wantOK, gotOK, "%v", p)
		if wantOK {
			require.Equal(t, want, got, "%v", p)
			require.Same(t, o.covering(want), item, "%v", p)
		}
	case opLoad:
		item, _ := idx.Load(p.index)
		require.Same(t, o.covering(p.index), item, "%v", p)
		require.Same(t, item, idx.Warm(p.index), "%v: Warm finds Load's item", p)
	case opUpdateMarks, opUpdateMarksWrong:
		item := stored
		if item == nil {
			item = o.covering(p.index) // refused at an index that starts no entry
		}
		if item == nil || p.code == opUpdateMarksWrong {
			item = &folio{index: p.index}
		}
		var want Marks
		for m := range NumMarks {
			if o.marks[m][p.index] {
				want |= m.Bit()
			}
		}
		calls := 0
		ok := idx.UpdateMarks(p.index, item, func(f *folio, got Marks) Marks {
			calls++
			require.Same(t, item, f, "%v", p)
			require.Equal(t, want, got, "%v", p)
			return got ^ p.mark.Bit() | ^allMarks // the bits beyond the marks must be ignored
		})
		if item != stored {
			require.False(t, ok, "%v", p)
			require.Zero(t, calls, "%v", p)
			return
		}
		require.True(t, ok, "%v", p)
		require.Equal(t, 1, calls, "%v", p)
		if p.mark.valid() {
			if o.marks[p.mark][p.index] {
				delete(o.marks[p.mark], p.index)
			} else {
				o.marks[p.mark][p.index] = true
			}
		}
	case opFindMarked:
		o.checkFindMarked(t, idx, p)
	case opSplit:
		o.split(t, idx, p, stored)
	}
}

// split splits stored, the entry at p.index (if any), into parts of order
// p.order, or of half its order when p.order is not below it, and checks
// that a split of anything else is refused.
func (o *oracle) split(t *testing.T, idx Index[folio], p op, stored *folio) {
	t.Helper()
	never := func(int) *folio { t.Fatalf("%v: part called for a refused split", p); return nil }
	if stored == nil || stored.order == 0 {
		item := stored
		if item == nil {
			item = o.covering(p.index)
		}
		if item == nil {
			item = &folio{index: p.index}
		}
		require.False(t, idx.Split(p.index, item, item.order+1, 0, never), "%v", p)
		return
	}
	require.False(t, idx.Split(p.index, stored, stored.order+1, stored.order, never), "%v: wrong order", p)
	require.False(t, idx.Split(p.index, &folio{index: p.index, order: stored.order}, stored.order, 0, never), "%v", p)
	newOrder := p.order
	if newOrder >= stored.order {
		newOrder = stored.order / 2
	}
	var parts []*folio
	require.True(t, idx.Split(p.index, stored, stored.order, newOrder, func(k int) *folio {
		f := &folio{index: p.index + uint64(k)<<newOrder, order: newOrder}
		parts = append(parts, f)
		return f
	}), "%v", p)
	require.Len(t, parts, 1<<(stored.order-newOrder), "%v", p)
	delete(o.items, p.index)
	i, _ := slices.BinarySearch(o.keys, p.index)
	o.keys = slices.Delete(o.keys, i, i+1)
	for _, f := range parts {
		o.insert(f)
		for m := range o.marks {
			if o.marks[m][p.index] {
				o.marks[m][f.index] = true
			}
		}
	}
}

// checkFindMarked compares FindMarked(p.index, p.mark) with the oracle's
// first BatchSize marked indices at or after p.index.
func (o *oracle) checkFindMarked(t *testing.T, idx Index[folio], p op) {
	t.Helper()
	var want []uint64
	for start, more := p.index, true; more && len(want) < BatchSize; {
		k, ok := o.next(start, p.mark, true)
		if !ok {
			break
		}
		want = append(want, k)
		start, more = nextAfter(k)
	}
	b := idx.FindMarked(p.index, p.mark)
	require.Equal(t, len(want), b.N, "%v", p)
	for i, k := range want {
		require.Same(t, o.items[k], b.Items[i], "%v: item %d", p, i)
	}
	for _, f := range b.Items[b.N:] {
		require.Nil(t, f, "%v: beyond N", p)
	}
	if b.N < BatchSize || want[b.N-1] == math.MaxUint64 {
		require.True(t, b.Done, "%v", p)
		return
	}
	require.False(t, b.Done, "%v", p)
	require.Equal(t, want[b.N-1]+1, b.Next, "%v", p)
}

// verify checks the counters after an operation and, every so often, the
// whole content and the xarray's structure.
func (o *oracle) verify(t *testing.T, idx Index[folio], full bool) {
	t.Helper()
	require.Equal(t, len(o.items), idx.Len())
	for m := range NumMarks {
		require.Equal(t, len(o.marks[m]), idx.CountMarked(m), "mark %d", m)
	}
	if !full {
		return
	}
	checkInvariants(t, idx)
	requireIndices(t, o.keys, collect(t, idx, 0, false), "all items")
	for m := range NumMarks {
		want := slices.Sorted(func(yield func(uint64) bool) {
			for k := range o.marks[m] {
				if !yield(k) {
					return
				}
			}
		})
		requireIndices(t, want, collect(t, idx, m, true), "mark %d", m)
		requireIndices(t, want, collectBatches(t, idx, m), "mark %d in batches", m)
	}
	if len(o.items) == 0 {
		assert.Zero(t, idx.Height())
		assert.Zero(t, idx.Nodes())
	}
}

// requireIndices fails the test unless got lists the same indices as want
// (an empty and a nil list are the same).
func requireIndices(t *testing.T, want, got []uint64, msg string, args ...any) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	require.Equal(t, want, got, append([]any{msg}, args...)...)
}

// run applies ops in order, verifying after each and fully every 16 steps
// and at the end.
func (o *oracle) run(t *testing.T, idx Index[folio], ops []op) {
	t.Helper()
	for n, p := range ops {
		o.apply(t, idx, p)
		o.verify(t, idx, n%16 == 15)
	}
	o.verify(t, idx, true)
}

// constructors are the index configurations the oracle and fuzz tests check;
// degree 2 makes the B-tree deep with few items.
var constructors = []struct {
	name string
	make func() Index[folio]
}{
	{"kind=xarray", func() Index[folio] { return NewXArray[folio]() }},
	{"kind=xarray/confined", func() Index[folio] { x := NewXArray[folio](); x.Confine(); return x }},
	{"kind=btree", func() Index[folio] { return NewBTree[folio](0) }},
	{"kind=btree/degree=2", func() Index[folio] { return NewBTree[folio](2) }},
}

// orders are the folio orders the random sequences insert beside order 0:
// sibling slots in one leaf (1, 2, 5), a whole leaf (6) and several (8, 9:
// the 1 MiB and 2 MiB folios of 6.18's page cache).
var orders = []uint8{1, 2, 5, 6, 8, 9}

// randomOps draws n operations over a pool of indices small enough that
// inserts collide and deletes hit, with an occasional fresh index.
func randomOps(rng *rand.Rand, n int) []op {
	pool := make([]uint64, 48)
	for i := range pool {
		pool[i] = randomIndex(rng)
	}
	ops := make([]op, n)
	for i := range ops {
		index := pool[rng.IntN(len(pool))]
		if rng.IntN(20) == 0 {
			index = randomIndex(rng)
		}
		code := opCode(rng.UintN(uint(numOps)))
		if rng.IntN(3) == 0 {
			code = opInsert // keep the index populated
		}
		var order uint8
		if rng.IntN(4) == 0 { // a large folio: aligned down so that it can go in
			order = orders[rng.IntN(len(orders))]
			index &^= uint64(1)<<order - 1
		}
		ops[i] = op{code: code, index: index, mark: Mark(rng.UintN(uint(NumMarks) + 1)), order: order}
	}
	return ops
}

func TestOracleRandomSequences(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 20210127, 20240517, math.MaxUint64} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("seed %d", seed)
			ops := randomOps(rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), 3000)
			for _, c := range constructors {
				t.Run(c.name, func(t *testing.T) { newOracle().run(t, c.make(), ops) })
			}
		})
	}
}
