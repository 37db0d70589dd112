package md

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
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
	b := makeBio(op, sector, o)
	completions := 0
	b.EndIO = func(*blk.Bio) { completions++ }
	d.Submit(b)
	require.Equal(t, 1, completions, "%s %s sector %d: completions", d.Name(), op, sector)
	return b.Err
}

// makeBio returns a bio for op at sector shaped by o, without an EndIO.
func makeBio(op blk.Op, sector uint64, o ioOpts) *blk.Bio {
	b := new(blk.Bio)
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
	return b
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

// stripesInUse returns the number of a's stripe_heads that are hashed: waiting
// in a list or being handled.
func stripesInUse(a *Array) int {
	c := &a.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, sh := range c.hash {
		for ; sh != nil; sh = sh.next {
			n++
		}
	}
	return n
}

// newQueueArray builds a level array named "md0" with the given chunk and
// stripe cache size (0: the default) over n request queues with the null
// timing model and default limits (512-byte logical, 4096-byte physical
// blocks), each over a MemDisk of memberSize bytes. It returns the array, the
// queues and their stores.
func newQueueArray(t testing.TB, level Level, n int, memberSize uint64, chunk uint32, cache int) (*Array, []*blk.Queue, []*blk.MemDisk) {
	t.Helper()
	disks := newDisks(t, n, memberSize, 512)
	queues := make([]*blk.Queue, n)
	for i, d := range disks {
		q, err := blk.NewQueue("", d, blk.Null{}, blk.DefaultLimits(512, 4096))
		require.NoError(t, err)
		queues[i] = q
	}
	a, err := New(Config{Level: level, ChunkSize: chunk, Name: "md0", StripeCacheSize: cache}, devices(queues))
	require.NoError(t, err)
	return a, queues, disks
}

// memberIO sums what the queues served: write and read requests and sectors.
type memberIO struct {
	WriteRequests, WriteSectors, ReadRequests, ReadSectors uint64
}

// servedBy returns what queues served.
func servedBy(queues []*blk.Queue) memberIO {
	var m memberIO
	for _, q := range queues {
		s := q.Stats()
		m.WriteRequests += s.Write.Requests
		m.WriteSectors += s.Write.Sectors
		m.ReadRequests += s.Read.Requests
		m.ReadSectors += s.Read.Sectors
	}
	return m
}

// bioLog makes bios that must outlive their submission (plugged ones) and
// records their completions, which may come from any goroutine.
type bioLog struct {
	mu    sync.Mutex
	calls []int   // completions per bio
	errs  []error // the error of each bio's last completion
}

// bio returns a new bio for op at sector whose completions l records: one
// vector of data at page frame pfn, or, with data nil, a metadata-only vector
// of size bytes.
func (l *bioLog) bio(op blk.Op, sector uint64, data []byte, size uint32, pfn uint64) *blk.Bio {
	b := new(blk.Bio)
	b.Reset(op, sector)
	if data != nil {
		size = uint32(len(data))
	}
	b.AddPage(data, size, pfn, 0)
	return l.track(b)
}

// track makes l record b's completions and returns b.
func (l *bioLog) track(b *blk.Bio) *blk.Bio {
	l.mu.Lock()
	defer l.mu.Unlock()
	b.Private = len(l.calls)
	b.EndIO = l.end
	l.calls = append(l.calls, 0)
	l.errs = append(l.errs, nil)
	return b
}

// end is the bios' EndIO.
func (l *bioLog) end(b *blk.Bio) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := b.Private.(int)
	l.calls[id]++
	l.errs[id] = b.Err
}

// completed returns the number of bios that have completed.
func (l *bioLog) completed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.calls {
		if c > 0 {
			n++
		}
	}
	return n
}

// checkOnce asserts that every bio completed exactly once, without error.
func (l *bioLog) checkOnce(t testing.TB) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, c := range l.calls {
		if !assert.Equal(t, 1, c, "bio %d: completions", id) || !assert.NoError(t, l.errs[id], "bio %d", id) {
			return
		}
	}
}

// oracleIO drives a device with writes and reads checked against a flat
// byte-array oracle. Plugged, writes go through one plug that is flushed one
// time in flushOneIn; every write's completions are tracked by log.
type oracleIO struct {
	t          *testing.T
	d          blk.Device
	rng        *rand.Rand
	oracle     []byte
	plugged    bool
	flushOneIn int
	plug       blk.Plug
	log        bioLog
}

// finish flushes the plug, if one is active.
func (o *oracleIO) finish() {
	if o.plug.Active() {
		require.NoError(o.t, o.plug.Finish())
	}
}

// write writes n fresh random bytes at byte off and records them in the oracle.
func (o *oracleIO) write(off, n uint64) {
	data := fill(o.rng, int(n))
	opts := ioOpts{data: data, rng: o.rng}
	if o.plugged {
		if !o.plug.Active() {
			o.plug.Start()
		}
		blk.SubmitBio(&o.plug, o.d, o.log.track(makeBio(blk.OpWrite, off>>blk.SectorShift, opts)))
		if o.rng.IntN(o.flushOneIn) == 0 {
			o.finish()
		}
	} else {
		require.NoError(o.t, doIO(o.t, o.d, blk.OpWrite, off>>blk.SectorShift, opts))
	}
	copy(o.oracle[off:], data)
}

// read flushes the plug, reads n bytes at byte off and requires the oracle's.
func (o *oracleIO) read(off, n uint64) {
	o.finish()
	got := make([]byte, n)
	require.NoError(o.t, doIO(o.t, o.d, blk.OpRead, off>>blk.SectorShift, ioOpts{data: got, rng: o.rng}))
	require.Equal(o.t, o.oracle[off:off+n], got, "read at %d", off)
}
