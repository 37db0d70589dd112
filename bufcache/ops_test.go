package bufcache

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/enum"
)

// opKind is one operation of opRig, the random-operation interpreter that
// FuzzOps, FuzzEntryPoints and TestStress share: each decodes its own input
// (fuzzed bytes or a seeded generator) into rigOps and lets opRig.do run
// and check them.
type opKind uint8

const (
	opGetblk        opKind = iota // getblk(block, size); the buffer is held
	opBread                       // bread(block, size); the buffer is held
	opFind                        // __find_get_block(block, size); held if found
	opFindSlow                    // __find_get_block_slow(block); held if found
	opFindNonatomic               // __find_get_block_nonatomic(block, size); held if found
	opModify                      // change bytes of a held buffer and dirty it
	opRedirty                     // mark_buffer_dirty of an uptodate held buffer
	opSyncBuffer                  // sync_dirty_buffer of a held buffer
	opBrelse                      // brelse of a held buffer
	opTryFree                     // try_to_free_buffers of a page
	opSetBlocksize                // set_blocksize(size)
	opSync                        // sync_blockdev
	opInvalidate                  // invalidate_bh_lrus
	opWrite                       // write(2)
	opRead                        // read(2)
	opIter                        // an iov_iter over a user buffer, and the read-only flag
	opZeroout                     // BLKZEROOUT: truncate_bdev_range of [pos, pos+n), then zeroes on disk
)

// opKindNames names the operations in failure messages.
var opKindNames = enum.New[opKind]("op", "getblk", "bread", "find_get_block", "find_get_block_slow",
	"find_get_block_nonatomic", "modify",
	"redirty", "sync_dirty_buffer", "brelse", "try_to_free", "set_blocksize", "sync", "invalidate", "write",
	"read", "iov_iter", "zeroout")

// String returns the operation's name, e.g. "getblk".
func (k opKind) String() string { return opKindNames.String(k) }

// rigOp is one decoded operation. The fields an operation does not name
// are ignored.
type rigOp struct {
	kind  opKind
	block uint64 // getblk, bread, find, find-slow: the block; try-free: the page index
	size  uint32 // getblk, bread, find, set-blocksize: the size; iter: the user buffer's
	held  uint64 // modify, redirty, sync-buffer, brelse: which held buffer, modulo their number
	from  uint64 // modify: the first byte changed, modulo the size; iter: the offset
	n     uint64 // modify: bytes changed, 1 + n modulo the size; write, read, iter: the count
	pos   uint64 // write, read: the byte position
	seed  byte   // modify, write: the data pattern
	base  uint64 // write: the user buffer's address
	// badFrom and badLen are write's unreadable range of the user buffer
	// (badLen 0: none).
	badFrom, badLen uint64
	keep            bool // set-blocksize: keep the held buffers (else they are released first)
	flipRO          bool // iter: flip the device's read-only flag afterwards
}

// opCtx names an operation in a failure message; testify formats it only
// when a check fails.
type opCtx struct {
	where string
	o     rigOp
}

// String names the operation and lists its fields (fmt cannot call the
// String of an unexported field: kind prints as a number there).
func (c opCtx) String() string { return fmt.Sprintf("%s%v %+v", c.where, c.o.kind, c.o) }

// rigMaxData bounds the user buffers write fills with a pattern; a longer
// write(2) copies zeros.
const rigMaxData = 64 << 10

// opRig runs operations on one device through one CPU and checks every
// answer against the package documentation and an oracle.
//
// want is the oracle: what read(2) must return and, after a sync, the disk
// holds; nil on a metadata-only device. disk is the medium a sync is checked
// against (nil: not checked). With shared set, other goroutines drive other
// CPUs on the same device: only the bytes owns reports as this rig's are
// compared or changed, syncs are not checked against the medium, and
// getblk's expected error ignores rings of another size (which such a run
// must never build: its callers hold the block size still while they ask
// for it). misSized records a getblk with a size other than the block
// size: the ring it may leave behind is found by later lookups whatever size
// they ask for, as in the kernel.
type opRig struct {
	t        *testing.T
	m        *Machine
	d        *BlockDevice
	cpu      *CPU
	disk     *blk.MemDisk
	want     []byte
	held     []*BufferHead
	shared   bool
	owns     func(from, to uint64) bool // nil: every byte
	misSized bool
}

// rigMaxHeld is how many buffers a rig holds; holding another releases the
// oldest.
const rigMaxHeld = 8

// do runs o and checks its answer, reporting failures with assert (so that
// a goroutine other than the test's may call it). It returns false after a
// failed check. where prefixes the messages.
func (r *opRig) do(o rigOp, where string) bool {
	t, d, cpu := r.t, r.d, r.cpu
	c := opCtx{where, o}
	switch o.kind {
	case opGetblk, opBread:
		busy := !r.shared && r.foreignBusy(o.block, o.size)
		var bh *BufferHead
		var err error
		if o.kind == opGetblk {
			bh, err = d.Getblk(cpu, o.block, o.size)
		} else {
			bh, err = d.Bread(cpu, o.block, o.size)
		}
		if o.size != d.BlockSize() {
			r.misSized = true
		}
		if err != nil {
			want := r.getblkErr(o.block, o.size)
			switch {
			case busy:
				want = ErrBuffersBusy
			case o.size != d.BlockSize() && want == nil:
				want = ErrSizeMismatch
			}
			return assert.Nil(t, bh, c) && assert.ErrorIs(t, err, want, c)
		}
		r.hold(bh)
		ok := assert.Equal(t, o.block, bh.BlockNr(), c)
		if o.size == d.BlockSize() {
			// A block straddling the end that write(2) mapped (blkdev_get_block
			// does not check) is found by the lookup before the end is.
			ok = ok && assert.Less(t, o.block, blocksize.DivRoundUp(d.Size(), uint64(o.size)), c)
			if !r.misSized {
				ok = ok && assert.Equal(t, o.size, bh.Size(), c)
			}
		}
		return ok && r.checkBuffer(bh, c)
	case opFind, opFindSlow, opFindNonatomic:
		var bh *BufferHead
		switch o.kind {
		case opFind:
			bh = d.FindGetBlock(cpu, o.block, o.size)
		case opFindNonatomic:
			bh = d.FindGetBlockNonatomic(cpu, o.block, o.size)
		default:
			bh = d.FindGetBlockSlow(cpu, o.block)
		}
		if bh == nil {
			return true
		}
		r.hold(bh)
		return assert.Equal(t, o.block, bh.BlockNr(), c) && r.checkBuffer(bh, c)
	case opModify:
		return r.modify(o, c)
	case opRedirty:
		if bh := r.pick(o.held); bh != nil && bh.Has(BHUptodate) {
			MarkBufferDirty(cpu, bh)
		}
		return true
	case opSyncBuffer:
		bh := r.pick(o.held)
		if bh == nil {
			return true
		}
		if !assert.NoError(t, SyncDirtyBuffer(cpu, bh), c) {
			return false
		}
		if r.shared || r.disk == nil || !bh.Has(BHUptodate) || bh.Has(BHDirty) {
			return true
		}
		pos := bh.BlockNr() * uint64(bh.Size())
		got := make([]byte, bh.Size())
		_, err := r.disk.ReadAt(got, int64(pos))
		return assert.NoError(t, err, c) && sameBytes(t, r.want[pos:pos+uint64(bh.Size())], got, c, "the synced buffer on disk")
	case opBrelse:
		if len(r.held) > 0 {
			i := o.held % uint64(len(r.held))
			Brelse(cpu, r.held[i])
			r.held = append(r.held[:i], r.held[i+1:]...)
		}
		return true
	case opTryFree:
		err := d.TryToFreeBuffers(cpu, o.block)
		return err == nil || assert.True(t, errIn(err, ErrNotCached, ErrNoBuffers, ErrBuffersBusy), "%v: %v", c, err)
	case opSetBlocksize:
		return r.setBlocksize(o, c)
	case opSync:
		return assert.NoError(t, d.SyncBlockdev(cpu), c) && (r.shared || r.checkDisk(c))
	case opInvalidate:
		r.m.InvalidateBhLRUs(cpu)
		return true
	case opWrite:
		return r.write(o, c)
	case opRead:
		buf := make([]byte, o.n)
		n, err := d.Read(cpu, o.pos, buf)
		if !assert.NoError(t, err, c) {
			return false
		}
		if o.pos >= d.Size() {
			return assert.Zero(t, n, c)
		}
		if !assert.Equal(t, min(o.n, d.Size()-o.pos), n, c) {
			return false
		}
		return r.want == nil || !r.owned(o.pos, o.pos+n) || sameBytes(t, r.want[o.pos:o.pos+n], buf[:n], c, "read(2)")
	case opIter:
		size := uint64(o.size)
		it, err := NewUserBufSize(size, 0, r.m.PageSize()).Iter(o.from, o.n)
		ok := true
		if o.from > size || o.n > size-o.from {
			ok = assert.Error(t, err, c) && assert.Nil(t, it, c)
		} else {
			ok = assert.NoError(t, err, c) && assert.Equal(t, o.n, it.Count(), c)
		}
		if o.flipRO {
			d.SetReadOnly(!d.ReadOnly())
		}
		return ok
	case opZeroout:
		return r.zeroout(o, c)
	}
	panic(fmt.Sprintf("opRig: unknown %v", o.kind))
}

// zeroout models BLKZEROOUT on [o.pos, o.pos+o.n) rounded to the logical
// block size: the held buffers are released (nobody may hold buffers a
// truncation discards), the device is synced, its page cache truncated over
// the range (TruncateRange), and the range zeroed on the disk and in the
// oracle, as the ioctl then writes zeroes to the device. A read of the range
// must then return zeroes, and no folio may be left wholly inside it.
func (r *opRig) zeroout(o rigOp, c opCtx) bool {
	t, d := r.t, r.d
	r.releaseAll()
	lbs := uint64(d.LogicalBlockSize())
	start := o.pos / lbs * lbs
	end := min((o.pos+o.n+lbs-1)/lbs*lbs, d.Size())
	if !assert.NoError(t, d.SyncBlockdev(r.cpu), c) {
		return false
	}
	err := d.TruncateRange(r.cpu, start, end)
	if start >= end {
		return assert.ErrorIs(t, err, ErrInvalid, c)
	}
	if !assert.NoError(t, err, c) {
		return false
	}
	for index := start / 4096; index*4096 < end; index++ {
		if f, _ := d.mapping.index.Load(index); f != nil {
			fpos := f.index * 4096
			if !assert.False(t, fpos >= start && fpos+d.FolioSize(f) <= end, "%v: folio at %d left inside the range", c, f.index) {
				return false
			}
		}
	}
	if r.disk != nil && r.want != nil {
		b := &blk.Bio{}
		b.Reset(blk.OpWrite, start>>blk.SectorShift)
		b.AddVec(make([]byte, end-start), uint32(end-start))
		b.EndIO = func(b *blk.Bio) { assert.NoError(t, b.Err, c) }
		r.disk.Submit(b)
		clear(r.want[start:end])
	}
	return true
}

// modify changes bytes of a held buffer of this rig's, under the buffer
// lock, marks it uptodate and dirty, and updates the oracle: a buffer that
// is not uptodate is filled whole, as a filesystem fills a fresh block. The
// held buffer must still be the page cache's (no set_blocksize since it was
// taken). Nothing happens without a held buffer or on a metadata-only
// device.
func (r *opRig) modify(o rigOp, c opCtx) bool {
	bh := r.pick(o.held)
	if bh == nil || r.want == nil {
		return true
	}
	size := uint64(bh.Size())
	pos := bh.BlockNr() * size
	if !assert.True(r.t, r.owned(pos, pos+size), "%v: modifying someone else's block", c) {
		return false
	}
	LockBuffer(r.cpu, bh)
	from := o.from % size
	n := min(o.n%size+1, size-from)
	if !bh.Has(BHUptodate) {
		from, n = 0, size
	}
	data := bh.Data()
	for i := from; i < from+n; i++ {
		data[i] = o.seed ^ byte(i)
	}
	copy(r.want[pos+from:pos+from+n], data[from:from+n])
	bh.SetUptodate(r.cpu)
	MarkBufferDirty(r.cpu, bh)
	UnlockBuffer(r.cpu, bh)
	return true
}

// setBlocksize runs set_blocksize, releasing the held buffers first unless
// o.keep: a size the machine's rules refuse must fail with their error and
// change nothing; another must be taken, and when it changes the size with
// nothing held, the sync it starts with leaves the disk equal to the
// oracle and the cache empty.
func (r *opRig) setBlocksize(o rigOp, c opCtx) bool {
	t, d := r.t, r.d
	if !o.keep {
		r.releaseAll()
	}
	old := d.BlockSize()
	err := d.SetBlocksize(r.cpu, o.size)
	if verr := r.m.cfg.SetBlocksize.Validate(o.size, d.LogicalBlockSize(), r.m.PageSize()); verr != nil {
		var se *blocksize.SizeError
		return assert.ErrorAs(t, err, &se, c) && assert.Equal(t, verr.Error(), err.Error(), c) &&
			assert.Equal(t, old, d.BlockSize(), "%v: a refused set_blocksize changed the block size", c)
	}
	if !assert.NoError(t, err, c) || !assert.Equal(t, o.size, d.BlockSize(), c) {
		return false
	}
	if o.size == old || len(r.held) > 0 || r.shared {
		return true
	}
	return r.checkDisk(c) && assert.Zero(t, d.NrPages(), c)
}

// write runs one write(2) of o.n bytes at o.pos from a user buffer at
// o.base, unreadable in [o.badFrom, o.badFrom+o.badLen), and checks what it
// wrote, its error and what the iterator kept against the package's rules:
// -EPERM when read-only, nothing for an empty write, -ENOSPC at or past the
// end, a short write at an unreadable byte (-EFAULT if it is the first),
// else everything up to the end.
func (r *opRig) write(o rigOp, c opCtx) bool {
	t, d := r.t, r.d
	var u *UserBuf
	var data []byte
	if r.want != nil && o.n <= rigMaxData {
		data = make([]byte, o.n)
		for i := range data {
			data[i] = byte(i*13) ^ o.seed | 1
		}
		u = NewUserBuf(data, o.base, r.m.PageSize())
	} else {
		u = NewUserBufSize(o.n, o.base, r.m.PageSize()) // copies zeros
	}
	if o.badLen > 0 {
		u.SetUnreadable(o.badFrom, o.badLen)
	}
	it, err := u.Iter(0, o.n)
	if o.base+o.n < o.base { // past the top of the address space: the kernel's access_ok refuses it too
		return assert.Error(t, err, c)
	}
	if !assert.NoError(t, err, c) {
		return false
	}
	n, err := d.Write(r.cpu, o.pos, it)

	var want uint64
	var wantErr error
	switch limit := min(o.n, d.Size()-min(o.pos, d.Size())); {
	case d.ReadOnly():
		wantErr = ErrReadOnly
	case o.n == 0:
	case o.pos >= d.Size():
		wantErr = ErrNoSpace
	case o.badLen > 0 && o.badFrom < limit:
		want = o.badFrom
		if o.badFrom == 0 {
			wantErr = ErrFault
		}
	default:
		want = limit
	}
	ok := assert.Equal(t, want, n, c)
	if wantErr != nil {
		ok = assert.ErrorIs(t, err, wantErr, c) && ok
	} else {
		ok = assert.NoError(t, err, c) && ok
	}
	ok = assert.Equal(t, o.n-n, it.Count(), "%v: the iterator keeps what was not written", c) && ok
	if r.want != nil && n > 0 {
		if data != nil {
			copy(r.want[o.pos:], data[:n])
		} else {
			clear(r.want[o.pos : o.pos+n])
		}
	}
	return ok
}

// getblkErr is what Getblk and Bread must answer for block and size when the
// block is not already cached: nil, ErrInvalidBlockSize, ErrOutOfRange or
// ErrBeyondDevice; a size other than the block size may also give
// ErrSizeMismatch. (A cached block is found before the size is checked, as in
// the kernel.)
func (r *opRig) getblkErr(block uint64, size uint32) error {
	d := r.d
	if !blocksize.IsPowerOfTwo(size) || size < 512 || size > r.m.cfg.SetBlocksize.MaxSize(r.m.PageSize()) ||
		size%d.LogicalBlockSize() != 0 {
		return ErrInvalidBlockSize
	}
	g := blocksize.Geometry{PageShift: uint8(blocksize.Log2(r.m.PageSize())), BlkBits: uint8(blocksize.Log2(size))}
	if !g.BlockInRange(blocksize.Block(block)) {
		return ErrOutOfRange
	}
	if block >= d.Size()/uint64(size) {
		return ErrBeyondDevice
	}
	return nil
}

// foreignBusy reports whether the page that getblk(block, size) grows holds
// a ring of another size that a reference (the program's, or a CPU's bh
// LRU's) pins: getblk then writes the device back once and gives up with
// ErrBuffersBusy, where the kernel would loop until the reference is dropped
// (TestGetblkBusyForeignRing). Dirty buffers alone do not pin: the writeback
// cleans them.
func (r *opRig) foreignBusy(block uint64, size uint32) bool {
	if err := r.getblkErr(block, size); err == ErrInvalidBlockSize || err == ErrOutOfRange {
		return false
	}
	g := blocksize.Geometry{PageShift: uint8(blocksize.Log2(r.m.PageSize())), BlkBits: uint8(blocksize.Log2(size))}
	f := r.d.mapping.lookup(r.cpu, uint64(g.PageIndex(blocksize.Block(block))))
	if f == nil {
		return false
	}
	defer f.put(r.cpu)
	head := f.private
	if head == nil || head.size == size {
		return false
	}
	for bh := range head.ring(nil) {
		if bh.Count() != 0 {
			return true
		}
	}
	return false
}

// checkBuffer compares an uptodate buffer of this rig's with the oracle, up
// to the end of the device. In a shared run a buffer of another size, or
// one no longer the device's, is not compared: a racing set_blocksize
// dropped its page.
func (r *opRig) checkBuffer(bh *BufferHead, c opCtx) bool {
	d := r.d
	pos := bh.BlockNr() * uint64(bh.Size())
	if r.want == nil || !bh.Has(BHUptodate) || pos >= d.Size() {
		return true
	}
	end := min(pos+uint64(bh.Size()), d.Size())
	if !r.owned(pos, end) || r.shared && (bh.Size() != d.BlockSize() || bh.Device() != d) {
		return true
	}
	return sameBytes(r.t, r.want[pos:end], bh.Data()[:end-pos], c, fmt.Sprintf("block %d", bh.BlockNr()))
}

// checkDisk compares the disk with the oracle; call it after a sync.
func (r *opRig) checkDisk(c opCtx) bool {
	if r.want == nil || r.disk == nil {
		return true
	}
	got := make([]byte, len(r.want))
	_, err := r.disk.ReadAt(got, 0)
	return assert.NoError(r.t, err, c) && sameBytes(r.t, r.want, got, c, "the disk after a sync")
}

// owned reports whether bytes [from, to) are this rig's to change and
// compare.
func (r *opRig) owned(from, to uint64) bool { return r.owns == nil || from >= to || r.owns(from, to) }

// pick returns held buffer i modulo their number, or nil if none is held.
func (r *opRig) pick(i uint64) *BufferHead {
	if len(r.held) == 0 {
		return nil
	}
	return r.held[i%uint64(len(r.held))]
}

// hold keeps bh, releasing the oldest held buffer if rigMaxHeld are held.
func (r *opRig) hold(bh *BufferHead) {
	if len(r.held) == rigMaxHeld {
		Brelse(r.cpu, r.held[0])
		r.held = r.held[1:]
	}
	r.held = append(r.held, bh)
}

// releaseAll releases every held buffer.
func (r *opRig) releaseAll() {
	for _, bh := range r.held {
		Brelse(r.cpu, bh)
	}
	r.held = r.held[:0]
}

// errIn reports whether err wraps one of targets.
func errIn(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// sameBytes checks got against want, reporting the first difference rather
// than both slices.
func sameBytes(t assert.TestingT, want, got []byte, c opCtx, what string) bool {
	if bytes.Equal(want, got) {
		return true
	}
	i := 0
	for i < min(len(want), len(got)) && want[i] == got[i] {
		i++
	}
	return assert.Fail(t, fmt.Sprintf("%s differs from the oracle at byte %d (lengths %d and %d)", what, i, len(want), len(got)), c)
}
