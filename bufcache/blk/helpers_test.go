package blk

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// newQueue returns a queue over a fresh MemDisk of size bytes with 512-byte
// logical and 4096-byte physical blocks.
func newQueue(t testing.TB, name string, size uint64, model Model, lim Limits) *Queue {
	t.Helper()
	disk, err := NewMemDisk(name, size, lim.LogicalBlockSize)
	require.NoError(t, err)
	q, err := NewQueue(name, disk, model, lim)
	require.NoError(t, err)
	return q
}

// completions records the order in which bios complete and their errors.
type completions struct {
	order []int         // bio ids in completion order
	errs  map[int]error // the error each bio completed with
	count map[int]int   // completions per bio id
}

func newCompletions() *completions {
	return &completions{errs: map[int]error{}, count: map[int]int{}}
}

// bio returns a bio with id whose completion c records.
func (c *completions) bio(id int, op Op, sector uint64) *Bio {
	b := &Bio{}
	b.Reset(op, sector)
	b.Private = id
	b.EndIO = func(b *Bio) {
		id := b.Private.(int)
		c.order = append(c.order, id)
		c.errs[id] = b.Err
		c.count[id]++
	}
	return b
}

// pageBio returns a bio of n bytes of metadata-only memory at byte offset off
// of page frame pfn.
func (c *completions) pageBio(id int, op Op, sector uint64, n uint32, pfn uint64, off uint32) *Bio {
	b := c.bio(id, op, sector)
	b.AddPage(nil, n, pfn, off)
	return b
}

// reqShape is what a test checks of one dispatched request.
type reqShape struct {
	Sector, Sectors uint64
	Bios, Segs      uint32
}

// shapes returns the shape of every traced request of q.
func shapes(q *Queue) []reqShape {
	var out []reqShape
	for _, e := range q.Trace() {
		out = append(out, reqShape{e.Sector, e.Sectors, e.Bios, e.Segments})
	}
	return out
}

// limits returns DefaultLimits(512, 4096) with the given accounting.
func limits(acct SegmentAccounting) Limits {
	l := DefaultLimits(512, 4096)
	l.SegmentAccounting = acct
	return l
}
