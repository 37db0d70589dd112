package md

import (
	"fmt"
	"math/bits"

	"github.com/bhsim/bhsim/internal/conc"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/freelist"
)

// DefaultChunkSize is the chunk size New uses when Config.ChunkSize is 0:
// 512 KiB, mdadm's default since mdadm 3.1 (2010).
const DefaultChunkSize = 512 << 10

// pageShift and pageSize give PAGE_SIZE, the width of a RAID6 stripe unit
// (STRIPE_SIZE in raid5.c) and the smallest chunk md accepts.
const (
	pageShift = 12
	pageSize  = 1 << pageShift
)

// maxRaid6Members is the largest raid6: 255 data members (one per power of the
// generator) plus P and Q.
const maxRaid6Members = 255 + 2

// Config describes an array to New (mdadm --create's options).
type Config struct {
	// Level is the personality and layout.
	Level Level
	// ChunkSize is the chunk in bytes: a power of two, at least 4096 and at least
	// the members' logical block size. 0 means DefaultChunkSize.
	ChunkSize uint32
	// Name identifies the array in messages ("md0"); empty means "md".
	Name string
	// StripeCacheSize is raid6's stripe_cache_size (md/stripe_cache_size in
	// sysfs): the number of stripe_heads, each one PAGE_SIZE unit on every
	// member, that writes can hold at once. 0 means DefaultStripeCacheSize;
	// otherwise it must lie in [MinStripeCacheSize, MaxStripeCacheSize], the
	// range raid5_set_cache_size accepts. Other levels ignore it.
	StripeCacheSize int
}

// Stripe cache sizes (drivers/md/raid5.h and raid5_set_cache_size, v5.10).
const (
	// DefaultStripeCacheSize is NR_STRIPES, the stripe_heads raid5 allocates
	// when an array starts.
	DefaultStripeCacheSize = 256
	// MinStripeCacheSize is the smallest stripe_cache_size the kernel accepts.
	MinStripeCacheSize = 17
	// MaxStripeCacheSize is the largest stripe_cache_size the kernel accepts.
	MaxStripeCacheSize = 32768
)

// Array is an md RAID array: a bio-based block device (it implements
// [blk.Device]) whose Submit runs the personality's make_request and sends
// member bios to the member devices. Each member contributes the same number of
// whole chunks; the array's capacity follows the level: raid0 n×member, raid10
// n×member/2, raid6 (n−2)×member (each rounded down to whole chunks).
//
// Until Confine, an Array is safe for concurrent use: Submit and SubmitPlugged may be called
// from several goroutines, each with its own plug, each driving the members it
// needs from its own goroutine. RAID6 writes meet in the stripe cache (see
// SubmitPlugged).
//
// Degraded operation (v5.10's md_error and the personalities' error
// handling, simplified: see degraded.go). A raid0 member error fails the
// array's bio with that error. On raid10 and raid6 a member whose bio fails is
// marked faulty (md_error; also SetFaulty, mdadm --fail), and no bio is sent
// to it again: a read it should have served goes to the other copy (raid10) or
// is rebuilt from the other members' data and P or Q (raid6, any two members
// lost); writes skip it, and a raid6 stripe whose lost data unit the write
// does not wholly cover rebuilds that unit's old contents before computing
// the new parity. The array's bio then succeeds. It fails with the member's
// error when raid10 would lose its last copy of the data (raid10_error
// refuses to fail that member), and with ErrDataLost once a raid6 has lost
// more than two members. Degraded and Failed report the state. A degraded
// read of a raid6 stripe that a write is changing at the same moment may see
// the stripe half written (the kernel serialises the two in the stripe
// cache); a single submitter, or writes and reads of different stripes, are
// exact.
type Array struct {
	name    string
	level   Level
	members []blk.Device
	lbs     uint32
	sectors uint64

	chunkShift uint   // log2 of the chunk size in bytes
	rowChunks  uint64 // chunks per member in one copy (f2: per half)

	cache stripeCache // raid6: the stripe_heads writes attach to

	deg     degradedState // which members are faulty
	mirrors []mirror      // raid10: per member, for read balancing (nil where it needs none)

	mu    conc.Mutex // guards free and stats
	free  freelist.List[request]
	stats Stats

	// confined: one goroutine at a time drives the array (Confine), so its
	// requests' and batches' counters and locks are confined too.
	confined bool
}

// Confine implements blk.Confiner: the array's locks and counters, those of
// the requests and stripe batches it makes from now on, and its members
// that implement blk.Confiner become confined (package internal/conc). The
// stripe cache keeps its sync.Mutex, which its condition variable needs; a
// confined array never waits on it (waiting for stripe_heads that only
// another goroutine could release panics instead). Call it before any I/O.
// From then on the array is safe for one goroutine at a time only.
func (a *Array) Confine() {
	a.confined = true
	a.mu.Confine()
	for i := range a.mirrors {
		a.mirrors[i].pending.Confine()
		a.mirrors[i].head.Confine()
	}
	for _, m := range a.members {
		blk.Confine(m)
	}
}

// Confined reports whether the array is confined.
func (a *Array) Confined() bool { return a.confined }

// New assembles an array of cfg.Level over members, in member order (mdadm
// --create /dev/md0 --raid-devices=n members...), as md_run and the
// personality's run function do (v5.10). All members must have the same size
// and logical block size.
//
// Errors: ErrBadLevel; ErrBadChunk; ErrTooFewMembers (raid0 and raid10 fewer
// than 2, raid6 fewer than 4); ErrTooManyMembers (raid6 more than 257);
// ErrMemberMismatch (sizes or logical block sizes differ); ErrBadMember (a nil
// member, members too small to hold a chunk per copy, raid6 members with a
// logical block size above 4096); ErrBadStripeCache (a StripeCacheSize out of
// range). Complexity O(n); the stripe cache grows on demand.
func New(cfg Config, members []blk.Device) (*Array, error) {
	if !levelNames.Valid(cfg.Level) {
		return nil, fmt.Errorf("%w: %s", ErrBadLevel, cfg.Level)
	}
	name := cfg.Name
	if name == "" {
		name = "md"
	}
	chunk := cfg.ChunkSize
	if chunk == 0 {
		chunk = DefaultChunkSize
	}
	if chunk < pageSize || !blocksize.IsPowerOfTwo(chunk) {
		return nil, fmt.Errorf("%w: %s: %d bytes is not a power of two >= %d", ErrBadChunk, name, chunk, pageSize)
	}
	cache := cfg.StripeCacheSize
	if cache == 0 {
		cache = DefaultStripeCacheSize
	}
	if cache < MinStripeCacheSize || cache > MaxStripeCacheSize {
		return nil, fmt.Errorf("%w: %s: %d stripe_heads is outside [%d, %d]", ErrBadStripeCache, name, cache, MinStripeCacheSize, MaxStripeCacheSize)
	}
	if n, want := len(members), cfg.Level.minMembers(); n < want {
		return nil, fmt.Errorf("%w: %s: %s needs at least %d, got %d", ErrTooFewMembers, name, cfg.Level, want, n)
	}
	if n := len(members); cfg.Level == Raid6 && n > maxRaid6Members {
		return nil, fmt.Errorf("%w: %s: raid6 takes at most %d, got %d", ErrTooManyMembers, name, maxRaid6Members, n)
	}
	for i, m := range members {
		if m == nil {
			return nil, fmt.Errorf("%w: %s: member %d is nil", ErrBadMember, name, i)
		}
		if m.Sectors() != members[0].Sectors() || m.LogicalBlockSize() != members[0].LogicalBlockSize() {
			return nil, fmt.Errorf("%w: %s: %s has %d sectors of logical block %d, %s has %d of %d",
				ErrMemberMismatch, name, m.Name(), m.Sectors(), m.LogicalBlockSize(),
				members[0].Name(), members[0].Sectors(), members[0].LogicalBlockSize())
		}
	}
	lbs := members[0].LogicalBlockSize()
	if chunk < lbs {
		return nil, fmt.Errorf("%w: %s: %d bytes is below the members' logical block size %d", ErrBadChunk, name, chunk, lbs)
	}
	if cfg.Level == Raid6 && lbs > pageSize {
		return nil, fmt.Errorf("%w: %s: logical block size %d exceeds the %d-byte stripe unit", ErrBadMember, name, lbs, pageSize)
	}
	a := &Array{
		name:       name,
		level:      cfg.Level,
		members:    append([]blk.Device(nil), members...),
		lbs:        lbs,
		chunkShift: uint(bits.TrailingZeros32(chunk)),
	}
	memberChunks := members[0].Sectors() << blk.SectorShift >> a.chunkShift
	n := uint64(len(members))
	var chunks uint64 // data chunks the array holds
	switch a.level {
	case Raid0:
		a.rowChunks, chunks = memberChunks, n*memberChunks
	case Raid10Near2:
		a.rowChunks, chunks = memberChunks, n*memberChunks/2
	case Raid10Far2:
		a.rowChunks = memberChunks / 2
		chunks = n * a.rowChunks
	case Raid6:
		a.rowChunks, chunks = memberChunks, (n-2)*memberChunks
	}
	if chunks == 0 {
		return nil, fmt.Errorf("%w: %s: %d-sector members hold no whole %s copy of a %d-byte chunk",
			ErrBadMember, name, members[0].Sectors(), a.level, chunk)
	}
	a.sectors = chunks << a.chunkShift >> blk.SectorShift
	a.deg.init(len(members))
	a.initMirrors(members)
	if a.level == Raid6 {
		a.cache.init(cache, a.chunkShift-pageShift)
	}
	return a, nil
}

// Name implements blk.Device: the Config's Name.
func (a *Array) Name() string { return a.name }

// Sectors implements blk.Device: the array's capacity in 512-byte sectors.
func (a *Array) Sectors() uint64 { return a.sectors }

// LogicalBlockSize implements blk.Device: the members' logical block size, which
// md stacks unchanged (blk_stack_limits).
func (a *Array) LogicalBlockSize() uint32 { return a.lbs }

// Level returns the array's personality and layout.
func (a *Array) Level() Level { return a.level }

// ChunkSize returns the chunk size in bytes.
func (a *Array) ChunkSize() uint32 { return 1 << a.chunkShift }
