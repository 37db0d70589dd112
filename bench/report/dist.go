package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
)

// WriteRunText prints a workload run's result as `bhsim run` does: the
// header, the totals and the bottleneck bound, the latency table per
// operation kind (simulated µs), each resource's busy time, the bh LRU and
// its miss-ratio curve, and throughput over simulated time in at most ten
// intervals. Errors: w fails. O(kinds + resources + intervals).
func WriteRunText(w io.Writer, r *engine.RunResult) error {
	ew := &errWriter{w: w}
	ew.printf("%s\n", r.Header())
	ew.printf("%d ops, %.1f MB read and written in %s simulated: %.1f MB/s, %.0f IOPS\n",
		r.Ops, float64(r.Bytes)/1e6, seconds(r.DurationNS), r.MBps, r.IOPS)
	if r.LastClose {
		ew.printf("the last close (sync_blockdev and kill_bdev) took %s of it\n", seconds(r.LastCloseNS))
	}
	ew.printf("bottleneck bound (bench/timing): %s, busy %s, allows %.1f MB/s\n\n", r.Bound.Resource, seconds(r.Bound.BusyNS), r.Bound.MBps)
	ew.printf("latency, simulated µs (quantiles are bucket bounds within 3.1 %%)\n")
	ew.printf("%-9s %9s %9s %9s %9s %9s %9s %10s %8s %8s %7s\n", "op", "count", "mean", "p50", "p90", "p99", "p99.9", "max", "bios/op", "rqs/op", "errors")
	for _, k := range r.Kinds {
		l := k.Latency
		ew.printf("%-9s %9d %9s %9s %9s %9s %9s %10s %8.3f %8.3f %7d\n", k.Kind, k.Ops, us(l.MeanNS), us(float64(l.P50NS)),
			us(float64(l.P90NS)), us(float64(l.P99NS)), us(float64(l.P999NS)), us(float64(l.MaxNS)), k.BiosPerOp, k.RequestsPerOp, k.Errors)
		for _, name := range slices.Sorted(maps.Keys(k.Errnos)) {
			ew.printf("          %s %d\n", name, k.Errnos[name])
		}
	}
	ew.printf("\nresources, busy time and utilisation over %s\n", seconds(r.DurationNS))
	shared, threads := "", "kswapd"
	for _, res := range r.Resources {
		ew.printf("  %-22s %12s %7.1f %%\n", res.Name, seconds(res.BusyNS), 100*res.Utilisation)
		switch {
		case strings.HasPrefix(res.Name, "all "):
			shared = res.Name
		case res.Name == "md0_raid6":
			threads = "kswapd and raid5d"
		}
	}
	if shared != "" {
		ew.printf("  (%s: the busy time of every CPU and of %s, shared over them: the bound if the work spread evenly)\n", shared, threads)
	}
	ew.printf("\nbh LRU: %d slots per CPU, %d lookups, %d hits", r.LRU.Size, r.LRU.Lookups, r.LRU.Hits)
	if r.LRU.Lookups > 0 {
		ew.printf(" (hit ratio %.3f)\n", r.LRU.HitRatio)
	} else {
		ew.printf(" (pread and pwrite do not look buffers up: --access buffers, or REQ_META records, do)\n")
	}
	if len(r.MRC) > 1 && r.LRU.Lookups > 0 {
		var parts []string
		for _, p := range r.MRC {
			parts = append(parts, fmt.Sprintf("%d: %.3f", p.Size, p.MissRatio))
		}
		ew.printf("miss-ratio curve (slots: miss ratio): %s\n", strings.Join(parts, ", "))
	}
	ew.printf("\nthroughput over simulated time\n")
	for _, b := range tenths(r.Throughput) {
		ew.printf("  %10s – %-10s %10.1f MB/s %12.0f IOPS\n", seconds(b.StartNS), seconds(b.StartNS+b.WidthNS), b.MBps, b.IOPS)
	}
	return ew.err
}

// tenths merges throughput bins into at most ten intervals of equal width.
func tenths(bins []engine.ThroughputBin) []engine.ThroughputBin {
	if len(bins) == 0 {
		return nil
	}
	per := (len(bins) + 9) / 10
	var out []engine.ThroughputBin
	for i := 0; i < len(bins); i += per {
		m := engine.ThroughputBin{StartNS: bins[i].StartNS}
		for _, b := range bins[i:min(i+per, len(bins))] {
			m.WidthNS += b.WidthNS
			m.Bytes += b.Bytes
			m.Ops += b.Ops
		}
		m.MBps, m.IOPS = m.Bytes*1e3/m.WidthNS, float64(m.Ops)*1e9/m.WidthNS
		out = append(out, m)
	}
	return out
}

// us prints nanoseconds as microseconds.
func us(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 2, 64) }

// seconds prints nanoseconds in a readable unit.
func seconds(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.3f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3f ms", ns/1e6)
	}
	return fmt.Sprintf("%.1f µs", ns/1e3)
}

// WriteRunCSV writes a workload run's result as bhsim-run-dist-csv/1:
// rows of workload, section, name, metric, value: the header's fields
// (section run), each kind's latency and counts (latency), each resource
// (resource), the LRU and its curve (lru, mrc), each throughput interval
// (throughput, name = its start in ns). The JSON of the same result is
// WriteJSON of r. Errors: w fails. O(kinds + resources + intervals).
func WriteRunCSV(w io.Writer, r *engine.RunResult) error {
	return WriteCSV(w, RunCSVSchema, runCSVHeader, runCSVRows(r))
}

// runCSVHeader is bhsim-run-dist-csv/1's header after "schema".
var runCSVHeader = []string{"workload", "section", "name", "metric", "value"}

// runCSVRows are r's rows of bhsim-run-dist-csv/1, without the schema.
func runCSVRows(r *engine.RunResult) [][]string {
	var rows [][]string
	add := func(section, name, metric, value string) {
		rows = append(rows, []string{r.Workload, section, name, metric, value})
	}
	seed := ""
	if r.Seed != nil {
		seed = strconv.FormatUint(*r.Seed, 10)
	}
	for _, kv := range [][2]string{{"seed", seed}, {"kernel", r.Kernel}, {"profile", r.Profile}, {"profile_costs", r.ProfileCosts},
		{"disk", r.Disk}, {"cpus", strconv.Itoa(r.CPUs)}, {"queue_depth", strconv.Itoa(r.QueueDepth)}, {"access", r.Access},
		{"ops", strconv.FormatUint(r.Ops, 10)}, {"bytes", strconv.FormatUint(r.Bytes, 10)}, {"duration_ns", Num(r.DurationNS)},
		{"mb_per_s", Num(r.MBps)}, {"iops", Num(r.IOPS)}, {"bound_resource", r.Bound.Resource}, {"bound_mb_per_s", Num(r.Bound.MBps)},
		{"array", r.Array}, {"from_zero", strconv.FormatBool(r.FromZero)}, {"to_null", strconv.FormatBool(r.ToNull)}, {"last_close", strconv.FormatBool(r.LastClose)},
		{"last_close_ns", Num(r.LastCloseNS)}} {
		add("run", "", kv[0], kv[1])
	}
	for _, k := range r.Kinds {
		l := k.Latency
		for _, kv := range []struct {
			m string
			v float64
		}{{"ops", float64(k.Ops)}, {"bytes", float64(k.Bytes)}, {"errors", float64(k.Errors)}, {"mean_ns", l.MeanNS},
			{"min_ns", float64(l.MinNS)}, {"p50_ns", float64(l.P50NS)}, {"p90_ns", float64(l.P90NS)}, {"p99_ns", float64(l.P99NS)},
			{"p999_ns", float64(l.P999NS)}, {"max_ns", float64(l.MaxNS)}, {"bios_per_op", k.BiosPerOp},
			{"requests_per_op", k.RequestsPerOp}, {"lru_lookups", float64(k.LRULookups)}, {"lru_hits", float64(k.LRUHits)}} {
			add("latency", k.Kind, kv.m, Num(kv.v))
		}
	}
	for _, res := range r.Resources {
		add("resource", res.Name, "busy_ns", Num(res.BusyNS))
		add("resource", res.Name, "utilisation", Num(res.Utilisation))
	}
	add("lru", strconv.Itoa(r.LRU.Size), "lookups", strconv.FormatUint(r.LRU.Lookups, 10))
	add("lru", strconv.Itoa(r.LRU.Size), "hits", strconv.FormatUint(r.LRU.Hits, 10))
	for _, p := range r.MRC {
		add("mrc", strconv.Itoa(p.Size), "miss_ratio", Num(p.MissRatio))
	}
	for _, b := range r.Throughput {
		add("throughput", Num(b.StartNS), "mb_per_s", Num(b.MBps))
		add("throughput", Num(b.StartNS), "iops", Num(b.IOPS))
	}
	return rows
}

// WriteRunJSON writes a workload's distributions as bhsim-run-dist/1
// (engine.RunSchema), naming CurrentTool as its writer when r names none (r
// itself is not changed). Errors: w fails.
func WriteRunJSON(w io.Writer, r *engine.RunResult) error {
	if r.Tool == nil {
		c, t := *r, CurrentTool()
		c.Tool, r = &t, &c
	}
	return WriteJSON(w, r)
}
