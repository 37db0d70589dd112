package bufcache_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/race"
	"github.com/bhsim/bhsim/iomap"
)

// footprint writes total bytes in writes of bs bytes at block size bsize to a
// metadata-only 1 TiB device of a 6.18 machine and returns the heap per
// cached page (Go heap after a collection, as workload.FootprintOf measures it)
// and the folios cached.
func footprint(t *testing.T, bsize uint32, bs, total uint64) (float64, int) {
	t.Helper()
	m, err := bufcache.NewMachine(bufcache.Linux618(bufcache.Config{}))
	require.NoError(t, err)
	disk, err := blk.NewMemDisk("tb", 1<<40, 512)
	require.NoError(t, err)
	d, err := m.AddDisk(disk, bufcache.DeviceOptions{MetadataOnly: true})
	require.NoError(t, err)
	cpu := m.CPU(0)
	f, err := d.Open(cpu, bufcache.ORdWr)
	require.NoError(t, err)
	require.NoError(t, f.SetBlocksize(cpu, int(bsize)))
	buf := bufcache.NewUserBufSize(bs, 0, 4096)
	before := liveHeap()
	for pos := uint64(0); pos < total; pos += bs {
		it, err := buf.Iter(0, bs)
		require.NoError(t, err)
		n, err := iomap.BlkdevWrite(cpu, d, pos, it, iomap.Linux618)
		require.NoError(t, err)
		require.Equal(t, bs, n)
	}
	require.NoError(t, f.Fsync(cpu)) // clean, as a cache after writeback holds it
	after := liveHeap()
	pages := d.NrPages()
	require.Equal(t, int(total>>12), pages)
	folios := d.NrFolios()
	runtime.KeepAlive(f)
	return float64(int64(after)-int64(before)) / float64(pages), folios
}

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestFootprint64K is the memory bound: with 64 KiB blocks on a
// 1 TiB metadata-only device, 1 GiB written (dd's 4 KiB writes, each 64 KiB
// block one order-4 folio with one buffer) costs less than twice the bytes
// per cached page of the 4 KiB case (order-0 folios with one buffer each,
// what workload.FootprintOf measures). Large folios make it far less: one
// folio and one buffer head per 16 pages.
func TestFootprint64K(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("measures 1 GiB of cached pages")
	}
	const total = 1 << 30
	per4K, folios4K := footprint(t, 4096, 4096, total)
	per64K, folios64K := footprint(t, 65536, 4096, total)
	t.Logf("bytes per cached page: 4 KiB blocks %.1f (%d folios), 64 KiB blocks %.1f (%d folios of order 4)",
		per4K, folios4K, per64K, folios64K)
	assert.Equal(t, total>>12, folios4K)
	assert.Equal(t, total>>16, folios64K)
	assert.Less(t, per64K, 2*per4K)
	perBig, foliosBig := footprint(t, 4096, 1<<20, total)
	t.Logf("bytes per cached page: 4 KiB blocks, 1 MiB writes %.1f (%d folios of order 8)", perBig, foliosBig)
}
