package workload

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
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
	// pre holds the counters before the block being written, until the
	// flusher first writes back; started is then set and start keeps
	// them: where the run's first phase ends (DDResult.Phases).
	pre, start DDResult
	started    bool
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
	watch := !r.started && !r.dd.Read
	if watch {
		r.snapshot(&r.pre)
	}
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
	if watch && r.m.CPU(1).Events()[bufcache.EvBioSubmit] > r.cpus[1][bufcache.EvBioSubmit] {
		r.started = true
		r.pre, r.start = r.start, r.pre
	}
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
	var closing DDResult
	r.snapshot(&closing)
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
	var zero DDResult
	r.snapshotZero(&zero)
	if r.started {
		res.Phases = []*DDResult{r.start.since(&zero), closing.since(&r.start), res.since(&closing)}
	} else {
		res.Phases = []*DDResult{closing.since(&zero), res.since(&closing)}
	}
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

// snapshotZero sets s to the run's counters before its first block: none
// (the disks and the array are new with the run).
func (r *DDRun) snapshotZero(s *DDResult) {
	s.DD, s.BlockSize, s.ReadAheadKB = r.dd, r.dev.BlockSize(), r.dev.ReadAheadKB()
	s.CPU = make([]bufcache.Counters, len(r.cpus))
	for _, q := range r.disks {
		s.Disks = append(s.Disks, DiskResult{Name: q.Name()})
	}
}

// since returns what the run did between earlier, a snapshot of the same
// run, and s: a phase, with no phases of its own.
func (s *DDResult) since(earlier *DDResult) *DDResult {
	out := &DDResult{DD: s.DD, Bytes: s.Bytes - earlier.Bytes, Blocks: s.Blocks - earlier.Blocks,
		BlockSize: s.BlockSize, ReadAheadKB: s.ReadAheadKB, MD: s.MD.Sub(earlier.MD)}
	for i := range s.CPU {
		out.CPU = append(out.CPU, s.CPU[i].Sub(earlier.CPU[i]))
	}
	for i := range s.Disks {
		out.Disks = append(out.Disks, DiskResult{Name: s.Disks[i].Name, Stats: s.Disks[i].Stats.Sub(earlier.Disks[i].Stats)})
	}
	return out
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
	// Phases are the parts of the run that follow one another, each what
	// the run did in it: for a write, dd's start until the flusher first
	// writes back (background writeback waits for the dirty threshold, so
	// nothing else runs), the steady state, and dd's close (the last close
	// syncs what is still dirty with the flusher idle below the threshold,
	// then drops the page cache); for a read, or a write that never reached
	// the threshold, everything before the close and the close. Empty for a
	// phase itself.
	Phases []*DDResult
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

// diskBytes returns the bytes every disk's DMA moved, read and written.
func (r *DDResult) diskBytes() uint64 {
	var n uint64
	for _, d := range r.Disks {
		n += (d.Stats.Read.Sectors + d.Stats.Write.Sectors) << blk.SectorShift
	}
	return n
}

// Pages returns the PAGE_SIZE pages the run moved.
func (r *DDResult) Pages() float64 { return float64(r.Bytes) / 4096 }

// Loads returns the demand of every resource of the run (see timing.Load): each CPU
// with its events (dd's also with its system calls and, for a write, the
// bytes it read from /dev/zero), kswapd ("kswapd0", a thread counted in the
// all-CPU bound, not a CPU of its own) with its reclaim; md's per-bio work, the bios' passes through
// the disks' blk-mq queues and the requests, charged to the CPUs that
// submitted bios in proportion to their submissions, except a RAID6 write's
// stripe handling, member bios and requests, which are raid5d's (the
// "md0_raid6" thread); the all-CPU bound; the memory bus (the bytes the run's
// copies, zeroing, parity and DMA move through it); and
// each disk with its busy time — or, for a disk with no timing model of its
// own (blk.Null), its requests and bytes, which the profile prices
// (timing.ParamDiskRequest, ParamDiskByte).
func (r *DDResult) Loads() []timing.Load {
	var bios float64
	for _, ev := range r.CPU {
		bios += float64(ev[bufcache.EvBioSubmit])
	}
	raid5d := r.DD.Layout == LayoutRaid6 && !r.DD.Read
	var shared, thread timing.Quantities // charged by bio share, or to raid5d
	shared[timing.ParamMDBio] = float64(r.MD.BiosIn + r.MD.Splits)
	shared[timing.ParamMDWriteBio] = float64(r.MD.WriteBios)
	shared[timing.ParamStripeAttach] = float64(r.MD.StripeAttach)
	io := &shared
	if raid5d {
		io = &thread
	}
	io[timing.ParamMemberBio] = float64(r.MD.MemberBios)
	io[timing.ParamMQBio] = float64(r.DiskBios())
	io[timing.ParamRequest] = float64(r.Requests())
	thread[timing.ParamStripe] = float64(r.MD.Stripes)
	thread[timing.ParamParityByte] = float64(r.MD.ParityBytes)

	var loads, cpus []timing.Load
	for i, ev := range r.CPU {
		name := fmt.Sprintf("cpu%d", i)
		switch i {
		case 0:
			name += " (dd)"
		case 1:
			name += " (flusher)"
		case r.DD.CPUs:
			name = "kswapd0"
		}
		l := timing.CPULoad(name, timing.PerOp(ev, 1, 0))
		if i == 0 {
			l.Q[timing.ParamSyscall] = 2 * float64(r.Blocks) // dd's read(2) and write(2) of every block
			if !r.DD.Read {
				l.Q[timing.ParamZeroByte] = float64(r.Bytes) // read(2) of /dev/zero
			}
		}
		if bios > 0 {
			share := float64(ev[bufcache.EvBioSubmit]) / bios
			for p, n := range shared {
				l.Q[p] += n * share
			}
		}
		cpus = append(cpus, l)
	}
	if raid5d {
		cpus = append(cpus, timing.CPULoad("md0_raid6", thread))
	}
	loads = append(loads, cpus...)
	loads = append(loads, timing.AllCPUs(r.DD.CPUs, cpus...))
	loads = append(loads, timing.MemoryLoad(r.memoryBytes()))
	for _, d := range r.Disks {
		l := timing.Load{Name: d.Name, FixedNS: d.Stats.BusyNS, Servers: 1}
		if _, priced := r.DD.Disk.(blk.Null); priced {
			st := d.Stats
			l.Q[timing.ParamDiskRequest] = float64(st.Read.Requests + st.Write.Requests)
			l.Q[timing.ParamDiskByte] = float64((st.Read.Sectors + st.Write.Sectors) << blk.SectorShift)
		}
		loads = append(loads, l)
	}
	return loads
}

// memoryBytes returns the bytes the run's passes over data moved through
// the memory controller (timing.ParamMemByte): every byte the CPUs copied
// (copy_from_user or copy_to_user: a load and a store, EvCopyByte counts
// it once), every byte dd read from /dev/zero (read_zero's clear_user: a
// store), every byte of every disk's DMA (one transfer), and for a RAID6
// write raid5d's biodrain of each written byte into the stripe cache (a load
// and a store) and the syndrome's pass over each stripe (a load of every data
// page, a store of P and Q). Each pass is counted as reaching DRAM: dd's
// buffer and the stream of page-cache pages outgrow the caches of the
// machines this models (a 1 MiB L2 on the Helios4); a cache that kept
// some of it would make the count an upper bound.
func (r *DDResult) memoryBytes() timing.Quantities {
	var copied float64
	for _, ev := range r.CPU {
		copied += float64(ev[bufcache.EvCopyByte])
	}
	n := 2*copied + float64(r.diskBytes())
	if !r.DD.Read {
		n += float64(r.Bytes) // /dev/zero
	}
	if r.DD.Layout == LayoutRaid6 && !r.DD.Read {
		data := float64(max(r.DD.Members-2, 1))
		n += 2*float64(r.MD.BytesIn) + float64(r.MD.ParityBytes)*(1+data/2)
	}
	var q timing.Quantities
	q[timing.ParamMemByte] = n
	return q
}

// PhaseLoads returns the loads of each of the run's phases (Phases), nil
// for a phase.
func (r *DDResult) PhaseLoads() [][]timing.Load {
	var out [][]timing.Load
	for _, ph := range r.Phases {
		out = append(out, ph.Loads())
	}
	return out
}

// Obs returns the run as an observation of the published MB/s figure at row
// and column of a table: its phases' loads, and the whole run's for reports.
func (r *DDResult) Obs(row, column string, published float64) timing.Observation {
	return timing.Observation{Row: row, Column: column, Published: published, Loads: r.Loads(), Phases: r.PhaseLoads(), Bytes: float64(r.Bytes)}
}

// SimNS returns the run's simulated time under p: the sum of its phases'
// times, each set by its busiest resource (timing.Profile.PhasedNS), or for
// a phase its busiest resource's time.
func (r *DDResult) SimNS(p *timing.Profile) float64 {
	if len(r.Phases) > 0 {
		return p.PhasedNS(r.PhaseLoads())
	}
	_, t := p.Bottleneck(r.Loads())
	return t
}

// MBps returns the run's simulated throughput under p in decimal MB/s.
func (r *DDResult) MBps(p *timing.Profile) float64 {
	return float64(r.Bytes) * 1e3 / r.SimNS(p)
}

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
