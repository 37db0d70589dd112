package bufcache

import (
	"fmt"
	"iter"
	"runtime"
	"sync/atomic"

	"github.com/bhsim/bhsim/internal/conc"
	"github.com/bhsim/bhsim/internal/enum"
)

// BHState is a buffer_head state bit set (enum bh_state_bits, in the kernel's
// order).
type BHState uint32

// The buffer_head state bits.
const (
	// BHUptodate: the buffer holds valid data.
	BHUptodate BHState = 1 << iota
	// BHDirty: the buffer must be written back.
	BHDirty
	// BHLock: the buffer is locked (I/O in flight, or a lock_buffer user).
	BHLock
	// BHReq: the buffer has been submitted for I/O at least once.
	BHReq
	// BHMapped: b_bdev and b_blocknr are valid.
	BHMapped
	// BHNew: get_block just allocated the block (never set for block devices).
	BHNew
	// BHAsyncRead: an async read (end_buffer_async_read) is under way.
	BHAsyncRead
	// BHAsyncWrite: an async write (end_buffer_async_write) is under way.
	BHAsyncWrite
	// BHDelay: delayed allocation (filesystems only).
	BHDelay
	// BHBoundary: the next block is discontiguous.
	BHBoundary
	// BHWriteEIO: an I/O error happened on write.
	BHWriteEIO
	// BHUnwritten: allocated on disk but not written (filesystems only).
	BHUnwritten
	// BHQuiet: do not print I/O error messages.
	BHQuiet
	// BHMeta: the buffer holds metadata.
	BHMeta
	// BHPrio: submit with REQ_PRIO.
	BHPrio
	// BHDeferCompletion: defer AIO completion to a workqueue.
	BHDeferCompletion
)

// bhStateNames names the state bits for String, in bit order.
var bhStateNames = enum.NewFlags[BHState]("uptodate", "dirty", "lock", "req", "mapped", "new", "async_read",
	"async_write", "delay", "boundary", "write_eio", "unwritten", "quiet", "meta", "prio", "defer_completion")

// String lists the set bits, e.g. "uptodate|mapped" ("0" for none; bits
// without a name in hexadecimal).
func (s BHState) String() string { return bhStateNames.String(s) }

// NoBlock is the b_blocknr of a buffer head that was never mapped (the kernel's −1).
const NoBlock = ^uint64(0)

// endIO names a buffer's b_end_io handler; a small enum instead of a function
// pointer keeps buffer heads comparable and the handlers in one switch.
type endIO uint8

const (
	endNone endIO = iota
	endReadSync
	endWriteSync
	endAsyncWrite
	endAsyncRead
)

// BufferHead models struct buffer_head: the state of one block-sized piece of a
// page-cache folio, linked to the other buffers of the folio by the b_this_page
// ring.
//
// Reading fields: BlockNr, Size, Device and the ring are stable while the caller
// holds a reference (from Getblk, Bread, FindGetBlock, ...) and the buffer is
// mapped. Data may be read or written by the holder; lock the buffer
// (LockBuffer) if another goroutine may write it back at the same time.
type BufferHead struct {
	state    conc.Bits[BHState]
	count    conc.Int32
	thisPage *BufferHead
	folio    *Folio
	blocknr  uint64 // b_blocknr: see BlockNr
	size     uint32
	offset   uint32
	bdev     conc.Pointer[BlockDevice] // read without locks by LRU hits
	endIO    endIO
}

// State returns the state bits.
func (bh *BufferHead) State() BHState { return bh.state.Load() }

// Has reports whether every bit of s is set.
func (bh *BufferHead) Has(s BHState) bool { return bh.state.Has(s) }

// BlockNr returns b_blocknr, in units of Size, or NoBlock if never mapped.
func (bh *BufferHead) BlockNr() uint64 {
	if bh.state.Confined() {
		return bh.blocknr
	}
	return atomic.LoadUint64(&bh.blocknr)
}

// setBlockNr sets b_blocknr (map_bh). Lock-free lookups read it while
// truncation and write_begin unmap and remap a buffer (the kernel's plain
// field is read the same way, without the folio lock map_bh runs under), so
// it is an atomic load and store unless the buffer is confined, as its state
// and count are. A plain uint64 keeps a buffer head in one 64-byte line.
func (bh *BufferHead) setBlockNr(block uint64) {
	if bh.state.Confined() {
		bh.blocknr = block
		return
	}
	atomic.StoreUint64(&bh.blocknr, block)
}

// Size returns b_size in bytes.
func (bh *BufferHead) Size() uint32 { return bh.size }

// Offset returns the buffer's byte offset inside its folio.
func (bh *BufferHead) Offset() uint32 { return bh.offset }

// Count returns b_count: holders plus the CPUs whose LRU holds the buffer.
func (bh *BufferHead) Count() int { return int(bh.count.Load()) }

// Device returns b_bdev (nil until mapped, and again once discarded).
func (bh *BufferHead) Device() *BlockDevice { return bh.bdev.Load() }

// Folio returns the folio the buffer belongs to (b_folio).
func (bh *BufferHead) Folio() *Folio { return bh.folio }

// Next returns b_this_page: the next buffer of the same folio. Once the ring is
// attached, following Next from any buffer returns to it.
func (bh *BufferHead) Next() *BufferHead { return bh.thisPage }

// ring returns an iterator over the b_this_page ring from bh: bh, its
// successor, and so on until the walk comes back to bh. A nil bh yields
// nothing, so f.private.ring walks a folio's buffers if it has any.
//
// Each buffer yielded counts one EvRingWalk on cpu before the loop body
// runs, so a loop that stops early has counted exactly the buffers it
// looked at; with a nil cpu the walk is not counted (the invariant checker,
// and walks the model does not price). The successor is read before the
// body runs: the body may free the buffer it is given (drop_buffers). The
// caller keeps the ring stable (folio lock, private_lock, or buffers under
// writeback that only their completions touch). O(buffers walked); inlined
// into its range loop, as every caller's is, it allocates nothing and costs
// what the open-coded loop did.
func (bh *BufferHead) ring(cpu *CPU) iter.Seq[*BufferHead] {
	return func(yield func(*BufferHead) bool) {
		if bh == nil {
			return
		}
		for b := bh; ; {
			next := b.thisPage
			if cpu != nil {
				cpu.count(EvRingWalk)
			}
			if !yield(b) || next == bh {
				return
			}
			b = next
		}
	}
}

// find returns the first buffer of the ring walk from bh (ring) for which
// stop reports true, or nil if none does. It counts as ring does: the
// buffers it looked at.
func (bh *BufferHead) find(cpu *CPU, stop func(*BufferHead) bool) *BufferHead {
	if bh == nil {
		return nil
	}
	for b := bh; ; {
		if cpu != nil {
			cpu.count(EvRingWalk)
		}
		if stop(b) {
			return b
		}
		if b = b.thisPage; b == bh {
			return nil
		}
	}
}

// Data returns the buffer's bytes (b_data, Size bytes), or nil on a metadata-only
// device.
func (bh *BufferHead) Data() []byte {
	if bh.folio.data == nil {
		return nil
	}
	return bh.folio.bytes()[bh.offset : bh.offset+bh.size : bh.offset+bh.size]
}

// SetUptodate models set_buffer_uptodate: the caller filled the whole
// buffer. It counts an EvBHBit on cpu as setBit does.
func (bh *BufferHead) SetUptodate(cpu *CPU) { bh.setBit(cpu, BHUptodate) }

// setBit models a set_buffer_*() of include/linux/buffer_head.h's
// BUFFER_FNS: an atomic set_bit of one state bit, one EvBHBit — skipped,
// from v4.18 (every BitOps but BitOpsBlind), when the bit is already set.
func (bh *BufferHead) setBit(cpu *CPU, bit BHState) {
	if !cpu.m.cfg.BitOps.setWrites(bh.Has(bit)) {
		return
	}
	bh.state.Set(bit)
	cpu.count(EvBHBit)
}

// clearBit models a clear_buffer_*(): an atomic clear_bit, one EvBHBit
// whether or not the bit was set.
func (bh *BufferHead) clearBit(cpu *CPU, bit BHState) {
	bh.state.Clear(bit)
	cpu.count(EvBHBit)
}

// String describes the buffer like the kernel's diagnostics do.
func (bh *BufferHead) String() string {
	return fmt.Sprintf("bh{block=%d size=%d offset=%d count=%d state=%s}",
		int64(bh.BlockNr()), bh.size, bh.offset, bh.count.Load(), bh.State())
}

// get models get_bh.
func (bh *BufferHead) get(cpu *CPU) {
	cpu.count(EvBHGet)
	bh.count.Add(1)
}

// reset zeroes a freed buffer head for reuse.
func (bh *BufferHead) reset() { *bh = BufferHead{} }

// Brelse models brelse/__brelse: drop a reference taken by Getblk, Bread or
// FindGetBlock. A nil bh is ignored. Releasing a buffer whose count is already
// zero only warns, as in the kernel ("VFS: brelse: Trying to free free buffer"):
// it counts EvWarning and changes nothing.
func Brelse(cpu *CPU, bh *BufferHead) {
	if bh == nil {
		return
	}
	for {
		n := bh.count.Load()
		if n <= 0 {
			cpu.count(EvWarning)
			return
		}
		if bh.count.CompareAndSwap(n, n-1) {
			cpu.count(EvBHPut)
			return
		}
	}
}

// LockBuffer models lock_buffer: wait until the buffer is unlocked, then lock it.
// Before it waits it flushes the CPU's plug, as io_schedule does.
func LockBuffer(cpu *CPU, bh *BufferHead) {
	cpu.count(EvBHLock)
	if !bh.state.TestAndSet(BHLock) {
		return
	}
	cpu.plug.Wait()
	for bh.state.TestAndSet(BHLock) {
		runtime.Gosched()
	}
}

// UnlockBuffer models unlock_buffer. Unlocking an unlocked buffer is a caller
// bug the kernel does not check; the model counts EvWarning for it.
func UnlockBuffer(cpu *CPU, bh *BufferHead) {
	if !bh.state.TestAndClear(BHLock) {
		cpu.count(EvWarning)
	}
}

// waitOnBuffer models wait_on_buffer: wait for I/O on a buffer to finish.
// It flushes the CPU's plug first, as io_schedule does.
func waitOnBuffer(cpu *CPU, bh *BufferHead) {
	if !bh.Has(BHLock) {
		return
	}
	cpu.plug.Wait()
	for bh.Has(BHLock) {
		runtime.Gosched()
	}
}
