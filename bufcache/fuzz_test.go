package bufcache

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/pageindex"
)

// opsModel drives a device with decoded operations and keeps the oracle: a flat
// byte array of what the device's contents must be once everything dirty is
// synced. Writes go through buffers and are marked dirty at once, as a
// filesystem does, so the oracle changes exactly when a buffer is dirtied.
type opsModel struct {
	t    *testing.T
	m    *Machine
	d    *BlockDevice
	disk *blk.MemDisk
	cpu  *CPU
	want []byte
	held []*BufferHead
}

const fuzzDevSize = 64 << 10

func (o *opsModel) blocks() uint64 { return fuzzDevSize / uint64(o.d.BlockSize()) }

// step applies one operation encoded by (op, a, b).
func (o *opsModel) step(op, a, b byte) {
	t, d, cpu := o.t, o.d, o.cpu
	size := d.BlockSize()
	switch op % 13 {
	case 0, 1: // getblk or bread a block, and hold it
		if len(o.held) >= 8 {
			o.release(int(a))
			return
		}
		block := uint64(a) % (o.blocks() + 2) // sometimes past the end
		var bh *BufferHead
		var err error
		if op%10 == 0 {
			bh, err = d.Getblk(cpu, block, size)
		} else {
			bh, err = d.Bread(cpu, block, size)
		}
		if block >= o.blocks() {
			require.ErrorIs(t, err, ErrBeyondDevice)
			return
		}
		require.NoError(t, err)
		require.Equal(t, block, bh.BlockNr())
		if bh.Has(BHUptodate) {
			o.checkData(bh)
		}
		o.held = append(o.held, bh)
	case 2: // write into a held buffer and mark it dirty
		bh := o.pick(a)
		if bh == nil {
			return
		}
		LockBuffer(cpu, bh)
		data := bh.Data()
		from, n := uint32(b)%size, uint32(a)%size+1
		if !bh.Has(BHUptodate) { // a fresh block is filled whole
			from, n = 0, size
		}
		n = min(n, size-from)
		for i := from; i < from+n; i++ {
			data[i] = a ^ b ^ byte(i)
		}
		bh.SetUptodate()
		MarkBufferDirty(cpu, bh)
		UnlockBuffer(cpu, bh)
		pos := bh.BlockNr() * uint64(size)
		copy(o.want[pos:pos+uint64(size)], data)
	case 3: // re-dirty an uptodate held buffer (content unchanged)
		if bh := o.pick(a); bh != nil && bh.Has(BHUptodate) {
			MarkBufferDirty(cpu, bh)
		}
	case 4: // sync one held buffer
		if bh := o.pick(a); bh != nil {
			require.NoError(t, SyncDirtyBuffer(cpu, bh))
			pos := int64(bh.BlockNr()) * int64(size)
			got := make([]byte, size)
			_, err := o.disk.ReadAt(got, pos)
			require.NoError(t, err)
			if bh.Has(BHUptodate) && !bh.Has(BHDirty) {
				require.Equal(t, o.want[pos:pos+int64(size)], got, "synced buffer on disk")
			}
		}
	case 5:
		o.release(int(a))
	case 6: // reclaim tries to free a page's buffers
		err := d.TryToFreeBuffers(cpu, uint64(a)%(fuzzDevSize/4096))
		if err != nil {
			require.Truef(t, errors.Is(err, ErrNotCached) || errors.Is(err, ErrNoBuffers) ||
				errors.Is(err, ErrBuffersBusy), "unexpected error %v", err)
		}
	case 7: // change the block size, as a mount would: nobody holds buffers
		for len(o.held) > 0 {
			o.release(0)
		}
		newSize := uint32(512) << (a % 4)
		require.NoError(t, d.SetBlocksize(cpu, newSize))
		require.Equal(t, newSize, d.BlockSize())
		if newSize != size { // a change syncs everything first, then drops the cache
			o.checkDisk()
			require.Zero(t, d.NrPages())
		}
	case 8:
		require.NoError(t, d.SyncBlockdev(cpu))
		o.checkDisk()
	case 9:
		o.m.InvalidateBhLRUs(cpu)
	case 12: // a buffered read(2): the cache's view is the oracle's
		pos := (uint64(a)<<8 | uint64(b)) * 53 % (fuzzDevSize + 512)
		buf := make([]byte, uint64(b)*41+1)
		n, err := d.Read(cpu, pos, buf)
		require.NoError(t, err)
		if pos < fuzzDevSize {
			require.Equal(t, o.want[pos:pos+n], buf[:n])
		}
	case 10, 11: // a buffered write(2) through the device node
		pos := (uint64(a)<<8 | uint64(b)) * 61 % (fuzzDevSize + 512)
		n := uint64(b)*37 + uint64(op)
		data := make([]byte, n)
		for i := range data {
			data[i] = a + byte(i)
		}
		it, err := NewUserBuf(data, 0, 4096).Iter(0, n)
		require.NoError(t, err)
		got, err := d.Write(cpu, pos, it)
		if pos >= fuzzDevSize {
			require.ErrorIs(t, err, ErrNoSpace)
			return
		}
		require.NoError(t, err)
		require.Equal(t, min(n, fuzzDevSize-pos), got)
		copy(o.want[pos:], data[:got])
	}
}

func (o *opsModel) pick(a byte) *BufferHead {
	if len(o.held) == 0 {
		return nil
	}
	return o.held[int(a)%len(o.held)]
}

func (o *opsModel) release(i int) {
	if len(o.held) == 0 {
		return
	}
	i %= len(o.held)
	Brelse(o.cpu, o.held[i])
	o.held = append(o.held[:i], o.held[i+1:]...)
}

func (o *opsModel) checkData(bh *BufferHead) {
	pos := bh.BlockNr() * uint64(bh.Size())
	require.Equal(o.t, o.want[pos:pos+uint64(bh.Size())], bh.Data(), "block %d", bh.BlockNr())
}

func (o *opsModel) checkDisk() {
	got := make([]byte, fuzzDevSize)
	_, err := o.disk.ReadAt(got, 0)
	require.NoError(o.t, err)
	require.Equal(o.t, o.want, got, "disk after sync")
}

// FuzzOps runs random sequences of getblk / bread / modify / mark dirty / sync
// / brelse / try_to_free / set_blocksize / invalidate / write(2) / read(2) on a small device with the
// invariant checker on, against a flat byte-array oracle: after every sync the
// disk holds exactly what was written, and every uptodate buffer read holds the
// latest data.
func FuzzOps(f *testing.F) {
	f.Add([]byte{1, 3, 0, 2, 0, 7, 4, 0, 0, 8, 0, 0}, false, false)
	f.Add([]byte{7, 0, 0, 1, 9, 0, 2, 1, 3, 5, 0, 0, 6, 2, 0, 8, 0, 0, 7, 3, 0, 1, 9, 0}, true, true)
	f.Add([]byte{0, 15, 0, 2, 0, 0, 3, 0, 0, 6, 3, 0, 9, 0, 0, 6, 3, 0, 8, 0, 0}, true, false)
	f.Fuzz(func(t *testing.T, ops []byte, circular, btree bool) {
		cfg := Config{CPUs: 1, Check: true, DirtyLimit: 4}
		if circular {
			cfg.Alloc = AllocCircular
		}
		if btree {
			cfg.Index = pageindex.KindBTree
		}
		m, d, disk := newDev(t, cfg, fuzzDevSize, 512, DeviceOptions{})
		o := &opsModel{t: t, m: m, d: d, disk: disk, cpu: m.CPU(0), want: make([]byte, fuzzDevSize)}
		for i := 0; i+2 < len(ops) && i < 3*200; i += 3 {
			o.step(ops[i], ops[i+1], ops[i+2])
		}
		for len(o.held) > 0 {
			o.release(0)
		}
		require.NoError(t, d.SyncBlockdev(o.cpu))
		o.checkDisk()
		assert.NoError(t, m.Check())
	})
}
