package bufcache

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/internal/pageindex"
	"github.com/bhsim/bhsim/internal/race"
)

// scaleDevSize is the device of the scale tests: 16 TiB.
const scaleDevSize = 16 << 40

// TestScale16TiB opens a metadata-only 16 TiB device and touches blocks
// across all of it — spread evenly, around block 4G (2^32), and the last
// ones — with 512-byte blocks (2^35 of them: block 4G is page 2^29) and with
// 4 KiB blocks (2^32: block 4G is the first past the end), on both page-cache
// indexes. Every bread must return that block, mapped and uptodate, without
// data; lookups must find it again; the blocks past the end must fail; a
// write(2) of the device's last bytes and a sync must work; the medium must
// store nothing; and the invariants must hold. The xarray must be six levels
// high, as a 2^32-page mapping needs.
func TestScale16TiB(t *testing.T) {
	// Counts only: nothing here reads the heap or GOMAXPROCS.
	t.Parallel()
	spread := 1 << 14
	if testing.Short() || race.Enabled {
		spread = 1 << 10
	}
	for _, kind := range []pageindex.Kind{pageindex.KindXArray, pageindex.KindBTree} {
		for _, bsize := range []uint32{512, 4096} {
			t.Run(fmt.Sprintf("index=%s/bsize=%d", kind, bsize), func(t *testing.T) {
				m, d, disk := newDev(t, Config{Index: kind}, scaleDevSize, 512, DeviceOptions{MetadataOnly: true})
				cpu := m.CPU(0)
				require.NoError(t, d.SetBlocksize(cpu, bsize))
				end := scaleDevSize / uint64(bsize)
				var blocks []uint64
				for i := range uint64(spread) {
					blocks = append(blocks, i*(end/uint64(spread))+i%7)
				}
				for _, b := range []uint64{1<<32 - 1, 1 << 32, 1<<32 + 1, 3 << 32, end - 9, end - 1} {
					if b < end {
						blocks = append(blocks, b)
					}
				}
				pages := map[uint64]bool{}
				g := d.Geometry()
				for _, b := range blocks {
					bh, err := d.Bread(cpu, b, bsize)
					require.NoError(t, err, "block %d", b)
					assert.Equal(t, b, bh.BlockNr())
					assert.Equal(t, bsize, bh.Size())
					assert.True(t, bh.Has(BHMapped|BHUptodate))
					assert.Nil(t, bh.Data(), "a metadata-only buffer holds no data")
					Brelse(cpu, bh)
					pages[uint64(g.PageIndex(blocksize.Block(b)))] = true
				}
				require.NoError(t, m.Check())
				assert.Equal(t, len(pages), d.NrPages())
				if kind == pageindex.KindXArray {
					assert.Equal(t, 6, d.IndexHeight())
				}
				for _, b := range blocks {
					bh := d.FindGetBlock(cpu, b, bsize)
					require.NotNil(t, bh, "block %d", b)
					assert.Equal(t, b, bh.BlockNr())
					Brelse(cpu, bh)
				}
				for _, b := range []uint64{end, end + 1, 1 << 40, blocksize.MaxLFSFileSize >> blocksize.Log2(bsize)} {
					_, err := d.Getblk(cpu, b, bsize)
					assert.ErrorIs(t, err, ErrBeyondDevice, "block %d", b)
				}
				_, err := d.Getblk(cpu, math.MaxUint64, bsize)
				assert.ErrorIs(t, err, ErrOutOfRange)

				it, err := NewUserBufSize(1<<20, 0, 4096).Iter(0, 1<<20)
				require.NoError(t, err)
				n, err := d.Write(cpu, scaleDevSize-3*4096-100, it) // the last pages, shortened at the end
				require.NoError(t, err)
				assert.Equal(t, uint64(3*4096+100), n)
				require.NoError(t, d.SyncBlockdev(cpu))
				assert.Zero(t, disk.StoredBytes(), "a metadata-only medium stores nothing")
				assert.NotZero(t, disk.Stats().SectorsWrite)
				require.NoError(t, m.Check())

				m.InvalidateBhLRUs(cpu)
				for p := range pages {
					assert.NoError(t, d.TryToFreeBuffers(cpu, p), "page %d", p)
				}
				require.NoError(t, d.SetBlocksize(cpu, 2048)) // drops the page cache
				assert.Zero(t, d.NrPages())
				require.NoError(t, m.Check())
			})
		}
	}
}
