package lru

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// bhKey mirrors the kernel's lookup key: (bdev, blocknr, size).
type bhKey struct {
	dev   int
	block int64
	size  int
}

// testBH is a stand-in for a buffer_head: a key and an atomic reference count
// (b_count).
type testBH struct {
	key  bhKey
	refs atomic.Int64
}

// pool owns the test entries; entry i has key keyOf(i), so a key always maps to
// the same entry, as a buffer_head's fields do.
type pool struct {
	bhs       []*testBH
	underflow atomic.Int64 // Releases that took a count below zero (brelse's WARN)
}

func keyOf(i int) bhKey { return bhKey{dev: 1, block: int64(i), size: 512} }

func newPool(n int) *pool {
	p := &pool{bhs: make([]*testBH, n)}
	for i := range p.bhs {
		p.bhs[i] = &testBH{key: keyOf(i)}
	}
	return p
}

func (p *pool) hooks() Hooks[*testBH] {
	return Hooks[*testBH]{
		Hold: func(b *testBH) { b.refs.Add(1) },
		Release: func(b *testBH) {
			if b.refs.Add(-1) < 0 {
				p.underflow.Add(1)
			}
		},
	}
}

// newTestCache returns a cache over a fresh pool of nkeys entries.
func newTestCache(t testing.TB, cpus, size, nkeys int) (*Cache[bhKey, *testBH], *pool) {
	t.Helper()
	p := newPool(nkeys)
	c, err := New[bhKey](cpus, size, p.hooks())
	require.NoError(t, err)
	return c, p
}

// fill installs the pool entries idx[len-1], …, idx[0] on cpu, leaving idx[0]
// in slot 0.
func fill(t testing.TB, c *Cache[bhKey, *testBH], p *pool, cpu int, idx ...int) {
	t.Helper()
	for i := len(idx) - 1; i >= 0; i-- {
		b := p.bhs[idx[i]]
		r, _ := c.Install(cpu, b.key, b)
		require.Contains(t, []InstallResult{InstallInserted, InstallInsertedEvicted}, r)
	}
}

// seq returns [from, from+1, …, to-1].
func seq(from, to int) []int {
	s := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// entriesIdx returns cpu's entries as pool indexes (block numbers), in slot order.
func entriesIdx(c *Cache[bhKey, *testBH], cpu int) []int {
	es := c.Entries(cpu)
	out := make([]int, len(es))
	for i, e := range es {
		out[i] = int(e.key.block)
	}
	return out
}
