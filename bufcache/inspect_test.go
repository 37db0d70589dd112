package bufcache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInspect(t *testing.T) {
	m, d, _ := newDev(t, Config{CPUs: 2}, 1<<20, 1024, DeviceOptions{})
	cpu := m.CPU(1)
	assert.Nil(t, d.PeekFolio(0))
	assert.Zero(t, d.NrDirty())
	assert.Empty(t, m.LRUEntries(1))
	before := cpu.Events()
	bh, err := d.Bread(cpu, 5, d.BlockSize())
	require.NoError(t, err)
	MarkBufferDirty(cpu, bh)
	Brelse(cpu, bh)
	events := cpu.Events()
	f := d.PeekFolio(5 * uint64(d.BlockSize()))
	require.NotNil(t, f)
	assert.True(t, f.Has(FolioDirty))
	assert.Nil(t, d.PeekFolio(512<<10), "another page is not cached")
	assert.Equal(t, 1, d.NrDirty())
	lru := m.LRUEntries(1)
	require.Len(t, lru, 1)
	assert.Equal(t, uint64(5), lru[0].BlockNr())
	assert.Empty(t, m.LRUEntries(0), "each CPU has its own LRU")
	assert.Equal(t, events, cpu.Events(), "looking counts no event")
	assert.NotEqual(t, before, events)
	r, _, _ := newDev(t, Config{LRU: LRURemoved}, 1<<20, 1024, DeviceOptions{})
	assert.Nil(t, r.LRUEntries(0))
}
