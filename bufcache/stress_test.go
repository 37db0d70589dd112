package bufcache

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/bufcache/blk/md"
	"github.com/bhsim/bhsim/internal/pageindex"
	"github.com/bhsim/bhsim/internal/race"
)

// stressSoak adds that many seeds (1000, 1001, …) to TestStress, for soaking:
// go test -run TestStress -stress.soak 200 ./bufcache.
var stressSoak = flag.Int("stress.soak", 0, "TestStress: run this many extra seeds")

// stressCPUs is the number of goroutines of the stress test, each driving its
// own simulated CPU.
const stressCPUs = 8

// stressDevSize is the size of each shared device: 256 pages, 32 per CPU.
const stressDevSize = 1 << 20

// stressDev is one device the stress test shares between its CPUs, with its
// oracle. Page p of the device belongs to CPU p % stressCPUs: only that CPU
// changes its bytes, so want — what the device must hold once synced — is
// well defined whatever the interleaving. Every CPU looks up, frees, syncs
// and invalidates everywhere.
//
// setbs orders SetBlocksize against the operations that change data or
// depend on the block size: those share it, SetBlocksize takes it alone, as
// a mount changes the block size of a device nobody writes to (set_blocksize
// while writes are in flight loses them, and getblk with a stale size builds
// buffers of the wrong size, in the kernel as in the model). Lookups, read(2),
// try_to_free, syncs and LRU invalidations take no lock and race with
// everything.
type stressDev struct {
	name  string
	d     *BlockDevice
	want  []byte
	setbs sync.RWMutex
	// medium returns the device's contents as stored beneath the page cache.
	medium func(t *testing.T) []byte
}

// owner returns the CPU that owns the unit (a page, or 64 KiB with large
// blocks) holding byte pos.
func (r *stressRig) owner(pos uint64) int { return int(pos / r.unit % stressCPUs) }

// stressRig is the machine, the devices and the per-CPU generators of one
// run, with each CPU's interpreter of each device.
type stressRig struct {
	t *testing.T
	// unit is the share of the devices a CPU owns, 4096 bytes, or 64 KiB
	// when block sizes go up to 64 KiB (a block never spans two owners);
	// maxBlockShift bounds the block sizes set_blocksize picks, 512 <<
	// [0, maxBlockShift).
	unit          uint64
	maxBlockShift int
	m             *Machine
	devs          []*stressDev
	rngs          []*rand.Rand
	rigs          [stressCPUs][]*opRig // by CPU, then device
	// ops counts what each CPU did, by operation, for the log.
	ops [stressCPUs][stressNumOps]int
}

// The operations the stress test mixes, in the order of stressWeights.
const (
	stressOpGetblk = iota
	stressOpBreadModify
	stressOpFindGetBlock
	stressOpFindSlow
	stressOpWrite
	stressOpRead
	stressOpSync
	stressOpTryFree
	stressOpInvalidate
	stressOpSetBlocksize
	stressNumOps
)

var stressOpNames = [stressNumOps]string{"getblk", "bread+modify", "find_get_block", "find_get_block_slow",
	"write", "read", "sync", "try_to_free", "invalidate", "set_blocksize"}

// stressWeights is how often each operation is drawn, out of their sum.
var stressWeights = [stressNumOps]int{12, 14, 12, 6, 14, 10, 4, 10, 3, 1}

// newStressRig opens two devices on an 8-CPU machine whose page cache is
// smaller than both together (so reclaim runs) and whose dirty limit starts
// background writeback: sda, a request queue over a MemDisk, and md0, a
// raid10 near-2 array over two such queues.
func newStressRig(t *testing.T, seed uint64, cfg Config, unit uint64, maxBlockShift int) *stressRig {
	cfg.CPUs, cfg.PageCacheLimit, cfg.DirtyLimit = stressCPUs, 384, 24
	m, err := NewMachine(cfg)
	require.NoError(t, err)
	queue := func(name string) (*blk.Queue, *blk.MemDisk) {
		disk, err := blk.NewMemDisk(name, stressDevSize, 512)
		require.NoError(t, err)
		q, err := blk.NewQueue(name, disk, blk.Null{}, blk.DefaultLimits(512, 512))
		require.NoError(t, err)
		return q, disk
	}
	r := &stressRig{t: t, m: m, unit: unit, maxBlockShift: maxBlockShift}

	sda, sdaDisk := queue("sda")
	d, err := m.Open(sda, DeviceOptions{})
	require.NoError(t, err)
	r.devs = append(r.devs, &stressDev{name: "sda", d: d, want: make([]byte, stressDevSize),
		medium: func(t *testing.T) []byte { return stressReadDisk(t, sdaDisk) }})

	q0, m0 := queue("sdb")
	q1, m1 := queue("sdc")
	array, err := md.New(md.Config{Level: md.Raid10Near2, ChunkSize: 16 << 10, Name: "md0"}, []blk.Device{q0, q1})
	require.NoError(t, err)
	require.Equal(t, uint64(stressDevSize), array.Sectors()<<blk.SectorShift)
	d, err = m.Open(array, DeviceOptions{})
	require.NoError(t, err)
	r.devs = append(r.devs, &stressDev{name: "md0", d: d, want: make([]byte, stressDevSize),
		medium: func(t *testing.T) []byte { // two mirrors: each member holds it all
			a, b := stressReadDisk(t, m0), stressReadDisk(t, m1)
			require.Equal(t, a, b, "md0's mirrors differ")
			return a
		}})

	for id := range stressCPUs {
		r.rngs = append(r.rngs, rand.New(rand.NewPCG(seed, uint64(id))))
		owns := func(from, to uint64) bool { // one unit at most, of this CPU's
			return from/unit == (to-1)/unit && r.owner(from) == id
		}
		for _, sd := range r.devs {
			r.rigs[id] = append(r.rigs[id], &opRig{t: t, m: m, d: sd.d, cpu: m.CPU(id), want: sd.want, shared: true, owns: owns})
		}
	}
	return r
}

// stressReadDisk returns all of disk.
func stressReadDisk(t *testing.T, disk *blk.MemDisk) []byte {
	got := make([]byte, disk.Sectors()<<blk.SectorShift)
	_, err := disk.ReadAt(got, 0)
	require.NoError(t, err)
	return got
}

// ownUnit returns the first byte of a random unit owned by CPU id.
func (r *stressRig) ownUnit(rng *rand.Rand, id int) uint64 {
	return uint64(rng.IntN(int(stressDevSize/r.unit/stressCPUs))*stressCPUs+id) * r.unit
}

// stressPick draws an operation by stressWeights.
func stressPick(rng *rand.Rand) int {
	total := 0
	for _, w := range stressWeights {
		total += w
	}
	n := rng.IntN(total)
	for op, w := range stressWeights {
		if n < w {
			return op
		}
		n -= w
	}
	panic("unreachable")
}

// step runs one random operation on CPU id, a device picked at random,
// through that CPU's interpreter of the device, which checks the results.
// Getblk, bread and its change, write(2) and set_blocksize take the device's
// setbs lock. Every buffer the step took is released before it returns (and
// before it drops setbs). It returns false after a failed check, to stop the
// goroutine.
func (r *stressRig) step(id, round, i int) bool {
	rng := r.rngs[id]
	dev := rng.IntN(len(r.devs))
	sd, rig := r.devs[dev], r.rigs[id][dev]
	d := sd.d
	op := stressPick(rng)
	r.ops[id][op]++
	where := fmt.Sprintf("cpu %d round %d step %d on %s: ", id, round, i, sd.name)
	switch op {
	case stressOpGetblk: // anyone's block, sometimes past the end
		sd.setbs.RLock() // getblk must be asked for the block size: hold it still
		defer sd.setbs.RUnlock()
		defer rig.releaseAll() // before the unlock
		size := d.BlockSize()
		return rig.do(rigOp{kind: opGetblk, block: rng.Uint64N(stressDevSize/uint64(size) + 4), size: size}, where)
	case stressOpBreadModify: // our own block: read it, change some of its bytes, dirty it
		sd.setbs.RLock()
		defer sd.setbs.RUnlock()
		defer rig.releaseAll()
		size := uint64(d.BlockSize())
		block := (r.ownUnit(rng, id) + rng.Uint64N(r.unit)) / size
		from := rng.Uint64N(size)
		modify := rigOp{kind: opModify, from: from, n: rng.Uint64N(size - from), seed: byte(round*31+i) ^ byte(id)<<5}
		return rig.do(rigOp{kind: opBread, block: block, size: uint32(size)}, where) && rig.do(modify, where) &&
			(rng.IntN(4) != 0 || rig.do(rigOp{kind: opSyncBuffer}, where))
	case stressOpFindGetBlock, stressOpFindSlow: // anyone's block; ours must hold the oracle's bytes
		defer rig.releaseAll()
		size := d.BlockSize()
		o := rigOp{kind: opFind, block: rng.Uint64N(stressDevSize / uint64(size)), size: size}
		if op == stressOpFindSlow {
			o.kind = opFindSlow
		}
		return rig.do(o, where)
	case stressOpWrite: // write(2) into one of our pages
		sd.setbs.RLock()
		defer sd.setbs.RUnlock()
		off := rng.Uint64N(r.unit)
		return rig.do(rigOp{kind: opWrite, pos: r.ownUnit(rng, id) + off, n: 1 + rng.Uint64N(r.unit-off),
			seed: byte(round*17+i) ^ byte(id)<<4}, where)
	case stressOpRead: // read(2) one of our pages, racing set_blocksize and reclaim
		return rig.do(rigOp{kind: opRead, pos: r.ownUnit(rng, id), n: r.unit}, where)
	case stressOpSync:
		return rig.do(rigOp{kind: opSync}, where)
	case stressOpTryFree:
		return rig.do(rigOp{kind: opTryFree, block: rng.Uint64N(stressDevSize / 4096)}, where)
	case stressOpInvalidate:
		return rig.do(rigOp{kind: opInvalidate}, where)
	case stressOpSetBlocksize:
		sd.setbs.Lock()
		defer sd.setbs.Unlock()
		return rig.do(rigOp{kind: opSetBlocksize, size: 512 << rng.IntN(r.maxBlockShift)}, where)
	}
	panic("unreachable")
}

// quiescent checks the machine between rounds, when no goroutine runs: the
// invariant checker, and, once every LRU is emptied, that no operation kept
// a reference it should have dropped (every buffer's count is 0, every
// cached folio holds exactly the page cache's reference and its ring's).
func (r *stressRig) quiescent(round int) {
	t := r.t
	require.NoError(t, r.m.Check(), "round %d", round)
	r.m.InvalidateBhLRUs(r.m.CPU(0))
	for _, sd := range r.devs {
		m := &sd.d.mapping
		for start := uint64(0); ; {
			index, f, ok := m.index.Next(start)
			if !ok {
				break
			}
			wantRef := 1
			if head := f.private; head != nil {
				wantRef++
				for bh := range head.ring(nil) {
					require.Zero(t, bh.Count(), "round %d: %s page %d: %v leaked a reference", round, sd.name, index, bh)
				}
			}
			require.Equal(t, wantRef, f.RefCount(), "round %d: %s page %d: folio references", round, sd.name, index)
			start = f.index + f.NrPages()
		}
	}
}

// verify syncs every device and compares what it stores, and what a read(2)
// through a freshly emptied page cache returns, with the oracle.
func (r *stressRig) verify() {
	t, cpu := r.t, r.m.CPU(0)
	for _, sd := range r.devs {
		require.NoError(t, sd.d.SyncBlockdev(cpu), sd.name)
		require.Equal(t, sd.want, sd.medium(t), "%s: the medium after the last sync", sd.name)
		other := uint32(1024)
		if sd.d.BlockSize() == other {
			other = 2048
		}
		require.NoError(t, sd.d.SetBlocksize(cpu, other)) // kill_bdev: the cache is dropped
		require.Zero(t, sd.d.NrPages())
		got := make([]byte, stressDevSize)
		n, err := sd.d.Read(cpu, 0, got)
		require.NoError(t, err)
		require.Equal(t, uint64(stressDevSize), n)
		require.Equal(t, sd.want, got, "%s: read(2) from the medium", sd.name)
	}
	require.NoError(t, r.m.Check())
}

// TestStress runs 8 goroutines, each driving its own CPU, over two shared
// devices (a request queue and a raid10 array): getblk, bread and modify,
// __find_get_block and its slow path, write(2), read(2), sync_blockdev,
// try_to_free_buffers, invalidate_bh_lrus and set_blocksize, drawn at random
// from seeded generators, in rounds. Between rounds — a barrier, when nothing
// runs — the invariant checker runs and no reference may have leaked; every
// read of a CPU's own data, during the run, must return the oracle's bytes;
// at the end, the media and a read through an emptied cache must equal the
// oracle. Run it under -race: it is scaled down there (and with -short) to
// stay within seconds.
func TestStress(t *testing.T) {
	// Counts only: nothing here reads the heap or GOMAXPROCS.
	t.Parallel()
	runStress(t, Config{}, 4096, 4)
}

// TestStress618 is TestStress on the 6.15–6.18 variants (Linux618): large
// folios from readahead and set_blocksize up to 64 KiB (each CPU owns
// 64 KiB units, so that a block never spans two owners), the v6.16 sleeping
// lookups and v6.18's readahead.
func TestStress618(t *testing.T) {
	// Counts only: nothing here reads the heap or GOMAXPROCS.
	t.Parallel()
	runStress(t, Linux618(Config{}), 64<<10, 8)
}

// runStress runs the stress test's seeds on cfg's kernel variants.
func runStress(t *testing.T, cfg Config, unit uint64, maxBlockShift int) {
	rounds, steps := 20, 400
	if race.Enabled || testing.Short() {
		rounds, steps = 10, 200
	}
	seeds := []uint64{20260501, 7}
	for s := range *stressSoak {
		seeds = append(seeds, uint64(1000+s))
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("seed %d: %d rounds of %d steps on each of %d CPUs", seed, rounds, steps, stressCPUs)
			r := newStressRig(t, seed, cfg, unit, maxBlockShift)
			for round := range rounds {
				var wg sync.WaitGroup
				for id := range stressCPUs {
					wg.Go(func() {
						for i := range steps {
							if !r.step(id, round, i) {
								return
							}
						}
					})
				}
				wg.Wait()
				if t.Failed() {
					t.FailNow()
				}
				r.quiescent(round)
			}
			r.verify()
			var total [stressNumOps]int
			for id := range r.ops {
				for op, n := range r.ops[id] {
					total[op] += n
				}
			}
			for op, n := range total {
				assert.NotZero(t, n, "%s never ran", stressOpNames[op])
			}
			ev := r.m.Events()
			assert.NotZero(t, ev[EvFolioFree], "no folio was ever freed")
			assert.NotZero(t, ev[EvBHFree], "no buffer ring was ever freed")
			t.Logf("operations: %v", total)
		})
	}
}

// TestReadRacingTruncate: read(2) finds a cached folio that is not uptodate
// and has buffers, and waits for its lock while a truncate (set_blocksize's
// kill_bdev) takes it out of the page cache. The kernel's filemap_read then
// looks the page up again (filemap_update_page returns AOP_TRUNCATED_PAGE) and
// reads it; the read must succeed with the device's bytes. Made
// deterministic by holding the folio lock until the reader holds its
// reference. TestStress found the failure (Read returned ErrIO), by
// set_blocksize, and by reclaim before it froze the count as
// __remove_mapping does (TestReclaimFreezesCount).
func TestReadRacingTruncate(t *testing.T) {
	m, d, disk := newDev(t, Config{CPUs: 2}, 64<<10, 512, DeviceOptions{})
	require.NoError(t, d.SetBlocksize(m.CPU(0), 1024))
	want := make([]byte, 4096)
	for i := range want {
		want[i] = byte(i*7) | 1
	}
	b := &blk.Bio{}
	b.Reset(blk.OpWrite, 8) // page 1
	b.AddVec(want, 4096)
	b.EndIO = func(b *blk.Bio) { require.NoError(t, b.Err) }
	disk.Submit(b)

	bh, err := d.Getblk(m.CPU(0), 4, 1024) // page 1 gets buffers, not read
	require.NoError(t, err)
	f := bh.Folio()
	Brelse(m.CPU(0), bh)
	m.InvalidateBhLRUs(m.CPU(0))
	require.False(t, f.Has(FolioUptodate))
	refs := f.RefCount()

	killer := m.CPU(1)
	f.lockFolio(killer)
	got := make([]byte, 4096)
	var n uint64
	var wg sync.WaitGroup
	wg.Go(func() { n, err = d.Read(m.CPU(0), 4096, got) })
	for f.RefCount() == refs { // the reader took its reference and waits for the lock
		runtime.Gosched()
	}
	d.invalidateFolio(killer, f) // truncate's work on this folio, under its lock
	d.mapping.remove(killer, f)
	f.unlockFolio()
	wg.Wait()
	require.NoError(t, err)
	assert.Equal(t, uint64(4096), n)
	assert.Equal(t, want, got)
}

// failingInsert is a page-cache index whose failed InsertOrder calls hook with the
// item first: the moment another CPU's stale lock-free reader (holding a
// pointer to a folio that was freed and is being reused) can take a
// reference on it.
type failingInsert struct {
	pageindex.Index[Folio]
	hook func(*Folio)
}

func (x failingInsert) InsertOrder(index uint64, order uint8, f *Folio) bool {
	if x.Index.InsertOrder(index, order, f) {
		return true
	}
	x.hook(f)
	return false
}

// TestFailedInsertKeepsRacingReference: a folio freed to a CPU's free list is
// reused for an insertion that loses its race (the index slot is taken); a
// lock-free reader still holding the old pointer takes a reference in that
// window (folio_try_get succeeds: the count is 2), re-checks the mapping and
// drops it: the re-check must fail, since the folio never entered the page
// cache, and every reference must survive: the reader's folio_put must not
// take the count below zero. TestStress found this as a panic ("folio
// reference count below zero") in writepages, whose dirty-tag batches hold
// such pointers.
func TestFailedInsertKeepsRacingReference(t *testing.T) {
	m, d, _ := newDev(t, Config{}, 64<<10, 512, DeviceOptions{})
	cpu := m.CPU(0)
	require.Equal(t, uint32(4096), d.BlockSize())
	var stale *Folio // the reader's pointer, kept past the folio's life
	for block := range uint64(2) {
		bh, err := d.Getblk(cpu, block, 4096)
		require.NoError(t, err)
		if block == 0 {
			stale = bh.Folio()
		}
		Brelse(cpu, bh)
	}
	// The truncate frees pages 0 and 1 in that order to cpu's free list; page
	// 1's frame is reused first, then stale.
	require.NoError(t, d.SetBlocksize(cpu, 2048))
	require.Zero(t, stale.RefCount())

	bh, err := d.Getblk(cpu, 2, 2048) // page 1 is taken: the insertion below loses
	require.NoError(t, err)
	defer Brelse(cpu, bh)
	reader := m.CPU(0)
	var got, accepted bool
	d.mapping.index = failingInsert{Index: d.mapping.index, hook: func(f *Folio) {
		if f == stale {
			got = f.tryGet(reader)
			accepted = f.mapping.Load() == &d.mapping && f.index == 1 // lookup's re-check
		}
	}}
	require.Nil(t, d.mapping.addFolio(cpu, 1, 0, fgpLock))
	require.True(t, got, "the reused folio was not the stale one")
	assert.False(t, accepted, "a lookup would take a folio that never entered the page cache")
	assert.NotPanics(t, func() {
		if stale.mapping.Load() != &d.mapping || stale.index != 1 { // the reader's re-check
			stale.put(reader)
		}
	})
	assert.Zero(t, stale.RefCount())
}

// TestReadRacingFreeBuffers: read(2) must decide how to read a folio that
// is not uptodate (buffer by buffer, or one bio without buffers) under the
// folio lock, because try_to_free_buffers (here TryToFreeBuffers, in
// TestStress reclaim) detaches the buffers under that lock and private_lock.
// Read once tested f.private before taking the lock: a data race the race
// detector reported. Run with -race.
func TestReadRacingFreeBuffers(t *testing.T) {
	if !race.Enabled {
		t.Skip("needs the race detector")
	}
	m, d, _ := newDev(t, Config{CPUs: 2, LRU: LRURemoved}, 1<<20, 512, DeviceOptions{})
	for round := range 200 {
		bs := d.BlockSize()
		bh, err := d.Getblk(m.CPU(0), 4096/uint64(bs), bs) // page 1: buffers, not uptodate
		require.NoError(t, err)
		Brelse(m.CPU(0), bh)
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Go(func() {
			for !stop.Load() {
				_ = d.TryToFreeBuffers(m.CPU(1), 1)
			}
		})
		_, err = d.Read(m.CPU(0), 4096, make([]byte, 512))
		stop.Store(true)
		wg.Wait()
		require.NoError(t, err)
		require.NoError(t, d.SetBlocksize(m.CPU(0), 1024<<(round%2))) // drop the page for the next round
	}
}

// deleteHook is a page-cache index that calls hook with the item before each
// Delete: the moment a lock-free lookup on another CPU can race with the
// removal.
type deleteHook struct {
	pageindex.Index[Folio]
	hook func(f *Folio)
}

func (x deleteHook) Delete(index uint64, f *Folio) bool {
	x.hook(f)
	return x.Index.Delete(index, f)
}

// TestReclaimFreezesCount: reclaim removes a folio only with its count
// frozen at zero (__remove_mapping's folio_ref_freeze), so a lock-free
// lookup that reaches the folio between the freeze and the index deletion
// cannot take a reference (folio_try_get fails) and looks again; nobody is
// left holding a folio reclaim freed.
func TestReclaimFreezesCount(t *testing.T) {
	m, d, _ := newDev(t, Config{PageCacheLimit: 4}, 64<<10, 512, DeviceOptions{})
	cpu, other := m.CPU(0), m.CPU(0) // one goroutine: the hook stands for the other CPU
	var raced, got int
	d.mapping.index = deleteHook{Index: d.mapping.index, hook: func(f *Folio) {
		raced++
		if f.tryGet(other) {
			got++
			f.put(other)
		}
	}}
	for block := range uint64(12) { // 12 pages through a 4-page cache
		bh, err := d.Bread(cpu, block, 4096)
		require.NoError(t, err)
		Brelse(cpu, bh)
		m.InvalidateBhLRUs(cpu) // the LRU would pin the page
	}
	require.NotZero(t, raced, "reclaim removed nothing")
	assert.Zero(t, got, "a lookup took a reference to a folio being reclaimed")
	assert.LessOrEqual(t, d.NrPages(), 4+reclaimBatch)
	require.NoError(t, m.Check())
}
