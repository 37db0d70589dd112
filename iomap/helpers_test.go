package iomap

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// kernels are the columns of Xu Yang's table (the iomap-vs-buffer_head thread).
var kernels = []struct {
	name string
	opts Options
}{
	{"6.6", Options{}},
	{"6.6-revert", Options{Path: PathBufferHead}},
	{"6.6-fix", Options{Chunk: ChunkMappingMaxFolioSize}},
}

// newDev opens a MemDisk of size bytes with 512-byte logical blocks on a
// machine built from cfg, with the invariant checker on if only one CPU can
// run (the checker may see transient states of concurrent operations).
func newDev(t testing.TB, cfg bufcache.Config, size uint64) (*bufcache.Machine, *bufcache.BlockDevice, *blk.MemDisk) {
	t.Helper()
	cfg.Check = cfg.CPUs <= 1
	m, err := bufcache.NewMachine(cfg)
	require.NoError(t, err)
	disk, err := blk.NewMemDisk("sda", size, 512)
	require.NoError(t, err)
	d, err := m.Open(disk, bufcache.DeviceOptions{})
	require.NoError(t, err)
	return m, d, disk
}

// userIter returns an iterator over all of data, at a page-aligned address.
func userIter(t testing.TB, data []byte) *bufcache.IovIter {
	t.Helper()
	it, err := bufcache.NewUserBuf(data, 0, 4096).Iter(0, uint64(len(data)))
	require.NoError(t, err)
	return it
}

// pattern returns n bytes that differ from their neighbours and from zero.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed | 1
	}
	return b
}

// onDisk syncs d and returns the whole disk.
func onDisk(t testing.TB, cpu *bufcache.CPU, d *bufcache.BlockDevice, disk *blk.MemDisk) []byte {
	t.Helper()
	require.NoError(t, d.SyncBlockdev(cpu))
	got := make([]byte, d.Size())
	_, err := disk.ReadAt(got, 0)
	require.NoError(t, err)
	return got
}

// dropCache empties d's page cache (set_blocksize's kill_bdev) after a sync,
// so that the next write finds nothing cached.
func dropCache(t testing.TB, cpu *bufcache.CPU, d *bufcache.BlockDevice) {
	t.Helper()
	bs := d.BlockSize()
	other := uint32(1024)
	if bs == other {
		other = 2048
	}
	require.NoError(t, d.SetBlocksize(cpu, other))
	require.NoError(t, d.SetBlocksize(cpu, bs))
}
