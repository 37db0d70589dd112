package bufcache

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/bhsim/bhsim/internal/enum"
)

// OpenFlags are the open(2) flags of a File that the block device looks at.
type OpenFlags uint8

const (
	// OpenRead is FMODE_READ: O_RDONLY or O_RDWR.
	OpenRead OpenFlags = 1 << iota
	// OpenWrite is FMODE_WRITE: O_WRONLY or O_RDWR.
	OpenWrite
	// OpenExcl is O_EXCL: the File holds the device exclusively
	// (BLK_OPEN_EXCL, the file as holder).
	OpenExcl
)

// The access modes, as open(2) spells them.
const (
	ORdOnly = OpenRead
	OWrOnly = OpenWrite
	ORdWr   = OpenRead | OpenWrite
)

// openFlagNames names the flags for String.
var openFlagNames = enum.NewFlags[OpenFlags]("read", "write", "excl")

// String lists the flags, e.g. "read|write|excl".
func (f OpenFlags) String() string { return openFlagNames.String(f) }

// WriteIterFunc is the buffered write of blkdev_write_iter: write from it at
// byte position pos of d, after the entry's checks (read-only, empty,
// position at or past the end, shortening to the end), returning the bytes
// written. BlockDevice.Write (generic_perform_write through buffer heads) is
// one; package iomap's Writer returns the iomap one of v6.6+.
type WriteIterFunc func(cpu *CPU, d *BlockDevice, pos uint64, it *IovIter) (uint64, error)

// openers is the device's open state: bd_openers and the exclusive holder
// (bd_holder), under bd_disk->open_mutex.
type openers struct {
	mu     sync.Mutex
	n      int
	holder *File
}

// File models an open file description of the block device node (struct
// file with its block_device's f_mapping): the access mode, whether it holds
// the device exclusively, its sample of the mapping's writeback errors
// (f_wb_err) and its readahead state (f_ra). A File is for one goroutine at a
// time, as a descriptor used by one thread; different Files of one device may
// be used concurrently.
type File struct {
	d      *BlockDevice
	flags  OpenFlags
	wbErr  uint32 // f_wb_err: the mapping's errseq as this file last saw it
	ra     raState
	closed atomic.Bool
}

// Open models open(2) of the block device node (blkdev_open → bdev_open):
// with OpenExcl the File claims the device, which fails with ErrBusy
// (-EBUSY) while another File holds it; the first opener of the device
// (bd_openers 0) runs set_init_blocksize, so a block size set by BLKBSZSET
// before the last close is gone; the File samples the mapping's writeback
// errors (file_sample_wb_err: an error nobody has seen yet will be reported
// to it too) and starts with no readahead window. A device marked read-only
// may be opened for writing (6.18 allows it; writes fail with EPERM). flags
// must ask for reading, writing or both (ErrInvalid otherwise). An open with
// valid flags counts EvFileOpen on cpu, even one refused with ErrBusy (the
// kernel has walked the path and made the file by then; it frees that file
// without a release). O(1).
func (d *BlockDevice) Open(cpu *CPU, flags OpenFlags) (*File, error) {
	if flags&ORdWr == 0 || flags&^(ORdWr|OpenExcl) != 0 {
		return nil, fmt.Errorf("%w: open %s with flags %v", ErrInvalid, d.Name(), flags)
	}
	f := &File{d: d, flags: flags}
	o := &d.opens
	o.mu.Lock()
	defer o.mu.Unlock()
	cpu.count(EvFileOpen) // a refused claim has walked the path and made the file too
	if flags&OpenExcl != 0 && o.holder != nil {
		return nil, fmt.Errorf("%w: %s is held exclusively", ErrBusy, d.Name())
	}
	if o.n == 0 {
		d.setInitBlocksize()
	}
	o.n++
	if flags&OpenExcl != 0 {
		o.holder = f
	}
	f.wbErr = d.mapping.wbErr.sample()
	f.ra.init()
	return f, nil
}

// Openers returns bd_openers: Files open on d, plus one for a device from
// Machine.Open.
func (d *BlockDevice) Openers() int {
	d.opens.mu.Lock()
	defer d.opens.mu.Unlock()
	return d.opens.n
}

// Device returns the block device f is open on.
func (f *File) Device() *BlockDevice { return f.d }

// Flags returns the flags f was opened with.
func (f *File) Flags() OpenFlags { return f.flags }

// use returns ErrBadFile unless f is open and has every access mode of need.
func (f *File) use(op string, need OpenFlags) error {
	switch {
	case f.closed.Load():
		return fmt.Errorf("%w: %s on a closed file of %s", ErrBadFile, op, f.d.Name())
	case f.flags&need != need:
		return fmt.Errorf("%w: %s on %s opened %v", ErrBadFile, op, f.d.Name(), f.flags)
	}
	return nil
}

// Close models the last fput of the File (blkdev_release → bdev_release):
// an exclusive File gives up its claim; the last opener of the device
// (bd_openers dropping to 0, blkdev_put_whole → blkdev_flush_mapping) writes
// the device back (sync_blockdev: no flush request, errors dropped) and
// throws its page cache away (kill_bdev), so that the next open starts from
// the disk and from set_init_blocksize's block size. It counts EvFileRelease
// on cpu. Errors: ErrBadFile if f is already closed.
func (f *File) Close(cpu *CPU) error {
	if f.closed.Swap(true) {
		return fmt.Errorf("%w: close of a closed file of %s", ErrBadFile, f.d.Name())
	}
	cpu.count(EvFileRelease)
	d := f.d
	o := &d.opens
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.holder == f {
		o.holder = nil
	}
	if o.n--; o.n == 0 {
		_ = d.SyncBlockdev(cpu)
		d.killBdev(cpu)
		d.debugCheck()
	}
	return nil
}

// Pwrite models pwrite(2) on the block device node: vfs_write's mode check
// (ErrBadFile unless open for writing), its fixed part (EvRWCall), then
// blkdev_write_iter with the
// machine's write path (Config.WriteIter; nil is BlockDevice.Write). Errors:
// ErrBadFile; those of the write path (ErrReadOnly, -EPERM, on a read-only
// device; ErrNoSpace at or past the end; ErrFault; ErrIO when a block could
// not be read first).
func (f *File) Pwrite(cpu *CPU, pos uint64, it *IovIter) (uint64, error) {
	if err := f.use("pwrite", OpenWrite); err != nil {
		return 0, err
	}
	cpu.count(EvRWCall)
	if w := f.d.m.cfg.WriteIter; w != nil {
		return w(cpu, f.d, pos, it)
	}
	return f.d.Write(cpu, pos, it)
}

// Pread models pread(2) on the block device node: vfs_read's mode check
// (ErrBadFile unless open for reading), its fixed part (EvRWCall), then
// filemap_read with f's readahead
// state (see BlockDevice.Read). Errors: ErrBadFile, ErrIO.
func (f *File) Pread(cpu *CPU, pos uint64, dst []byte) (uint64, error) {
	if err := f.use("pread", OpenRead); err != nil {
		return 0, err
	}
	cpu.count(EvRWCall)
	return f.d.readOnDemand(cpu, &f.ra, pos, dst)
}

// Fsync models fsync(2) on the block device node (blkdev_fsync):
// file_write_and_wait_range over the whole device — write back every dirty
// folio (WB_SYNC_ALL, REQ_SYNC bios) and wait — then
// file_check_and_advance_wb_err: a writeback error recorded since f last
// looked is reported to f once, as ErrIO (-EIO, whatever the device said),
// and marked seen; every other open File reports it too, once, but one
// opened after it was seen does not. Only without an error the device's
// volatile write cache is flushed (blkdev_issue_flush: an empty REQ_PREFLUSH
// write), even when nothing was written. Errors: ErrBadFile, ErrIO.
func (f *File) Fsync(cpu *CPU) error {
	if err := f.use("fsync", 0); err != nil {
		return err
	}
	d := f.d
	d.writeAndWait(cpu, wbSyncAll)
	if err := f.checkAndAdvanceWBErr(cpu); err != nil {
		return err
	}
	return d.issueFlush(cpu)
}

// Fdatasync models fdatasync(2): blkdev_fsync ignores datasync, so it is
// Fsync.
func (f *File) Fdatasync(cpu *CPU) error { return f.Fsync(cpu) }

// checkAndAdvanceWBErr models file_check_and_advance_wb_err: report an error
// recorded in the mapping's errseq since f's sample (traced), advance the
// sample, and clear AS_EIO as the legacy filemap_check_errors would have.
func (f *File) checkAndAdvanceWBErr(cpu *CPU) error {
	d := f.d
	var err error
	if errno, moved := d.mapping.wbErr.checkAndAdvance(&f.wbErr); moved {
		if errno != 0 {
			err = fmt.Errorf("%w: writeback of %s failed (%v)", ErrIO, d.Name(), Errno(errno))
		}
		if t := d.tracing(); t != nil {
			d.emit(t, cpu, TraceEvent{Kind: TraceWBErrReport, Err: err})
		}
	}
	d.wbErrSeen.Store(d.wbErr.Load()) // clear_bit(AS_EIO)
	return err
}

// BlockSize models the BLKBSZGET ioctl: block_size(bdev).
func (f *File) BlockSize() uint32 { return f.d.BlockSize() }

// SetBlocksize models the BLKBSZSET ioctl (blkdev_bszset, block/ioctl.c),
// size being the ioctl's C int argument (so a negative one can be passed,
// and refused, as from user space): an exclusive File sets the block size
// directly; any other claims the device
// for the call (bdev_file_open_by_dev with a holder of its own), which fails
// with ErrBusy (-EBUSY) while another File holds it; then set_blocksize
// under the machine's rules (BlockDevice.SetBlocksize): a size it refuses is
// -EINVAL (a *blocksize.SizeError, or ErrInvalid for a negative one) and
// changes nothing; a new size drops the page cache. The mode of f does not
// matter (an O_RDONLY descriptor may set it). The claim is a file opened
// and released (EvFileOpen and EvFileRelease on cpu), whether or not it
// succeeds and whatever the size (v5.10's claim makes no struct file, and
// costs it less).
// Errors: ErrBadFile, ErrBusy, EINVAL's.
func (f *File) SetBlocksize(cpu *CPU, size int) error {
	if err := f.use("BLKBSZSET", 0); err != nil {
		return err
	}
	d := f.d
	o := &d.opens
	o.mu.Lock()
	defer o.mu.Unlock()
	if f.flags&OpenExcl == 0 {
		// The exclusive reopen, and its release when set_blocksize returns
		// (or when the claim fails: v6.18 makes the file first).
		cpu.count(EvFileOpen)
		defer cpu.count(EvFileRelease)
		if o.holder != nil {
			return fmt.Errorf("%w: BLKBSZSET on %s, held exclusively by another file", ErrBusy, d.Name())
		}
	}
	if size < 0 || uint64(size) > math.MaxUint32 {
		return fmt.Errorf("%w: BLKBSZSET %d on %s", ErrInvalid, size, d.Name())
	}
	return d.SetBlocksize(cpu, uint32(size))
}

// FlushBuffers models the BLKFLSBUF ioctl (blkdev_flushbuf): sync_blockdev
// (dirty folios are written back; no flush request; an error is dropped),
// then invalidate_bdev — every CPU's bh LRU is emptied and every folio that
// is clean, unlocked and unused is removed from the page cache with its
// buffers (invalidate_mapping_pages), so the next read goes to the device.
// Errors: ErrBadFile.
func (f *File) FlushBuffers(cpu *CPU) error {
	if err := f.use("BLKFLSBUF", 0); err != nil {
		return err
	}
	_ = f.d.SyncBlockdev(cpu)
	f.d.InvalidateBdev(cpu)
	return nil
}

// SetReadOnly models the BLKROSET ioctl (blkdev_roset: the device's
// BD_READ_ONLY flag): writes through any File then fail with ErrReadOnly
// (-EPERM); writeback of folios dirtied before is unaffected. Errors:
// ErrBadFile.
func (f *File) SetReadOnly(cpu *CPU, ro bool) error {
	_ = cpu
	if err := f.use("BLKROSET", 0); err != nil {
		return err
	}
	f.d.SetReadOnly(ro)
	return nil
}

// ReadOnly models the BLKROGET ioctl: bdev_read_only.
func (f *File) ReadOnly() bool { return f.d.ReadOnly() }

// InvalidateBdev models invalidate_bdev: empty every CPU's bh LRU
// (invalidate_bh_lrus), then invalidate_mapping_pages over the whole device:
// each folio that can be locked without waiting and is neither dirty, under
// writeback nor referenced beyond the page cache and its buffers loses its
// buffers (try_to_free_buffers) and leaves the page cache; the others stay.
// It returns the folios removed.
func (d *BlockDevice) InvalidateBdev(cpu *CPU) int {
	d.m.InvalidateBhLRUs(cpu)
	m := &d.mapping
	removed := 0
	for start := uint64(0); ; {
		index, f, ok := m.index.Next(start)
		if !ok {
			break
		}
		last := index
		if f.tryGet(cpu) {
			if f.mapping.Load() == m {
				last = f.index + (f.NrPages() - 1)
				switch {
				case !f.tryLockFolio():
				case d.evictFolio(cpu, f): // freed: no unlock, no put
					removed++
					if last == ^uint64(0) {
						return removed
					}
					start = last + 1
					continue
				default:
					f.unlockFolio()
				}
			}
			f.put(cpu)
		}
		if last == ^uint64(0) {
			break
		}
		start = last + 1
	}
	d.debugCheck()
	return removed
}
