package host

import (
	"strings"

	"github.com/bhsim/bhsim/bench/workload"
)

// firingCounters are the counters that count one firing of a runner
// tracepoint each (the model's counters mirror the runner's, which derive
// them from those events): block_bio_queue, the merges (block_rq_merge's
// too, which only the kernel's counters have: the model merges no requests),
// block_split,
// block_getrq, block_rq_insert, block_rq_issue, block_plug and
// block_unplug, block_dirty_buffer, writeback_dirty_folio, the readahead
// events and file_check_and_advance_wb_err. The counters of an event's
// arguments (bytes=, sectors, pages, flags) count no firing of their own.
var firingCounters = map[string]bool{
	"bio.read": true, "bio.write": true, "bio.flush": true, "merge.back": true, "merge.front": true, "merge.rq": true,
	"bio.split": true, "rq.get": true, "rq.insert": true, "rq.read": true, "rq.write": true,
	"plug.plug": true, "plug.unplug": true, "buffer.dirty": true, "pagecache.dirty": true,
	"readahead.sync": true, "readahead.async": true, "wberr.report": true,
}

// firingPrefixes are the counter families with one counter per firing
// (an order or a size in the name): mm_filemap_add_to_page_cache,
// mm_filemap_delete_from_page_cache, page_cache_ra_order and
// page_cache_ra_unbounded.
var firingPrefixes = []string{"pagecache.add.order=", "pagecache.remove.order=", "readahead.order=", "readahead.unbounded.pages="}

// threadFirings returns how many times the runner's tracepoints fire in
// the thread that makes the calls, over operations that counted cs: every
// firing but those another thread makes, where a loop device's requests
// complete in its worker (TestThreadFiringsLive checks it on the kernel) —
// block_rq_complete (rq.complete) and filemap_set_wb_err (wberr.set), which
// the completion fires, and the block_rq_issue of the requests the flush
// machinery sequences, which kblockd issues: a flush (rq.flush) and a write
// with a preflush (rq.write.preflush). On a host whose completions run in a
// softirq of the submitting CPU the count would be low. The calibration
// passes the model's counters, the live test the kernel's; each counter's
// Max is taken. O(len(cs)).
func threadFirings(cs workload.Counters) float64 {
	var n, kblockd float64
	for _, c := range cs {
		switch {
		case firingCounters[c.Name] || hasAnyPrefix(c.Name, firingPrefixes):
			n += float64(c.Max)
		case c.Name == "rq.write.preflush": // counted in rq.write too
			kblockd += float64(c.Max)
		}
	}
	return max(n-kblockd, 0)
}

// hasAnyPrefix reports whether s starts with one of prefixes.
func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
