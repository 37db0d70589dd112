package host

import (
	"github.com/bhsim/bhsim/bench/scenario"
)

// threadFirings returns how many times the runner's tracepoints fire in
// the thread that makes the calls, over operations that counted cs: the
// counters of the firing families (scenario.CounterFamily.Firing: one
// firing of a runner tracepoint each — the model's counters mirror the
// runner's, which derive them from those events; the counters of an
// event's arguments, bytes=, sectors, pages, flags, count no firing of
// their own), but those another thread makes, where a loop device's
// requests complete in its worker (TestThreadFiringsLive checks it on the
// kernel) — block_rq_complete (rq.complete) and filemap_set_wb_err
// (wberr.set), which the completion fires, and the block_rq_issue of the
// requests the flush machinery sequences, which kblockd issues: a flush
// (rq.flush) and a write with a preflush (rq.write.preflush, counted in
// rq.write too). On a host whose completions run in a softirq of the
// submitting CPU the count would be low. The calibration passes the
// model's counters, the live test the kernel's; each counter's Max is
// taken. O(len(cs) × families).
func threadFirings(cs scenario.Counters) float64 {
	var n, kblockd float64
	for _, c := range cs {
		p, ok := scenario.ParseCounter(c.Name)
		switch {
		case !ok || otherThread(p):
		case p.Family.Firing():
			n += float64(c.Max)
		case p.Family == scenario.FamilyRqPreflush && p.Dir == scenario.DirWrite:
			kblockd += float64(c.Max)
		}
	}
	return max(n-kblockd, 0)
}

// otherThread reports whether the firings p counts are made by a thread
// other than the caller's: the completion's (block_rq_complete,
// filemap_set_wb_err) or kblockd's (a flush request's block_rq_issue).
func otherThread(p scenario.CounterName) bool {
	switch p.Family {
	case scenario.FamilyRqComplete, scenario.FamilyWBErrSet:
		return true
	case scenario.FamilyRq:
		return p.Dir == scenario.DirFlush
	}
	return false
}
