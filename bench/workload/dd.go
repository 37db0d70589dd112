package workload

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/bufcache/blk/md"
	"github.com/bhsim/bhsim/internal/fanout"
	"github.com/bhsim/bhsim/iomap"
)

// DD is a dd run against a block device node: `dd if=/dev/zero of=DEV bs=BS
// count=COUNT` (a write) or `dd if=DEV of=/dev/null bs=BS count=COUNT` (a
// read), on a simulated machine and storage stack. The writer runs on CPU 0;
// background writeback (the flusher) on CPU 1; reclaim in kswapd, a thread
// of its own that shares the CPUs (bufcache.Config.Kswapd). dd's close of the
// device is the last close, which syncs it and drops its page cache
// (blkdev_close → blkdev_put → sync_blockdev and kill_bdev, v5.10;
// blkdev_flush_mapping in v6.x), and coreutils dd closes its files before
// printing the rate, so the figure includes writing everything to the disks
// and freeing every page the run left cached.
type DD struct {
	// Layout is the device dd writes or reads: one disk (LayoutDirect) or
	// an md array of Members disks.
	Layout Layout
	// Kernel is the kernel the machine runs: its set_init_blocksize policy,
	// its write(2) path (iomap.BlkdevWrite) and the rest of its variants
	// (a Kernel with nothing but a Name: the preset of that name; the zero
	// Kernel: every variant's zero value, the threads' kernels' defaults).
	Kernel engine.Kernel
	// Read makes dd read the device (dd if=DEV of=/dev/null) instead of
	// writing it (dd if=/dev/zero of=DEV).
	Read bool
	// BS and Count are dd's bs= (bytes) and count=.
	BS, Count uint64
	// CPUs is the number of CPUs (at least 2: the writer and the flusher).
	CPUs int
	// Disk is the timing model of each disk, required (DiskByName("hdd")
	// .Model, blk.WD8003FFBX(), or a model of one's own); DiskBytes its
	// capacity, required, and Logical its logical block size (0 means
	// 512).
	Disk      blk.Model
	DiskBytes uint64
	Logical   uint32
	// SetBlocksize, if not 0, is the block size set right after dd's open
	// (set_blocksize, as a holder's BLKBSZSET or a filesystem's
	// sb_set_blocksize would set it): the way to blocks above a page, 8 KiB
	// to 64 KiB, which only a kernel with blocksize.RulesLarge accepts.
	SetBlocksize uint32
	// MaxSegments is each disk queue's max_segments, its host adapter's
	// scatter-gather table (blk.AHCIMaxSegments for SATA behind AHCI); 0
	// means the block layer's default, blk.DefMaxSegments.
	MaxSegments uint32
	// Members is the number of disks an array spans (at least 1, at most
	// MaxMembers; unused by LayoutDirect); Chunk its chunk size in bytes (0:
	// md's default, 512 KiB).
	Members int
	Chunk   uint32
	// PageCacheLimit and DirtyLimit are in folios (see bufcache.Config).
	PageCacheLimit, DirtyLimit int
	// Data makes the run carry real bytes (and the disks store them); the
	// default, metadata-only, moves lengths only, so a run of gigabytes
	// needs little memory. The events and requests are the same.
	Data bool
	// UntouchedBuffer makes a write's user buffer metadata-only
	// (bufcache.NewUserBufSize): the pre-fault counts every user page it
	// faults in (EvFaultInPage) without touching real memory, and the copy
	// reads /dev/zero's zeros without it. Every event, request and figure
	// is the same; only the Go time of the touches is saved. It is for
	// callers that use the counts alone (the threads of bhsim reproduce);
	// a benchmark whose Go time measures the pre-fault leaves it false, so
	// that dd's buffer is real and really touched. Reads ignore it.
	UntouchedBuffer bool
}

// DDRun is a dd run in progress: Start builds the machine and the devices,
// Block copies one block, Close ends the run and gathers what every resource
// did.
type DDRun struct {
	dd     DD
	m      *bufcache.Machine
	dev    *bufcache.BlockDevice
	file   *bufcache.File
	disks  []*blk.Queue
	array  *md.Array
	user   *bufcache.UserBuf
	dst    []byte
	pos    uint64
	blocks uint64
	cpus   []bufcache.Counters
}

// ErrInvalidDD is wrapped by the errors of a DD that cannot run as given (a
// mistake in its configuration, not a failure of the run).
var ErrInvalidDD = errors.New("workload: invalid dd")

// MaxBS is the largest dd bs= the model simulates: dd's buffer is real
// memory, touched by the pre-fault as the kernel touches it, so its size is
// bounded. (A write(2) moves at most MAX_RW_COUNT, just under 2 GiB, anyway.)
const MaxBS = 64 << 20

// MaxMembers is the most disks a DD's array spans, a bound of the model's
// (engine.MaxArrayMembers), far more than any thread's machine.
const MaxMembers = engine.MaxArrayMembers

// Start builds the machine, the disks and the array of d and opens the
// device (set_init_blocksize applies the kernel's policy). Errors, all
// wrapping ErrInvalidDD: an invalid configuration (fewer than 2 CPUs, a
// zero bs or one above MaxBS, a zero count, an unknown layout or kernel
// name, no disk model, an array of too few or too many members, disks or
// a disk model that do not validate, a SetBlocksize the kernel refuses).
func (d DD) Start() (*DDRun, error) {
	d, err := d.resolved()
	if err != nil {
		return nil, err
	}
	// One CPU context more than the machine's CPUs: kswapd's, a thread
	// that runs on them (Loads counts it in the all-CPU bound only).
	m, err := engine.Build(engine.MachineSpec{Kernel: &d.Kernel, Config: bufcache.Config{CPUs: d.CPUs + 1, DirtyLimit: d.DirtyLimit,
		SeparateFlusher: true, FlusherCPU: 1, Kswapd: true, KswapdCPU: d.CPUs,
		PageCacheLimit: d.PageCacheLimit, OneGoroutine: true}})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidDD, err)
	}
	r := &DDRun{dd: d, m: m.Machine}
	if err := r.openDevice(); err != nil {
		return nil, err
	}
	if d.SetBlocksize != 0 {
		if err := r.dev.SetBlocksize(r.m.CPU(0), d.SetBlocksize); err != nil {
			return nil, fmt.Errorf("%w: kernel %s: %w", ErrInvalidDD, d.Kernel.Name, err)
		}
	}
	if err := d.fits(r.dev.Size()); err != nil {
		return nil, err
	}
	r.allocBuffer()
	for i := range m.NumCPU() {
		r.cpus = append(r.cpus, m.CPU(i).Events())
	}
	return r, nil
}

// fits refuses a dd that moves more than a device of size bytes holds:
// the error wraps ErrInvalidDD.
func (d DD) fits(size uint64) error {
	if d.BS*d.Count > size {
		return fmt.Errorf("%w: bs=%s count=%d moves %s, more than the %s device holds (count at most %d)",
			ErrInvalidDD, scenario.FormatDDSize(d.BS), d.Count, decimalBytes(d.BS*d.Count), decimalBytes(size), size/d.BS)
	}
	return nil
}

// deviceBytes is the size of d's device without a machine: its disk's,
// or the md array's over d.Members of them, as Start builds them. Errors
// wrap ErrInvalidDD.
func (d DD) deviceBytes() (uint64, error) {
	r := &DDRun{dd: d}
	members, err := r.newDisks()
	if err != nil {
		return 0, err
	}
	if d.Layout == LayoutDirect {
		return members[0].Sectors() << blk.SectorShift, nil
	}
	a, err := md.New(md.Config{Level: layoutLevels[d.Layout], ChunkSize: d.Chunk, Name: "md0"}, members)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalidDD, err)
	}
	return a.Sectors() << blk.SectorShift, nil
}

// resolved returns d with its kernel resolved (engine.Kernel.Resolved),
// or the error, wrapping ErrInvalidDD, of a kernel that does not resolve
// or a configuration check refuses.
func (d DD) resolved() (DD, error) {
	k, err := d.Kernel.Resolved()
	if err != nil {
		return d, fmt.Errorf("%w: %w", ErrInvalidDD, err)
	}
	d.Kernel = k
	return d, d.check()
}

// check refuses a configuration Start cannot run (its kernel resolved):
// the errors wrap ErrInvalidDD.
func (d DD) check() error {
	switch {
	case d.CPUs < 2:
		return fmt.Errorf("%w: it needs at least 2 CPUs (dd's and the flusher's), not %d", ErrInvalidDD, d.CPUs)
	case d.BS == 0 || d.BS > MaxBS:
		return fmt.Errorf("%w: bs=%d: want 1 to %d bytes (%s): the model keeps dd's buffer in memory", ErrInvalidDD, d.BS, uint64(MaxBS), scenario.FormatDDSize(MaxBS))
	case d.Layout >= numLayouts:
		return fmt.Errorf("%w: unknown layout %s", ErrInvalidDD, d.Layout)
	case d.Disk == nil:
		return fmt.Errorf("%w: no disk model", ErrInvalidDD)
	case d.Count == 0:
		return fmt.Errorf("%w: count=0: nothing to run", ErrInvalidDD)
	case d.Layout != LayoutDirect && (d.Members < 1 || d.Members > MaxMembers):
		return fmt.Errorf("%w: an array of %d members (want 1 to %d)", ErrInvalidDD, d.Members, MaxMembers)
	case d.Count > math.MaxInt64/d.BS:
		return fmt.Errorf("%w: bs=%d count=%d: more bytes than a file offset holds", ErrInvalidDD, d.BS, d.Count)
	}
	return nil
}

// openDevice builds the run's disks and, for a layout other than direct,
// the md array over them, adds the result to the machine and opens it for
// dd's direction. Its errors wrap ErrInvalidDD.
func (r *DDRun) openDevice() error {
	d := r.dd
	members, err := r.newDisks()
	if err != nil {
		return err
	}
	disk := members[0]
	if d.Layout != LayoutDirect {
		if r.array, err = md.New(md.Config{Level: layoutLevels[d.Layout], ChunkSize: d.Chunk, Name: "md0"}, members); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidDD, err)
		}
		disk = r.array
	}
	if r.dev, err = r.m.AddDisk(disk, bufcache.DeviceOptions{MetadataOnly: !d.Data}); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidDD, err)
	}
	mode := bufcache.OWrOnly
	if d.Read {
		mode = bufcache.ORdOnly
	}
	if r.file, err = r.dev.Open(r.m.CPU(0), mode); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidDD, err)
	}
	return nil
}

// newDisks builds the run's disks, one for the direct layout and Members
// for an array, each a memory disk behind a queue of the disk model, and
// keeps them in r.disks. Its errors wrap ErrInvalidDD.
func (r *DDRun) newDisks() ([]blk.Device, error) {
	d := r.dd
	n := 1
	if d.Layout != LayoutDirect {
		n = d.Members
	}
	members := make([]blk.Device, n)
	for i := range n {
		name := engine.MemberName(i)
		logical := max(d.Logical, 512)
		store, err := blk.NewMemDisk(name, d.DiskBytes, logical)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidDD, err)
		}
		lim := blk.DefaultLimits(logical, max(logical, 4096))
		lim.Version = d.Kernel.Block
		if d.MaxSegments != 0 {
			lim.MaxSegments = d.MaxSegments
		}
		q, err := blk.NewQueue(name, store, d.Disk, lim)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidDD, err)
		}
		r.disks = append(r.disks, q)
		members[i] = q
	}
	return members, nil
}

// allocBuffer makes dd's buffer: a read's destination, or a write's user
// buffer of /dev/zero's zeros.
func (r *DDRun) allocBuffer() {
	if r.dd.Read {
		r.dst = make([]byte, r.dd.BS)
		return
	}
	if r.dd.UntouchedBuffer {
		r.user = bufcache.NewUserBufSize(r.dd.BS, 0, r.m.PageSize())
		return
	}
	// dd's buffer, really touched by the pre-fault; it holds /dev/zero's
	// zeros. dd's read(2) from /dev/zero writes every page of it before
	// the first write(2), so it is backed by distinct physical pages; a
	// fresh Go allocation left untouched would map the host's shared zero
	// page, and the pre-fault's reads would hit one cached page and make
	// Go time depend on whether the heap reused memory.
	buf := make([]byte, r.dd.BS)
	for i := 0; i < len(buf); i += int(r.m.PageSize()) {
		buf[i] = 0
	}
	r.user = bufcache.NewUserBuf(buf, 0, r.m.PageSize())
}

// Device returns the opened block device (its BlockSize shows the policy's
// choice).
func (r *DDRun) Device() *bufcache.BlockDevice { return r.dev }

// Block copies dd's next block: one write(2) of bs bytes from the reused user
// buffer, or one read(2) into it. A device shorter than the run ends it early
// (ErrNoSpace for a write, a short read). Errors are the device's.
func (r *DDRun) Block() error {
	cpu := r.m.CPU(0)
	var n uint64
	var err error
	if r.dd.Read {
		n, err = r.file.Pread(cpu, r.pos, r.dst)
	} else {
		var it *bufcache.IovIter
		if it, err = r.user.Iter(0, r.dd.BS); err == nil {
			n, err = iomap.BlkdevWrite(cpu, r.dev, r.pos, it, r.dd.Kernel.Write)
		}
	}
	r.pos += n
	r.blocks++
	if err == nil && n < r.dd.BS {
		err = errors.New("workload: dd reached the end of the device")
	}
	return err
}

// Close ends the run as dd's close does (the last close syncs a written
// device, then truncates its page cache) and returns what each resource did.
// Errors: a write error reported by the sync (the model's report: a real
// close(2) of a block device returns 0 whatever its sync found).
func (r *DDRun) Close() (*DDResult, error) {
	cpu := r.m.CPU(0)
	if !r.dd.Read {
		if err := r.dev.SyncBlockdev(cpu); err != nil {
			return nil, err
		}
	}
	if err := r.file.Close(cpu); err != nil {
		return nil, err
	}
	res := &DDResult{}
	r.snapshot(res)
	return res, nil
}

// snapshot copies the run's counters so far into s, reusing its slices (no
// allocation once they have grown). O(CPUs + disks).
func (r *DDRun) snapshot(s *DDResult) {
	s.DD, s.Bytes, s.Blocks = r.dd, r.pos, r.blocks
	s.BlockSize, s.ReadAheadKB = r.dev.BlockSize(), r.dev.ReadAheadKB()
	s.CPU = s.CPU[:0]
	for i := range r.cpus {
		s.CPU = append(s.CPU, r.m.CPU(i).Events().Sub(r.cpus[i]))
	}
	if r.array != nil {
		s.MD = r.array.Stats()
	}
	s.Disks = s.Disks[:0]
	for _, q := range r.disks {
		s.Disks = append(s.Disks, DiskResult{Name: q.Name(), Stats: q.Stats()})
	}
}

// Run runs the whole of d: Start, Count blocks, Close.
func (d DD) Run() (*DDResult, error) { return d.RunContext(context.Background(), nil) }

// progressEvery is how many blocks RunContext copies, at most, between looks
// at its context and calls of its progress callback; progressBytes bounds
// the bytes between them, for large blocks.
const (
	progressEvery = 64
	progressBytes = 64 << 20
)

// RunContext runs the whole of d as Run does, stopping with ctx's error once
// ctx is done, and calls progress, if not nil, with the blocks copied and
// d.Count every progressEvery blocks (or progressBytes, if fewer blocks)
// and at the end, before the close's writeback.
func (d DD) RunContext(ctx context.Context, progress func(done, total int)) (*DDResult, error) {
	r, err := d.Start()
	if err != nil {
		return nil, err
	}
	every := max(1, min(progressEvery, progressBytes/d.BS))
	for i := range d.Count {
		if i%every == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if progress != nil {
				progress(int(i), int(d.Count))
			}
		}
		if err := r.Block(); err != nil {
			return nil, err
		}
	}
	if progress != nil {
		progress(int(d.Count), int(d.Count))
	}
	return r.Close()
}

// ddSlots bounds the dd runs in progress across every RunAll of the
// process to GOMAXPROCS as the process started with: RunAlls side by side
// (bhsim reproduce's threads) share the processors without holding more
// simulated dd page caches in memory than one RunAll would.
var ddSlots = fanout.NewSlots(0)

// RunAll runs every dd of runs, at most GOMAXPROCS at a time across all the
// RunAlls in progress (each run has its own machine, so the results do not
// depend on the parallelism), and returns their results in order, or the
// error of the first that failed. If progress is not nil it is called after
// each run with the runs done and the total.
func RunAll(runs []DD, progress func(done, total int)) ([]*DDResult, error) {
	results := make([]*DDResult, len(runs))
	err := fanout.Run(context.Background(), len(runs), 0, func(_ context.Context, i int) error {
		return ddSlots.Do(func() error {
			var err error
			if results[i], err = runs[i].Run(); err != nil {
				return fmt.Errorf("dd %s %s read=%v: %w", runs[i].Layout, runs[i].Kernel.Name, runs[i].Read, err)
			}
			return nil
		})
	}, progress)
	if err != nil {
		return nil, err
	}
	return results, nil
}

// DDResult is what a dd run did: the bytes it moved, the block size the
// device had, the events of every CPU, md's counters and each disk's.
type DDResult struct {
	// DD is the run's configuration.
	DD DD
	// Bytes is what dd moved, Blocks the read(2)/write(2) pairs it made,
	// BlockSize the device's block size (i_blkbits) the run ran at.
	Bytes     uint64
	Blocks    uint64
	BlockSize uint32
	// ReadAheadKB is the device's read_ahead_kb (bufcache.BlockDevice.ReadAheadKB).
	ReadAheadKB uint32
	// CPU holds each CPU context's events: dd's (0), the flusher's (1), the
	// other CPUs', and last, at index DD.CPUs, kswapd's.
	CPU []bufcache.Counters
	// MD is the array's counters (zero for LayoutDirect), Disks each
	// disk's, in member order.
	MD    md.Stats
	Disks []DiskResult
}

// DiskResult is one disk's counters for a run.
type DiskResult struct {
	Name  string
	Stats blk.QueueStats
}

// Requests returns the requests all disks served.
func (r *DDResult) Requests() uint64 {
	var n uint64
	for _, d := range r.Disks {
		n += d.Stats.Read.Requests + d.Stats.Write.Requests
	}
	return n
}

// DiskBios returns the bios all disks' queues received.
func (r *DDResult) DiskBios() uint64 {
	var n uint64
	for _, d := range r.Disks {
		n += d.Stats.Read.Bios + d.Stats.Write.Bios
	}
	return n
}

// BiosPerPage returns the bios every CPU submitted per PAGE_SIZE page moved.
func (r *DDResult) BiosPerPage() float64 {
	var bios uint64
	for _, ev := range r.CPU {
		bios += ev[bufcache.EvBioSubmit]
	}
	return float64(bios) / r.Pages()
}

// RequestsPerMiB returns the requests all disks served per MiB moved.
func (r *DDResult) RequestsPerMiB() float64 {
	return float64(r.Requests()) / (float64(r.Bytes) / (1 << 20))
}

// FaultInPerPage returns the user pages the run's pre-faults touched per
// PAGE_SIZE page it wrote (up to v6.14 one write iteration per page; on a
// large-folio mapping one per folio).
func (r *DDResult) FaultInPerPage() float64 {
	return float64(r.CPU[0][bufcache.EvFaultInPage]) / r.Pages()
}

// FoliosPerMiB returns the folios the run allocated per MiB moved: 256 with
// one-page folios, fewer with large ones.
func (r *DDResult) FoliosPerMiB() float64 {
	var folios uint64
	for _, ev := range r.CPU {
		folios += ev[bufcache.EvFolioAlloc]
	}
	return float64(folios) / (float64(r.Bytes) / (1 << 20))
}

// Pages returns the PAGE_SIZE pages the run moved.
func (r *DDResult) Pages() float64 { return float64(r.Bytes) / 4096 }

// decimalBytes prints n bytes in the decimal unit that keeps it between 1
// and 1000, as disk makers count ("8.002 TB", "4.096 kB", "512 bytes").
func decimalBytes(n uint64) string {
	x := float64(n)
	for _, u := range []struct {
		scale float64
		name  string
	}{{1e18, "EB"}, {1e15, "PB"}, {1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}} {
		if x >= u.scale {
			return fmt.Sprintf("%.4g %s", x/u.scale, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
