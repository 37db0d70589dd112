package engine

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/bufcache/blk/md"
)

// Array is an md array for Run's device (RunOptions.Array): Members disks
// of the run's disk model, each behind a queue of its own (loop-like, or
// RunOptions.Limits), under one md array of Level (md.Array), as `mdadm
// --create --level L --raid-devices N --chunk C` builds it. The zero Array
// is no array: one disk.
//
// On the clock each member is a disk that serves its own requests in
// order. md's per-bio work runs on the CPU that submits the bio
// (md_submit_bio: timing.ParamMDBio, ParamMDWriteBio, ParamStripeAttach,
// ParamMemberBio), except a RAID6 write's stripe handling, which the
// array's own thread does (raid5d, "md0_raid6"): its stripes, their parity,
// and the member bios and requests they make, placed after the thread's
// earlier work, the member writes leaving over it.
//
// Where it is coarse: md's work is taken at each placement of a call or a
// flusher pass, so a RAID6 placement that handled stripes gives raid5d all
// of its member bios and requests, and the writeback that reclaim starts
// inside a buffered write (rare: a page cache full of dirty pages) is
// charged with the write; a read of a member request that spans two chunks
// is matched to the first chunk's array sectors; discards are refused
// (EOPNOTSUPP).
type Array struct {
	// Level is the personality and layout.
	Level md.Level
	// Members is the number of disks (0: no array; at most
	// MaxArrayMembers, and at least what Level needs).
	Members int
	// Chunk is the chunk size in bytes (0: md.DefaultChunkSize).
	Chunk uint32
}

// MaxArrayMembers is the most disks an Array spans, a bound of the model's:
// md's MD_SB_DISKS for a version-0.90 superblock (mdadm's default 1.2
// metadata allows far more).
const MaxArrayMembers = 27

// MemberName is the name of an array's i-th disk (i < MaxArrayMembers):
// sda, sdb, …, sdz, then sdaa as the kernel's sd naming goes on.
func MemberName(i int) string {
	if i >= 26 {
		return "sda" + string(rune('a'+i-26))
	}
	return "sd" + string(rune('a'+i))
}

// String describes the array as a header line gives it: "raid6 of 4
// disks, 512 KiB chunks".
func (a Array) String() string {
	return fmt.Sprintf("%s of %d disks, %d KiB chunks", a.Level, a.Members, a.chunk()>>10)
}

// chunk is the array's chunk size in bytes: Chunk, or md's default.
func (a Array) chunk() uint32 {
	if a.Chunk == 0 {
		return md.DefaultChunkSize
	}
	return a.Chunk
}

// memberBytes is the size of each member for an array that holds size
// bytes: a whole number of chunks, one more than the level's share of size
// needs (md rounds each member down to whole chunks).
func (a Array) memberBytes(size uint64) uint64 {
	chunk := uint64(a.chunk())
	data, copies := uint64(a.Members), uint64(1)
	switch a.Level {
	case md.Raid10Near2, md.Raid10Far2:
		copies = 2
	case md.Raid6:
		data = uint64(max(a.Members-2, 1))
	}
	per := (size*copies + data - 1) / data
	return (per+chunk-1)/chunk*chunk + chunk
}

// newArray builds the array of a for a device of size bytes: its members,
// each a memory disk of logical blocks of lbs behind a queue of lim over
// disk, and the array over them. Errors: md.New's and blk.NewQueue's (a
// level that needs more members, a chunk that is not a power of two), and
// an array smaller than size.
func (a Array) newArray(size uint64, lbs uint32, disk blk.Model, lim blk.Limits) (*md.Array, []*blk.Queue, error) {
	if a.Members < 1 || a.Members > MaxArrayMembers {
		return nil, nil, fmt.Errorf("an array of %d members (want 1 to %d)", a.Members, MaxArrayMembers)
	}
	per := a.memberBytes(size)
	queues := make([]*blk.Queue, a.Members)
	members := make([]blk.Device, a.Members)
	for i := range queues {
		mem, err := blk.NewMemDisk(MemberName(i), per, lbs)
		if err != nil {
			return nil, nil, err
		}
		if queues[i], err = blk.NewQueue(MemberName(i), mem, disk, lim); err != nil {
			return nil, nil, err
		}
		members[i] = queues[i]
	}
	arr, err := md.New(md.Config{Level: a.Level, ChunkSize: a.Chunk, Name: "md0"}, members)
	if err != nil {
		return nil, nil, err
	}
	if arr.Sectors()<<blk.SectorShift < size {
		return nil, nil, fmt.Errorf("a %s holds %d bytes, less than the device's %d", a, arr.Sectors()<<blk.SectorShift, size)
	}
	return arr, queues, nil
}

// memberTracer sends a member queue's block events to the run's step
// meter as that member's (blockStep.disk), with the array's sectors of
// their data (blockStep.at): a request's first sector's, which holds for
// the whole request when it stays within a chunk, as a readahead window
// smaller than a chunk does.
type memberTracer struct {
	m    *stepMeter
	a    *md.Array
	disk uint8
}

// Trace implements blk.Tracer.
func (t memberTracer) Trace(e blk.TraceEvent) {
	t.m.disk, t.m.arr = t.disk, t.a
	t.m.Trace(e)
	t.m.disk, t.m.arr = 0, nil
}

// TraceBio implements blk.BioTracer.
func (t memberTracer) TraceBio(k blk.TraceKind, op blk.Op, flags blk.BioFlags, sector, bytes uint64) {
	t.m.disk, t.m.arr = t.disk, t.a
	t.m.TraceBio(k, op, flags, sector, bytes)
	t.m.disk, t.m.arr = 0, nil
}

// mdTap follows an md array's counters between the clock's placements:
// the md layer's work of each piece of work placed, priced on the CPU that
// submitted its bios, or for a RAID6 write on raid5d, which place then
// puts on the clock (raid5d).
type mdTap struct {
	a *md.Array
	// raid6 says the array's writes are raid5d's; data is its data
	// members (members − 2).
	raid6 bool
	data  float64
	last  md.Stats
	// thread is raid5d's work so far, as quantities the profile prices
	// (its load).
	thread timing.Quantities
	// free and busy are raid5d on the clock: when it is next free, and
	// its time working.
	free, busy float64
	// pending is raid5d's work of the piece of work about to be placed and
	// pendingS its passes over data; handles says there is such work.
	// charge sets them, take puts them on the clock and clears them.
	pending  float64
	pendingS streams
	handles  bool
}

// newMDTap returns the tap of array a of members disks, its counters
// taken as seen.
func newMDTap(a *md.Array, members int) *mdTap {
	t := &mdTap{a: a, last: a.Stats(), raid6: a.Level() == md.Raid6}
	if t.raid6 {
		t.data = float64(max(members-2, 1))
	}
	return t
}

// charge takes the array's work since the last look, for a piece of work
// that made reqs requests and bios bio passes on the members' queues: it
// adds the submitter's share to q (md's per-bio work, and the member bios,
// requests and passes it keeps) and returns that share's time under p and
// the requests and passes it keeps. A RAID6 write's stripes, and then its
// member bios, requests and passes, are raid5d's: they go to its load, and
// place puts them on the clock. O(1).
func (t *mdTap) charge(p *timing.Profile, q *timing.Quantities, reqs, bios int) (ns float64, cpuReqs, cpuBios int) {
	now := t.a.Stats()
	d := now.Sub(t.last)
	t.last = now
	var sub timing.Quantities
	sub[timing.ParamMDBio] = float64(d.BiosIn + d.Splits)
	sub[timing.ParamMDWriteBio] = float64(d.WriteBios)
	sub[timing.ParamStripeAttach] = float64(d.StripeAttach)
	cpuReqs, cpuBios = reqs, bios
	if t.raid6 && d.Stripes > 0 {
		var th timing.Quantities
		th[timing.ParamStripe] = float64(d.Stripes)
		th[timing.ParamParityByte] = float64(d.ParityBytes)
		th[timing.ParamMemberBio] = float64(d.MemberBios)
		th[timing.ParamMQBio] = float64(bios)
		th[timing.ParamRequest] = float64(reqs)
		for i, n := range th {
			t.thread[i] += n
			t.pending += n * p.NS[i]
		}
		// biodrain copies each written byte into the stripe cache (a load
		// and a store), and gen_syndrome reads every data page of a
		// stripe and writes P and Q.
		t.pendingS.parity += d.ParityBytes
		t.pendingS.moved += 2*float64(d.BytesIn) + float64(d.ParityBytes)*(1+t.data/2)
		t.handles = true
		cpuReqs, cpuBios = 0, 0
	} else {
		sub[timing.ParamMemberBio] = float64(d.MemberBios)
	}
	for i, n := range sub {
		if n != 0 {
			q[i] += n
			ns += n * p.NS[i]
		}
	}
	return ns, cpuReqs, cpuBios
}

// take returns raid5d's pending work for a placement from start: when it
// starts (once raid5d is free, and no earlier than start) and how long it
// takes, stretched by the memory bus (bus.cpu), and puts it on raid5d.
// ok is false when nothing is pending. O(1).
func (t *mdTap) take(bus *memBus, start float64) (from, ns float64, ok bool) {
	if !t.handles {
		return 0, 0, false
	}
	from = max(t.free, start)
	ns = bus.cpu(from, t.pending, t.pendingS)
	t.free = from + ns
	t.busy += ns
	t.pending, t.pendingS, t.handles = 0, streams{}, false
	return from, ns, true
}

// ParseArray returns the array s describes: "LEVEL:MEMBERS" or
// "LEVEL:MEMBERS:CHUNK", a level md.ParseLevel knows (raid0, raid10n2,
// raid10f2, raid6), the number of disks, and a chunk size as dd writes
// sizes ("512K"; default md.DefaultChunkSize): "raid6:4", "raid0:4:64K".
// The empty string is no array. Errors name what is wrong; md.New checks
// the rest when the run builds it (a level's fewest members, a chunk that
// is not a power of two).
func ParseArray(s string) (Array, error) {
	if s == "" {
		return Array{}, nil
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return Array{}, fmt.Errorf("engine: array %q: want LEVEL:MEMBERS[:CHUNK], as raid6:4 or raid0:4:64K", s)
	}
	lvl, err := md.ParseLevel(parts[0])
	if err != nil {
		return Array{}, fmt.Errorf("engine: array %q: %w", s, err)
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n < 1 || n > MaxArrayMembers {
		return Array{}, fmt.Errorf("engine: array %q: members %q: want 1 to %d", s, parts[1], MaxArrayMembers)
	}
	a := Array{Level: lvl, Members: n}
	if len(parts) == 3 {
		c, err := scenario.ParseDDSize(parts[2])
		if err != nil || c == 0 || c > math.MaxUint32 {
			return Array{}, fmt.Errorf("engine: array %q: chunk %q: want a size such as 512K", s, parts[2])
		}
		a.Chunk = uint32(c)
	}
	return a, nil
}
