package md

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestOracle writes random ranges (some inside a chunk, some across chunks and
// stripe rows, some 1 MiB dd-style) to an array of each level, mirrors them in a
// flat byte array, then reads the whole array back through the array in random
// pieces and checks every copy and every parity chunk on the members.
func TestOracle(t *testing.T) {
	const (
		memberSize = 2 << 20
		chunk      = 64 << 10
	)
	seed := *seedFlag
	t.Logf("seed %d (rerun with -md.seed=%d)", seed, seed)
	for _, tc := range []struct {
		level   Level
		members int
	}{
		{Raid0, 4}, {Raid0, 3},
		{Raid10Near2, 4}, {Raid10Near2, 3},
		{Raid10Far2, 4}, {Raid10Far2, 5},
		{Raid6, 4}, {Raid6, 6}, {Raid6, 8},
	} {
		t.Run(fmt.Sprintf("level=%s/members=%d", tc.level, tc.members), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, uint64(tc.level)<<8|uint64(tc.members)))
			a, disks := newArray(t, tc.level, tc.members, memberSize, chunk)
			size := a.Sectors() << blk.SectorShift
			oracle := make([]byte, size)
			write := func(off, n uint64) {
				data := fill(rng, int(n))
				require.NoError(t, doIO(t, a, blk.OpWrite, off>>blk.SectorShift, ioOpts{data: data, rng: rng}))
				copy(oracle[off:], data)
			}
			for i := range 300 {
				switch i % 10 {
				case 0: // dd bs=1M: a whole, aligned MiB
					write(rng.Uint64N(size>>20)<<20, 1<<20)
				case 1, 2, 3: // small, often inside one chunk
					off := rng.Uint64N(size>>9) << 9
					write(off, min(size-off, (1+rng.Uint64N(16))<<9))
				default: // up to 3 chunks: across chunk and stripe boundaries
					off := rng.Uint64N(size>>9) << 9
					write(off, min(size-off, (1+rng.Uint64N(3*chunk>>9))<<9))
				}
				if i%25 == 0 { // a read in the middle of the writes
					off := rng.Uint64N(size>>9) << 9
					n := min(size-off, (1+rng.Uint64N(256))<<9)
					got := make([]byte, n)
					require.NoError(t, doIO(t, a, blk.OpRead, off>>blk.SectorShift, ioOpts{data: got, rng: rng}))
					require.Equal(t, oracle[off:off+n], got, "read at %d", off)
				}
			}
			for off := uint64(0); off < size; {
				n := min(size-off, (1+rng.Uint64N(2*chunk>>9))<<9)
				got := make([]byte, n)
				require.NoError(t, doIO(t, a, blk.OpRead, off>>blk.SectorShift, ioOpts{data: got, rng: rng}))
				if !assert.Equal(t, oracle[off:off+n], got, "read back at %d", off) {
					break
				}
				off += n
			}
			checkMembers(t, a, disks, oracle)
			if st := a.Stats(); tc.level == Raid6 {
				// Every parity method ran: four members only reconstruct-write.
				assert.NotZero(t, st.FullStripeWrites)
				assert.NotZero(t, st.ReconstructWrites)
				if tc.members >= 6 {
					assert.Greater(t, st.RMWWrites, st.ReconstructWrites, "read-modify-write stripes")
				} else {
					assert.Equal(t, st.RMWWrites, st.ReconstructWrites, "read-modify-write stripes")
				}
			}
		})
	}
}

// TestMetadataOnly checks that metadata-only bios store nothing but issue the
// same member bios, and count the same work, as bios with data.
func TestMetadataOnly(t *testing.T) {
	for _, level := range allLevels {
		t.Run("level="+level.String(), func(t *testing.T) {
			run := func(withData bool) (Stats, []blk.DiskStats, uint64) {
				a, disks := newArray(t, level, 4, 1<<20, 16<<10)
				rng := rand.New(rand.NewPCG(7, 7))   // the bios: the same in both runs
				bytes := rand.New(rand.NewPCG(8, 8)) // their data
				for range 50 {
					off := rng.Uint64N(a.Sectors())
					n := uint32(min(a.Sectors()-off, 1+rng.Uint64N(128))) << blk.SectorShift
					o := ioOpts{size: n}
					if withData {
						o.data = fill(bytes, int(n))
					}
					op := blk.Op(rng.IntN(2))
					require.NoError(t, doIO(t, a, op, off, o))
				}
				var ds []blk.DiskStats
				var stored uint64
				for _, d := range disks {
					ds = append(ds, d.Stats())
					stored += d.StoredBytes()
				}
				return a.Stats(), ds, stored
			}
			metaStats, metaDisks, metaStored := run(false)
			dataStats, dataDisks, dataStored := run(true)
			assert.Equal(t, dataStats, metaStats)
			assert.Equal(t, dataDisks, metaDisks)
			assert.Zero(t, metaStored)
			assert.NotZero(t, dataStored)
		})
	}
}
