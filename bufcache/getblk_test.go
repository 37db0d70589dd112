package bufcache

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
)

// TestGetblkRingInvariants checks the ring's invariants (PG_private with a
// ring, the ring's buffers in offset order pointing at their folio, each
// mapped buffer's block number, reference counts) for every block size and
// both alloc_page_buffers variants.
func TestGetblkRingInvariants(t *testing.T) {
	for _, variant := range []AllocVariant{AllocLinear, AllocCircular} {
		for _, size := range []uint32{512, 1024, 2048, 4096} {
			t.Run(fmt.Sprintf("variant=%s/bsize=%d", variant, size), func(t *testing.T) {
				_, d, _ := newDev(t, Config{Alloc: variant, InitBlocksize: blocksize.PolicyLogical, Check: true}, 1<<20, size, DeviceOptions{})
				require.Equal(t, size, d.BlockSize())
				per := uint64(4096 / size)
				block := 3*per + per/2 // page 3, a middle buffer
				bh, err := d.Getblk(d.m.CPU(0), block, size)
				require.NoError(t, err)
				assert.Equal(t, block, bh.BlockNr())
				assert.Equal(t, 1+1, bh.Count(), "caller + this CPU's LRU")
				f := bh.Folio()
				assert.Equal(t, uint64(3), f.Index())
				assert.True(t, f.Has(FolioPrivate))
				assert.Equal(t, 2, f.RefCount(), "page cache + ring; getblk dropped its own")
				buffers := ring(bh)
				require.Len(t, buffers, int(per))
				for k, b := range buffers {
					assert.Equal(t, uint32(k)*size, b.Offset())
					assert.Equal(t, size, b.Size())
					assert.Equal(t, 3*per+uint64(k), b.BlockNr())
					assert.True(t, b.Has(BHMapped))
					assert.False(t, b.Has(BHUptodate))
				}
				assert.Same(t, buffers[0], buffers[len(buffers)-1].Next(), "ring closed")
				require.NoError(t, d.Check())
				Brelse(d.m.CPU(0), bh)
			})
		}
	}
}

// TestAllocVariantsEvents shows the one difference between the variants: the
// mainline tail walk that closes the list.
func TestAllocVariantsEvents(t *testing.T) {
	for _, tc := range []struct {
		variant   AllocVariant
		size      uint32
		walkSteps uint64 // link_dev_buffers + init_page_buffers
	}{
		{AllocLinear, 512, 8 + 8},
		{AllocCircular, 512, 8},
		{AllocLinear, 1024, 4 + 4},
		{AllocCircular, 1024, 4},
		{AllocLinear, 4096, 1 + 1},
		{AllocCircular, 4096, 1},
	} {
		t.Run(fmt.Sprintf("variant=%s/bsize=%d", tc.variant, tc.size), func(t *testing.T) {
			m, d, _ := newDev(t, Config{Alloc: tc.variant, LRU: LRURemoved}, 1<<20, tc.size, DeviceOptions{})
			require.NoError(t, d.SetBlocksize(m.CPU(0), tc.size))
			cpu := m.CPU(0)
			before := cpu.Events()
			require.NoError(t, d.growDevFolio(cpu, 0, 0, tc.size))
			ev := cpu.Events().Sub(before)
			n := uint64(4096 / tc.size)
			assert.Equal(t, n, ev[EvBHAlloc])
			assert.Equal(t, n+1, ev[EvRingLink], "n list links + the closing link")
			assert.Equal(t, tc.walkSteps, ev[EvRingWalk])
			assert.Equal(t, n, ev[EvBHInit])
		})
	}
}

func TestGetblkErrors(t *testing.T) {
	const size = 1<<20 + 1024 // 1 MiB + 1 KiB: block size 1024 with the grow policy
	for _, tc := range []struct {
		name  string
		block uint64
		bsize uint32
		want  error
	}{
		{"not a power of two", 0, 1000, ErrInvalidBlockSize},
		{"below 512", 0, 256, ErrInvalidBlockSize},
		{"above PAGE_SIZE", 0, 8192, ErrInvalidBlockSize},
		{"zero", 0, 0, ErrInvalidBlockSize},
		{"first block past the end", size / 1024, 1024, ErrBeyondDevice},
		{"far past the end", 1 << 40, 1024, ErrBeyondDevice},
		{"page index overflows", 1<<63 + 5, 1024, ErrOutOfRange},
		{"size other than the block size", 4, 2048, ErrSizeMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, d, _ := newDev(t, Config{Check: true}, size, 512, DeviceOptions{})
			require.Equal(t, uint32(1024), d.BlockSize())
			bh, err := d.Getblk(m.CPU(0), tc.block, tc.bsize)
			assert.Nil(t, bh)
			assert.ErrorIs(t, err, tc.want)
			assert.NoError(t, m.Check())
		})
	}
}

// TestGetblkLastPartialPage: the device ends one KiB into page 256; getblk of
// the last block works and the page's other buffers stay unmapped.
func TestGetblkLastPartialPage(t *testing.T) {
	m, d, _ := newDev(t, Config{Check: true}, 1<<20+1024, 512, DeviceOptions{})
	cpu := m.CPU(0)
	last := uint64(1<<20/1024) + 0
	bh, err := d.Getblk(cpu, last, 1024)
	require.NoError(t, err)
	buffers := ring(bh)
	require.Len(t, buffers, 4)
	assert.True(t, buffers[0].Has(BHMapped))
	for _, b := range buffers[1:] {
		assert.False(t, b.Has(BHMapped), b.String())
	}
	_, err = d.Getblk(cpu, last+1, 1024)
	assert.ErrorIs(t, err, ErrBeyondDevice)
	Brelse(cpu, bh)
}

func TestGetblkHitReturnsSameBuffer(t *testing.T) {
	for _, mode := range []LRUMode{LRUOn, LRURemoved} {
		t.Run("lru="+mode.String(), func(t *testing.T) {
			m, d, _ := newDev(t, Config{LRU: mode, Check: true}, 1<<20, 512, DeviceOptions{})
			cpu := m.CPU(0)
			a, err := d.Getblk(cpu, 7, 4096)
			require.NoError(t, err)
			before := cpu.Events()
			b, err := d.Getblk(cpu, 7, 4096)
			require.NoError(t, err)
			ev := cpu.Events().Sub(before)
			assert.Same(t, a, b)
			assert.Zero(t, ev[EvBHAlloc], "a hit allocates no buffers")
			if mode == LRUOn {
				assert.Equal(t, uint64(1), ev[EvLRUHit])
				assert.Zero(t, ev[EvIndexLookup], "an LRU hit skips the page cache")
			} else {
				assert.Equal(t, uint64(1), ev[EvIndexLookup])
				assert.Equal(t, uint64(1), ev[EvPrivateLock])
			}
			Brelse(cpu, a)
			Brelse(cpu, b)
			assert.Equal(t, map[LRUMode]int{LRUOn: 1, LRURemoved: 0}[mode], a.Count())
		})
	}
}

func TestBrelseOfFreeBufferWarns(t *testing.T) {
	m, d, _ := newDev(t, Config{LRU: LRURemoved}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	bh, err := d.Getblk(cpu, 0, 4096)
	require.NoError(t, err)
	Brelse(cpu, bh)
	before := cpu.Events()[EvWarning]
	Brelse(cpu, bh)
	assert.Equal(t, before+1, cpu.Events()[EvWarning])
	assert.Equal(t, 0, bh.Count())
	Brelse(cpu, nil) // ignored
}

func TestErrorsAreDistinct(t *testing.T) {
	all := []error{ErrInvalidBlockSize, ErrOutOfRange, ErrBeyondDevice, ErrSizeMismatch, ErrIO,
		ErrUnmapped, ErrNotCached, ErrNoBuffers, ErrBuffersBusy}
	for i, a := range all {
		for j, b := range all {
			assert.Equal(t, i == j, errors.Is(a, b))
		}
	}
}
