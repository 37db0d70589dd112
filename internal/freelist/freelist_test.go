package freelist

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type obj struct{ n int }

func TestLIFO(t *testing.T) {
	var l List[obj]
	require.Nil(t, l.Get(), "empty")
	a, b, c := &obj{1}, &obj{2}, &obj{3}
	l.Put(a)
	l.Put(b)
	l.Put(c)
	assert.Equal(t, 3, len(l))
	assert.Same(t, c, l.Get(), "the object put last comes first")
	assert.Same(t, b, l.Get())
	l.Put(c)
	assert.Same(t, c, l.Get())
	assert.Same(t, a, l.Get())
	assert.Nil(t, l.Get())
	assert.Zero(t, len(l))
}

// TestSteadyStateAllocatesNothing: once the list has held its largest
// number of objects, Get and Put allocate nothing.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	var l List[obj]
	objs := []*obj{{1}, {2}, {3}}
	for _, o := range objs {
		l.Put(o)
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		x, y := l.Get(), l.Get()
		l.Put(y)
		l.Put(x)
	}))
}

// BenchmarkGetPut measures one recycling round trip on a warm list.
func BenchmarkGetPut(b *testing.B) {
	var l List[obj]
	l.Put(&obj{})
	b.ReportAllocs()
	for b.Loop() {
		l.Put(l.Get())
	}
}
