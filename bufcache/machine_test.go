package bufcache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/pageindex"
	"github.com/bhsim/bhsim/lru"
)

func TestNewMachineDefaultsAndErrors(t *testing.T) {
	m, err := NewMachine(Config{})
	require.NoError(t, err)
	assert.Equal(t, 1, m.NumCPU())
	assert.Equal(t, uint32(4096), m.PageSize())
	assert.Equal(t, lru.DefaultSize, m.Config().LRUSize)

	for _, tc := range []struct {
		name string
		cfg  Config
		want error // nil: any error
	}{
		{"negative CPUs", Config{CPUs: -1}, nil},
		{"page size not a power of two", Config{PageSize: 5000}, nil},
		{"page size too small", Config{PageSize: 2048}, nil},
		{"unknown policy", Config{InitBlocksize: blocksize.Policy(9)}, blocksize.ErrUnknownPolicy},
		{"unknown alloc", Config{Alloc: AllocVariant(9)}, ErrUnknownAllocVariant},
		{"unknown index", Config{Index: pageindex.Kind(9)}, pageindex.ErrUnknownKind},
		{"unknown LRU mode", Config{LRU: LRUMode(9)}, nil},
		{"negative LRU size", Config{LRUSize: -1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewMachine(tc.cfg)
			if assert.Error(t, err) && tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
			}
		})
	}
}

func TestOpenPicksBlocksizeByPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		policy  blocksize.Policy
		page    uint32
		size    uint64
		logical uint32
		want    uint32
	}{
		{"grow, 1 GiB", blocksize.PolicyGrow, 4096, 1 << 30, 512, 4096},
		{"logical, 1 GiB", blocksize.PolicyLogical, 4096, 1 << 30, 512, 512},
		{"grow, odd KiB", blocksize.PolicyGrow, 4096, 1025 * 1024, 512, 1024},
		{"grow, odd sectors", blocksize.PolicyGrow, 4096, 2049 * 512, 512, 512},
		{"grow, 64K pages", blocksize.PolicyGrow, 65536, 1 << 30, 512, 65536},
		{"4Kn disk", blocksize.PolicyLogical, 4096, 1 << 30, 4096, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, d, _ := newDev(t, Config{InitBlocksize: tc.policy, PageSize: tc.page}, tc.size, tc.logical, DeviceOptions{})
			assert.Equal(t, tc.want, d.BlockSize())
			assert.Equal(t, tc.size, d.Size())
			assert.Equal(t, tc.logical, d.LogicalBlockSize())
		})
	}
}

func TestOpenRejectsLogicalAbovePage(t *testing.T) {
	m, err := NewMachine(Config{})
	require.NoError(t, err)
	disk, err := blk.NewMemDisk("big", 1<<20, 8192)
	require.NoError(t, err)
	_, err = m.Open(disk, DeviceOptions{})
	assert.Error(t, err)
}

func TestCountersArithmetic(t *testing.T) {
	var a, b Counters
	a[EvBHAlloc], a[EvRingWalk] = 5, 7
	b[EvBHAlloc] = 2
	d := a.Sub(b)
	assert.Equal(t, uint64(3), d[EvBHAlloc])
	assert.Equal(t, uint64(10), d.Total())
	assert.Equal(t, "bh-allocs=3 ring-walks=7", d.String())
	assert.Equal(t, a, d.Add(b))
	for e := Event(0); e < NumEvents; e++ {
		got, err := ParseEvent(e.String())
		require.NoError(t, err)
		assert.Equal(t, e, got)
	}
	_, err := ParseEvent("nope")
	assert.ErrorIs(t, err, ErrUnknownEvent)
	assert.ErrorContains(t, err, `"nope" (valid: bh-allocs, bh-frees,`)
	for _, v := range []AllocVariant{AllocLinear, AllocCircular} {
		got, err := ParseAllocVariant(v.String())
		require.NoError(t, err)
		assert.Equal(t, v, got)
	}
	_, err = ParseAllocVariant("ring")
	assert.ErrorIs(t, err, ErrUnknownAllocVariant)
	assert.Equal(t, "alloc(9)", AllocVariant(9).String())
	assert.Equal(t, "lru(9)", LRUMode(9).String())
	assert.Equal(t, "uptodate|mapped|0x10000", (BHUptodate | BHMapped | 1<<16).String())
	assert.Equal(t, "locked|private", (FolioLocked | FolioPrivate).String())
}

// TestIndexKind: the exported index kinds choose the structure, and
// ParseIndexKind reads their names.
func TestIndexKind(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind IndexKind
	}{{"xarray", IndexXArray}, {"btree", IndexBTree}} {
		got, err := ParseIndexKind(tc.name)
		require.NoError(t, err)
		assert.Equal(t, tc.kind, got)
		assert.Equal(t, tc.name, got.String())
		_, err = NewMachine(Config{Index: got})
		assert.NoError(t, err)
	}
	_, err := ParseIndexKind("radix")
	assert.ErrorIs(t, err, ErrUnknownIndexKind)
	_, err = NewMachine(Config{Index: IndexBTree + 1})
	assert.ErrorIs(t, err, ErrUnknownIndexKind)
}

// TestCPUMoved: Moved holds every kind whose count changed since the last
// TakeMoved, for a range of operations (and may hold one counted by zero),
// and TakeMoved returns it and empties it.
func TestCPUMoved(t *testing.T) {
	m, err := NewMachine(Config{})
	require.NoError(t, err)
	disk, err := blk.NewMemDisk("sda", 4<<20, 512)
	require.NoError(t, err)
	d, err := m.Open(disk, DeviceOptions{})
	require.NoError(t, err)
	cpu := m.CPU(0)
	buf := make([]byte, 8192)
	ops := []struct {
		name string
		op   func() error
	}{
		{"a write", func() error { _, err := d.Write(cpu, 0, userIter(t, buf)); return err }},
		{"a sync", func() error { return d.SyncBlockdev(cpu) }},
		{"a cold read", func() error { _, err := d.Read(cpu, 1<<20, buf); return err }},
		{"a cached read", func() error { _, err := d.Read(cpu, 1<<20, buf); return err }},
		{"nothing", func() error { return nil }},
	}
	require.True(t, cpu.Follow(), "the first follower claims the CPU")
	assert.False(t, cpu.Follow(), "a second follower is refused")
	for _, tc := range ops {
		t.Run(tc.name, func(t *testing.T) {
			before := cpu.Events()
			require.NoError(t, tc.op())
			diff := cpu.Events().Sub(before)
			var want uint64
			for e, n := range diff {
				if n != 0 {
					want |= 1 << e
				}
			}
			moved := cpu.Moved()
			assert.Zero(t, want&^moved, "kinds that changed, missing from %#x", moved)
			assert.Equal(t, moved, cpu.TakeMoved())
			assert.Zero(t, cpu.Moved(), "taken")
		})
	}
}
