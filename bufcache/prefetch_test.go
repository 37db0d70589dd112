package bufcache

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prefetchDev returns a 1 MiB device at 4096-byte blocks with blocks 0, 3,
// 64 and 255 read into its page cache.
func prefetchDev(t testing.TB) (*Machine, *BlockDevice) {
	t.Helper()
	m, d, _ := newDev(t, Config{CPUs: 2}, 1<<20, 512, DeviceOptions{})
	cpu := m.CPU(0)
	require.NoError(t, d.SetBlocksize(cpu, 4096))
	for _, b := range []uint64{0, 3, 64, 255} {
		bh, err := d.Bread(cpu, b, 4096)
		require.NoError(t, err)
		Brelse(cpu, bh)
	}
	return m, d
}

// checkPrefetchChangesNothing prefetches offs on d and checks that no CPU
// counted an event, the page cache holds the same folios and the machine's
// invariants hold.
func checkPrefetchChangesNothing(t *testing.T, m *Machine, d *BlockDevice, offs []uint64) {
	t.Helper()
	var before []Counters
	for i := range m.NumCPU() {
		before = append(before, m.CPU(i).Events())
	}
	folios, pages := d.NrFolios(), d.NrPages()
	d.Prefetch(offs)
	for i := range m.NumCPU() {
		assert.Equal(t, before[i], m.CPU(i).Events(), "CPU %d counted an event", i)
	}
	assert.Equal(t, folios, d.NrFolios())
	assert.Equal(t, pages, d.NrPages())
	assert.NoError(t, m.Check())
}

// TestPrefetchChangesNothing: a prefetch of cached pages, of pages not
// cached, of offsets past the device's end and of more offsets than one
// pass reads counts no event and changes no state.
func TestPrefetchChangesNothing(t *testing.T) {
	many := make([]uint64, 3*prefetchBatch+5)
	for i := range many {
		many[i] = uint64(i*7919) << 12 % (1 << 20)
	}
	for _, tc := range []struct {
		name string
		offs []uint64
	}{
		{"none", nil},
		{"cached", []uint64{0, 3 << 12, 64<<12 + 100, 255 << 12}},
		{"not cached", []uint64{1 << 12, 200 << 12}},
		{"past the end", []uint64{1 << 20, 1<<64 - 1}},
		{"several passes", many},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, d := prefetchDev(t)
			checkPrefetchChangesNothing(t, m, d, tc.offs)
		})
	}
}

// FuzzPrefetch: any offsets, 8 bytes each, change nothing.
func FuzzPrefetch(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x30, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var offs []uint64
		for ; len(b) >= 8; b = b[8:] {
			offs = append(offs, binary.LittleEndian.Uint64(b))
		}
		m, d := prefetchDev(t)
		checkPrefetchChangesNothing(t, m, d, offs)
	})
}
