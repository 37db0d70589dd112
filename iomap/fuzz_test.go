package iomap

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
)

// FuzzBlkdevWrite writes n bytes at pos over a device filled with a pattern,
// with a block size, a kernel of Xu Yang's table and an EOF check chosen by
// sel, the page cache kept or dropped first, and an unreadable range in the
// user buffer. The result must match an independent oracle: -ENOSPC at or past
// the end, the write shortened to the end, stopped at the first unreadable
// byte (-EFAULT if that is the first), and the disk after sync equal to a flat
// array; the invariant checker runs throughout.
func FuzzBlkdevWrite(f *testing.F) {
	const size = 64 << 10
	f.Add(uint32(0), uint32(8192), uint8(0), uint32(0), uint16(0))
	f.Add(uint32(100), uint32(9000), uint8(0x15), uint32(4500), uint16(10))
	f.Add(uint32(size-100), uint32(300), uint8(0x22), uint32(0), uint16(0))
	f.Add(uint32(size), uint32(1), uint8(0x07), uint32(0), uint16(0))
	f.Add(uint32(3*4096+10), uint32(5), uint8(0x33), uint32(3), uint16(1))
	f.Add(uint32(4096), uint32(3*size), uint8(0x2c), uint32(40000), uint16(4096))
	f.Fuzz(func(t *testing.T, pos, n uint32, sel uint8, badOff uint32, badLen uint16) {
		bsize := uint32(512) << (sel % 4)
		drop := sel>>2&1 == 1
		k := kernels[int(sel>>3)%len(kernels)]
		opts := k.opts
		opts.EOF = EOFCheck(sel >> 5 & 1)
		cfg := bufcache.Config{InitBlocksize: blocksize.PolicyLogical, DirtyLimit: 4}
		checkBlkdevWrite(t, cfg, size, bsize, drop, opts, "kernel "+k.name, pos, n, badOff, badLen)
	})
}

// checkBlkdevWrite writes n bytes at pos (both reduced to the device of
// size bytes) with opts over a device of machine cfg at block size bsize,
// filled with a pattern and synced, its page cache dropped first if drop,
// from a user buffer unreadable from badOff for badLen bytes, and checks the
// result against the oracle: -ENOSPC at or past the end, the write
// shortened to the end, stopped at the first unreadable byte (-EFAULT if
// that is the first), the iterator keeping the rest, the disk after sync
// equal to a flat array, and the machine's invariants.
func checkBlkdevWrite(t *testing.T, cfg bufcache.Config, size uint64, bsize uint32, drop bool, opts Options, what string,
	pos, n, badOff uint32, badLen uint16) {
	t.Helper()
	p := uint64(pos) % (size + 8192)
	count := uint64(n) % (3 * size)
	m, d, disk := newDev(t, cfg, size)
	cpu := m.CPU(0)
	require.NoError(t, d.SetBlocksize(cpu, bsize))
	old := pattern(int(size), 0x5a)
	_, err := d.Write(cpu, 0, userIter(t, old))
	require.NoError(t, err)
	require.NoError(t, d.SyncBlockdev(cpu))
	if drop {
		dropCache(t, cpu, d)
	}

	data := pattern(int(count), 0xc3)
	u := bufcache.NewUserBuf(data, 0, 4096)
	bad := uint64(badOff) % (count + 1)
	u.SetUnreadable(bad, uint64(badLen))
	it, err := u.Iter(0, count)
	require.NoError(t, err)
	got, err := BlkdevWrite(cpu, d, p, it, opts)

	var want uint64
	var wantErr error
	switch limit := min(count, size-min(p, size)); {
	case count == 0:
	case p >= size:
		wantErr = bufcache.ErrNoSpace
	case badLen > 0 && bad < limit:
		want = bad
		if bad == 0 {
			wantErr = bufcache.ErrFault
		}
	default:
		want = limit
	}
	require.Equal(t, want, got, "%s, block size %d", what, bsize)
	if wantErr != nil {
		require.ErrorIs(t, err, wantErr)
	} else {
		require.NoError(t, err)
	}
	assert.Equal(t, count-got, it.Count(), "the iterator keeps what was not written")
	wantDisk := bytes.Clone(old)
	copy(wantDisk[min(p, size):], data[:got])
	require.True(t, bytes.Equal(wantDisk, onDisk(t, cpu, d, disk)), "disk differs from the oracle")
	require.NoError(t, m.Check())
}
