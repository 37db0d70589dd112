package bufcache

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestSecondSyncWaitsForTheFirst: a sync that starts after a write returned
// must not return before that data is on disk, even while another sync holds
// the folio half-written. The dirty tag stays until writeback starts (it is
// swapped for the writeback tag then), so the second sync finds the folio and
// waits for it.
func TestSecondSyncWaitsForTheFirst(t *testing.T) {
	m, d, disk := newDev(t, Config{CPUs: 3}, 1<<20, 512, DeviceOptions{})
	c0, c1, c2 := m.CPU(0), m.CPU(1), m.CPU(2)
	require.NoError(t, d.SetBlocksize(c0, 1024))
	bh, err := d.Getblk(c0, 1, 1024)
	require.NoError(t, err)
	LockBuffer(c0, bh) // someone holds block 1: the first sync will wait on it
	data := bytes.Repeat([]byte{0x5a}, 4096)
	n, err := d.Write(c0, 0, userIter(t, data))
	require.NoError(t, err)
	require.Equal(t, uint64(4096), n)
	f := bh.Folio()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); assert.NoError(t, d.SyncBlockdev(c1)) }()
	for f.Has(FolioDirty) { // the first sync has cleared the dirty bit for I/O
		runtime.Gosched()
	}
	var seen []byte
	go func() {
		defer wg.Done()
		assert.NoError(t, d.SyncBlockdev(c2))
		seen = make([]byte, 4096)
		_, err := disk.ReadAt(seen, 0)
		assert.NoError(t, err)
	}()
	time.Sleep(20 * time.Millisecond) // long enough for an early return to show
	UnlockBuffer(c0, bh)
	wg.Wait()
	assert.Equal(t, data, seen, "the second sync returned before the data was on disk")
	Brelse(c0, bh)
	require.NoError(t, m.Check())
}

// TestLastPartialBlock: on a device whose size is not a multiple of the block
// size, the block straddling the end is read and written trimmed at the end
// (guard_bio_eod).
func TestLastPartialBlock(t *testing.T) {
	m, d, disk := newDev(t, Config{Check: true}, 4*4096+512, 512, DeviceOptions{})
	cpu := m.CPU(0)
	require.NoError(t, d.SetBlocksize(cpu, 4096))
	data := bytes.Repeat([]byte{0xcd}, 4096+512)
	n, err := d.Write(cpu, 3*4096, userIter(t, data))
	require.NoError(t, err)
	require.Equal(t, uint64(len(data)), n)
	n, err = d.Write(cpu, 4*4096+100, userIter(t, []byte("tail")))
	require.NoError(t, err, "a partial write of the straddling block reads it first")
	require.Equal(t, uint64(4), n)
	copy(data[4096+100:], "tail")
	require.NoError(t, d.SyncBlockdev(cpu))
	got := make([]byte, len(data))
	_, err = disk.ReadAt(got, 3*4096)
	require.NoError(t, err)
	assert.Equal(t, data, got)
	require.NoError(t, d.SetBlocksize(cpu, 1024))
	require.NoError(t, d.SetBlocksize(cpu, 4096))
	back := make([]byte, 512)
	n, err = d.Read(cpu, 4*4096, back)
	require.NoError(t, err)
	assert.Equal(t, uint64(512), n)
	assert.Equal(t, data[4096:], back)
}

// TestWritersShareTheFlusher: two writers crossing the dirty limit drive the
// same flusher CPU one at a time (run with -race); nothing is lost.
func TestWritersShareTheFlusher(t *testing.T) {
	m, err := NewMachine(Config{CPUs: 3, DirtyLimit: 2, SeparateFlusher: true, FlusherCPU: 2})
	require.NoError(t, err)
	mem, err := blk.NewMemDisk("sda", 8<<20, 512)
	require.NoError(t, err)
	q, err := blk.NewQueue("", mem, blk.Null{}, blk.DefaultLimits(512, 512))
	require.NoError(t, err)
	d, err := m.Open(q, DeviceOptions{})
	require.NoError(t, err)
	bufs := [2][]byte{bytes.Repeat([]byte{1}, 4<<20), bytes.Repeat([]byte{2}, 4<<20)}
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := d.Write(m.CPU(w), uint64(w)<<22, userIter(t, bufs[w]))
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	require.NoError(t, d.SyncBlockdev(m.CPU(0)))
	got := make([]byte, 8<<20)
	_, err = mem.ReadAt(got, 0)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(got[:4<<20], bufs[0]) && bytes.Equal(got[4<<20:], bufs[1]))
	assert.NotZero(t, m.CPU(2).Events()[EvBioSubmit], "the flusher wrote")
}

// TestSyncWriteErrorReportedBySync: a failed synchronous buffer write is also
// reported by the next SyncBlockdev (mark_buffer_write_io_error sets the
// mapping's error), once.
func TestSyncWriteErrorReportedBySync(t *testing.T) {
	m, d, disk := newFaultyDev(t, Config{})
	cpu := m.CPU(0)
	bh, err := d.Bread(cpu, 1, 4096)
	require.NoError(t, err)
	disk.failWrite = true
	MarkBufferDirty(cpu, bh)
	assert.ErrorIs(t, SyncDirtyBuffer(cpu, bh), ErrIO)
	disk.failWrite = false
	assert.ErrorIs(t, d.SyncBlockdev(cpu), ErrIO)
	assert.NoError(t, d.SyncBlockdev(cpu))
	Brelse(cpu, bh)
}

// TestNoReclaimListWithoutLimit: without a page-cache limit nothing keeps
// folios on the reclaim list, so freed frames are not held on to.
func TestNoReclaimListWithoutLimit(t *testing.T) {
	m, d, _ := newDev(t, Config{}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	_, err := d.Write(cpu, 0, userIter(t, make([]byte, 256<<10)))
	require.NoError(t, err)
	assert.Zero(t, m.folios.len())
}

// len returns the number of the LRU's entries, stale ones included.
func (l *folioLRU) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// TestDirtyAndWritebackPages follows the pages balance_dirty_pages weighs
// (NR_FILE_DIRTY, NR_WRITEBACK, WB_DIRTIED, WB_WRITTEN) through writes,
// redirtying, writeback and truncation, on small and large folios: each
// count is the pages of the folios holding the flag, and the pages dirtied
// and written only grow.
func TestDirtyAndWritebackPages(t *testing.T) {
	type step struct {
		name                                  string
		do                                    func(t *testing.T, cpu *CPU, d *BlockDevice)
		dirty, wb, dirtiedTotal, writtenTotal int64
	}
	write := func(off, n uint64) func(t *testing.T, cpu *CPU, d *BlockDevice) {
		return func(t *testing.T, cpu *CPU, d *BlockDevice) {
			_, err := d.Write(cpu, off, userIter(t, bytes.Repeat([]byte{1}, int(n))))
			require.NoError(t, err)
		}
	}
	sync := func(t *testing.T, cpu *CPU, d *BlockDevice) { require.NoError(t, d.SyncBlockdev(cpu)) }
	blocksize := func(size uint32) func(t *testing.T, cpu *CPU, d *BlockDevice) {
		return func(t *testing.T, cpu *CPU, d *BlockDevice) { require.NoError(t, d.SetBlocksize(cpu, size)) }
	}
	for _, tc := range []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{"order-0 folios", Config{Check: true}, []step{
			{"write 3 pages", write(0, 3*4096), 3, 0, 3, 0},
			{"rewrite 1 dirty page: no new dirtying", write(4096, 4096), 3, 0, 3, 0},
			{"part of a fourth page", write(5*4096+100, 10), 4, 0, 4, 0},
			{"sync", sync, 0, 0, 4, 4},
			{"redirty 2", write(0, 2*4096), 2, 0, 6, 4},
			{"set_blocksize syncs and truncates", blocksize(1024), 0, 0, 6, 6},
		}},
		{"large folios", Linux618(Config{Check: true}), []step{
			{"one 16 KiB block: an order-2 folio", blocksize(16384), 0, 0, 0, 0},
			{"write 1 KiB of it", write(0, 1024), 4, 0, 4, 0},
			{"sync", sync, 0, 0, 4, 4},
			{"two blocks", write(16384, 32768), 8, 0, 12, 4},
			{"blocksize back to 4 KiB", blocksize(4096), 0, 0, 12, 12},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, d, _ := newDev(t, tc.cfg, 1<<20, 512, DeviceOptions{})
			cpu := m.CPU(0)
			for _, s := range tc.steps {
				s.do(t, cpu, d)
				assert.Equal(t, s.dirty, d.DirtyPages(), "%s: dirty pages", s.name)
				assert.Equal(t, s.wb, d.WritebackPages(), "%s: writeback pages", s.name)
				assert.Equal(t, s.dirtiedTotal, d.DirtiedPages(), "%s: pages dirtied", s.name)
				assert.Equal(t, s.writtenTotal, d.WrittenPages(), "%s: pages written", s.name)
				require.NoError(t, m.Check(), s.name)
			}
		})
	}
}

// balancerLog is a DirtyBalancer that records its calls: the dirty pages
// the device held at each.
type balancerLog struct {
	cpu   *CPU
	dirty []int64
}

// BalanceDirtyPages implements DirtyBalancer.
func (b *balancerLog) BalanceDirtyPages(cpu *CPU, d *BlockDevice) {
	b.cpu = cpu
	b.dirty = append(b.dirty, d.DirtyPages())
}

// TestBalancerReplacesTheDirtyLimit: with a Balancer the write path calls
// it once per page it dirtied (generic_perform_write's iterations), on the
// writer's CPU and after the page is dirty, and the DirtyLimit's stand-in
// writes nothing back.
func TestBalancerReplacesTheDirtyLimit(t *testing.T) {
	b := &balancerLog{}
	m, d, _ := newDev(t, Config{CPUs: 2, DirtyLimit: 1, Balancer: b}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(1)
	_, err := d.Write(cpu, 0, userIter(t, bytes.Repeat([]byte{3}, 4*4096)))
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3, 4}, b.dirty)
	assert.Same(t, cpu, b.cpu)
	assert.Equal(t, int64(4), d.DirtyPages(), "the stand-in's limit of 1 folio wrote nothing back")
}

// TestWriteBackground: a background pass writes at most the pages asked
// (0: no limit), on the CPU given, range-cyclic: from where the last pass
// stopped to the device's end, without wrapping round within a pass (a
// page redirtied behind it waits for the next pass, which starts again
// from the beginning).
func TestWriteBackground(t *testing.T) {
	m, d, _ := newDev(t, Config{CPUs: 2, Check: true}, 1<<20, 512, DeviceOptions{})
	writer, flusher := m.CPU(0), m.CPU(1)
	write := func(off, n int) {
		_, err := d.Write(writer, uint64(off), userIter(t, bytes.Repeat([]byte{4}, n)))
		require.NoError(t, err)
	}
	write(0, 10*4096)
	for _, tc := range []struct {
		name             string
		redirty          bool
		ask, wrote, left int
	}{
		{"pages 0-2", false, 3, 3, 7},
		{"page 0 again, behind the pass", true, 0, 7, 1},
		{"the next pass from the start", false, 0, 1, 0},
		{"nothing dirty", false, 5, 0, 0},
	} {
		if tc.redirty {
			write(0, 4096)
		}
		before := flusher.Events()[EvBioSubmit]
		assert.Equal(t, tc.wrote, d.WriteBackground(flusher, tc.ask), tc.name)
		assert.Equal(t, int64(tc.left), d.DirtyPages(), tc.name)
		assert.Equal(t, uint64(tc.wrote), flusher.Events()[EvBioSubmit]-before, "%s: a bio per 4 KiB buffer, on the flusher", tc.name)
	}
	assert.Zero(t, writer.Events()[EvBioSubmit])
	require.NoError(t, m.Check())
}
