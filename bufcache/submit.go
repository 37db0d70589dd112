package bufcache

import (
	"fmt"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// syncWriteFlags are the flags of a synchronous buffer write:
// sync_dirty_buffer's REQ_SYNC.
const syncWriteFlags = blk.FlagSync

// writebackFlags models wbc_to_write_flags: REQ_SYNC for data-integrity
// writeback (WB_SYNC_ALL: fsync, sync_blockdev, the last close, BLKFLSBUF),
// none for background writeback.
func writebackFlags(mode syncMode) blk.BioFlags {
	if mode == wbSyncAll {
		return blk.FlagSync
	}
	return 0
}

// submitBio models submit_bio from the page cache on cpu: through the CPU's
// plug when one is started; otherwise, on a queue of v6.18's block layer, in
// a plug of its own (__submit_bio plugs around blk_mq_submit_bio, so a lone
// bio is traced block_plug/block_unplug, as the host shows for each
// read-modify-write read), and on older queues directly.
func (d *BlockDevice) submitBio(cpu *CPU, b *blk.Bio) {
	if d.ownPlug && !cpu.plug.Active() {
		cpu.plug.Start()
		blk.SubmitBio(&cpu.plug, d.disk, b)
		_ = cpu.plug.Finish()
		return
	}
	blk.SubmitBio(&cpu.plug, d.disk, b)
}

// queueVersion618 reports whether disk is a request queue of v6.18's block
// layer, whose submit_bio plugs a lone bio.
func queueVersion618(disk blk.Device) bool {
	q, ok := disk.(interface{ Limits() blk.Limits })
	return ok && q.Limits().Version == blk.Version618
}

// issueFlush models blkdev_issue_flush (block/blk-flush.c): an empty write
// bio with REQ_PREFLUSH (and REQ_SYNC, as submit_bio_wait's callers send it),
// submitted outside any plug and waited for; a queue with a volatile write
// cache makes it one flush request, one without completes it at once. It
// returns nil, or ErrIO wrapping the bio's error (-EOPNOTSUPP is no error,
// as blkdev_fsync ignores it).
func (d *BlockDevice) issueFlush(cpu *CPU) error {
	b := &cpu.flushBio
	b.Reset(blk.OpWrite, 0)
	b.Flags = blk.FlagPreflush | blk.FlagSync
	b.EndIO = endFlush
	b.Private = cpu
	cpu.count(EvBioSubmit)
	d.disk.Submit(b) // completes before Submit returns (blk.Device's contract for the page cache)
	err := b.Err
	b.Reset(blk.OpWrite, 0)
	if err == nil || blk.Errno(err) == blk.ErrnoNotSupported {
		return nil
	}
	return fmt.Errorf("%w: flush of %s: %w", ErrIO, d.Name(), err)
}

// endFlush is the flush bio's completion (submit_bio_wait_endio).
func endFlush(b *blk.Bio) { b.Private.(*CPU).count(EvBioComplete) }
