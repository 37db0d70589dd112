package bufcache

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prefetchDev returns a 1 MiB device at 4096-byte blocks, on a machine of
// the given index kind, with blocks 0, 3, 64 and 255 read into its page
// cache.
func prefetchDev(t testing.TB, index IndexKind) (*Machine, *BlockDevice) {
	t.Helper()
	m, d, _ := newDev(t, Config{CPUs: 2, Index: index}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	require.NoError(t, d.SetBlocksize(cpu, 4096))
	for _, b := range []uint64{0, 3, 64, 255} {
		bh, err := d.Bread(cpu, b, 4096)
		require.NoError(t, err)
		Brelse(cpu, bh)
	}
	return m, d
}

// folioState is what of a folio HostPrefetch reads: its count and flags,
// and its spare buffer head's count and state.
type folioState struct {
	ref, spareCount int32
	flags           FolioFlag
	spareState      BHState
}

// checkPrefetchChangesNothing prefetches offs on d and checks that no CPU
// counted an event, the page cache holds the same folios, each folio's
// count, flags and spare buffer head are as they were, and the machine's
// invariants hold.
func checkPrefetchChangesNothing(t *testing.T, m *Machine, d *BlockDevice, offs []uint64) {
	t.Helper()
	var before []Counters
	for i := range m.NumCPU() {
		before = append(before, m.CPU(i).Events())
	}
	folios, pages := d.NrFolios(), d.NrPages()
	state := func() map[*Folio]folioState {
		out := map[*Folio]folioState{}
		for p := range uint64(256) {
			if f, _ := d.mapping.index.Load(p); f != nil {
				out[f] = folioState{f.ref.Load(), f.spare.count.Load(), f.Flags(), f.spare.State()}
			}
		}
		return out
	}
	was := state()
	d.HostPrefetch(offs)
	for i := range m.NumCPU() {
		assert.Equal(t, before[i], m.CPU(i).Events(), "CPU %d counted an event", i)
	}
	assert.Equal(t, folios, d.NrFolios())
	assert.Equal(t, pages, d.NrPages())
	assert.Equal(t, was, state())
	assert.NoError(t, m.Check())
}

// TestHostPrefetchChangesNothing: a prefetch of cached pages, of pages not
// cached, of offsets past the device's end and of more offsets than one
// chunk, on either index, counts no event and changes no state.
func TestHostPrefetchChangesNothing(t *testing.T) {
	many := make([]uint64, 3*hostPrefetchChunk+5)
	for i := range many {
		many[i] = uint64(i*7919) << 12 % (1 << 20)
	}
	for _, index := range []IndexKind{IndexXArray, IndexBTree} {
		for _, tc := range []struct {
			name string
			offs []uint64
		}{
			{"none", nil},
			{"cached", []uint64{0, 3 << 12, 64<<12 + 100, 255 << 12}},
			{"not cached", []uint64{1 << 12, 200 << 12}},
			{"past the end", []uint64{1 << 20, 1<<64 - 1}},
			{"several chunks", many},
		} {
			t.Run(index.String()+"/"+tc.name, func(t *testing.T) {
				m, d := prefetchDev(t, index)
				checkPrefetchChangesNothing(t, m, d, tc.offs)
			})
		}
	}
}

// TestHostPrefetchBesideWrites: on a machine shared between goroutines (no
// Config.OneGoroutine) a prefetch may run beside writes, their writeback
// and the freeing of their folios and buffers: the race detector finds
// nothing, and the machine's invariants hold after.
func TestHostPrefetchBesideWrites(t *testing.T) {
	m, d := prefetchDev(t, IndexXArray)
	offs := make([]uint64, 256)
	for i := range offs {
		offs[i] = uint64(i) << 12
	}
	var wg sync.WaitGroup
	var done atomic.Bool
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		cpu := m.CPU(1)
		for round := range 4 {
			for b := range uint64(256) {
				bh, err := d.Getblk(cpu, b, 4096)
				if !assert.NoError(t, err) {
					return
				}
				LockBuffer(cpu, bh)
				MarkBufferDirty(cpu, bh)
				UnlockBuffer(cpu, bh)
				Brelse(cpu, bh)
			}
			assert.NoError(t, d.SyncBlockdev(cpu), "round %d", round)
			m.InvalidateBhLRUs(cpu) // the LRU's references go, so the buffers can
			d.InvalidateBdev(cpu)   // be freed (zeroed) while a prefetch reads
		}
	}()
	for !done.Load() { // prefetches all the while
		d.HostPrefetch(offs)
	}
	wg.Wait()
	assert.NoError(t, m.Check())
}

// FuzzHostPrefetch: any offsets, 8 bytes each, change nothing.
func FuzzHostPrefetch(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x30, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var offs []uint64
		for ; len(b) >= 8; b = b[8:] {
			offs = append(offs, binary.LittleEndian.Uint64(b))
		}
		m, d := prefetchDev(t, IndexXArray)
		checkPrefetchChangesNothing(t, m, d, offs)
	})
}
