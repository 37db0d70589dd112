package freelist

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
