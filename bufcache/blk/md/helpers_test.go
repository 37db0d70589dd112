package md

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// seedFlag chooses the random seed of the oracle tests; each test prints it.
var seedFlag = flag.Uint64("md.seed", 1, "seed of the md oracle tests' random I/O")

// allLevels lists every level, for table-driven tests.
var allLevels = []Level{Raid0, Raid10Near2, Raid10Far2, Raid6}

// newDisks returns n empty MemDisks of size bytes with logical block lbs.
func newDisks(t testing.TB, n int, size uint64, lbs uint32) []*blk.MemDisk {
	t.Helper()
	disks := make([]*blk.MemDisk, n)
	for i := range disks {
		d, err := blk.NewMemDisk(fmt.Sprintf("sd%c", 'a'+i), size, lbs)
		require.NoError(t, err)
		disks[i] = d
	}
	return disks
}

// devices returns disks as blk.Devices.
func devices[D blk.Device](disks []D) []blk.Device {
	devs := make([]blk.Device, len(disks))
	for i, d := range disks {
		devs[i] = d
	}
	return devs
}

// newArray builds a level array named "md0" over n MemDisks of memberSize bytes
// (512-byte logical blocks) with the given chunk.
func newArray(t testing.TB, level Level, n int, memberSize uint64, chunk uint32) (*Array, []*blk.MemDisk) {
	t.Helper()
	disks := newDisks(t, n, memberSize, 512)
	a, err := New(Config{Level: level, ChunkSize: chunk, Name: "md0"}, devices(disks))
	require.NoError(t, err)
	return a, disks
}

// ioOpts shapes a test bio: data (nil for metadata-only), its length when
// metadata-only, and an optional generator that cuts the payload into several
// vectors at random points.
type ioOpts struct {
	data []byte
	size uint32
	rng  *rand.Rand
}

// doIO submits one bio for op at sector to d and returns its error. It fails the
// test unless the bio completed exactly once before Submit returned.
func doIO(t testing.TB, d blk.Device, op blk.Op, sector uint64, o ioOpts) error {
	t.Helper()
	var b blk.Bio
	b.Reset(op, sector)
	size := o.size
	if o.data != nil {
		size = uint32(len(o.data))
	}
	for off := uint32(0); off < size; {
		n := size - off
		if o.rng != nil && o.rng.IntN(2) == 0 {
			n = 1 + o.rng.Uint32N(n)
		}
		var seg []byte
		if o.data != nil {
			seg = o.data[off : off+n]
		}
		b.AddVec(seg, n)
		off += n
	}
	completions := 0
	b.EndIO = func(*blk.Bio) { completions++ }
	d.Submit(&b)
	require.Equal(t, 1, completions, "%s %s sector %d: completions", d.Name(), op, sector)
	return b.Err
}

// fill returns n bytes from rng.
func fill(rng *rand.Rand, n int) []byte {
	p := make([]byte, n+7)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(p[i:], rng.Uint64())
	}
	return p[:n:n]
}

// gfMulSlow multiplies in GF(2^8) mod 0x11d bit by bit: the reference the
// tables and the syndrome code are checked against.
func gfMulSlow(a, b byte) byte {
	var p byte
	for ; b != 0; b >>= 1 {
		if b&1 != 0 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0x1d
		}
	}
	return p
}

// gfMulRef is gfMulSlow tabulated, for checks over whole chunks.
var gfMulRef = func() (t [256][256]byte) {
	for a := range 256 {
		for b := range 256 {
			t[a][b] = gfMulSlow(byte(a), byte(b))
		}
	}
	return t
}()

// memberBytes reads n bytes at member sector sector of disk d.
func memberBytes(t testing.TB, d *blk.MemDisk, sector uint64, n int) []byte {
	t.Helper()
	p := make([]byte, n)
	_, err := d.ReadAt(p, int64(sector<<blk.SectorShift))
	require.NoError(t, err)
	return p
}

// checkMembers checks the members against the oracle, the array's expected
// contents: every copy of every chunk holds the oracle's bytes (raid10's copies
// are equal), and on raid6 every stripe row's P and Q equal the xor and the
// Reed–Solomon syndrome recomputed byte by byte, with the reference multiply,
// from its data chunks.
func checkMembers(t testing.TB, a *Array, disks []*blk.MemDisk, oracle []byte) {
	t.Helper()
	chunk := int(a.ChunkSize())
	require.Equal(t, a.Sectors()<<blk.SectorShift, uint64(len(oracle)))
	for c := range uint64(len(oracle) / chunk) {
		copies, n := a.chunkCopies(c)
		want := oracle[int(c)*chunk:][:chunk]
		for _, l := range copies[:n] {
			if !assert.Equal(t, want, memberBytes(t, disks[l.dev], l.sector, chunk), "%s chunk %d copy on member %d", a.level, c, l.dev) {
				return
			}
		}
	}
	if a.level != Raid6 {
		return
	}
	nd := int(a.dataDisks())
	for row := range a.rowChunks {
		p, q := make([]byte, chunk), make([]byte, chunk)
		for k := range nd {
			d := memberBytes(t, disks[a.dataDev(row, k)], a.rowSector(row), chunk)
			coef := byte(1)
			for range k {
				coef = gfMulSlow(coef, 2)
			}
			mul := &gfMulRef[coef]
			for i, b := range d {
				p[i] ^= b
				q[i] ^= mul[b]
			}
		}
		pd, qd := a.parityDevs(row)
		if !assert.Equal(t, p, memberBytes(t, disks[pd], a.rowSector(row), chunk), "row %d P", row) ||
			!assert.Equal(t, q, memberBytes(t, disks[qd], a.rowSector(row), chunk), "row %d Q", row) {
			return
		}
	}
}
