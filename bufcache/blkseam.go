package bufcache

import "github.com/bhsim/bhsim/bufcache/blk"

// SEAM(blk618): the block layer's request flags (REQ_SYNC, REQ_PREFLUSH) and
// the flush bio arrive with the blk618 branch. Until it is merged, the page
// cache names the flags it would set here and setReqFlags drops them, and
// issueFlush sends nothing; both are finished when blk618 is merged.

// reqFlags are the REQ_* flags the page cache sets on its bios.
type reqFlags uint8

const (
	// reqSync is REQ_SYNC: data-integrity writeback (WB_SYNC_ALL) and
	// sync_dirty_buffer (wbc_to_write_flags, REQ_SYNC in write_dirty_buffer).
	reqSync reqFlags = 1 << iota
	// reqRahead is REQ_RAHEAD: a readahead read (mpage_readahead's bios).
	reqRahead
)

// syncWriteFlags are the flags of a synchronous buffer write
// (sync_dirty_buffer's REQ_SYNC).
const syncWriteFlags = reqSync

// setReqFlags gives b the flags f. SEAM(blk618): a no-op until blk.Bio has
// flags.
func setReqFlags(b *blk.Bio, f reqFlags) { _, _ = b, f }

// issueFlush models blkdev_issue_flush: an empty write bio with REQ_PREFLUSH,
// submitted and waited for (submit_bio_wait), which a queue with a volatile
// write cache turns into a flush request. It returns the bio's error.
// SEAM(blk618): sends nothing until blk.Bio has the preflush flag.
func (d *BlockDevice) issueFlush(cpu *CPU) error { _ = cpu; return nil }
