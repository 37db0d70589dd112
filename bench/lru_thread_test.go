package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
)

func TestTosattiSeedNeverHitsTheLRU(t *testing.T) {
	s := TosattiSeed()
	s.Loops = 1000
	r, err := s.Run()
	require.NoError(t, err)
	assert.Equal(t, uint32(4096), r.BlockSize, "grow policy on a 1 GiB loop device")
	assert.True(t, r.Cached)
	assert.Equal(t, 1000, r.Find.Found)
	assert.Equal(t, 1000, r.Slow.Found)
	assert.Equal(t, uint32(4096), r.Find.FoundSize)
	assert.Zero(t, r.Find.Events[bufcache.EvLRUHit])
	assert.InDelta(t, 16, r.Find.perCall(bufcache.EvLRUSlot), 0)
	assert.InDelta(t, 1, r.Find.perCall(bufcache.EvLRUInstall), 0)
	assert.Equal(t, r.Find.Events[bufcache.EvIndexLevel], r.Slow.Events[bufcache.EvIndexLevel])

	// With the "simplified" policy the device has 512-byte blocks and the same
	// call hits the LRU every time.
	s.Policy = blocksize.PolicyLogical
	r, err = s.Run()
	require.NoError(t, err)
	assert.Equal(t, uint32(512), r.BlockSize)
	assert.Equal(t, uint64(1000), r.Find.Events[bufcache.EvLRUHit])
	assert.Zero(t, r.Find.Events[bufcache.EvIndexLookup])
}

func TestTosattiErrors(t *testing.T) {
	for _, s := range []Tosatti{
		{DeviceBytes: 1 << 30, Logical: 512, Block: 1, Size: 512, Loops: 0},
		{DeviceBytes: 0, Logical: 512, Block: 1, Size: 512, Loops: 1},
		{DeviceBytes: 1 << 30, Logical: 3000, Block: 1, Size: 512, Loops: 1},
		{DeviceBytes: 1 << 30, Logical: 512, Policy: blocksize.Policy(7), Block: 1, Size: 512, Loops: 1},
	} {
		_, err := s.Run()
		assert.Error(t, err, "%+v", s)
	}
}

func TestReproduceLRU(t *testing.T) {
	th, err := ReproduceLRU(X86Server())
	require.NoError(t, err)
	require.Len(t, th.Table.Cells, 2)
	slow, find := th.Table.Cells[0], th.Table.Cells[1]
	assert.True(t, slow.Fitted)
	assert.False(t, find.Fitted)
	assert.InDelta(t, 0, slow.RelError(), 1e-9, "one parameter, one fitted cell")
	assert.Equal(t, 114.0, find.Published)
	assert.Greater(t, th.Profile.NS[ParamTimer], 0.0)

	require.Len(t, th.Block4G, 2)
	small, large := th.Block4G[0], th.Block4G[1]
	assert.False(t, small.Cached)
	assert.Zero(t, small.Find.Found+small.Slow.Found)
	assert.Zero(t, small.Slow.Events[bufcache.EvIndexLevel], "an empty index answers at its head")
	assert.True(t, large.Cached)
	assert.Equal(t, 6, large.IndexHeight, "page 2^32 needs six levels")
	assert.InDelta(t, 6, large.Slow.perCall(bufcache.EvIndexLevel), 0)

	for i, r := range th.Heights {
		assert.Equal(t, i, r.Height)
		assert.InDelta(t, float64(i), r.Slow.perCall(bufcache.EvIndexLevel), 0)
		assert.InDelta(t, th.Heights[0].Hit.simNS(th.Profile), r.Hit.simNS(th.Profile), 1e-9, "an LRU hit does not see the index")
	}
	for _, r := range th.Cycles {
		if r.N <= 16 {
			assert.InDelta(t, 1, r.Hit.perCall(bufcache.EvLRUHit), 0, "n=%d", r.N)
			assert.InDelta(t, float64(r.N), r.Hit.perCall(bufcache.EvLRUSlot), 0, "n=%d", r.N)
		} else {
			assert.Zero(t, r.Hit.Events[bufcache.EvLRUHit], "n=%d: round-robin beyond 16 slots always misses", r.N)
		}
	}
	text := th.Text()
	for _, want := range []string{"predicted", "fitted", "LRU hits 0", "index height sweep", "distinct blocks"} {
		assert.Contains(t, text, want)
	}
}

// FuzzTosatti runs the module with arbitrary device sizes, block numbers and
// size arguments: it returns an error or a consistent result, never panics.
func FuzzTosatti(f *testing.F) {
	f.Add(uint64(1<<30), uint16(512), uint64(1), uint16(512), false)
	f.Add(uint64(1<<20+512), uint16(512), uint64(2049), uint16(1024), true)
	f.Add(uint64(^uint64(0)), uint16(4096), uint64(1<<62), uint16(0), false)
	f.Fuzz(func(t *testing.T, size uint64, logical uint16, block uint64, arg uint16, simplified bool) {
		s := Tosatti{DeviceBytes: size % (64 << 40), Logical: uint32(logical), Block: block, Size: uint32(arg), Loops: 3}
		if simplified {
			s.Policy = blocksize.PolicyLogical
		}
		r, err := s.Run()
		if err != nil {
			return
		}
		assert.LessOrEqual(t, r.Find.Found, 3)
		assert.LessOrEqual(t, r.Slow.Found, 3)
		if !r.Cached {
			assert.Zero(t, r.Slow.Found)
		}
	})
}
