package timing

import (
	"fmt"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/enum"
)

// Param names one primitive cost of a Profile: the price of a bufcache
// event, the measuring harness's own cost per timed call (ParamTimer), or
// the price of one count of the layers beneath the buffer cache.
type Param int

// Parameters beyond the bufcache events. Values below ParamTimer are bufcache
// events; the block-layer and md parameters price the counters of the layers
// beneath the buffer cache (blk.QueueStats, md.Stats), which have no simulated
// CPU of their own: a timing model charges them to a resource (see Load).
const (
	// ParamTimer is the cost the measuring harness adds to every timed call: in
	// Tosatti's module, the ktime_get() that closes one interval and the loop
	// around it; in the host runner (package bench/host), the pair of
	// CLOCK_THREAD_CPUTIME_ID readings around a system call, which a host
	// calibration measures.
	ParamTimer = Param(bufcache.NumEvents) + iota
	// ParamRequest is one request through blk-mq and the disk driver:
	// allocation, dispatch, the completion interrupt and blk_mq_end_request
	// (blk.OpStats.Requests).
	ParamRequest
	// ParamMQBio is one bio's pass through blk_mq_submit_bio at the queue of
	// a blk-mq disk: the plug merge attempt or the request it starts, and the
	// I/O accounting. dd's loads count the bio parts the disks served
	// (blk.OpStats.Bios); the engine's clock counts the passes it sees
	// (each bio queued, and each part a split cut off, an empty flush
	// among them). A bio to md passes md instead (ParamMDBio), and its
	// member bios pass a disk's queue.
	ParamMQBio
	// ParamMDBio is one pass of a bio through md_submit_bio and the
	// personality's mapping (md.Stats.BiosIn + Splits).
	ParamMDBio
	// ParamMemberBio is one bio md sends to a member: clone or remap,
	// submit_bio_noacct, and its completion (md.Stats.MemberBios).
	ParamMemberBio
	// ParamMDWriteBio is a redundant level's per-bio write bookkeeping:
	// md_write_start/end, the write-intent bitmap's start/end, raid10's r10bio
	// and barrier (md.Stats.WriteBios).
	ParamMDWriteBio
	// ParamStripeAttach is add_stripe_bio: one bio attached to one RAID6
	// stripe_head (md.Stats.StripeAttach).
	ParamStripeAttach
	// ParamStripe is one handle_stripe in raid5d: state analysis, biodrain,
	// ops_run_io and the stripe's release (md.Stats.Stripes).
	ParamStripe
	// ParamParityByte is one byte of RAID6 P or Q computed (md.Stats.ParityBytes).
	ParamParityByte
	// ParamDiskRequest is a request's fixed service time on a disk whose
	// time the profile prices (an SSD of unknown make: its command
	// latency); disks with a timing model of their own (blk.HDD) price it 0.
	ParamDiskRequest
	// ParamDiskByte is the transfer time of one byte on such a disk: the
	// inverse of its sustained rate.
	ParamDiskByte
	// ParamZeroByte is one byte a process reads from /dev/zero (read_zero's
	// clear_user into its buffer): dd if=/dev/zero's side of a write run.
	ParamZeroByte
	// ParamSyscall is one system call's entry and exit (dd's read and write
	// of every block).
	ParamSyscall
	// ParamMemByte is one byte a pass over data moves through the memory
	// controller: a CPU copy reads and writes each byte, a clear writes it, a
	// disk's DMA reads (a write) or writes (a read) it, RAID6's biodrain and
	// syndrome read and write theirs. It prices the machine's one memory bus
	// (the "memory" load), which every CPU and the DMA engines share: the
	// bound of a machine whose data outgrows its caches.
	ParamMemByte
	// ParamFSWritePage is the per-page work of a file system's buffered write
	// beyond the block device's path, which the model does not simulate: the
	// journal handle of write_begin/write_end, the allocation of the page's
	// blocks and the dirtying of the metadata that maps them (ext3 under
	// writetest: one per page written).
	ParamFSWritePage
	// ParamFSReadPage is the per-page work of a file system's read beyond the
	// block device's readahead: mapping the page's blocks through the inode's
	// block map (ext3 under writetest: one per page read from the disk).
	ParamFSReadPage
	// ParamMemStall is not a cost in nanoseconds but a share: the part of
	// a CPU's work, other than its streams over data (copies, clears,
	// parity), that is spent waiting for DRAM when the memory bus is idle.
	// With a share k > 0 a CPU's time grows as the bus fills: its streams
	// and k of the rest wait behind the bus's load (see Contended), which
	// is how a CPU-bound stage slows down when the DMA and the other CPUs
	// keep the memory controller busy. 0, the default of every profile
	// that does not set it, keeps the plain bottleneck model. 0 ≤ k < 1.
	ParamMemStall
	// ParamTracepoint is a harness cost, like ParamTimer: one firing, in the
	// measured thread, of a tracepoint the kernel runner enables in its
	// tracing instance (package bench/host): the probe's call, the event
	// reserved in the per-CPU buffer a filter needs, its fields stored, the
	// filter evaluated, and the event committed to the instance's ring
	// buffer. The model fires none; a host calibration counts the firings
	// from the model's trace counters, which mirror the runner's events.
	ParamTracepoint
	// paramEnd ends the list.
	paramEnd
)

// NumParams is the number of Params: the length of Quantities and of a
// Profile's cost table.
const NumParams = int(paramEnd)

// Quantities holds one amount per Param: the events a CPU counted, the timed
// calls of a harness, the block-layer and md counts charged to a resource.
// Priced by a Profile, they are simulated time.
type Quantities [NumParams]float64

// Ev returns the Param that prices event e.
func Ev(e bufcache.Event) Param { return Param(e) }

// extraParamNames names the parameters from ParamTimer on, offset by
// ParamTimer.
var extraParamNames = enum.New[Param]("param", "timer", "requests", "mq-bios", "md-bios", "member-bios", "md-write-bios",
	"stripe-attaches", "stripes", "parity-bytes", "disk-requests", "disk-bytes", "zero-bytes", "syscalls", "memory-bytes", "fs-write-pages", "fs-read-pages", "memory-stall",
	"tracepoints")

// String returns the event's name or the extra parameter's ("timer",
// "requests", "md-bios", ...).
func (p Param) String() string {
	if p >= ParamTimer {
		return extraParamNames.String(p - ParamTimer)
	}
	return bufcache.Event(p).String()
}

// Unit returns the unit of p's figure in a Profile: "ns", or "share" for
// ParamMemStall.
func (p Param) Unit() string {
	if p == ParamMemStall {
		return "share"
	}
	return "ns"
}

// ParseParam returns the Param whose String is s. The error lists the extra
// parameters' names (event names are bufcache's).
func ParseParam(s string) (Param, error) {
	if p, ok := extraParamNames.Lookup(s); ok {
		return ParamTimer + p, nil
	}
	e, err := bufcache.ParseEvent(s)
	if err != nil {
		return 0, fmt.Errorf("timing: unknown parameter %q (an event name or one of %s)", s, extraParamNames.List())
	}
	return Param(e), nil
}

// PerOp converts events recorded over ops operations, with timed calls per
// operation, into per-operation quantities. ops must be positive.
func PerOp(ev bufcache.Counters, ops int, timed float64) Quantities {
	var q Quantities
	for e, n := range ev {
		q[e] = float64(n) / float64(ops)
	}
	q[ParamTimer] = timed
	return q
}
