package engine

import (
	"fmt"

	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// DiscardModel is a disk's discard support and what a discard request
// costs it. The limits are the queue's (what
// /sys/block/DEV/queue/discard_max_bytes and discard_granularity show);
// the cost is a prior, a stated assumption and not a measurement, since
// the disk models (blk.Model) price reads, writes and flushes only: each
// discard request takes RequestNS plus ByteNS per byte it discards of the
// disk's time, in its queue like any request. MaxSectors 0 is a disk
// without discard, on which BLKDISCARD fails with EOPNOTSUPP.
type DiscardModel struct {
	// MaxSectors is max_discard_sectors: the largest discard request, in
	// 512-byte sectors; 0: no discard.
	MaxSectors uint64
	// Granularity is discard_granularity in bytes, the unit the device
	// discards in (0: the logical block size).
	Granularity uint32
	// RequestNS and ByteNS are the prior's cost per discard request and
	// per byte discarded, in nanoseconds.
	RequestNS, ByteNS float64
}

// SSDDiscardPrior is the "ssd" disk's discard: a SATA SSD's limits —
// max_discard_sectors 4194240 (libata's TRIM of 64 ranges of 65535
// sectors each), a granularity of 512 bytes — and a prior of 200 µs per
// request (the order of a non-queued ATA TRIM, which drains the queue)
// plus 0.005 ns per byte (200 GB/s: the drive updates its mapping, moving
// no data), so that a 4 GiB blkdiscard costs about 22 ms of disk time. A
// prior: no measurement of this repository sets it.
func SSDDiscardPrior() DiscardModel {
	return DiscardModel{MaxSectors: 4194240, Granularity: 512, RequestNS: 200e3, ByteNS: 0.005}
}

// errNoDiscard is BLKDISCARD's error on a disk without discard.
var errNoDiscard = fmt.Errorf("engine: the disk does not discard: %w", bufcache.EOPNOTSUPP)

// errArrayDiscard is BLKDISCARD's error on an md array (RunOptions.Array):
// md splits a discard by chunk and member (raid0, raid10) or refuses it
// unless its members discard safely (raid456's
// devices_handle_discard_safely), which the model does not follow.
var errArrayDiscard = fmt.Errorf("engine: discard on an md array is not modelled: %w", bufcache.EOPNOTSUPP)

// discardBioMax is the most sectors one discard bio carries: its size is
// an unsigned int of bytes (BIO_MAX_SECTORS, UINT_MAX >> SECTOR_SHIFT).
const discardBioMax = (1<<32 - 1) >> 9

// discard models BLKDISCARD (blk_ioctl_discard, 6.18) on c's CPU:
// EOPNOTSUPP on a disk without discard, and on an md array; the range's cached pages dropped
// (truncate_bdev_range, whose EINVAL refuses a range not aligned to the
// logical block size); then blkdev_issue_discard's bios, each split into
// requests at the queue's limits (discardPieces), which the meter counts
// and the disk's prior prices as one step of the clock. The model's
// block layer has no REQ_OP_DISCARD: no discard bio reaches the queue,
// merges nothing and is not traced as one.
func (e *engine) discard(c *cpuState, rec source.IO) error {
	lim := e.o.Disk.Discard
	if e.mr.array != nil {
		return errArrayDiscard
	}
	if lim.MaxSectors == 0 {
		return errNoDiscard
	}
	if err := e.mr.dev.TruncateRange(c.cpu, rec.Offset, rec.End()); err != nil {
		return err
	}
	bios, reqs := discardPieces(rec.Offset>>9, rec.Length>>9, lim, e.logical(), func(sector, sectors uint64) {
		if e.step != nil {
			e.step.discards = append(e.step.discards, [2]uint64{sector, sectors})
		}
	})
	e.op.bios += bios
	svc := float64(reqs)*lim.RequestNS + float64(rec.Length)*lim.ByteNS
	e.meter.steps = append(e.meter.steps, blockStep{kind: blk.TraceRqIssue, op: blk.OpWrite, sector: rec.Offset >> 9, at: rec.Offset >> 9,
		bytes: rec.Length, svc: svc, reqs: reqs})
	// Each request is one part of a bio that bio_split_discard cut: one
	// pass through blk_mq_submit_bio and one request (blockNS).
	e.meter.issued += int(reqs)
	e.meter.queued += int(reqs)
	return nil
}

// logical is the workload's logical block size.
func (e *engine) logical() uint64 { return uint64(max(e.w.LogicalBlockSize, 512)) }

// discardPieces counts the bios and requests a discard of sectors sectors
// from sector makes on a queue of limits lim and logical block size lbs:
// __blkdev_issue_discard's bios (bio_discard_limit: the first ends at a
// granularity boundary if it starts off one, the others are at most
// discardBioMax rounded down to the granularity), each cut by
// bio_split_discard into requests of at most max_discard_sectors (capped
// at what a bio's size holds, rounded down to the granularity), a cut
// moved back to a granularity boundary; discard_alignment 0, no
// partition offset. bio, if not nil, sees each bio. O(requests).
func discardPieces(sector, sectors uint64, lim DiscardModel, lbs uint64, bio func(sector, sectors uint64)) (bios, reqs uint64) {
	gran := max(uint64(lim.Granularity), lbs) >> 9
	bioMax := discardBioMax / gran * gran
	maxReq := min(lim.MaxSectors, (1<<32-1)/lbs*lbs>>9)
	maxReq -= maxReq % gran
	for sectors > 0 {
		n := bioMax
		if r := sector % gran; r != 0 {
			n = gran - r
		}
		n = min(n, sectors)
		if bio != nil {
			bio(sector, n)
		}
		bios++
		reqs += splitDiscard(sector, n, maxReq, gran)
		sector, sectors = sector+n, sectors-n
	}
	return bios, reqs
}

// splitDiscard counts the requests bio_split_discard cuts a discard bio of
// n sectors at sector into: pieces of at most maxReq sectors (0: no
// limit), each cut moved back so the next piece starts on a granularity
// boundary when that leaves a piece.
func splitDiscard(sector, n, maxReq, gran uint64) uint64 {
	if maxReq == 0 {
		return 1
	}
	reqs := uint64(1)
	for n > maxReq {
		split := maxReq
		if tmp := (sector + split) % gran; split > tmp {
			split -= tmp
		}
		sector, n = sector+split, n-split
		reqs++
	}
	return reqs
}
