package bufcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/pageindex"
	"github.com/bhsim/bhsim/internal/race"
)

// entryOpLen is the size of one operation in FuzzEntryPoints' input: kind,
// value mode, a 64-bit value and a 32-bit one.
const entryOpLen = 14

// entryMaxWork bounds the bytes one write(2) or read(2) of FuzzEntryPoints
// may really move, so that a huge count on a huge device stays quick.
const entryMaxWork = 64 << 10

// entryStepTimeout is how long one operation of FuzzEntryPoints may take
// before it counts as a livelock: the fuzzer reports a crash, with its input,
// but not a hang.
const entryStepTimeout = 10 * time.Second

// entryDevices are the devices FuzzEntryPoints opens: two small ones with
// data (one whose size is not a multiple of PAGE_SIZE), a metadata-only
// 16 TiB one (block 4G and beyond) and a metadata-only one of
// MAX_LFS_FILESIZE bytes (rounded down to the logical block size), the
// largest Open admits (larger ones: TestOpenTooLarge).
var entryDevices = []struct {
	size     uint64
	metaOnly bool
}{
	{256 << 10, false},
	{256<<10 + 4096 + 512, false},
	{16 << 40, true},
	{blocksize.MaxLFSFileSize, true},
}

// entryRig is one FuzzEntryPoints run: a device, its oracle (data devices
// only: what read(2) and, after a sync, the disk must return) and the buffers
// the program holds.
type entryRig struct {
	t    *testing.T
	m    *Machine
	d    *BlockDevice
	disk *blk.MemDisk
	cpu  *CPU
	want []byte
	held []*BufferHead
	// misSized records a getblk with a size other than the block size: the
	// ring it may leave behind is found by later lookups, whatever size they
	// ask for, as in the kernel.
	misSized bool
}

// entryValue decodes a 64-bit operand: raw, small, just below or at end, near
// 2^64, around 2^32 (block 4G), or reduced inside [0, end).
func entryValue(mode byte, raw, end uint64) uint64 {
	switch mode % 6 {
	case 0:
		return raw
	case 1:
		return raw % 64
	case 2:
		return end - 4 + raw%8 // wraps below 4 on purpose
	case 3:
		return math.MaxUint64 - raw%8
	case 4:
		return 1<<32 - 4 + raw%8
	default:
		if end == 0 {
			return raw
		}
		return raw % end
	}
}

// entrySize decodes a 32-bit size operand: raw, or one of the sizes where
// checks change their answer.
func entrySize(mode byte, raw uint32, d *BlockDevice) uint32 {
	if mode&0x80 == 0 {
		return d.BlockSize()
	}
	interesting := []uint32{raw, 0, 1, 511, 512, 513, 1000, 1024, 2048, 4096, 8192, 16384, 65536,
		131072, 1 << 31, math.MaxUint32, d.m.PageSize(), d.LogicalBlockSize() / 2}
	return interesting[int(mode>>3)%len(interesting)]
}

// entryErrIn reports whether err wraps one of targets.
func entryErrIn(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// getblkErr is what Getblk and Bread must answer for block and size when the
// block is not already cached: nil, ErrInvalidBlockSize, ErrOutOfRange or
// ErrBeyondDevice; a size other than the block size may also give
// ErrSizeMismatch. (A cached block is found before the size is checked, as in
// the kernel.)
func (r *entryRig) getblkErr(block uint64, size uint32) error {
	d := r.d
	if !blocksize.IsPowerOfTwo(size) || size < 512 || size > r.m.PageSize() || size%d.LogicalBlockSize() != 0 {
		return ErrInvalidBlockSize
	}
	g := blocksize.Geometry{PageShift: uint8(blocksize.Log2(r.m.PageSize())), BlkBits: uint8(blocksize.Log2(size))}
	if !g.BlockInRange(block) {
		return ErrOutOfRange
	}
	if block >= d.Size()/uint64(size) {
		return ErrBeyondDevice
	}
	return nil
}

// foreignBusy reports whether the page that getblk(block, size) grows holds
// a ring of another size that a reference (the program's, or a CPU's bh
// LRU's) pins: getblk then writes the device back once and gives up with
// ErrBuffersBusy, where the kernel would loop until the reference is dropped
// (TestGetblkBusyForeignRing). Dirty buffers alone do not pin: the writeback
// cleans them.
func (r *entryRig) foreignBusy(block uint64, size uint32) bool {
	if err := r.getblkErr(block, size); err == ErrInvalidBlockSize || err == ErrOutOfRange {
		return false
	}
	g := blocksize.Geometry{PageShift: uint8(blocksize.Log2(r.m.PageSize())), BlkBits: uint8(blocksize.Log2(size))}
	f := r.d.mapping.lookup(r.cpu, g.PageIndex(block))
	if f == nil {
		return false
	}
	defer f.put(r.cpu)
	head := f.private
	if head == nil || head.size == size {
		return false
	}
	for bh := range head.ring(nil) {
		if bh.Count() != 0 {
			return true
		}
	}
	return false
}

// step runs one operation and checks its answer, then the invariants.
func (r *entryRig) step(op []byte) {
	t, d, cpu := r.t, r.d, r.cpu
	kind, mode := op[0], op[1]
	a := binary.LittleEndian.Uint64(op[2:])
	b := binary.LittleEndian.Uint32(op[10:])
	bsize := uint64(d.BlockSize())
	switch kind % 13 {
	case 0, 1: // getblk or bread
		block := entryValue(mode, a, d.Size()/bsize)
		size := entrySize(mode, b, d)
		busy := r.foreignBusy(block, size)
		var bh *BufferHead
		var err error
		if kind%13 == 0 {
			bh, err = d.Getblk(cpu, block, size)
		} else {
			bh, err = d.Bread(cpu, block, size)
		}
		if size != d.BlockSize() {
			r.misSized = true
		}
		if err != nil {
			require.Nil(t, bh)
			want := r.getblkErr(block, size)
			switch {
			case busy:
				want = ErrBuffersBusy
			case size != d.BlockSize() && want == nil:
				want = ErrSizeMismatch
			}
			require.ErrorIs(t, err, want, "getblk(%d, %d)", block, size)
			return
		}
		require.Equal(t, block, bh.BlockNr())
		if size == d.BlockSize() {
			// A block straddling the end that write(2) mapped (blkdev_get_block
			// does not check) is found by the lookup before the end is.
			require.Less(t, block, blocksize.DivRoundUp(d.Size(), uint64(size)), "getblk(%d, %d)", block, size)
			if !r.misSized {
				require.Equal(t, size, bh.Size())
			}
		}
		if pos := block * uint64(bh.Size()); kind%13 == 1 && r.want != nil && pos < d.Size() {
			end := min(pos+uint64(bh.Size()), d.Size())
			require.Equal(t, r.want[pos:end], bh.Data()[:end-pos], "bread(%d)", block)
		}
		r.hold(bh)
	case 2, 3: // __find_get_block, __find_get_block_slow
		block := entryValue(mode, a, d.Size()/bsize)
		var bh *BufferHead
		if kind%13 == 2 {
			bh = d.FindGetBlock(cpu, block, entrySize(mode, b, d))
		} else {
			bh = d.FindGetBlockSlow(cpu, block)
		}
		if bh != nil {
			require.Equal(t, block, bh.BlockNr())
			r.hold(bh)
		}
	case 4: // try_to_free_buffers
		index := entryValue(mode, a, d.Size()/uint64(r.m.PageSize()))
		if err := d.TryToFreeBuffers(cpu, index); err != nil {
			require.True(t, entryErrIn(err, ErrNotCached, ErrNoBuffers, ErrBuffersBusy), "%v", err)
		}
	case 5: // set_blocksize, with or without buffers held
		if mode&1 == 0 {
			r.releaseAll()
		}
		size := entrySize(mode|0x80, b, d)
		old := d.BlockSize()
		err := d.SetBlocksize(cpu, size)
		if verr := blocksize.ValidateBlocksize(size, d.LogicalBlockSize(), r.m.PageSize()); verr != nil {
			var se *blocksize.SizeError
			require.ErrorAs(t, err, &se)
			require.Equal(t, verr.Error(), err.Error())
			require.Equal(t, old, d.BlockSize(), "a refused set_blocksize changed the block size")
			return
		}
		require.NoError(t, err)
		require.Equal(t, size, d.BlockSize())
	case 6, 7: // write(2)
		r.write(mode, a, b)
	case 8: // read(2)
		pos := entryValue(mode, a, d.Size())
		buf := make([]byte, b%(64<<10))
		n, err := d.Read(cpu, pos, buf)
		require.NoError(t, err)
		if pos >= d.Size() {
			require.Zero(t, n)
			return
		}
		require.Equal(t, min(uint64(len(buf)), d.Size()-pos), n)
		if r.want != nil {
			require.True(t, bytes.Equal(r.want[pos:pos+n], buf[:n]), "read(%d, %d)", pos, len(buf))
		}
	case 9:
		require.NoError(t, d.SyncBlockdev(cpu))
		r.checkDisk()
	case 10:
		r.m.InvalidateBhLRUs(cpu)
	case 11: // brelse
		if len(r.held) > 0 {
			i := int(a % uint64(len(r.held)))
			Brelse(cpu, r.held[i])
			r.held = append(r.held[:i], r.held[i+1:]...)
		}
	case 12: // iov_iter over a user buffer, and the read-only flag
		u := NewUserBufSize(uint64(b), 0, r.m.PageSize())
		off, n := entryValue(mode, a, uint64(b)), entryValue(mode>>3, a>>7, uint64(b))
		it, err := u.Iter(off, n)
		if off > uint64(b) || n > uint64(b)-off {
			require.Error(t, err)
			require.Nil(t, it)
		} else {
			require.NoError(t, err)
			require.Equal(t, n, it.Count())
		}
		if mode&0x40 != 0 {
			d.SetReadOnly(!d.ReadOnly())
		}
	}
}

// write runs one write(2): position, count, user address and an unreadable
// range decoded from the operands, the work bounded by entryMaxWork.
func (r *entryRig) write(mode byte, a uint64, b uint32) {
	t, d := r.t, r.d
	pos := entryValue(mode, a, d.Size())
	count := entryValue(mode>>3, a>>13^uint64(b), entryMaxWork)
	if pos < d.Size() && d.Size()-pos > entryMaxWork {
		count %= entryMaxWork
	}
	base := uint64(b) << 12
	if mode&0x40 != 0 {
		base = math.MaxUint64 - uint64(b) // the buffer's address wraps
	}
	var u *UserBuf
	var data []byte
	if r.want != nil && count <= entryMaxWork {
		data = make([]byte, count)
		for i := range data {
			data[i] = byte(i*13) ^ byte(a) | 1
		}
		u = NewUserBuf(data, base, r.m.PageSize())
	} else {
		u = NewUserBufSize(count, base, r.m.PageSize()) // copies zeros
	}
	var badFrom uint64
	if mode&0x80 != 0 && count > 0 {
		badFrom = uint64(b>>8) % count
		u.SetUnreadable(badFrom, uint64(b&0xff)+1)
	}
	it, err := u.Iter(0, count)
	require.NoError(t, err)
	n, err := d.Write(r.cpu, pos, it)

	var want uint64
	var wantErr error
	switch limit := min(count, d.Size()-min(pos, d.Size())); {
	case d.ReadOnly():
		wantErr = ErrReadOnly
	case count == 0:
	case pos >= d.Size():
		wantErr = ErrNoSpace
	case mode&0x80 != 0 && badFrom < limit:
		want = badFrom
		if badFrom == 0 {
			wantErr = ErrFault
		}
	default:
		want = limit
	}
	require.Equal(t, want, n, "write(%d, %d)", pos, count)
	if wantErr != nil {
		require.ErrorIs(t, err, wantErr)
	} else {
		require.NoError(t, err)
	}
	require.Equal(t, count-n, it.Count(), "the iterator keeps what was not written")
	if r.want != nil && n > 0 {
		if data != nil {
			copy(r.want[pos:], data[:n])
		} else {
			clear(r.want[pos : pos+n])
		}
	}
}

func (r *entryRig) hold(bh *BufferHead) {
	if len(r.held) == 8 {
		Brelse(r.cpu, r.held[0])
		r.held = r.held[1:]
	}
	r.held = append(r.held, bh)
}

func (r *entryRig) releaseAll() {
	for _, bh := range r.held {
		Brelse(r.cpu, bh)
	}
	r.held = r.held[:0]
}

// checkDisk compares a data device's disk with the oracle; call it after a
// sync.
func (r *entryRig) checkDisk() {
	if r.want == nil {
		return
	}
	got := make([]byte, len(r.want))
	_, err := r.disk.ReadAt(got, 0)
	require.NoError(r.t, err)
	require.True(r.t, bytes.Equal(r.want, got), "disk differs from the oracle after a sync")
}

// FuzzEntryPoints drives every bufcache entry point that takes a block
// number, a size, a byte position, a length or a page index — Getblk, Bread,
// FindGetBlock, FindGetBlockSlow, TryToFreeBuffers, SetBlocksize, Write,
// Read, UserBuf.Iter — with values near zero, near the device's end, around
// block 4G and near 2^64, on machines with 4, 16 and 64 KiB pages and 512 or
// 4096-byte logical blocks, on small devices with data and on metadata-only
// ones of 16 TiB and of 2^63 bytes. Every call must answer as the
// bad-input table of the package documentation says, never panic, and leave
// the invariants intact (Config.Check runs inside the operations, Check after
// each); on data devices read(2), bread and the disk after every sync must
// match a flat-array oracle of what write(2) wrote.
//
// Input: byte 0 picks the machine and device (bits 0–1 page size, bit 2
// logical block size, bits 3–4 device, bit 5 no LRU, bit 6 B-tree index), then
// entryOpLen bytes per operation.
func FuzzEntryPoints(f *testing.F) {
	op := func(kind, mode byte, a uint64, b uint32) []byte {
		o := []byte{kind, mode}
		o = binary.LittleEndian.AppendUint64(o, a)
		return binary.LittleEndian.AppendUint32(o, b)
	}
	prog := func(cfg byte, ops ...[]byte) []byte { return bytes.Join(append([][]byte{{cfg}}, ops...), nil) }
	f.Add(prog(0, op(0, 1, 3, 0), op(1, 2, 0, 0), op(6, 5, 4000, 9000), op(8, 5, 100, 5000), op(9, 0, 0, 0)))
	f.Add(prog(0x10, op(0, 4, 0, 0), op(1, 3, 0, 0), op(2, 4, 1, 0), op(6, 2, 2, 1<<20), op(4, 2, 0, 0), op(9, 0, 0, 0)))
	f.Add(prog(0x18, op(6, 2, 2, 70000), op(8, 3, 0, 100), op(0, 0x80|3<<3, 9, 0), op(5, 0x80|7<<3, 0, 0)))
	f.Add(prog(0x0c, op(5, 0x80|9<<3, 0, 0), op(1, 5, 17, 0), op(6, 0xc5, 33, 0x1234), op(12, 0x43, 5, 64), op(6, 1, 0, 10)))
	f.Add(prog(0x09, op(5, 1|0x80|5<<3, 0, 0), op(0, 0x80|7<<3, 1, 0), op(5, 0x80|8<<3, 0, 0), op(1, 1, 1, 0), op(11, 0, 0, 0)))
	f.Add(prog(0x60, op(7, 5, 300000, 4096), op(3, 5, 12, 0), op(10, 0, 0, 0), op(4, 5, 2, 0), op(9, 0, 0, 0)))
	f.Fuzz(runEntryProgram)
}

// runEntryProgram runs one FuzzEntryPoints input.
func runEntryProgram(t *testing.T, in []byte) {
	if len(in) == 0 {
		return
	}
	cfg := in[0]
	mc := Config{CPUs: 1, Check: true, PageSize: 4096 << (2 * (cfg & 3 % 3)), DirtyLimit: 8}
	if cfg&0x20 != 0 {
		mc.LRU = LRURemoved
	}
	if cfg&0x40 != 0 {
		mc.Index = pageindex.KindBTree
	}
	logical := uint32(512)
	if cfg&4 != 0 {
		logical = 4096
	}
	dev := entryDevices[cfg>>3&3]
	size := dev.size
	if size%uint64(logical) != 0 {
		size -= size % uint64(logical)
	}
	m, err := NewMachine(mc)
	require.NoError(t, err)
	disk, err := blk.NewMemDisk("sdf", size, logical)
	require.NoError(t, err)
	d, err := m.Open(disk, DeviceOptions{MetadataOnly: dev.metaOnly})
	require.NoError(t, err)
	r := &entryRig{t: t, m: m, d: d, disk: disk, cpu: m.CPU(0)}
	if !dev.metaOnly {
		r.want = make([]byte, size)
	}
	for i := 1; i+entryOpLen <= len(in) && i < 1+64*entryOpLen; i += entryOpLen {
		func(op []byte) {
			watchdog := time.AfterFunc(entryStepTimeout, func() { panic(fmt.Sprintf("operation %x hangs", op)) })
			defer watchdog.Stop() // also when a check fails
			r.step(op)
		}(in[i : i+entryOpLen])
		require.NoError(t, m.Check())
	}
	r.releaseAll()
	d.SetReadOnly(false)
	require.NoError(t, d.SyncBlockdev(r.cpu))
	r.checkDisk()
	assert.NoError(t, m.Check())
}

// TestEntryPointsRandom runs FuzzEntryPoints' checks on seeded random
// programs, whose operands the fuzzer's mutations of the seed corpus rarely
// reach all at once (every device and page size, 64 operations of
// arbitrary bytes).
func TestEntryPointsRandom(t *testing.T) {
	programs := 400
	if testing.Short() || race.Enabled {
		programs = 60
	}
	const seed = 20260502
	t.Logf("seed %d, %d programs", seed, programs)
	rng := rand.New(rand.NewPCG(seed, 0))
	for p := range programs {
		in := make([]byte, 1+64*entryOpLen)
		for i := range in {
			in[i] = byte(rng.Uint32())
		}
		t.Run(fmt.Sprintf("program=%d", p), func(t *testing.T) { runEntryProgram(t, in) })
	}
}
