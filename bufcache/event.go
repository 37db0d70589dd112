package bufcache

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/internal/enum"
)

// Event is one kind of primitive work the model counts on the simulated CPU that
// did it. A hardware profile (package bench/timing) prices each event in simulated
// nanoseconds; the same counts give the same simulated time on every machine.
type Event uint8

// The events. Their names (String) are used as benchmark metric units
// ("index-levels/op") and in explain output.
const (
	// EvBHAlloc counts buffer_heads allocated (alloc_buffer_head).
	EvBHAlloc Event = iota
	// EvBHFree counts buffer_heads freed (free_buffer_head).
	EvBHFree
	// EvRingLink counts b_this_page stores while a page's list is built or closed.
	EvRingLink
	// EvRingWalk counts steps along an existing list or ring: the tail walk of
	// link_dev_buffers/create_empty_buffers, state passes, lookups, drop_buffers.
	EvRingWalk
	// EvBHInit counts buffer_heads initialised by init_page_buffers (mapped or
	// given their block number).
	EvBHInit
	// EvIndexLookup counts page-cache index lookups (filemap_get_entry).
	EvIndexLookup
	// EvIndexLevel counts index tree levels descended by lookups.
	EvIndexLevel
	// EvIndexInsert counts folios inserted into the page-cache index.
	EvIndexInsert
	// EvIndexDelete counts folios removed from the page-cache index.
	EvIndexDelete
	// EvPrivateLock counts acquisitions of mapping->private_lock.
	EvPrivateLock
	// EvFolioGet counts folio references taken (folio_try_get, folio_get).
	EvFolioGet
	// EvFolioPut counts folio references dropped (folio_put).
	EvFolioPut
	// EvFolioAlloc counts folios created for the page cache.
	EvFolioAlloc
	// EvFolioFree counts folios freed (last reference dropped).
	EvFolioFree
	// EvFolioLock counts folio_lock acquisitions.
	EvFolioLock
	// EvMarkAccessed counts folio_mark_accessed calls (touch_buffer, FGP_ACCESSED).
	EvMarkAccessed
	// EvBHGet counts get_bh (b_count increments).
	EvBHGet
	// EvBHPut counts put_bh/brelse (b_count decrements).
	EvBHPut
	// EvBHLock counts lock_buffer acquisitions.
	EvBHLock
	// EvMarkDirty counts mark_buffer_dirty calls that found the buffer clean:
	// test_set_buffer_dirty and the folio's test-and-set of PG_dirty; the
	// folio's dirtying, once a folio, is EvFolioDirty.
	EvMarkDirty
	// EvBioSubmit counts bios submitted (submit_bh_wbc, submit_bio).
	EvBioSubmit
	// EvBioComplete counts bio completions handled.
	EvBioComplete
	// EvFindSlowFailed counts __find_get_block_slow misses on a page whose buffers
	// were all mapped (the kernel prints "__find_get_block_slow() failed").
	EvFindSlowFailed
	// EvLRULookup counts lookup_bh_lru calls.
	EvLRULookup
	// EvLRUSlot counts LRU slots examined by lookups.
	EvLRUSlot
	// EvLRUHit counts lookup_bh_lru hits.
	EvLRUHit
	// EvLRUInstall counts bh_lru_install calls.
	EvLRUInstall
	// EvLRUStep counts slots touched by bh_lru_install's swap cascade.
	EvLRUStep
	// EvLRUEvict counts entries pushed out of an LRU by an install.
	EvLRUEvict
	// EvLRUIPI counts CPUs interrupted by invalidate_bh_lrus.
	EvLRUIPI
	// EvFaultInPage counts user pages touched by fault_in_iov_iter_readable
	// (iov_iter_fault_in_readable before 5.16): one byte read per page.
	EvFaultInPage
	// EvCopyByte counts bytes copied between the user buffer and the page
	// cache: into it by a write (copy_page_from_iter_atomic), out of it by a
	// read (copy_page_to_iter).
	EvCopyByte
	// EvWriteIter counts iterations of the buffered write loop (one
	// write_begin/copy/write_end round, generic_perform_write or
	// iomap_write_iter).
	EvWriteIter
	// EvGetBlock counts get_block calls that map a buffer (blkdev_get_block,
	// iomap_to_bh).
	EvGetBlock
	// EvWritepage counts folios written back (block_write_full_folio).
	EvWritepage
	// EvReadaheadPage counts folios read by readahead without buffer heads
	// (do_mpage_readpage's per-page work).
	EvReadaheadPage
	// EvWarning counts kernel WARN()s and error messages the model would print
	// (brelse of a free buffer, mark_buffer_dirty of a non-uptodate buffer, ...).
	EvWarning
	// EvIomapBegin counts ->iomap_begin calls made by iomap_iter (package
	// iomap): one mapping round of an iomap buffered write, normally one per
	// write(2) to a block device, whose mapping spans to the device's end.
	EvIomapBegin
	// EvBHBit counts atomic read-modify-writes of a buffer_head's b_state
	// that no other event prices, one for each call of a set_buffer_* or
	// clear_buffer_* helper (include/linux/buffer_head.h's BUFFER_FNS) or a
	// test_set/test_clear one, as the kernel's call sites make them:
	// set_buffer_mapped when a buffer is mapped, set_buffer_uptodate,
	// set_buffer_new and clear_buffer_new when a write prepares and commits
	// it, test_clear_buffer_dirty and mark_buffer_async_write in
	// block_write_full_folio's second pass, mark_buffer_async_read in
	// block_read_full_folio, test_set_buffer_req in submit_bh, the bits the
	// completions set and clear, discard_buffer's two. Where a site tests a bit first (if (buffer_new(bh))) only a
	// change counts; set_buffer_* tests first from v4.18, and
	// __block_commit_write's clear_buffer_new from v5.12 (Config.BitOps);
	// clear_buffer_* itself never does. The bits
	// of lock_buffer/unlock_buffer are EvBHLock's, mark_buffer_dirty's
	// EvMarkDirty's.
	EvBHBit
	// EvFolioDirty counts folios made dirty (__folio_mark_dirty: the dirty
	// tag and the dirty accounting) by mark_buffer_dirty of a buffer of a
	// clean folio, or by writeback's redirtying of a folio it skipped.
	EvFolioDirty
	// EvFileOpen counts opens of the block device: open(2)'s (the device
	// node's path walk, alloc_empty_file, blkdev_open → bdev_open with
	// bd_openers and the holder claim, fd_install), and the exclusive claim
	// BLKBSZSET makes on a file opened without O_EXCL (v6.18's
	// bdev_file_open_by_dev, a pseudo file and bdev_open; v5.10's
	// blkdev_get_by_dev, without a struct file).
	EvFileOpen
	// EvFileRelease counts the release of such an open: close(2)'s last
	// fput and BLKBSZSET's (__fput, blkdev_release → bdev_release, the file
	// freed; v5.10's blkdev_put).
	// The page-cache work of a last close of the device is counted apart.
	EvFileRelease
	// EvRWCall counts pread(2) and pwrite(2) calls on the device file that
	// get past the mode check: the fixed part of vfs_read and vfs_write
	// (rw_verify_area and its LSM hook, the ->read_iter or ->write_iter
	// call, blkdev_read_iter's and blkdev_write_iter's size and flag
	// checks, fsnotify_access or fsnotify_modify), whatever the bytes. The
	// system call's own entry and exit are not in it.
	EvRWCall
	// NumEvents is the number of event kinds.
	NumEvents
)

// eventNames names the events for String and ParseEvent.
var eventNames = enum.New[Event]("event", []string{
	EvBHAlloc:        "bh-allocs",
	EvBHFree:         "bh-frees",
	EvRingLink:       "ring-links",
	EvRingWalk:       "ring-walks",
	EvBHInit:         "bh-inits",
	EvIndexLookup:    "index-lookups",
	EvIndexLevel:     "index-levels",
	EvIndexInsert:    "index-inserts",
	EvIndexDelete:    "index-deletes",
	EvPrivateLock:    "private-locks",
	EvFolioGet:       "folio-gets",
	EvFolioPut:       "folio-puts",
	EvFolioAlloc:     "folio-allocs",
	EvFolioFree:      "folio-frees",
	EvFolioLock:      "folio-locks",
	EvMarkAccessed:   "mark-accessed",
	EvBHGet:          "bh-gets",
	EvBHPut:          "bh-puts",
	EvBHLock:         "bh-locks",
	EvMarkDirty:      "mark-dirty",
	EvBioSubmit:      "bios",
	EvBioComplete:    "bio-completions",
	EvFindSlowFailed: "find-slow-failed",
	EvLRULookup:      "lru-lookups",
	EvLRUSlot:        "lru-compares",
	EvLRUHit:         "lru-hits",
	EvLRUInstall:     "lru-installs",
	EvLRUStep:        "lru-install-steps",
	EvLRUEvict:       "lru-evictions",
	EvLRUIPI:         "lru-ipis",
	EvFaultInPage:    "faultin-pages",
	EvCopyByte:       "bytes-copied",
	EvWriteIter:      "write-iters",
	EvGetBlock:       "get-blocks",
	EvWritepage:      "writepages",
	EvReadaheadPage:  "readahead-pages",
	EvWarning:        "warnings",
	EvIomapBegin:     "iomap-begins",
	EvBHBit:          "bh-bitops",
	EvFolioDirty:     "folio-dirties",
	EvFileOpen:       "file-opens",
	EvFileRelease:    "file-releases",
	EvRWCall:         "rw-calls",
}...).WithError(ErrUnknownEvent)

// String returns the event's metric name, e.g. "index-levels", or
// "event(n)" for a value that is not an event.
func (e Event) String() string { return eventNames.String(e) }

// ParseEvent returns the event whose String is name. Errors: ErrUnknownEvent,
// wrapped with name and the valid names. O(NumEvents).
func ParseEvent(name string) (Event, error) { return eventNames.Parse(name) }

// Counters is a set of event counts, indexed by Event. It is a plain array: a
// snapshot is a copy, and Sub gives the events of an interval.
type Counters [NumEvents]uint64

// Sub returns c − earlier, event by event.
func (c Counters) Sub(earlier Counters) Counters {
	for i := range c {
		c[i] -= earlier[i]
	}
	return c
}

// Add returns c + other, event by event.
func (c Counters) Add(other Counters) Counters {
	for i := range c {
		c[i] += other[i]
	}
	return c
}

// Total returns the sum of all counts.
func (c Counters) Total() uint64 {
	var t uint64
	for _, v := range c {
		t += v
	}
	return t
}

// String lists the non-zero counts as "name=count" in event order.
func (c Counters) String() string {
	var sb strings.Builder
	for e, v := range c {
		if v == 0 {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%s=%d", Event(e), v)
	}
	return sb.String()
}
