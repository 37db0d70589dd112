package bufcache

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/internal/pageindex"
)

const fuzzDevSize = 64 << 10

// fuzzOp decodes one FuzzOps operation from (op, a, b) for a device whose
// block size is now bsize: a filesystem's view of the buffer cache, every
// block number valid or just past the end, every size the block size.
func fuzzOp(op, a, b byte, bsize uint32) rigOp { return fuzzOpOn(fuzzDevSize, 4, op, a, b, bsize) }

// fuzzOpOn is fuzzOp for a device of devSize bytes whose set_blocksize
// picks sizes 512 << [0, sizes).
func fuzzOpOn(devSize uint64, sizes byte, op, a, b byte, bsize uint32) rigOp {
	switch op % 13 {
	case 0, 1: // getblk or bread a block, and hold it
		kind := opGetblk
		if op%13 == 1 {
			kind = opBread
		}
		blocks := devSize / uint64(bsize)
		return rigOp{kind: kind, block: uint64(a) % (blocks + 2), size: bsize} // sometimes past the end
	case 2: // write into a held buffer and mark it dirty
		return rigOp{kind: opModify, held: uint64(a), from: uint64(b), n: uint64(a), seed: a ^ b}
	case 3: // re-dirty an uptodate held buffer (content unchanged)
		return rigOp{kind: opRedirty, held: uint64(a)}
	case 4: // sync one held buffer
		return rigOp{kind: opSyncBuffer, held: uint64(a)}
	case 5:
		return rigOp{kind: opBrelse, held: uint64(a)}
	case 6: // reclaim tries to free a page's buffers
		return rigOp{kind: opTryFree, block: uint64(a) % (devSize / 4096)}
	case 7: // change the block size, as a mount would: nobody holds buffers
		return rigOp{kind: opSetBlocksize, size: 512 << (a % sizes)}
	case 8:
		return rigOp{kind: opSync}
	case 9:
		return rigOp{kind: opInvalidate}
	case 10, 11: // a buffered write(2) through the device node
		return rigOp{kind: opWrite, pos: (uint64(a)<<8 | uint64(b)) * 61 % (devSize + 512),
			n: uint64(b)*37 + uint64(op), seed: a}
	default: // a buffered read(2): the cache's view is the oracle's
		return rigOp{kind: opRead, pos: (uint64(a)<<8 | uint64(b)) * 53 % (devSize + 512), n: uint64(b)*41 + 1}
	}
}

// FuzzOps runs random sequences of getblk / bread / modify / mark dirty /
// sync / brelse / try_to_free / set_blocksize / invalidate / write(2) /
// read(2) on a small device with the invariant checker on, through opRig,
// against a flat byte-array oracle: after every sync the disk holds exactly
// what was written, and every uptodate buffer read holds the latest data.
// Writes go through buffers and are marked dirty at once, as a filesystem
// does, so the oracle changes exactly when a buffer is dirtied. Input: three
// bytes (operation, a, b) per operation.
func FuzzOps(f *testing.F) {
	f.Add([]byte{1, 3, 0, 2, 0, 7, 4, 0, 0, 8, 0, 0}, false, false)
	f.Add([]byte{7, 0, 0, 1, 9, 0, 2, 1, 3, 5, 0, 0, 6, 2, 0, 8, 0, 0, 7, 3, 0, 1, 9, 0}, true, true)
	f.Add([]byte{0, 15, 0, 2, 0, 0, 3, 0, 0, 6, 3, 0, 9, 0, 0, 6, 3, 0, 8, 0, 0}, true, false)
	f.Add([]byte{13, 5, 0, 2, 5, 1, 4, 0, 0, 26, 6, 0, 1, 6, 0, 8, 0, 0}, false, true) // getblk, then bread of a getblk'd block
	f.Fuzz(func(t *testing.T, ops []byte, circular, btree bool) {
		cfg := Config{CPUs: 1, Check: true, DirtyLimit: 4}
		if circular {
			cfg.Alloc = AllocCircular
		}
		if btree {
			cfg.Index = pageindex.KindBTree
		}
		runFuzzOps(t, cfg, fuzzDevSize, ops, fuzzOp)
	})
}

// runFuzzOps runs the operations ops encodes (three bytes each, at most
// 200, decoded by decode at the device's current block size) on a fresh
// device of devSize bytes on machine cfg through the interpreter, then
// releases every buffer, syncs and checks the disk against the oracle and
// the machine's invariants. It returns the machine.
func runFuzzOps(t *testing.T, cfg Config, devSize uint64, ops []byte, decode func(op, a, b byte, bsize uint32) rigOp) *Machine {
	t.Helper()
	m, d, disk := newDev(t, cfg, devSize, 512, DeviceOptions{})
	r := &opRig{t: t, m: m, d: d, cpu: m.CPU(0), disk: disk, want: make([]byte, devSize)}
	for i := 0; i+2 < len(ops) && i < 3*200; i += 3 {
		if !r.do(decode(ops[i], ops[i+1], ops[i+2], d.BlockSize()), "") {
			t.FailNow()
		}
	}
	r.releaseAll()
	require.NoError(t, d.SyncBlockdev(r.cpu))
	require.True(t, r.checkDisk(opCtx{where: "the end"}))
	assert.NoError(t, m.Check())
	return m
}

// TestOneGoroutineCountsTheSame: a machine with Config.OneGoroutine (its
// locks, flags and counts confined) runs random operation sequences of
// FuzzOps and FuzzOps618 to the same oracle-checked data and exactly the
// same counted events as a shared machine.
func TestOneGoroutineCountsTheSame(t *testing.T) {
	// Counts only: nothing here reads the heap or GOMAXPROCS.
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	for _, tc := range []struct {
		name    string
		cfg     Config
		devSize uint64
		decode  func(op, a, b byte, bsize uint32) rigOp
	}{
		{"mainline", Config{CPUs: 1, Check: true, DirtyLimit: 4}, fuzzDevSize, fuzzOp},
		{"circular", Config{CPUs: 1, Check: true, DirtyLimit: 4, Alloc: AllocCircular}, fuzzDevSize, fuzzOp},
		{"6.18", Linux618(Config{CPUs: 1, Check: true, DirtyLimit: 4}), fuzz618DevSize, fuzzOp618},
		{"6.18, separate flusher", Linux618(Config{CPUs: 2, SeparateFlusher: true, FlusherCPU: 1, Check: true, DirtyLimit: 4}), fuzz618DevSize, fuzzOp618},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seq := range 20 {
				ops := make([]byte, 3*(20+rng.IntN(150)))
				for i := range ops {
					ops[i] = byte(rng.Uint32())
				}
				shared := runFuzzOps(t, tc.cfg, tc.devSize, ops, tc.decode)
				cfg := tc.cfg
				cfg.OneGoroutine = true
				confined := runFuzzOps(t, cfg, tc.devSize, ops, tc.decode)
				for c := range tc.cfg.CPUs {
					require.Equal(t, shared.CPU(c).Events(), confined.CPU(c).Events(), "sequence %d, cpu %d", seq, c)
				}
			}
		})
	}
}

// TestOneGoroutineConfines: a machine with Config.OneGoroutine confines
// what it makes and opens (private_lock, the queue and its disk, a
// folio's flags and count, a buffer head's state and count); a shared
// machine confines none of it.
func TestOneGoroutineConfines(t *testing.T) {
	for _, one := range []bool{false, true} {
		t.Run(fmt.Sprint("one-goroutine=", one), func(t *testing.T) {
			q, mem := newLoopQueue(t, 1<<20)
			m, err := NewMachine(Config{OneGoroutine: one})
			require.NoError(t, err)
			d, err := m.AddDisk(q, DeviceOptions{})
			require.NoError(t, err)
			cpu := m.CPU(0)
			bh, err := d.Getblk(cpu, 3, d.BlockSize())
			require.NoError(t, err)
			require.NotNil(t, bh)
			f := bh.folio
			for name, got := range map[string]bool{
				"bh state": bh.state.Confined(), "bh count": bh.count.Confined(),
				"folio flags": f.flags.Confined(), "folio count": f.ref.Confined(),
				"private_lock": d.mapping.privateLock.Confined(),
				"queue":        q.Confined(), "disk": mem.Confined(),
			} {
				assert.Equal(t, one, got, name)
			}
			Brelse(cpu, bh)
			require.NoError(t, d.SyncBlockdev(cpu))
		})
	}
}

// TestFuzzOpsReachesEveryOperation: FuzzOps' decoding reaches getblk as
// well as bread (an earlier decoder tested op%10 inside op%13 and almost
// never called getblk), and every other operation.
func TestFuzzOpsReachesEveryOperation(t *testing.T) {
	seen := map[opKind]int{}
	for op := range 256 {
		seen[fuzzOp(byte(op), 0, 0, 512).kind]++
	}
	assert.Len(t, seen, 12, "every operation but find_get_block, its slow path and iov_iter")
	assert.Equal(t, seen[opBread], seen[opGetblk], "getblk as often as bread")
}
