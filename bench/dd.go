package bench

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/bufcache/blk/md"
	"github.com/bhsim/bhsim/iomap"
)

// Layout is a device column of the Helios4 table: one disk, or an md array
// over the first partition of each of the four disks.
type Layout uint8

// The layouts of seed 000's columns.
const (
	LayoutDirect Layout = iota
	LayoutRaid0
	LayoutRaid10F2
	LayoutRaid10N2
	LayoutRaid6
	numLayouts
)

var layoutNames = [numLayouts]string{"direct", "raid0", "raid10f2", "raid10n2", "raid6"}
var layoutColumns = [numLayouts]string{"Direct", "RAID0", "RAID10 f2", "RAID10 n2", "RAID6"}
var layoutLevels = [numLayouts]md.Level{LayoutRaid0: md.Raid0, LayoutRaid10F2: md.Raid10Far2,
	LayoutRaid10N2: md.Raid10Near2, LayoutRaid6: md.Raid6}

// String returns the layout's short name ("raid10f2"), as benchmarks and the
// command line spell it.
func (l Layout) String() string {
	if l < numLayouts {
		return layoutNames[l]
	}
	return fmt.Sprintf("layout(%d)", uint8(l))
}

// Column returns the layout's column label in the Helios4 table ("RAID10 f2").
func (l Layout) Column() string { return layoutColumns[l] }

// Layouts returns every layout in the table's column order.
func Layouts() []Layout {
	return []Layout{LayoutDirect, LayoutRaid0, LayoutRaid10F2, LayoutRaid10N2, LayoutRaid6}
}

// ParseLayout returns the layout whose String is s; the error names the
// valid ones.
func ParseLayout(s string) (Layout, error) {
	for i, n := range layoutNames {
		if n == s {
			return Layout(i), nil
		}
	}
	return 0, fmt.Errorf("bench: unknown layout %q (valid: %s)", s, strings.Join(layoutNames[:], ", "))
}

// DD is a dd run against a block device node: `dd if=/dev/zero of=DEV bs=BS
// count=COUNT` (a write) or `dd if=DEV of=/dev/null bs=BS count=COUNT` (a
// read), on a simulated machine and storage stack. The writer runs on CPU 0;
// background writeback (the flusher) on CPU 1. dd's close of the device is the
// last close, which syncs it (blkdev_close → blkdev_put → sync_blockdev), and
// coreutils dd closes its files before printing the rate, so the write figure
// includes writing everything to the disks.
type DD struct {
	Layout Layout
	Preset Preset
	Read   bool
	// BS and Count are dd's bs= (bytes) and count=.
	BS, Count uint64
	// CPUs is the number of CPUs (at least 2: the writer and the flusher).
	CPUs int
	// Disk is the timing model of each disk; DiskBytes its capacity and
	// Logical its logical block size (0 means 512).
	Disk      blk.Model
	DiskBytes uint64
	Logical   uint32
	// Write selects the write(2) path of the kernel (iomap.BlkdevWrite): the
	// zero value is v6.6's iomap path; the Helios4 kernels take
	// iomap.PathBufferHead, generic_perform_write through buffer heads.
	Write iomap.Options
	// Members is the number of disks an array spans; Chunk its chunk size.
	Members int
	Chunk   uint32
	// PageCacheLimit and DirtyLimit are in folios (see bufcache.Config).
	PageCacheLimit, DirtyLimit int
	// Data makes the run carry real bytes (and the disks store them); the
	// default, metadata-only, moves lengths only, so a run of gigabytes
	// needs little memory. The events and requests are the same.
	Data bool
}

// WD8003FFBXBytes is the capacity of a WD Red Pro 8 TB (15 628 053 168
// sectors of 512 bytes).
const WD8003FFBXBytes = 15628053168 * 512

// Helios4DD returns Maxim Mikityanskiy's run (seed 000): dd bs=1M count=2000
// on a Helios4 (2 × Cortex-A9, 2 GiB) with four WD8003FFBX disks, arrays of
// 512 KiB chunks (mdadm's default) over the first partition of each disk. The
// page cache may hold 1.5 GiB (2 GiB of RAM less the kernel and user space);
// background writeback starts at 10 % of memory (dirty_background_ratio's
// default, 52 428 folios), where the model's flusher writes the device's dirty
// folios back. The partitions' 1 MiB offset is not modelled: it moves every
// request by the same amount.
func Helios4DD(l Layout, preset Preset, read bool) DD {
	return DD{Layout: l, Preset: preset, Read: read, BS: 1 << 20, Count: 2000, CPUs: 2,
		Disk: blk.WD8003FFBX(), DiskBytes: WD8003FFBXBytes, Members: 4, Chunk: md.DefaultChunkSize,
		PageCacheLimit: 1536 << 20 >> 12, DirtyLimit: (2 << 30 / 10) >> 12,
		Write: iomap.Options{Path: iomap.PathBufferHead}}
}

// DDRun is a dd run in progress: Start builds the machine and the devices,
// Block copies one block, Close ends the run and gathers what every resource
// did.
type DDRun struct {
	dd     DD
	m      *bufcache.Machine
	dev    *bufcache.BlockDevice
	disks  []*blk.Queue
	array  *md.Array
	user   *bufcache.UserBuf
	dst    []byte
	pos    uint64
	blocks uint64
	cpus   []bufcache.Counters
}

// Start builds the machine, the disks and the array of d and opens the
// device (set_init_blocksize applies the preset's policy). Errors: an invalid
// configuration (fewer than 2 CPUs, a zero bs, an array of too few members,
// a disk model that does not validate).
func (d DD) Start() (*DDRun, error) {
	if d.CPUs < 2 || d.BS == 0 || d.Layout >= numLayouts || d.Disk == nil {
		return nil, fmt.Errorf("bench: dd needs at least 2 CPUs, a positive bs and a known layout: %+v", d)
	}
	m, err := bufcache.NewMachine(d.Preset.Apply(bufcache.Config{CPUs: d.CPUs, DirtyLimit: d.DirtyLimit,
		SeparateFlusher: true, FlusherCPU: 1, PageCacheLimit: d.PageCacheLimit}))
	if err != nil {
		return nil, err
	}
	r := &DDRun{dd: d, m: m}
	n := 1
	if d.Layout != LayoutDirect {
		n = d.Members
	}
	members := make([]blk.Device, n)
	for i := range n {
		name := "sd" + string(rune('a'+i))
		logical := max(d.Logical, 512)
		store, err := blk.NewMemDisk(name, d.DiskBytes, logical)
		if err != nil {
			return nil, err
		}
		q, err := blk.NewQueue(name, store, d.Disk, blk.DefaultLimits(logical, max(logical, 4096)))
		if err != nil {
			return nil, err
		}
		r.disks = append(r.disks, q)
		members[i] = q
	}
	disk := members[0]
	if d.Layout != LayoutDirect {
		if r.array, err = md.New(md.Config{Level: layoutLevels[d.Layout], ChunkSize: d.Chunk, Name: "md0"}, members); err != nil {
			return nil, err
		}
		disk = r.array
	}
	if r.dev, err = m.Open(disk, bufcache.DeviceOptions{MetadataOnly: !d.Data}); err != nil {
		return nil, err
	}
	if d.Read {
		r.dst = make([]byte, d.BS)
	} else {
		// dd's buffer, really touched by the pre-fault; it holds /dev/zero's zeros.
		r.user = bufcache.NewUserBuf(make([]byte, d.BS), 0, m.PageSize())
	}
	for i := range d.CPUs {
		r.cpus = append(r.cpus, m.CPU(i).Events())
	}
	return r, nil
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
		n, err = r.dev.Read(cpu, r.pos, r.dst)
	} else {
		var it *bufcache.IovIter
		if it, err = r.user.Iter(0, r.dd.BS); err == nil {
			n, err = iomap.BlkdevWrite(cpu, r.dev, r.pos, it, r.dd.Write)
		}
	}
	r.pos += n
	r.blocks++
	if err == nil && n < r.dd.BS {
		err = errors.New("bench: dd reached the end of the device")
	}
	return err
}

// Close ends the run as dd's close does (the last close syncs a written
// device) and returns what each resource did. Errors: a write error reported
// by the sync.
func (r *DDRun) Close() (*DDResult, error) {
	cpu := r.m.CPU(0)
	if !r.dd.Read {
		if err := r.dev.SyncBlockdev(cpu); err != nil {
			return nil, err
		}
	}
	res := &DDResult{DD: r.dd, Bytes: r.pos, BlockSize: r.dev.BlockSize()}
	for i := range r.cpus {
		res.CPU = append(res.CPU, r.m.CPU(i).Events().Sub(r.cpus[i]))
	}
	if r.array != nil {
		res.MD = r.array.Stats()
	}
	for _, q := range r.disks {
		res.Disks = append(res.Disks, DiskResult{Name: q.Name(), Stats: q.Stats()})
	}
	return res, nil
}

// Run runs the whole of d: Start, Count blocks, Close.
func (d DD) Run() (*DDResult, error) {
	r, err := d.Start()
	if err != nil {
		return nil, err
	}
	for range d.Count {
		if err := r.Block(); err != nil {
			return nil, err
		}
	}
	return r.Close()
}

// RunAll runs every dd of runs, at most GOMAXPROCS at a time (each has its
// own machine, so the results do not depend on the parallelism), and returns
// their results in order, or the first error.
func RunAll(runs []DD) ([]*DDResult, error) {
	results := make([]*DDResult, len(runs))
	err := parallel(len(runs), 0, func(i int) error {
		var err error
		if results[i], err = runs[i].Run(); err != nil {
			return fmt.Errorf("dd %s %s read=%v: %w", runs[i].Layout, runs[i].Preset.Name, runs[i].Read, err)
		}
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return results, nil
}

// DDResult is what a dd run did: the bytes it moved, the block size the
// device had, the events of every CPU, md's counters and each disk's.
type DDResult struct {
	DD        DD
	Bytes     uint64
	BlockSize uint32
	CPU       []bufcache.Counters
	MD        md.Stats
	Disks     []DiskResult
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

// Pages returns the PAGE_SIZE pages the run moved.
func (r *DDResult) Pages() float64 { return float64(r.Bytes) / 4096 }

// Loads returns the demand of every resource of the run (see Load): each CPU
// with its events; md's per-bio work and the requests, charged to the CPUs
// that submitted bios in proportion to their submissions, except a RAID6
// write's stripe handling, member bios and requests, which are raid5d's (the
// "md0_raid6" thread); the all-CPU bound; and each disk with its busy time.
func (r *DDResult) Loads() []Load {
	var bios float64
	for _, ev := range r.CPU {
		bios += float64(ev[bufcache.EvBioSubmit])
	}
	raid5d := r.DD.Layout == LayoutRaid6 && !r.DD.Read
	var shared, thread [numParams]float64 // charged by bio share, or to raid5d
	shared[ParamMDBio] = float64(r.MD.BiosIn + r.MD.Splits)
	shared[ParamMDWriteBio] = float64(r.MD.WriteBios)
	shared[ParamStripeAttach] = float64(r.MD.StripeAttach)
	io := &shared
	if raid5d {
		io = &thread
	}
	io[ParamMemberBio] = float64(r.MD.MemberBios)
	io[ParamRequest] = float64(r.Requests())
	thread[ParamStripe] = float64(r.MD.Stripes)
	thread[ParamParityByte] = float64(r.MD.ParityBytes)

	var loads, cpus []Load
	for i, ev := range r.CPU {
		name := fmt.Sprintf("cpu%d", i)
		switch i {
		case 0:
			name += " (dd)"
		case 1:
			name += " (flusher)"
		}
		l := CPULoad(name, Quantities(ev, 1, 0))
		if bios > 0 {
			share := float64(ev[bufcache.EvBioSubmit]) / bios
			for p, n := range shared {
				l.Q[p] += n * share
			}
		}
		cpus = append(cpus, l)
	}
	if raid5d {
		cpus = append(cpus, CPULoad("md0_raid6", thread))
	}
	loads = append(loads, cpus...)
	loads = append(loads, AllCPUs(r.DD.CPUs, cpus...))
	for _, d := range r.Disks {
		loads = append(loads, Load{Name: d.Name, FixedNS: d.Stats.BusyNS, Servers: 1})
	}
	return loads
}

// Obs returns the run as an observation of a published MB/s figure.
func (r *DDResult) Obs(row string, published float64, fit bool) Observation {
	return Observation{Row: row, Column: r.DD.Layout.Column(), Published: published,
		Loads: r.Loads(), Bytes: float64(r.Bytes), Fit: fit}
}

// MBps returns the run's simulated throughput under p in decimal MB/s.
func (r *DDResult) MBps(p *Profile) float64 {
	_, t := p.Bottleneck(r.Loads())
	return float64(r.Bytes) * 1e3 / t
}
