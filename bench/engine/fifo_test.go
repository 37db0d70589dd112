package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzFifo runs a sequence of pushes and pops (a byte each: even pushes
// its value, odd pops) against a plain slice: the same items come out in
// the same order, the live view is the oracle's, and a long run's array
// stays within twice what is live plus the 1024 items it may keep.
func FuzzFifo(f *testing.F) {
	f.Add([]byte{0, 2, 4, 1, 3, 6, 5, 7, 9})
	f.Add(make([]byte, 3000))
	f.Fuzz(func(t *testing.T, ops []byte) {
		var q fifo[int]
		var oracle []int
		for i, b := range ops {
			if b%2 == 0 {
				q.push(i)
				oracle = append(oracle, i)
			} else if len(oracle) > 0 {
				require.Equal(t, oracle[0], *q.front())
				require.Equal(t, oracle[0], q.pop())
				oracle = oracle[1:]
			}
			require.Equal(t, len(oracle) == 0, q.empty())
			if len(oracle) > 0 {
				require.Equal(t, oracle[len(oracle)-1], *q.back())
			}
			require.Equal(t, len(oracle), len(q.live()))
			require.LessOrEqual(t, len(q.items), 2*len(oracle)+1025)
		}
		for i, v := range q.live() {
			require.Equal(t, oracle[i], v)
		}
	})
}
