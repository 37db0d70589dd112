package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
)

// WriteResultText prints a scenario's result as `bhsim run FILE` does: a
// header naming the runner, kernel and queue, then each operation with its
// outcome, counters and (on the model) ledger or (on the host) CPU time per
// call, then the totals, the fsync results and the counters that varied
// between runs. Errors: w fails. O(counters).
func WriteResultText(w io.Writer, r *scenario.Result) error {
	ew := &errWriter{w: w}
	ew.printf("scenario %s on the %s (kernel %s, %s", r.Scenario, r.Runner, r.Kernel, r.Machine)
	if r.Runs > 1 {
		ew.printf(", %d runs: ranges are min..max", r.Runs)
	}
	ew.printf(")\n")
	if q := r.Queue; q != nil {
		ew.printf("queue: logical_block_size %d, max_sectors_kb %d, max_segments %d, read_ahead_kb %d, write_cache %s\n",
			q.LogicalBlockSize, q.MaxSectorsKB, q.MaxSegments, q.ReadAheadKB, q.WriteCache)
	}
	for _, l := range strings.Split(r.Pins, "\n") {
		if l != "" {
			ew.printf("# %s\n", l)
		}
	}
	for _, o := range r.Ops {
		ew.printf("\n%d. %s\n   %s\n", o.Index, o.Op, outcome(o))
		wrapCounters(ew, "counters", o.Counters)
		wrapCounters(ew, "ledger", o.Events)
		if o.CPU != nil {
			ew.printf("   cpu      %.0f ns per call (min %d, max %d, sd %.0f, %d calls)\n", o.CPU.MeanNs, o.CPU.MinNs, o.CPU.MaxNs, o.CPU.StddevNs, o.CPU.N)
		}
	}
	ew.printf("\ntotal\n")
	wrapCounters(ew, "counters", r.Total)
	for _, f := range r.Fsyncs {
		ew.printf("fsync at op %d on %s: %s\n", f.Op, f.FD, errnoOrOK(f.Errno))
	}
	if len(r.Varied) > 0 {
		ew.printf("varied between runs: %s\n", strings.Join(r.Varied, ", "))
	}
	return ew.err
}

// outcome is an operation's result line: calls, bytes, errno, block size,
// data read.
func outcome(o scenario.OpResult) string {
	parts := []string{fmt.Sprintf("calls %d", o.Calls)}
	if o.Bytes > 0 {
		parts = append(parts, fmt.Sprintf("bytes %d", o.Bytes))
	}
	parts = append(parts, errnoOrOK(o.Errno))
	if o.BlockSize > 0 {
		parts = append(parts, fmt.Sprintf("block size %d", o.BlockSize))
	}
	if o.Data != "" {
		parts = append(parts, "data "+o.Data)
	}
	return strings.Join(parts, ", ")
}

// errnoOrOK is e, or "ok" for success.
func errnoOrOK(e string) string {
	if e == "" {
		return "ok"
	}
	return e
}

// wrapCounters prints cs as "name value" items after a label, comma
// separated and wrapped at 100 columns; nothing for an empty list.
func wrapCounters(ew *errWriter, label string, cs scenario.Counters) {
	if len(cs) == 0 {
		return
	}
	line := fmt.Sprintf("   %-8s", label)
	for i, c := range cs {
		item := " " + c.Name + " " + c.ValueString()
		if i < len(cs)-1 {
			item += ","
		}
		if i > 0 && len(line)+len(item) > 100 {
			ew.printf("%s\n", line)
			line = strings.Repeat(" ", 11)
		}
		line += item
	}
	ew.printf("%s\n", line)
}

// WriteResultJSON writes a scenario's result as the JSON result file
// bhsim validate compares (scenario.Result.Encode, schema
// scenario.ResultSchema), naming CurrentTool as its writer when r names
// none (r itself is not changed). Errors: r does not encode, or w fails.
func WriteResultJSON(w io.Writer, r *scenario.Result) error {
	if r.Tool == nil {
		c, t := *r, CurrentTool()
		c.Tool, r = &t, &c
	}
	b, err := r.Encode()
	if err == nil {
		_, err = w.Write(b)
	}
	return err
}

// WriteResultCSV writes a scenario's result as bhsim-result-csv/1: one row
// per operation result, counter and ledger entry: scenario, runner, op (0
// for totals), operation, kind (result, counter, event, cpu, fsync), name,
// value ("min..max" for a range). The JSON of the same result is
// r.Encode. Errors: w fails. O(counters).
func WriteResultCSV(w io.Writer, r *scenario.Result) error {
	var rows [][]string
	add := func(op int, line, kind, name, value string) {
		rows = append(rows, []string{r.Scenario, r.Runner, strconv.Itoa(op), line, kind, name, value})
	}
	for _, o := range r.Ops {
		add(o.Index, o.Op, "result", "errno", errnoOrOK(o.Errno))
		add(o.Index, o.Op, "result", "calls", strconv.Itoa(o.Calls))
		add(o.Index, o.Op, "result", "bytes", strconv.FormatInt(o.Bytes, 10))
		add(o.Index, o.Op, "result", "block_size", strconv.Itoa(o.BlockSize))
		if o.Data != "" {
			add(o.Index, o.Op, "result", "data", o.Data)
		}
		for _, c := range o.Counters {
			add(o.Index, o.Op, "counter", c.Name, c.ValueString())
		}
		for _, c := range o.Events {
			add(o.Index, o.Op, "event", c.Name, c.ValueString())
		}
		if o.CPU != nil {
			add(o.Index, o.Op, "cpu", "mean_ns", Num(o.CPU.MeanNs))
		}
	}
	for _, c := range r.Total {
		add(0, "total", "counter", c.Name, c.ValueString())
	}
	for _, f := range r.Fsyncs {
		add(f.Op, "fsync "+f.FD, "fsync", f.FD, errnoOrOK(f.Errno))
	}
	return WriteCSV(w, ResultCSVSchema, []string{"scenario", "runner", "op", "operation", "kind", "name", "value"}, rows)
}
