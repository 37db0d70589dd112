package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
)

func TestPostedLookupModuleNeverHitsTheLRU(t *testing.T) {
	s := PostedLookupModule()
	s.Loops = 1000
	r, err := s.Run()
	require.NoError(t, err)
	assert.Equal(t, uint32(4096), r.BlockSize, "grow policy on a 1 GiB loop device")
	assert.True(t, r.Cached)
	assert.Equal(t, 1000, r.Find.Found)
	assert.Equal(t, 1000, r.Slow.Found)
	assert.Equal(t, uint32(4096), r.Find.FoundSize)
	assert.Zero(t, r.Find.Events[bufcache.EvLRUHit])
	assert.InDelta(t, 16, r.Find.PerCall(bufcache.EvLRUSlot), 0)
	assert.InDelta(t, 1, r.Find.PerCall(bufcache.EvLRUInstall), 0)
	assert.Equal(t, r.Find.Events[bufcache.EvIndexLevel], r.Slow.Events[bufcache.EvIndexLevel])

	// With the "simplified" policy the device has 512-byte blocks and the same
	// call hits the LRU every time.
	s.Kernel.InitBlocksize = blocksize.PolicyLogical
	r, err = s.Run()
	require.NoError(t, err)
	assert.Equal(t, uint32(512), r.BlockSize)
	assert.Equal(t, uint64(1000), r.Find.Events[bufcache.EvLRUHit])
	assert.Zero(t, r.Find.Events[bufcache.EvIndexLookup])
}

func TestLookupModuleErrors(t *testing.T) {
	for _, s := range []LookupModule{
		{DeviceBytes: 1 << 30, Logical: 512, Block: 1, Size: 512, Loops: 0},
		{DeviceBytes: 0, Logical: 512, Block: 1, Size: 512, Loops: 1},
		{DeviceBytes: 1 << 30, Logical: 3000, Block: 1, Size: 512, Loops: 1},
		{DeviceBytes: 1 << 30, Logical: 512, Kernel: engine.Kernel{InitBlocksize: blocksize.Policy(7)}, Block: 1, Size: 512, Loops: 1},
	} {
		_, err := s.Run()
		assert.Error(t, err, "%+v", s)
	}
}

// FuzzLookupModule runs the module with arbitrary device sizes, block numbers and
// size arguments: it returns an error or a consistent result, never panics.
func FuzzLookupModule(f *testing.F) {
	f.Add(uint64(1<<30), uint16(512), uint64(1), uint16(512), false)
	f.Add(uint64(1<<20+512), uint16(512), uint64(2049), uint16(1024), true)
	f.Add(uint64(^uint64(0)), uint16(4096), uint64(1<<62), uint16(0), false)
	f.Fuzz(func(t *testing.T, size uint64, logical uint16, block uint64, arg uint16, simplified bool) {
		s := LookupModule{DeviceBytes: size % (64 << 40), Logical: uint32(logical), Block: block, Size: uint32(arg), Loops: 3}
		if simplified {
			s.Kernel.InitBlocksize = blocksize.PolicyLogical
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
