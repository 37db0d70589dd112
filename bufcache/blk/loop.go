package blk

import "fmt"

// LoopLimits returns the limits of a loop device on Linux 6.18 whose logical
// block size (LOOP_CONFIGURE's block_size) is sector, as the host recorded them
// for every scenario of the corpus (docs/host-kernel.md): max_sectors_kb and
// max_hw_sectors_kb 1280 (2560 sectors), max_segments 128, max_segment_size
// 65536, logical = physical = sector, 4 KiB pages, write_cache "write back"
// without FUA, writeback throttling on at its default depth, and the v6.18
// plug and merges ([Version618]). Segments are counted per bio, as every
// kernel does. It does not validate the result (sector must be a power of two
// in [512, 65536]); NewQueue does. O(1).
func LoopLimits(sector uint32) Limits {
	return Limits{
		MaxSectors:         DefMaxSectors,
		MaxSegments:        DefMaxSegments,
		MaxSegmentSize:     DefMaxSegmentSize,
		LogicalBlockSize:   sector,
		PhysicalBlockSize:  sector,
		PageSize:           DefPageSize,
		SegmentAccounting:  SegmentsPerBio,
		Version:            Version618,
		WriteCache:         true,
		WriteThrottleDepth: WBTDefaultDepth,
	}
}

// Values of /sys/block/<dev>/queue/write_cache.
const (
	WriteCacheBack    = "write back"
	WriteCacheThrough = "write through"
)

// QueueAttrs are the attributes of /sys/block/<dev>/queue that decide how a
// queue makes requests, as a recorded run's queue header gives them (plain
// values, so that callers need not share a type with this package). Zero
// fields take LoopLimits' values, except the booleans.
type QueueAttrs struct {
	// LogicalBlockSize and PhysicalBlockSize are logical_block_size and
	// physical_block_size in bytes.
	LogicalBlockSize, PhysicalBlockSize uint32
	// MaxSectorsKB and MaxHWSectorsKB are max_sectors_kb and
	// max_hw_sectors_kb; the first may not exceed the second.
	MaxSectorsKB, MaxHWSectorsKB uint32
	// MaxSegments and MaxSegmentSize are max_segments and max_segment_size.
	MaxSegments, MaxSegmentSize uint32
	// WriteCache is write_cache: WriteCacheBack or WriteCacheThrough.
	WriteCache string
	// FUA is fua.
	FUA bool
	// Scheduler is the selected scheduler: "" or "none", or one of
	// mq-deadline, kyber and bfq (Limits.Elevator; bfq also turns wbt
	// off, as bfq_init_queue does).
	Scheduler string
	// NoMerges is nomerges; only 0 (all merges) is modelled.
	NoMerges int
}

// LoopLimitsFrom returns LoopLimits(a.LogicalBlockSize) with the recorded
// attributes a in place of the defaults: a loop device of Linux 6.18 as a
// recorded header describes it. Errors wrap ErrInvalidConfig: no logical
// block size, max_sectors_kb above max_hw_sectors_kb or beyond 32 bits of
// sectors, a write_cache other than "write back" and "write through", a
// scheduler other than none, nomerges other than 0, or limits that fail
// Validate. O(1).
func LoopLimitsFrom(a QueueAttrs) (Limits, error) {
	if a.LogicalBlockSize == 0 {
		return Limits{}, fmt.Errorf("%w: no logical block size", ErrInvalidConfig)
	}
	l := LoopLimits(a.LogicalBlockSize)
	if a.PhysicalBlockSize != 0 {
		l.PhysicalBlockSize = a.PhysicalBlockSize
	}
	if a.MaxSectorsKB != 0 {
		if a.MaxHWSectorsKB != 0 && a.MaxSectorsKB > a.MaxHWSectorsKB {
			return Limits{}, fmt.Errorf("%w: max_sectors_kb %d above max_hw_sectors_kb %d", ErrInvalidConfig, a.MaxSectorsKB, a.MaxHWSectorsKB)
		}
		if a.MaxSectorsKB > 1<<21-1 {
			return Limits{}, fmt.Errorf("%w: max_sectors_kb %d does not fit 32 bits of sectors", ErrInvalidConfig, a.MaxSectorsKB)
		}
		l.MaxSectors = a.MaxSectorsKB << 1
	}
	if a.MaxSegments != 0 {
		l.MaxSegments = a.MaxSegments
	}
	if a.MaxSegmentSize != 0 {
		l.MaxSegmentSize = a.MaxSegmentSize
	}
	switch a.WriteCache {
	case "", WriteCacheBack:
		l.WriteCache = true
	case WriteCacheThrough:
		l.WriteCache = false
	default:
		return Limits{}, fmt.Errorf("%w: write_cache %q is neither %q nor %q", ErrInvalidConfig, a.WriteCache, WriteCacheBack, WriteCacheThrough)
	}
	l.FUA = a.FUA
	switch a.Scheduler {
	case "", "none":
	case "mq-deadline", "kyber":
		l.Elevator = true
	case "bfq":
		l.Elevator, l.WriteThrottleDepth = true, 0
	default:
		return Limits{}, fmt.Errorf("%w: scheduler %q is not modelled (none, mq-deadline, kyber, bfq)", ErrInvalidConfig, a.Scheduler)
	}
	if a.NoMerges != 0 {
		return Limits{}, fmt.Errorf("%w: nomerges %d is not modelled (only 0)", ErrInvalidConfig, a.NoMerges)
	}
	if err := l.Validate(); err != nil {
		return Limits{}, err
	}
	return l, nil
}
