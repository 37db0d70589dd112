package md

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// fuzzOp is the size of one encoded operation in FuzzArray's input.
const fuzzOp = 5

// FuzzArray decodes its input into a small array and a sequence of reads and
// writes, with and without data, some unaligned or past the end, some
// submitted under a plug, and checks every result against a flat byte array:
// reads return what was written, invalid bios fail at once without changing
// anything, plugged bios complete exactly once by the time the plug is
// finished, and at the end every member copy and every RAID6 parity chunk is
// right.
//
// Input: level, member count, geometry (bits 0–1: chunk 4, 8 or 16 KiB; bit 2:
// 4096-byte logical blocks; bit 3: the smallest stripe cache, 17; bit 4:
// confine the array and its members, as one goroutine's machine does), then 5 bytes
// per operation: kind (bits 0–1: write, read, metadata-only write,
// metadata-only read; bit 2: cut the payload into random vectors; bit 3: start
// the plug before the operation, or finish it if started; bit 7: leave the
// start and length unaligned), start sector (2 bytes) and length in sectors (2
// bytes). A read first finishes the plug, as a reader's sleep flushes it.
func FuzzArray(f *testing.F) {
	op := func(kind byte, sector, sectors uint16) []byte {
		return []byte{kind, byte(sector >> 8), byte(sector), byte(sectors >> 8), byte(sectors)}
	}
	seed := func(level, members, geometry byte, ops ...[]byte) []byte {
		in := []byte{level, members, geometry}
		for _, o := range ops {
			in = append(in, o...)
		}
		return in
	}
	for level := range byte(4) {
		f.Add(seed(level, 0, 0, op(0, 0, 8), op(1, 0, 8)))
		f.Add(seed(level, 2, 1, op(4, 5, 40), op(0, 60, 300), op(5, 0, 512), op(2, 7, 9), op(1, 0, 1)))
		f.Add(seed(level, 1, 6, op(0, 0, 256), op(0x80, 3, 5), op(0, 0xffff, 8), op(3, 8, 64), op(1, 0, 255)))
		// Plugged: 512-byte writes filling stripes, an overlap, a rejected bio,
		// a metadata-only write among data, then a read that finishes the plug.
		f.Add(seed(level, 0, 8, op(8, 0, 1), op(0, 1, 1), op(0, 2, 6), op(0, 8, 8), op(0, 4, 2),
			op(0x80, 5, 3), op(2, 16, 4), op(4, 20, 100), op(1, 0, 64), op(8, 0, 8), op(12, 64, 200), op(8, 0, 1)))
		f.Add(seed(level, 2, 9, op(8, 0, 400), op(4, 300, 300), op(0, 0xfff0, 8), op(6, 40, 80)))
		f.Add(seed(level, 1, 0x18, op(8, 0, 1), op(0, 1, 7), op(4, 8, 100), op(8, 0, 1), op(1, 0, 128))) // confined
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 3 {
			return
		}
		level := Level(in[0] % 4)
		members := 2 + int(in[1]%4)
		if level == Raid6 {
			members = 4 + int(in[1]%3)
		}
		chunk := uint32(4096) << (in[2] % 3)
		lbs := uint32(512)
		if in[2]&4 != 0 {
			lbs = 4096
		}
		cache := 0
		if in[2]&8 != 0 {
			cache = MinStripeCacheSize
		}
		disks := newDisks(t, members, 128<<10, lbs)
		a, err := New(Config{Level: level, ChunkSize: chunk, StripeCacheSize: cache}, devices(disks))
		require.NoError(t, err)
		if in[2]&16 != 0 {
			a.Confine()
			require.True(t, a.Confined())
			for _, d := range disks {
				require.True(t, d.Confined(), "Confine confines the members")
			}
		}
		size := a.Sectors() << blk.SectorShift
		oracle := make([]byte, size)
		lbsSectors := uint64(lbs) >> blk.SectorShift
		var plug blk.Plug
		var log bioLog // the valid plugged bios
		finish := func() {
			if plug.Active() {
				require.NoError(t, plug.Finish())
			}
		}

		ops := in[3:]
		for i := 0; i+fuzzOp <= len(ops) && i < 64*fuzzOp; i += fuzzOp {
			kind := ops[i]
			sector := uint64(binary.BigEndian.Uint16(ops[i+1:])) % (a.Sectors() + 16)
			sectors := 1 + uint64(binary.BigEndian.Uint16(ops[i+3:]))%512
			if kind&0x80 == 0 {
				sector -= sector % lbsSectors
				sectors += lbsSectors - 1
				sectors -= sectors % lbsSectors
			}
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			o := ioOpts{size: uint32(sectors << blk.SectorShift)}
			if kind&4 != 0 {
				o.rng = rng
			}
			op, withData := blk.Op(kind&1), kind&2 == 0
			if withData {
				o.data = make([]byte, o.size)
				if op == blk.OpWrite {
					o.data = fill(rng, int(o.size))
				}
			}
			var want, err error
			switch {
			case sector%lbsSectors != 0 || sectors%lbsSectors != 0:
				want = blk.ErrMisaligned
			case sector+sectors > a.Sectors():
				want = blk.ErrBeyondEnd
			}
			if kind&8 != 0 {
				if plug.Active() {
					finish()
				} else {
					plug.Start()
				}
			}
			if op == blk.OpRead {
				finish()
			}
			switch {
			case plug.Active() && want == nil:
				blk.SubmitBio(&plug, a, log.track(makeBio(op, sector, o)))
			case plug.Active():
				b := makeBio(op, sector, o)
				calls := 0
				b.EndIO = func(*blk.Bio) { calls++ }
				blk.SubmitBio(&plug, a, b)
				require.Equal(t, 1, calls, "a rejected bio completes at once")
				err = b.Err
			default:
				err = doIO(t, a, op, sector, o)
			}
			if want != nil {
				require.ErrorIs(t, err, want)
				continue
			}
			require.NoError(t, err)
			off := sector << blk.SectorShift
			if withData && op == blk.OpWrite {
				copy(oracle[off:], o.data)
			}
			if withData && op == blk.OpRead {
				require.Equal(t, oracle[off:off+uint64(o.size)], o.data, "read %d sectors at %d", sectors, sector)
			}
		}
		finish()
		log.checkOnce(t)
		require.Zero(t, stripesInUse(a), "stripe_heads released")
		got := make([]byte, size)
		require.NoError(t, doIO(t, a, blk.OpRead, 0, ioOpts{data: got}))
		assert.Equal(t, oracle, got)
		checkMembers(t, a, disks, oracle)
	})
}
