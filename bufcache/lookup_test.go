package bufcache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/internal/pageindex"
)

func TestFindGetBlockSlow(t *testing.T) {
	for _, kind := range []pageindex.Kind{pageindex.KindXArray, pageindex.KindBTree} {
		t.Run("index="+kind.String(), func(t *testing.T) {
			m, d, _ := newDev(t, Config{Index: kind, InitBlocksize: blocksize.PolicyLogical, LRU: LRURemoved}, 1<<20, 512, DeviceOptions{})
			cpu := m.CPU(0)
			assert.Nil(t, d.FindGetBlockSlow(cpu, 9), "nothing cached")

			bh, err := d.Getblk(cpu, 9, 512) // page 1, buffer 1
			require.NoError(t, err)
			Brelse(cpu, bh)

			before := cpu.Events()
			got := d.FindGetBlockSlow(cpu, 9)
			ev := cpu.Events().Sub(before)
			require.Same(t, bh, got)
			assert.Equal(t, 1, got.Count())
			assert.Equal(t, uint64(2), ev[EvRingWalk], "head, then the match")
			assert.Equal(t, uint64(1), ev[EvPrivateLock])
			assert.Equal(t, uint64(1), ev[EvFolioGet])
			assert.Equal(t, uint64(1), ev[EvFolioPut])
			assert.Equal(t, uint64(1), ev[EvMarkAccessed])
			assert.Equal(t, uint64(1), ev[EvBHGet])
			Brelse(cpu, got)

			// Page 1 cached, all mapped, block 9 found; a block on an absent page is a silent miss.
			assert.Nil(t, d.FindGetBlockSlow(cpu, 100))
			assert.Zero(t, cpu.Events()[EvFindSlowFailed])
		})
	}
}

// TestFindGetBlockSlowFailedDiagnostic: a ring whose buffers are all mapped but
// none carries the block number is the kernel's "__find_get_block_slow() failed"
// case. It arises when buffers were built for another size than i_blkbits.
func TestFindGetBlockSlowFailedDiagnostic(t *testing.T) {
	m, d, _ := newDev(t, Config{LRU: LRURemoved}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	require.Equal(t, uint32(4096), d.BlockSize())
	// Page 0 with 1 KiB buffers (blocks 0..3): the 4 KiB lookup of block 0 lands
	// on page 0 and returns the 1 KiB buffer numbered 0 — sizes are not compared.
	require.NoError(t, d.growBuffers(cpu, 0, 1024))
	got := d.FindGetBlockSlow(cpu, 0)
	require.NotNil(t, got)
	assert.Equal(t, uint32(1024), got.Size())
	Brelse(cpu, got)
	// Page 2 with 1 KiB buffers 8..11: the 4 KiB lookup of block 2 walks a ring
	// that is all mapped and finds no buffer numbered 2.
	require.NoError(t, d.growBuffers(cpu, 8, 1024))
	before := cpu.Events()
	assert.Nil(t, d.FindGetBlockSlow(cpu, 2))
	assert.Equal(t, uint64(1), cpu.Events().Sub(before)[EvFindSlowFailed])
	assert.Equal(t, uint64(4), cpu.Events().Sub(before)[EvRingWalk])
}

// TestTosattiTestCase models the per-CPU bh LRU thread's benchmark on a 1 GiB loop device: the
// grow policy gives it 4 KiB blocks, so __find_get_block(bdev, 1, 512) can never
// hit the LRU (the key's size is 512, the buffers' is 4096). Every call is an LRU
// miss, then the slow path, then an install that only moves the entry to the
// front: the LRU costs extra work instead of saving it.
func TestTosattiTestCase(t *testing.T) {
	m, d, _ := newDev(t, Config{}, 1<<30, 512, DeviceOptions{MetadataOnly: true})
	cpu := m.CPU(0)
	require.Equal(t, uint32(4096), d.BlockSize())
	bh, err := d.Bread(cpu, 1, d.BlockSize()) // the block has been read once
	require.NoError(t, err)
	Brelse(cpu, bh)

	const loops = 1000
	before := cpu.Events()
	for range loops {
		got := d.FindGetBlock(cpu, 1, 512)
		require.NotNil(t, got)
		Brelse(cpu, got)
	}
	fast := cpu.Events().Sub(before)
	assert.Zero(t, fast[EvLRUHit], "size 512 never matches a 4096-byte buffer")
	assert.Equal(t, uint64(loops), fast[EvIndexLookup], "every call takes the slow path")
	assert.Equal(t, uint64(loops*16), fast[EvLRUSlot], "and scans all 16 slots first")
	assert.Equal(t, uint64(loops), fast[EvLRUInstall])
	assert.Zero(t, fast[EvLRUEvict])

	before = cpu.Events()
	for range loops {
		got := d.FindGetBlockSlow(cpu, 1)
		require.NotNil(t, got)
		assert.Equal(t, uint32(4096), got.Size())
		Brelse(cpu, got)
	}
	slow := cpu.Events().Sub(before)
	assert.Equal(t, uint64(loops), slow[EvIndexLookup])
	assert.Zero(t, slow[EvLRULookup])
	assert.Equal(t, fast[EvIndexLevel], slow[EvIndexLevel])
}

func TestIsolatedCPUSkipsLRU(t *testing.T) {
	m, d, _ := newDev(t, Config{CPUs: 2}, 1<<20, 512, DeviceOptions{})
	m.SetIsolated(1, true)
	for _, id := range []int{0, 1} {
		cpu := m.CPU(id)
		for range 2 {
			bh, err := d.Getblk(cpu, 3, 4096)
			require.NoError(t, err)
			Brelse(cpu, bh)
		}
	}
	assert.Equal(t, uint64(1), m.CPU(0).Events()[EvLRUHit])
	assert.Zero(t, m.CPU(1).Events()[EvLRUHit])
	assert.Zero(t, m.CPU(1).Events()[EvLRUSlot], "an isolated CPU does not scan")
	assert.NoError(t, m.Check())
}

// TestDiscardedBufferInLRUDoesNotMatch: a buffer installed into an LRU after
// kill_bdev invalidated the LRUs, but before truncate discarded it, stays pinned
// there; once discarded (b_bdev cleared) it must not be returned.
func TestDiscardedBufferInLRUDoesNotMatch(t *testing.T) {
	m, d, _ := newDev(t, Config{CPUs: 2}, 1<<20, 512, DeviceOptions{})
	cpu0, cpu1 := m.CPU(0), m.CPU(1)
	bh, err := d.Bread(cpu0, 1, 4096)
	require.NoError(t, err)
	Brelse(cpu0, bh)
	held := d.FindGetBlockSlow(cpu1, 1) // CPU 1 is between the slow path and its install
	require.Same(t, bh, held)
	require.NoError(t, d.SetBlocksize(cpu0, 1024)) // invalidate LRUs, then truncate: held is discarded
	d.lruInstall(cpu1, held)                       // the late install
	Brelse(cpu1, held)
	assert.Nil(t, held.Device())
	require.NoError(t, d.SetBlocksize(cpu0, 4096)) // empty page cache: no invalidation

	got, err := d.Getblk(cpu1, 1, 4096)
	require.NoError(t, err)
	assert.NotSame(t, held, got, "the stale entry matched")
	assert.True(t, got.Has(BHMapped))
	Brelse(cpu1, got)
	assert.NoError(t, m.Check())
}
