package freelist

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlab: every object is new, zeroed and distinct, and one array of n
// serves n objects.
func TestSlab(t *testing.T) {
	tests := []struct {
		name      string
		n, objs   int
		allocsMax float64
	}{
		{"one array", 8, 8, 1},
		{"three arrays", 4, 12, 3},
		{"array of one", 1, 5, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Slab[obj]
			seen := map[*obj]bool{}
			for range tt.objs {
				x := s.New(tt.n)
				assert.Zero(t, x.n, "zeroed")
				assert.False(t, seen[x], "handed out twice")
				seen[x] = true
				x.n = 1
			}
			var fresh Slab[obj]
			allocs := testing.AllocsPerRun(10, func() {
				fresh = Slab[obj]{}
				for range tt.objs {
					fresh.New(tt.n)
				}
			})
			assert.Equal(t, tt.allocsMax, allocs)
		})
	}
}

// big is an object with a pointer, large enough that a slab of 100 of
// them is made ahead.
type big struct {
	p    *int
	fill [60]uint64
}

// TestSlabMadeAhead: a slab of arrays large enough to be made ahead
// (prefaultBytes) hands out new, zeroed, distinct objects across many
// arrays, makes its third array on ahead, and its objects keep what
// is written into them (no made-ahead write lands on a handed-out array).
func TestSlabMadeAhead(t *testing.T) {
	const n = 100
	require.GreaterOrEqual(t, uintptr(n)*unsafe.Sizeof(big{}), uintptr(prefaultBytes), "made ahead")
	var s Slab[big]
	one := 1
	var objs []*big
	for i := range 10 * n {
		x := s.New(n)
		assert.Nil(t, x.p, "zeroed")
		assert.Zero(t, x.fill, "zeroed")
		x.p, x.fill[0], x.fill[59] = &one, uint64(i), uint64(i)
		objs = append(objs, x)
		if i%n == 0 {
			assert.Equal(t, i >= n, s.next != nil, "object %d: the third array on made ahead, from the second's start", i)
		}
	}
	seen := map[*big]bool{}
	for i, x := range objs {
		assert.False(t, seen[x], "object %d handed out twice", i)
		seen[x] = true
		assert.Same(t, &one, x.p)
		assert.Equal(t, [2]uint64{uint64(i), uint64(i)}, [2]uint64{x.fill[0], x.fill[59]}, "object %d kept its fields", i)
	}
}
