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
// writes, with and without data, some unaligned or past the end, and checks
// every result against a flat byte array: reads return what was written,
// invalid bios fail without changing anything, and at the end every member copy
// and every RAID6 parity chunk is right.
//
// Input: level, member count, chunk and logical block size, then 5 bytes per
// operation: kind (bits 0–1: write, read, metadata-only write, metadata-only
// read; bit 2: cut the payload into random vectors; bit 7: leave the start and
// length unaligned), start sector (2 bytes) and length in sectors (2 bytes).
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
		disks := newDisks(t, members, 128<<10, lbs)
		a, err := New(Config{Level: level, ChunkSize: chunk}, devices(disks))
		require.NoError(t, err)
		size := a.Sectors() << blk.SectorShift
		oracle := make([]byte, size)
		lbsSectors := uint64(lbs) >> blk.SectorShift

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
			err := doIO(t, a, op, sector, o)
			switch {
			case sector%lbsSectors != 0 || sectors%lbsSectors != 0:
				require.ErrorIs(t, err, blk.ErrMisaligned)
				continue
			case sector+sectors > a.Sectors():
				require.ErrorIs(t, err, blk.ErrBeyondEnd)
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
		got := make([]byte, size)
		require.NoError(t, doIO(t, a, blk.OpRead, 0, ioOpts{data: got}))
		assert.Equal(t, oracle, got)
		checkMembers(t, a, disks, oracle)
	})
}
