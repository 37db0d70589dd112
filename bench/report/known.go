package report

import (
	"slices"
	"strings"
)

// KnownDifference is a row of the table "Differences a live run can show"
// in docs/known-differences.md: scenarios whose counters a live run on the
// host kernel may set apart from the model, and why. A test holds the
// table and LiveDifferences equal.
type KnownDifference struct {
	// Scenarios are the scenarios' names; Counters the counters' names,
	// a trailing * standing for any suffix ("plug.*").
	Scenarios, Counters []string
	// Why is the reason, in short (the table has it in full).
	Why string
}

// Covers reports whether d lists scenario's counter. O(scenarios +
// counters).
func (d KnownDifference) Covers(scenario, counter string) bool {
	if !slices.Contains(d.Scenarios, scenario) {
		return false
	}
	for _, c := range d.Counters {
		if prefix, ok := strings.CutSuffix(c, "*"); ok && strings.HasPrefix(counter, prefix) || c == counter {
			return true
		}
	}
	return false
}

// LiveDifferences returns the differences docs/known-differences.md says
// a live run can show (a fresh copy). Validate on the host counts a
// differing counter row one of them covers as known, not as a failure.
func LiveDifferences() []KnownDifference {
	return []KnownDifference{
		{Scenarios: []string{"read-cold-1m", "read-cold-4k-sector"},
			Counters: []string{"rq.read.bytes=*", "rq.read", "rq.get", "rq.complete", "bio.split", "plug.*", "stat.read.ios"},
			Why:      "a 1 MiB readahead bio is split where its pages are not physically contiguous, which the model's pages never are across folios"},
		{Scenarios: []string{"wberr-allocated-ok", "wberr-bs16k", "wberr-fdatasync", "wberr-fsync-once", "wberr-open-after",
			"wberr-read-after-drop", "wberr-seen-then-open", "wberr-two-fds"},
			Counters: []string{"rq.insert"},
			Why:      "a plug flushed because its task sleeps (write throttling, a tag, a lock) inserts its requests; the sleeps follow the loop worker's timing, which a scenario run does not have"},
		{Scenarios: []string{"sparse-pages-bs4k"},
			Counters: []string{"plug.plug", "plug.unplug", "rq.insert"},
			Why:      "write throttling counts requests in flight, so the kernel's sleeps depend on the loop worker's timing"},
		{Scenarios: []string{"random-4k-wiops"},
			Counters: []string{"rq.insert"},
			Why:      "a plug's task sleeps in write throttling on requests the loop worker has not completed, so the inserts depend on its timing"},
		{Scenarios: []string{"bdi-strict-1m-wbps", "bdi-strict-2m-wiops", "bdi-strict-4m-wbps"},
			Counters: []string{"bio.write*", "merge.back", "sectors.written", "stat.write.merges", "stat.write.sectors", "rq.write", "rq.write.bytes=*", "rq.get", "rq.complete", "stat.write.ios", "plug.*"},
			Why:      "the flusher's kworker runs a scheduling delay after a strict-limited writer wakes it and walks the mapping as the writer dirties it, so how the writeback splits between the pwrites and the fsync, and the number and sizes of the requests kthrotld's rounds cut and of the fsync's plugs, follow its timing; the totals written agree"},
	}
}

// knownDifference reports whether one of known covers the counter row r of
// scenario.
func knownDifference(known []KnownDifference, scenario string, r Row) bool {
	return r.Kind == "counter" && slices.ContainsFunc(known, func(d KnownDifference) bool { return d.Covers(scenario, r.Name) })
}
