package lru

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzNew builds caches of arbitrary CPU counts and sizes, zero, negative and
// near the int range included. New must refuse a count or size below 1
// (ErrCPUs, ErrSize) and every cache whose slots would take more than 2^47
// bytes (ErrSize) without allocating; a small cache it builds must then
// behave as the slice model says for the decoded operations, with Check
// after each. (A valid cache of more than 64 CPUs or 256 slots is not built:
// the model would make each run slow.)
func FuzzNew(f *testing.F) {
	f.Add(1, 1, []byte{2, 0, 0, 0})
	f.Add(0, 16, []byte{})
	f.Add(4, 0, []byte{})
	f.Add(-1, -1, []byte{})
	f.Add(math.MaxInt, math.MaxInt, []byte{})
	f.Add(math.MinInt, 16, []byte{})
	f.Add(1<<20, 1<<50, []byte{})
	f.Add(7, 33, []byte{2, 0, 5, 2, 1, 6, 0, 1, 5, 3, 2, 0, 8, 0, 5})
	f.Fuzz(func(t *testing.T, cpus, size int, data []byte) {
		product := new(big.Int).Mul(big.NewInt(int64(cpus)), big.NewInt(int64(size)))
		small := cpus >= 1 && cpus <= 64 && size >= 1 && size <= 256
		huge := product.Cmp(new(big.Int).Lsh(big.NewInt(1), 44)) > 0 // ≥ 8 bytes a slot: past 2^47 bytes
		if cpus >= 1 && size >= 1 && !small && !huge {
			return // valid, or too close to the limit to say, and too large to build here
		}
		p := newPool(fuzzKeys)
		c, err := New[bhKey](cpus, size, p.hooks())
		switch {
		case cpus < 1:
			require.ErrorIs(t, err, ErrCPUs)
		case size < 1 || huge:
			require.ErrorIs(t, err, ErrSize)
		}
		if !small {
			require.Nil(t, c)
			return
		}
		require.NoError(t, err)
		require.Equal(t, cpus, c.CPUs())
		require.Equal(t, size, c.Size())
		m := newModel(cpus, size, fuzzKeys)
		for i := 0; i+2 < len(data) && i < 3*256; i += 3 {
			m.apply(t, c, p, op{kind: opKind(data[i] % byte(numOps)), cpu: int(data[i+1]) % cpus, key: int(data[i+2]) % fuzzKeys})
			require.NoError(t, c.Check())
		}
		m.finish(t, c, p)
	})
}
