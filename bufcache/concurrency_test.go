package bufcache

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentCPUs: several goroutines, each driving its own CPU, share one
// device. Each owns a disjoint set of blocks it writes, and all of them read,
// free and invalidate everywhere. Run under -race. At the end every block
// holds what its owner last wrote, on disk and in the cache.
func TestConcurrentCPUs(t *testing.T) {
	const cpus, perCPU, rounds = 4, 16, 300
	seed := uint64(20261130)
	t.Logf("seed %d", seed)
	m, d, disk := newDev(t, Config{CPUs: cpus}, 1<<20, 512, DeviceOptions{})
	require.NoError(t, d.SetBlocksize(m.CPU(0), 1024)) // 4 buffers per page: owners share pages

	last := make([][]byte, cpus*perCPU) // what each block's owner last wrote
	var wg sync.WaitGroup
	for id := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cpu := m.CPU(id)
			rng := rand.New(rand.NewPCG(seed, uint64(id)))
			for r := range rounds {
				k := rng.IntN(perCPU)
				block := uint64(k*cpus + id) // neighbours' blocks share a page
				switch rng.IntN(5) {
				case 0, 1:
					bh, err := d.Bread(cpu, block, 1024)
					if !assert.NoError(t, err) {
						return
					}
					LockBuffer(cpu, bh)
					buf := bh.Data()
					for i := range buf {
						buf[i] = byte(r) ^ byte(id)<<4 ^ byte(i)
					}
					last[block] = append(last[block][:0], buf...)
					MarkBufferDirty(cpu, bh)
					UnlockBuffer(cpu, bh)
					if rng.IntN(2) == 0 {
						assert.NoError(t, SyncDirtyBuffer(cpu, bh))
					}
					Brelse(cpu, bh)
				case 2: // read someone's block
					other := uint64(rng.IntN(cpus * perCPU))
					bh, err := d.Bread(cpu, other, 1024)
					if assert.NoError(t, err) {
						Brelse(cpu, bh)
					}
				case 3:
					_ = d.TryToFreeBuffers(cpu, uint64(rng.IntN(cpus*perCPU*1024/4096)))
				case 4:
					if rng.IntN(8) == 0 {
						m.InvalidateBhLRUs(cpu)
					} else {
						assert.NoError(t, d.SyncBlockdev(cpu))
					}
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, m.Check())
	cpu := m.CPU(0)
	require.NoError(t, d.SyncBlockdev(cpu))
	for block, want := range last {
		if want == nil {
			continue
		}
		got := make([]byte, 1024)
		_, err := disk.ReadAt(got, int64(block)*1024)
		require.NoError(t, err)
		require.Equal(t, want, got, "block %d on disk", block)
		bh, err := d.Bread(cpu, uint64(block), 1024)
		require.NoError(t, err)
		require.Equal(t, want, bh.Data(), "block %d in the cache", block)
		Brelse(cpu, bh)
	}
	require.NoError(t, m.Check())
}

// TestMarkDirtyDuringSync: one CPU keeps dirtying the buffers of a page while
// another writes the device back. A buffer dirtied after the writer passed it
// must leave its folio dirty (writeback clears the folio's bit before writing,
// as folio_clear_dirty_for_io does), so at the end nothing is dirty without its
// folio being dirty, and a last sync leaves no dirty buffer.
func TestMarkDirtyDuringSync(t *testing.T) {
	m, d, _ := newDev(t, Config{CPUs: 2}, 1<<20, 512, DeviceOptions{})
	require.NoError(t, d.SetBlocksize(m.CPU(0), 1024))
	var bhs []*BufferHead
	for b := range uint64(4) {
		bh, err := d.Bread(m.CPU(0), b, 1024)
		require.NoError(t, err)
		bhs = append(bhs, bh)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		cpu := m.CPU(0)
		for i := range 3000 {
			bh := bhs[i%len(bhs)]
			LockBuffer(cpu, bh)
			bh.Data()[0] = byte(i)
			MarkBufferDirty(cpu, bh)
			UnlockBuffer(cpu, bh)
		}
	}()
	go func() {
		defer wg.Done()
		for range 300 {
			assert.NoError(t, d.SyncBlockdev(m.CPU(1)))
		}
	}()
	wg.Wait()
	require.NoError(t, d.Check(), "a dirty buffer on a clean folio would be lost")
	require.NoError(t, d.SyncBlockdev(m.CPU(0)))
	for _, bh := range bhs {
		assert.False(t, bh.Has(BHDirty))
		Brelse(m.CPU(0), bh)
	}
}

// TestConcurrentBufferedWrites: several goroutines, each driving its own CPU,
// write(2) into their own pages of one device (neighbours own the adjacent
// pages) through a page cache too small for all of them, so that every CPU's
// writes reclaim, and write back, the others' folios; each reads its pages back
// now and then. Run under -race. At the end the disk holds what every owner
// last wrote. With Kswapd, the CPUs take turns driving kswapd's CPU for
// every reclaim pass instead.
func TestConcurrentBufferedWrites(t *testing.T) {
	for _, kswapd := range []bool{false, true} {
		t.Run(fmt.Sprintf("kswapd=%v", kswapd), func(t *testing.T) { concurrentBufferedWrites(t, kswapd) })
	}
}

func concurrentBufferedWrites(t *testing.T, kswapd bool) {
	const cpus, pagesPerCPU, rounds = 4, 32, 300
	seed := uint64(20261130)
	t.Logf("seed %d", seed)
	cfg := Config{CPUs: cpus, PageCacheLimit: 48, DirtyLimit: 16}
	if kswapd {
		cfg.CPUs, cfg.Kswapd, cfg.KswapdCPU = cpus+1, true, cpus
	}
	m, d, disk := newDev(t, cfg, cpus*pagesPerCPU*4096, 512, DeviceOptions{})
	require.NoError(t, d.SetBlocksize(m.CPU(0), 1024)) // partly written blocks are read first
	want := make([]byte, cpus*pagesPerCPU*4096)        // each CPU writes only its own pages of it
	var wg sync.WaitGroup
	for id := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cpu := m.CPU(id)
			rng := rand.New(rand.NewPCG(seed, uint64(id)))
			for r := range rounds {
				page := uint64(rng.IntN(pagesPerCPU)*cpus + id)
				off := uint64(rng.IntN(4096))
				data := make([]byte, 1+rng.IntN(4096-int(off))) // within the page
				for i := range data {
					data[i] = byte(r) ^ byte(id)<<5 ^ byte(i)
				}
				pos := page*4096 + off
				it, err := NewUserBuf(data, 0, 4096).Iter(0, uint64(len(data)))
				if !assert.NoError(t, err) {
					return
				}
				n, err := d.Write(cpu, pos, it)
				if !assert.NoError(t, err) || !assert.Equal(t, uint64(len(data)), n) {
					return
				}
				copy(want[pos:], data)
				switch rng.IntN(8) {
				case 0:
					got := make([]byte, 4096)
					_, err := d.Read(cpu, page*4096, got)
					assert.NoError(t, err)
					assert.Equal(t, want[page*4096:(page+1)*4096], got, "page %d read back", page)
				case 1:
					assert.NoError(t, d.SyncBlockdev(cpu))
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, d.SyncBlockdev(m.CPU(0)))
	got := make([]byte, len(want))
	_, err := disk.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.NoError(t, m.Check())
	assert.NotZero(t, m.Events()[EvFolioFree], "the small page cache was reclaimed")
	if kswapd {
		assert.NotZero(t, m.CPU(cpus).Events()[EvIndexDelete], "by kswapd")
	}
}

// TestSyncWritesWhatWasDirtiedBefore: one CPU rewrites every block of a device,
// round after round, stamping the round number; a second syncs and then checks
// that the disk holds at least the last round that was complete when its sync
// started; a third runs background writeback over the same folios, so that
// folio_clear_dirty_for_io, redirtying and the dirty→writeback tag swap race
// with the writer's setDirty. A dirty folio that lost its dirty tag (a
// setWriteback clearing it after a concurrent setDirty, say) would be missed
// by a sync and fail the check. Run under -race.
func TestSyncWritesWhatWasDirtiedBefore(t *testing.T) {
	const pages, blockSize, rounds = 48, 1024, 60 // 48 pages: several lookup batches
	m, d, disk := newDev(t, Config{CPUs: 3}, pages*4096, 512, DeviceOptions{})
	require.NoError(t, d.SetBlocksize(m.CPU(0), blockSize))
	bhs := make([]*BufferHead, pages*4096/blockSize)
	for b := range bhs {
		bh, err := d.Bread(m.CPU(0), uint64(b), blockSize)
		require.NoError(t, err)
		bhs[b] = bh
	}
	var complete atomic.Uint32 // the last round the writer finished
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		defer done.Store(true)
		cpu := m.CPU(0)
		for r := uint32(1); r <= rounds; r++ {
			for _, bh := range bhs { // the 4 buffers of a page one after the other
				LockBuffer(cpu, bh)
				binary.LittleEndian.PutUint32(bh.Data(), r)
				MarkBufferDirty(cpu, bh)
				UnlockBuffer(cpu, bh)
			}
			complete.Store(r)
		}
	})
	wg.Go(func() {
		cpu := m.CPU(1)
		stamp := make([]byte, 4)
		for !done.Load() {
			want := complete.Load()
			if !assert.NoError(t, d.SyncBlockdev(cpu)) {
				return
			}
			for b := range bhs {
				_, err := disk.ReadAt(stamp, int64(b)*blockSize)
				if !assert.NoError(t, err) {
					return
				}
				if got := binary.LittleEndian.Uint32(stamp); got < want {
					t.Errorf("block %d holds round %d after a sync that started with round %d complete", b, got, want)
					return
				}
			}
		}
	})
	wg.Go(func() {
		cpu := m.CPU(2)
		for !done.Load() {
			d.writepages(cpu, wbSyncNone)
		}
	})
	wg.Wait()
	require.NoError(t, d.Check())
	require.NoError(t, d.SyncBlockdev(m.CPU(0)))
	stamp := make([]byte, 4)
	for b, bh := range bhs {
		_, err := disk.ReadAt(stamp, int64(b)*blockSize)
		require.NoError(t, err)
		assert.Equal(t, uint32(rounds), binary.LittleEndian.Uint32(stamp), "block %d", b)
		assert.False(t, bh.Has(BHDirty), "block %d", b)
		Brelse(m.CPU(0), bh)
	}
}
