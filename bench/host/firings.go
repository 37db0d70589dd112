package host

import (
	"strings"

	"github.com/bhsim/bhsim/bench/workload"
)

// firingCounters are the counters that count one firing of a runner
// tracepoint each (the model's counters mirror the runner's, which derive
// them from those events): block_bio_queue, the merges, block_split,
// block_getrq, block_rq_insert, block_rq_issue, block_plug and
// block_unplug, block_dirty_buffer, writeback_dirty_folio, the readahead
// events and the writeback-error events. The counters of an event's
// arguments (bytes=, sectors, pages, flags) count no firing of their own.
var firingCounters = map[string]bool{
	"bio.read": true, "bio.write": true, "bio.flush": true, "merge.back": true, "merge.front": true,
	"bio.split": true, "rq.get": true, "rq.insert": true, "rq.read": true, "rq.write": true,
	"plug.plug": true, "plug.unplug": true, "buffer.dirty": true, "pagecache.dirty": true,
	"readahead.sync": true, "readahead.async": true, "wberr.set": true, "wberr.report": true,
}

// firingPrefixes are the counter families with one counter per firing
// (an order or a size in the name): mm_filemap_add_to_page_cache,
// mm_filemap_delete_from_page_cache, page_cache_ra_order and
// page_cache_ra_unbounded.
var firingPrefixes = []string{"pagecache.add.order=", "pagecache.remove.order=", "readahead.order=", "readahead.unbounded.pages="}

// threadFirings returns how many times the runner's tracepoints fire in
// the thread that makes the calls, over operations that counted cs: every
// firing but two, which another thread makes (TestThreadFiringsLive checks
// it on the kernel): block_rq_complete (rq.complete), which a loop device's
// worker fires when it finishes a request, and the block_rq_issue of a
// flush request (rq.flush), which the flush machinery issues from kblockd.
// Each counter's Max is taken: the model's counts, which do not vary.
// O(len(cs)).
func threadFirings(cs workload.Counters) float64 {
	var n uint64
	for _, c := range cs {
		if firingCounters[c.Name] || hasAnyPrefix(c.Name, firingPrefixes) {
			n += c.Max
		}
	}
	return float64(n)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
