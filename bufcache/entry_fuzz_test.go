package bufcache

import (
	"bytes"
	"encoding/binary"
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

// entryOp decodes one FuzzEntryPoints operation: kind, value mode, a 64-bit
// value and a 32-bit one, for the device as it is now.
func entryOp(op []byte, d *BlockDevice) rigOp {
	kind, mode := op[0], op[1]
	a := binary.LittleEndian.Uint64(op[2:])
	b := binary.LittleEndian.Uint32(op[10:])
	blocks := d.Size() / uint64(d.BlockSize())
	switch kind % 13 {
	case 0, 1: // getblk or bread
		k := opGetblk
		if kind%13 == 1 {
			k = opBread
		}
		return rigOp{kind: k, block: entryValue(mode, a, blocks), size: entrySize(mode, b, d)}
	case 2: // __find_get_block
		return rigOp{kind: opFind, block: entryValue(mode, a, blocks), size: entrySize(mode, b, d)}
	case 3: // __find_get_block_slow
		return rigOp{kind: opFindSlow, block: entryValue(mode, a, blocks)}
	case 4: // try_to_free_buffers
		return rigOp{kind: opTryFree, block: entryValue(mode, a, d.Size()/uint64(d.m.PageSize()))}
	case 5: // set_blocksize, with or without buffers held
		return rigOp{kind: opSetBlocksize, size: entrySize(mode|0x80, b, d), keep: mode&1 != 0}
	case 6, 7:
		return entryWrite(mode, a, b, d)
	case 8: // read(2)
		return rigOp{kind: opRead, pos: entryValue(mode, a, d.Size()), n: uint64(b % (64 << 10))}
	case 9:
		return rigOp{kind: opSync}
	case 10:
		return rigOp{kind: opInvalidate}
	case 11:
		return rigOp{kind: opBrelse, held: a}
	default: // iov_iter over a user buffer, and the read-only flag
		return rigOp{kind: opIter, size: b, from: entryValue(mode, a, uint64(b)), n: entryValue(mode>>3, a>>7, uint64(b)),
			flipRO: mode&0x40 != 0}
	}
}

// entryWrite decodes a write(2): position, count, user address and an
// unreadable range from the operands, the work bounded by entryMaxWork.
func entryWrite(mode byte, a uint64, b uint32, d *BlockDevice) rigOp {
	o := rigOp{kind: opWrite, pos: entryValue(mode, a, d.Size()), n: entryValue(mode>>3, a>>13^uint64(b), entryMaxWork),
		base: uint64(b) << 12, seed: byte(a)}
	if o.pos < d.Size() && d.Size()-o.pos > entryMaxWork {
		o.n %= entryMaxWork
	}
	if mode&0x40 != 0 {
		o.base = math.MaxUint64 - uint64(b) // the buffer's address wraps
	}
	if mode&0x80 != 0 && o.n > 0 {
		o.badFrom, o.badLen = uint64(b>>8)%o.n, uint64(b&0xff)+1
	}
	return o
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
	r := &opRig{t: t, m: m, d: d, cpu: m.CPU(0), disk: disk}
	if !dev.metaOnly {
		r.want = make([]byte, size)
	}
	for i := 1; i+entryOpLen <= len(in) && i < 1+64*entryOpLen; i += entryOpLen {
		op := in[i : i+entryOpLen]
		watchdog := time.AfterFunc(entryStepTimeout, func() { panic(fmt.Sprintf("operation %x hangs", op)) })
		ok := r.do(entryOp(op, d), "")
		watchdog.Stop()
		if !ok {
			t.FailNow()
		}
		require.NoError(t, m.Check())
	}
	r.releaseAll()
	d.SetReadOnly(false)
	require.NoError(t, d.SyncBlockdev(r.cpu))
	require.True(t, r.checkDisk(opCtx{where: "the end"}))
	assert.NoError(t, m.Check())
}

// TestEntryPointsRandom runs FuzzEntryPoints' checks on seeded random
// programs, whose operands the fuzzer's mutations of the seed corpus rarely
// reach all at once (every device and page size, 64 operations of
// arbitrary bytes).
func TestEntryPointsRandom(t *testing.T) {
	// Counts only: nothing here reads the heap or GOMAXPROCS.
	t.Parallel()
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
