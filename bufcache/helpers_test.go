package bufcache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// newDev opens a MemDisk of size bytes and the given logical block size on a
// machine built from cfg.
func newDev(t testing.TB, cfg Config, size uint64, logical uint32, opts DeviceOptions) (*Machine, *BlockDevice, *blk.MemDisk) {
	t.Helper()
	m, err := NewMachine(cfg)
	require.NoError(t, err)
	disk, err := blk.NewMemDisk("sda", size, logical)
	require.NoError(t, err)
	d, err := m.Open(disk, opts)
	require.NoError(t, err)
	return m, d, disk
}

// newLoopQueue returns a request queue with the loop device's limits (512-byte
// logical blocks) over a memory disk of size bytes that stores the data.
func newLoopQueue(t testing.TB, size uint64) (*blk.Queue, *blk.MemDisk) {
	t.Helper()
	lim, err := blk.LoopLimitsFrom(blk.QueueAttrs{LogicalBlockSize: 512})
	require.NoError(t, err)
	mem, err := blk.NewMemDisk("loop", size, 512)
	require.NoError(t, err)
	q, err := blk.NewQueue("loop", mem, blk.Null{}, lim)
	require.NoError(t, err)
	return q, mem
}

// faultyDisk fails every bio of the selected operation (reads, writes).
type faultyDisk struct {
	*blk.MemDisk
	failRead, failWrite bool
}

func (f *faultyDisk) Submit(b *blk.Bio) {
	if (b.Op == blk.OpRead && f.failRead) || (b.Op == blk.OpWrite && f.failWrite) {
		b.Complete(blk.ErrIO)
		return
	}
	f.MemDisk.Submit(b)
}

// newFaultyDev opens a 1 MiB faultyDisk (nothing failing yet) on a machine
// built from cfg.
func newFaultyDev(t testing.TB, cfg Config) (*Machine, *BlockDevice, *faultyDisk) {
	t.Helper()
	m, err := NewMachine(cfg)
	require.NoError(t, err)
	mem, err := blk.NewMemDisk("bad", 1<<20, 512)
	require.NoError(t, err)
	disk := &faultyDisk{MemDisk: mem}
	d, err := m.Open(disk, DeviceOptions{})
	require.NoError(t, err)
	return m, d, disk
}

// ring returns the buffers of bh's folio in ring order, starting at the head.
func ring(bh *BufferHead) []*BufferHead {
	var out []*BufferHead
	for b := range bh.folio.private.ring(nil) {
		if out = append(out, b); len(out) > 1024 {
			break
		}
	}
	return out
}

// requireReturns runs fn in a goroutine and fails t with hang unless it
// returns, with no error, within limit: for a model bug that would wait
// forever (a lock its own caller holds, a loop that never ends).
func requireReturns(t *testing.T, limit time.Duration, hang string, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(limit):
		t.Fatal(hang)
	}
}
