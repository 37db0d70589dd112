package blk

import (
	"fmt"
	"math/bits"

	"github.com/bhsim/bhsim/internal/enum"
)

// Block-layer defaults (include/linux/blkdev.h, v5.10).
const (
	// DefMaxSectors is the default max_sectors cap, 2560 sectors = 1280 KiB
	// (BLK_DEF_MAX_SECTORS; raised to 4 MiB only in 2025 by 9b8b84879d4a,
	// "block: Increase BLK_DEF_MAX_SECTORS_CAP").
	DefMaxSectors = 2560
	// DefMaxSegments is BLK_MAX_SEGMENTS, the default max_segments.
	DefMaxSegments = 128
	// AHCIMaxSegments is the max_segments of a disk behind an AHCI SATA
	// controller: libata's AHCI host template sets the SCSI host's
	// sg_tablesize to AHCI_MAX_SG (168 entries, drivers/ata/ahci.h), and the
	// SCSI midlayer gives the queue that many segments. The Helios4's
	// Armada 388 SATA ports are AHCI (ahci_mvebu).
	AHCIMaxSegments = 168
	// DefMaxSegmentSize is BLK_MAX_SEGMENT_SIZE, the default max_segment_size.
	DefMaxSegmentSize = 65536
	// DefPageSize is PAGE_SIZE on x86-64, arm64 with 4 KiB pages and ARMv7
	// (the Helios4).
	DefPageSize = 4096
)

// SegmentAccounting says how a request counts its segments when a bio is
// merged into it. The two counts differ most for small bios: eight 512-byte
// bios of one page are eight segments for the kernel's merge check and one
// scatter-gather entry for the DMA, so with 512-byte buffers the kernel's
// requests stop at MaxSegments bios (64 KiB) where the coalesced count lets
// them grow to MaxSegments pages.
type SegmentAccounting uint8

const (
	// SegmentsPerBio is the kernel's accounting in v5.10 and every kernel since
	// at least 2.6 for bio merges: a request's nr_phys_segments is the sum of
	// its bios' segment counts (ll_back_merge_fn → ll_new_hw_segment). Inside one
	// bio physically contiguous memory is one segment (bio_add_page folds it into
	// a multi-page bio_vec, and blk_bio_segment_split cuts that at
	// max_segment_size); across a bio boundary nothing coalesces, so eight
	// 512-byte bios of one page count eight segments. Request-to-request merges
	// coalesced across the boundary until eded341c085b ("block: don't decrement
	// nr_phys_segments for physically contigous segments", v5.2); this package
	// does not model request-to-request merges.
	SegmentsPerBio SegmentAccounting = iota
	// SegmentsCoalesced counts the maximal physically contiguous runs of the
	// whole request, each cut at MaxSegmentSize, across bio boundaries too: the
	// number of scatter-gather entries blk_rq_map_sg builds for the DMA. No
	// kernel limits bio merges by this count; it answers "how large would
	// requests be if the merge check saw what the DMA sees".
	SegmentsCoalesced
)

// accountingNames names the accountings for String.
var accountingNames = enum.New[SegmentAccounting]("accounting",
	[]string{SegmentsPerBio: "per-bio", SegmentsCoalesced: "coalesced"}...)

// String returns "per-bio" or "coalesced" ("accounting(n)" for another
// value).
func (a SegmentAccounting) String() string { return accountingNames.String(a) }

// Version selects which kernel's block layer a queue models where they
// differ. The zero value is [Version510], the model of the Helios4 thread's
// kernels, so limits built before the selector existed keep their numbers.
type Version uint8

const (
	// Version510 is v5.10: a plug tries back merges only, into its plugged
	// requests of the bio's queue from newest to oldest unless
	// [Plug.NewestOnly]; a plug holding [PlugMaxRequests] requests (or
	// [Plug.MaxRequests]) or whose newest request is at least [PlugFlushSize]
	// bytes is flushed, callbacks first, before it takes another request; a
	// FUA write on a queue that supports FUA bypasses the plug.
	Version510 Version = iota
	// Version618 is v6.18 (blk_mq_submit_bio and blk_attempt_plug_merge of
	// 6.18): a plug tries one merge, back or front, into its newest request
	// if that is of the bio's queue, else into the oldest plugged request of
	// that queue; it is flushed, without running its callbacks, when it holds
	// [PlugMaxRequests618] requests (twice that when they are of several
	// queues; [Plug.MaxRequests] overrides) or its newest request is at least
	// [PlugFlushSize] bytes; a FUA write on a queue that supports FUA waits
	// in the plug, unmergeable.
	Version618
)

// versionNames names the versions for String.
var versionNames = enum.New[Version]("version", []string{Version510: "5.10", Version618: "6.18"}...)

// String returns "5.10" or "6.18" ("version(n)" for another value).
func (v Version) String() string { return versionNames.String(v) }

// WBTDefaultDepth is blk-wbt's RWB_DEF_DEPTH, the most write requests a queue
// with writeback throttling lets be in flight for synchronous writeback
// (rq_depth.max_depth at scale step 0, v4.10 to v6.18).
const WBTDefaultDepth = 16

// Limits models the parts of struct queue_limits (v5.10, v6.18) and the queue
// settings that decide how bios become requests. Build it with DefaultLimits
// or LoopLimits and adjust fields; NewQueue validates it.
type Limits struct {
	// MaxSectors is max_sectors: the largest request, in 512-byte sectors.
	MaxSectors uint32
	// MaxSegments is max_segments: the most DMA segments in one request.
	MaxSegments uint32
	// MaxSegmentSize is max_segment_size: the longest DMA segment, in bytes.
	MaxSegmentSize uint32
	// LogicalBlockSize is logical_block_size; it must equal the store's.
	LogicalBlockSize uint32
	// PhysicalBlockSize is physical_block_size. A bio cut at MaxSectors is cut
	// at a physical-block boundary (get_max_io_size, v5.10).
	PhysicalBlockSize uint32
	// PageSize is PAGE_SIZE, which places a vector's PFN and Offset in memory.
	PageSize uint32
	// SegmentAccounting selects how merges count segments.
	SegmentAccounting SegmentAccounting
	// Version selects the kernel whose plugging and merging the queue
	// models (see [Version]).
	Version Version
	// WriteCache is /sys/block/<dev>/queue/write_cache: true for "write
	// back", a volatile write cache (BLK_FEAT_WRITE_CACHE), false for "write
	// through". With it, a preflush bio becomes a flush request; without,
	// the flush flags are dropped and an empty flush completes at once, as
	// submit_bio_noacct does.
	WriteCache bool
	// FUA is /sys/block/<dev>/queue/fua: the device takes FUA writes
	// (BLK_FEAT_FUA); without it, a FUA write on a write-back queue is
	// followed by a flush request. It needs WriteCache.
	FUA bool
	// WriteThrottleDepth is writeback throttling (blk-wbt, on when
	// wbt_lat_usec is not 0): before a task holding a plug makes a new write
	// request for the queue while d or more of its write requests are in
	// flight — in this model, waiting in the task's plug — the task sleeps,
	// which flushes its plug as schedule() does (the requests are inserted,
	// block_rq_insert, rather than issued directly). d is this depth for
	// REQ_SYNC writes and (d+1)/2 (wb_normal) for others; REQ_SYNC|REQ_IDLE
	// writes are not throttled. 0 is off. The loop devices of Linux 6.18 have
	// it on (wbt_lat_usec 2000) with the default depth [WBTDefaultDepth]:
	// that is the 16-request plug flush the host recorded.
	WriteThrottleDepth uint32
	// Elevator is an I/O scheduler on the queue (/sys/block/<dev>/queue/
	// scheduler other than none: mq-deadline, kyber, bfq; v6.18's
	// RQF_USE_SCHED): every request but those of the flush machinery is
	// inserted into it before it is dispatched, so each is traced once as
	// block_rq_insert — at its plug's flush, or at once for a request made
	// without a plug. The model's dispatch is synchronous, so nothing waits
	// in the scheduler to merge with or be reordered; Linux 6.18 on the
	// host showed the same counts with each of the three schedulers as
	// without one, but for the inserts (and bfq turning wbt off, which
	// LoopLimitsFrom applies).
	Elevator bool
}

// DefaultLimits returns the block layer's default limits in v5.10
// (blk_set_default_limits with the default max_sectors cap: 2560 sectors, 128
// segments of at most 64 KiB), 4 KiB pages and per-bio segment accounting, with
// the given logical and physical block sizes. A real driver lowers or raises
// some of them: a SATA disk behind an AHCI host, like the Helios4's, gets
// max_segments 168 (AHCI_MAX_SG, from memory, not verified here). It does not
// validate the result; NewQueue does. Its Version is Version510, with no
// write cache and no write throttling. O(1).
func DefaultLimits(logical, physical uint32) Limits {
	return Limits{
		MaxSectors:        DefMaxSectors,
		MaxSegments:       DefMaxSegments,
		MaxSegmentSize:    DefMaxSegmentSize,
		LogicalBlockSize:  logical,
		PhysicalBlockSize: physical,
		PageSize:          DefPageSize,
		SegmentAccounting: SegmentsPerBio,
	}
}

// Validate reports whether the limits are ones the kernel would accept (the
// checks of blk_queue_max_hw_sectors, blk_queue_max_segments,
// blk_queue_max_segment_size and blk_queue_logical_block_size, which clamp or
// warn where this refuses). It returns nil or an error wrapping
// ErrInvalidConfig: a logical block size that is not a power of two in
// [512, 65536]; a physical block size that is not a power of two in
// [logical, 65536]; a page size that is not a power of two in [4096, 65536];
// no segments; a maximum segment shorter than a page; a MaxSectors below a page
// or a physical block, or not a multiple of the logical block; an unknown
// SegmentAccounting or Version; FUA without WriteCache (the kernel clears
// BLK_FEAT_FUA then). O(1).
func (l Limits) Validate() error {
	switch {
	case !inPow2Range(l.LogicalBlockSize, 512, 65536):
		return fmt.Errorf("%w: logical block size %d is not a power of two in [512, 65536]", ErrInvalidConfig, l.LogicalBlockSize)
	case !inPow2Range(l.PhysicalBlockSize, l.LogicalBlockSize, 65536):
		return fmt.Errorf("%w: physical block size %d is not a power of two in [%d, 65536]", ErrInvalidConfig, l.PhysicalBlockSize, l.LogicalBlockSize)
	case !inPow2Range(l.PageSize, 4096, 65536):
		return fmt.Errorf("%w: page size %d is not a power of two in [4096, 65536]", ErrInvalidConfig, l.PageSize)
	case l.MaxSegments == 0:
		return fmt.Errorf("%w: max_segments is 0", ErrInvalidConfig)
	case l.MaxSegmentSize < l.PageSize:
		return fmt.Errorf("%w: max_segment_size %d is below the page size %d", ErrInvalidConfig, l.MaxSegmentSize, l.PageSize)
	case uint64(l.MaxSectors)<<SectorShift < uint64(max(l.PageSize, l.PhysicalBlockSize)):
		return fmt.Errorf("%w: max_sectors %d is below a page (%d) or a physical block (%d)", ErrInvalidConfig, l.MaxSectors, l.PageSize, l.PhysicalBlockSize)
	case uint64(l.MaxSectors)<<SectorShift%uint64(l.LogicalBlockSize) != 0:
		return fmt.Errorf("%w: max_sectors %d is not a multiple of the logical block size %d", ErrInvalidConfig, l.MaxSectors, l.LogicalBlockSize)
	case l.SegmentAccounting > SegmentsCoalesced:
		return fmt.Errorf("%w: unknown segment accounting %d", ErrInvalidConfig, l.SegmentAccounting)
	case !versionNames.Valid(l.Version):
		return fmt.Errorf("%w: unknown block-layer %s", ErrInvalidConfig, l.Version)
	case l.FUA && !l.WriteCache:
		return fmt.Errorf("%w: FUA without a write-back cache", ErrInvalidConfig)
	}
	return nil
}

// maxIOSectors is how many sectors a request starting at sector may hold
// before a bio must be split: MaxSectors, shortened so that the request ends on
// a physical-block boundary (get_max_io_size, v5.10). Validate guarantees that
// MaxSectors covers at least one physical block, so the result is positive.
func (l *Limits) maxIOSectors(sector uint64) uint64 {
	pbs := uint64(l.PhysicalBlockSize >> SectorShift)
	lead := sector & (pbs - 1)
	return (uint64(l.MaxSectors)+lead)&^(pbs-1) - lead
}

// pageShift is log2 of the page size.
func (l *Limits) pageShift() uint { return uint(bits.TrailingZeros32(l.PageSize)) }
