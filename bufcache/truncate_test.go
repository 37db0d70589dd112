package bufcache

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// writeLarge writes n bytes of fill at pos as iomap's write does on a 6.18
// mapping: folio by folio, each asked for by the rest of the write, its
// buffers prepared, copied, committed. It returns the first folio's order.
func writeLarge(t *testing.T, d *BlockDevice, cpu *CPU, pos, n uint64, fill byte) uint8 {
	t.Helper()
	data := make([]byte, n)
	for i := range data {
		data[i] = fill
	}
	it, err := NewUserBuf(data, 0, 4096).Iter(0, n)
	require.NoError(t, err)
	first := uint8(255)
	for n > 0 {
		f := d.GetWriteFolio(cpu, pos, n)
		if first == 255 {
			first = f.Order()
		}
		k := min(n, d.FolioPos(f)+d.FolioSize(f)-pos)
		require.NoError(t, d.BlockWriteBegin(cpu, f, pos, k, nil))
		require.Equal(t, k, it.CopyToFolio(cpu, f, pos-d.FolioPos(f), k))
		require.Equal(t, k, d.WriteEnd(cpu, f, pos, k, k))
		pos, n = pos+k, n-k
	}
	return first
}

func TestTruncateRangeSplitsLargeFolios(t *testing.T) {
	for _, tc := range []struct {
		name       string
		bsize      uint32
		start, end uint64
		synced     bool
		wantPages  int
		wantOrders map[uint8]int // folios left, by order
		wantBios   uint64        // the sync after the truncation
	}{
		{"clean, one page from the middle", 4096, 4096, 8192, true, 15, map[uint8]int{0: 15}, 0},
		{"clean, the whole folio", 4096, 0, 64 << 10, true, 0, map[uint8]int{}, 0},
		{"clean, half a page", 4096, 4096, 6144, true, 16, map[uint8]int{0: 16}, 0},
		{"dirty: no split, one buffer discarded", 4096, 4096, 8192, false, 16, map[uint8]int{4: 1}, 15},
		{"clean, 16K blocks: split to the minimum order", 16384, 16384, 32768, true, 12, map[uint8]int{2: 3}, 0},
		{"clean, a range over two folios' edges", 4096, 60 << 10, 72 << 10, true, 29, map[uint8]int{0: 29}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, d, disk := newDev618(t, Config{Check: true})
			cpu := m.CPU(0)
			require.NoError(t, d.SetBlocksize(cpu, tc.bsize))
			require.Equal(t, uint8(4), writeLarge(t, d, cpu, 0, 64<<10, 0xaa))
			if tc.end > 64<<10 {
				writeLarge(t, d, cpu, 64<<10, 64<<10, 0xbb)
			}
			if tc.synced {
				require.NoError(t, d.SyncBlockdev(cpu))
			}
			require.NoError(t, d.TruncateRange(cpu, tc.start, tc.end))
			assert.Equal(t, tc.wantPages, d.NrPages())
			orders := map[uint8]int{}
			for start := uint64(0); ; {
				_, f, ok := d.mapping.index.Next(start)
				if !ok {
					break
				}
				orders[f.Order()]++
				start = f.index + f.NrPages()
			}
			assert.Equal(t, tc.wantOrders, orders)
			got := make([]byte, tc.end-tc.start)
			_, err := d.Read(cpu, tc.start, got)
			require.NoError(t, err)
			before := disk.Stats().Writes
			require.NoError(t, d.SyncBlockdev(cpu))
			assert.Equal(t, tc.wantBios, disk.Stats().Writes-before)
			require.NoError(t, d.Check())
		})
	}
	_, d, _ := newDev618(t, Config{})
	for _, r := range [][2]uint64{{4096, 4096}, {8192, 4096}, {100, 4096}, {0, 2 << 20}} {
		assert.ErrorIs(t, d.TruncateRange(d.m.CPU(0), r[0], r[1]), ErrInvalid, "%v", r)
	}
}

// TestSplitRacesLookups runs lock-free lookups over every page of a large
// folio — read(2) and __find_get_block — while a writer splits it with
// TruncateRange and writes it again, on a metadata-only device (the data of
// concurrent reads and writes of the same bytes is undefined, in the kernel
// as in Go): a read always returns its length, and a buffer found is the one
// of the block asked for, whether the lookup found the large folio, a piece
// of it, or a folio read anew.
func TestSplitRacesLookups(t *testing.T) {
	m, err := NewMachine(Linux618(Config{CPUs: 3}))
	require.NoError(t, err)
	disk, err := blk.NewMemDisk("loop0", 1<<20, 512)
	require.NoError(t, err)
	d, err := m.AddDisk(disk, DeviceOptions{MetadataOnly: true})
	require.NoError(t, err)
	writer := m.CPU(0)
	var stop atomic.Bool
	var bad atomic.Int64
	var wg sync.WaitGroup
	for r := 1; r < 3; r++ {
		wg.Go(func() {
			cpu := m.CPU(r)
			buf := make([]byte, 512)
			for !stop.Load() {
				for page := uint64(0); page < 16; page++ {
					if n, err := d.Read(cpu, page*4096+uint64(r)*512, buf); err != nil || n != 512 {
						bad.Add(1)
					}
					if bh := d.FindGetBlock(cpu, page, 4096); bh != nil {
						if bh.BlockNr() != page {
							bad.Add(1)
						}
						Brelse(cpu, bh)
					}
				}
			}
		})
	}
	for round := range 200 {
		writeLarge(t, d, writer, 0, 64<<10, 0xaa)
		require.NoError(t, d.SyncBlockdev(writer))
		m.InvalidateBhLRUs(writer)
		lo := uint64(round%15) * 4096
		require.NoError(t, d.TruncateRange(writer, lo, lo+4096), fmt.Sprintf("round %d", round))
	}
	stop.Store(true)
	wg.Wait()
	assert.Zero(t, bad.Load())
	require.NoError(t, d.Check())
}
