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
// pieces and checks every copy and every parity chunk on the members. With
// plugged, the writes go through a plug that is finished every few writes and
// before every read, so RAID6 writes share stripes while they wait; every bio
// completes exactly once.
func TestOracle(t *testing.T) {
	seed := *seedFlag
	t.Logf("seed %d (rerun with -md.seed=%d)", seed, seed)
	for _, tc := range []struct {
		level   Level
		members int
		plugged bool
	}{
		{Raid0, 4, false}, {Raid0, 3, false},
		{Raid10Near2, 4, false}, {Raid10Near2, 3, false}, {Raid10Near2, 4, true},
		{Raid10Far2, 4, false}, {Raid10Far2, 5, false},
		{Raid6, 4, false}, {Raid6, 6, false}, {Raid6, 8, false},
		{Raid6, 4, true}, {Raid6, 6, true},
	} {
		t.Run(fmt.Sprintf("level=%s/members=%d/plugged=%t", tc.level, tc.members, tc.plugged), func(t *testing.T) {
			t.Parallel()
			oracleRun(t, seed, tc.level, tc.members, tc.plugged)
		})
	}
}

// oracleRun is one TestOracle case.
func oracleRun(t *testing.T, seed uint64, level Level, members int, plugged bool) {
	const (
		memberSize = 2 << 20
		chunk      = 64 << 10
	)
	rng := rand.New(rand.NewPCG(seed, uint64(level)<<8|uint64(members)))
	a, disks := newArray(t, level, members, memberSize, chunk)
	size := a.Sectors() << blk.SectorShift
	oracle := make([]byte, size)
	io := &oracleIO{t: t, d: a, rng: rng, oracle: oracle, plugged: plugged, flushOneIn: 6}
	write := io.write
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
		if i%25 == 0 { // a read in the middle of the writes, after the plug
			off := rng.Uint64N(size>>9) << 9
			io.read(off, min(size-off, (1+rng.Uint64N(256))<<9))
		}
	}
	io.finish()
	io.log.checkOnce(t)
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
	if st := a.Stats(); level == Raid6 {
		// Every parity method ran: four members only reconstruct-write.
		assert.NotZero(t, st.FullStripeWrites)
		assert.NotZero(t, st.ReconstructWrites)
		if members >= 6 {
			assert.Greater(t, st.RMWWrites, st.ReconstructWrites, "read-modify-write stripes")
		} else {
			assert.Equal(t, st.RMWWrites, st.ReconstructWrites, "read-modify-write stripes")
		}
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

// TestPlugFullStripes writes array ranges in sequential bios of one size to a
// four-disk raid6 (chunk 64 KiB) over request queues, under one plug or
// without, and checks the stripes handled, the member I/O and the data.
// Under the plug every bio of a stripe is attached before the stripe is
// handled: eight 512-byte bios of a unit plus the rest of the stripe make a
// full-stripe write without pre-reads, as two 4 KiB bios do, and the member
// bios of consecutive stripes merge into one request per member. Without a
// plug every bio is handled on its own and reconstruct-writes.
func TestPlugFullStripes(t *testing.T) {
	const (
		K     = 1 << 10
		chunk = 64 * K
	)
	type span struct{ off, n uint64 }
	oneStripe := []span{{0, 4 * K}, {chunk, 4 * K}} // unit 0 of both data chunks of row 0
	oneRow := []span{{0, 2 * chunk}}                // 16 stripes
	tests := []struct {
		name    string
		spans   []span
		bs      uint64
		plugged bool
		want    Stats
		wantIO  memberIO
	}{
		{"one stripe/bs=512/plugged", oneStripe, 512, true,
			Stats{BiosIn: 16, BytesIn: 8 * K, WriteBios: 16, MemberBios: 4, StripeAttach: 16, Stripes: 1, FullStripeWrites: 1, ParityBytes: 8 * K},
			memberIO{WriteRequests: 4, WriteSectors: 4 * 8}},
		{"one stripe/bs=4096/plugged", oneStripe, 4096, true,
			Stats{BiosIn: 2, BytesIn: 8 * K, WriteBios: 2, MemberBios: 4, StripeAttach: 2, Stripes: 1, FullStripeWrites: 1, ParityBytes: 8 * K},
			memberIO{WriteRequests: 4, WriteSectors: 4 * 8}},
		// Each 512-byte bio: both data units pre-read (neither is whole), one
		// data unit and P and Q written.
		{"one stripe/bs=512/unplugged", oneStripe, 512, false,
			Stats{BiosIn: 16, BytesIn: 8 * K, WriteBios: 16, MemberBios: 16 * 5, MemberReads: 32, StripeAttach: 16,
				Stripes: 16, RMWWrites: 16, ReconstructWrites: 16, ParityBytes: 16 * 8 * K},
			memberIO{WriteRequests: 48, WriteSectors: 48 * 8, ReadRequests: 32, ReadSectors: 32 * 8}},
		{"one stripe/bs=4096/unplugged", oneStripe, 4096, false,
			Stats{BiosIn: 2, BytesIn: 8 * K, WriteBios: 2, MemberBios: 8, MemberReads: 2, StripeAttach: 2,
				Stripes: 2, RMWWrites: 2, ReconstructWrites: 2, ParityBytes: 2 * 8 * K},
			memberIO{WriteRequests: 6, WriteSectors: 6 * 8, ReadRequests: 2, ReadSectors: 2 * 8}},
		{"one row/bs=512/plugged", oneRow, 512, true,
			Stats{BiosIn: 256, BytesIn: 128 * K, WriteBios: 256, MemberBios: 64, StripeAttach: 256, Stripes: 16, FullStripeWrites: 16, ParityBytes: 16 * 8 * K},
			memberIO{WriteRequests: 4, WriteSectors: 64 * 8}},
		{"one row/bs=4096/plugged", oneRow, 4096, true,
			Stats{BiosIn: 32, BytesIn: 128 * K, WriteBios: 32, MemberBios: 64, StripeAttach: 32, Stripes: 16, FullStripeWrites: 16, ParityBytes: 16 * 8 * K},
			memberIO{WriteRequests: 4, WriteSectors: 64 * 8}},
		{"one row/bs=4096/unplugged", oneRow, 4096, false,
			Stats{BiosIn: 32, BytesIn: 128 * K, WriteBios: 32, MemberBios: 32 * 4, MemberReads: 32, StripeAttach: 32,
				Stripes: 32, RMWWrites: 32, ReconstructWrites: 32, ParityBytes: 32 * 8 * K},
			memberIO{WriteRequests: 96, WriteSectors: 96 * 8, ReadRequests: 32, ReadSectors: 32 * 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, queues, disks := newQueueArray(t, Raid6, 4, 1<<20, chunk, 0)
			rng := rand.New(rand.NewPCG(5, tc.bs))
			oracle := make([]byte, a.Sectors()<<blk.SectorShift)
			var plug blk.Plug
			p := &plug
			if tc.plugged {
				plug.Start()
			} else {
				p = nil
			}
			var log bioLog
			for _, sp := range tc.spans {
				for off := sp.off; off < sp.off+sp.n; off += tc.bs {
					data := fill(rng, int(tc.bs))
					copy(oracle[off:], data)
					blk.SubmitBio(p, a, log.bio(blk.OpWrite, off>>blk.SectorShift, data, 0, 2*off/4096))
				}
			}
			if tc.plugged {
				assert.Zero(t, log.completed(), "plugged bios wait for the flush")
				assert.Zero(t, servedBy(queues), "the members saw nothing yet")
				require.NoError(t, plug.Finish())
			}
			log.checkOnce(t)
			assert.Equal(t, tc.want, a.Stats())
			assert.Equal(t, tc.wantIO, servedBy(queues))
			assert.Zero(t, stripesInUse(a))
			got := make([]byte, len(oracle))
			require.NoError(t, doIO(t, a, blk.OpRead, 0, ioOpts{data: got}))
			assert.Equal(t, oracle, got)
			checkMembers(t, a, disks, oracle)
		})
	}
}
