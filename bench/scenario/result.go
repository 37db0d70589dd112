package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// SchemaVersion is the version of Result's JSON encoding; a decoder refuses
// any other.
const SchemaVersion = 1

// ResultSchema names Result's JSON encoding at SchemaVersion, as every
// versioned output of bhsim names its schema (docs/output-schema.md). Files
// written before it was named carry the bare number 1, which DecodeResult
// reads as the same version.
const ResultSchema = "bhsim-result/1"

// Runner names, for Result.Runner.
const (
	RunnerKernel = "kernel" // the host's Linux kernel (package bench/host)
	RunnerModel  = "model"  // the bhsim model
)

// Result is what running one scenario produced, on the model or on the host
// kernel: a header describing where it ran, one OpResult per operation, the
// counters summed over all operations and every fsync's outcome. Counters
// and the per-operation results (errno, block size, data) are what Compare
// compares; CPU measurements are kept apart and never compared.
//
// A Result merged from several runs (MergeRuns) holds, for each counter, the
// minimum and maximum seen; Varied names what differed.
type Result struct {
	// Schema is ResultSchema.
	Schema string `json:"schema"`
	// Tool is the binary that wrote the result (`bhsim run` sets it; a
	// runner leaves it nil, and the recordings have none).
	Tool *Tool `json:"tool,omitempty"`
	// Scenario is the scenario's name, Pins its leading comment.
	Scenario string `json:"scenario"`
	Pins     string `json:"pins,omitempty"`
	// Report is the scenario's report patterns: the counters Compare looks at
	// (empty: all).
	Report []string `json:"report,omitempty"`
	// Runner is RunnerKernel or RunnerModel.
	Runner string `json:"runner"`
	// Kernel is the kernel release (uname -r) and Machine the hardware name
	// (uname -m) the kernel runner ran on; a model runner names what it
	// models. PageSize is PAGE_SIZE in bytes.
	Kernel   string `json:"kernel,omitempty"`
	Machine  string `json:"machine,omitempty"`
	PageSize int    `json:"page_size,omitempty"`
	// Queue is the device's request-queue limits, as sysfs showed them.
	Queue *QueueLimits `json:"queue,omitempty"`
	// Runs is the number of runs merged into this result.
	Runs int `json:"runs"`
	// Varied names the counters, and the per-operation results written as
	// "op N errno" (or data, block_size, bytes, calls), that differed between
	// runs.
	Varied []string `json:"varied,omitempty"`
	// Ops has one entry per scenario operation, in order.
	Ops []OpResult `json:"ops"`
	// Total is every counter summed over the operations.
	Total Counters `json:"total"`
	// Fsyncs is every fsync and fdatasync outcome in order.
	Fsyncs []FsyncResult `json:"fsyncs,omitempty"`
	// Wall is the scenario's elapsed time, from its first operation's start
	// to its last one's end, timed as OpResult.Wall is.
	Wall *Span `json:"wall,omitempty"`
}

// OpResult is one operation's outcome. A line with repeat=N makes N calls;
// they stop at the first failure, whose errno is the line's.
type OpResult struct {
	// Index is the operation's number from 1, Op its canonical line.
	Index int    `json:"index"`
	Op    string `json:"op"`
	// Errno is the error's name ("EINVAL", "EIO") or "" for success.
	Errno string `json:"errno,omitempty"`
	// Calls is the number of system calls made (repeats until a failure).
	Calls int `json:"calls"`
	// Bytes is the number of bytes pwrite or pread returned, summed.
	Bytes int64 `json:"bytes,omitempty"`
	// BlockSize is the block size (BLKBSZGET) after an open, a blkbszset or
	// a blkbszget; 0 for other operations or when the call failed.
	BlockSize int `json:"block_size,omitempty"`
	// Data summarises the bytes a pread returned (DataSummary).
	Data string `json:"data,omitempty"`
	// Counters are the events attributed to this operation.
	Counters Counters `json:"counters,omitempty"`
	// Events is the model's ledger of the operation: each bufcache.Event
	// its CPU counted, by name (model runner only; never compared).
	Events Counters `json:"events,omitempty"`
	// CPU is the calling thread's CPU time per call (kernel runner only:
	// CLOCK_THREAD_CPUTIME_ID around each system call). A measurement, never
	// compared.
	CPU *Measurement `json:"cpu,omitempty"`
	// Wall is the line's elapsed time, all its calls: on the kernel
	// CLOCK_MONOTONIC around them in a pass without tracepoints, over the
	// runs; on the model its simulated time. CompareTime compares it.
	Wall *Span `json:"wall,omitempty"`
}

// FsyncResult is one fsync or fdatasync: which operation, on which
// descriptor, with which errno ("" for success).
type FsyncResult struct {
	Op    int    `json:"op"`
	FD    string `json:"fd"`
	Errno string `json:"errno,omitempty"`
}

// QueueLimits are a block device's request-queue limits and settings, read
// from /sys/block/<dev>/queue (and the loop driver's dio flag). The model
// needs them to split bios and merge requests as the kernel did.
type QueueLimits struct {
	LogicalBlockSize  int    `json:"logical_block_size"`
	PhysicalBlockSize int    `json:"physical_block_size"`
	MinimumIOSize     int    `json:"minimum_io_size"`
	OptimalIOSize     int    `json:"optimal_io_size"`
	MaxSectorsKB      int    `json:"max_sectors_kb"`
	MaxHWSectorsKB    int    `json:"max_hw_sectors_kb"`
	MaxSegments       int    `json:"max_segments"`
	MaxSegmentSize    int    `json:"max_segment_size"`
	Scheduler         string `json:"scheduler"`
	NrRequests        int    `json:"nr_requests"`
	Rotational        bool   `json:"rotational"`
	WriteCache        string `json:"write_cache"`
	FUA               bool   `json:"fua"`
	ReadAheadKB       int    `json:"read_ahead_kb"`
	NoMerges          int    `json:"nomerges"`
	DirectIO          bool   `json:"loop_dio"`
}

// Counter is one named unsigned count. Min equals Max for a single run; a
// result merged from several runs holds the range seen (a counter missing
// from a run counts 0 there).
type Counter struct {
	Name     string
	Min, Max uint64
}

// C is a counter with one value.
func C(name string, v uint64) Counter { return Counter{Name: name, Min: v, Max: v} }

// Exact reports whether the counter has one value.
func (c Counter) Exact() bool { return c.Min == c.Max }

// String is "name=value" or "name=min..max".
func (c Counter) String() string { return c.Name + "=" + c.ValueString() }

// ValueString is "value" or "min..max".
func (c Counter) ValueString() string {
	if c.Exact() {
		return strconv.FormatUint(c.Min, 10)
	}
	return strconv.FormatUint(c.Min, 10) + ".." + strconv.FormatUint(c.Max, 10)
}

type counterJSON struct {
	Name  string  `json:"name"`
	Value *uint64 `json:"value,omitempty"`
	Min   *uint64 `json:"min,omitempty"`
	Max   *uint64 `json:"max,omitempty"`
}

// MarshalJSON writes {"name":…,"value":…} or, for a range,
// {"name":…,"min":…,"max":…}.
func (c Counter) MarshalJSON() ([]byte, error) {
	j := counterJSON{Name: c.Name}
	if c.Exact() {
		j.Value = &c.Min
	} else {
		j.Min, j.Max = &c.Min, &c.Max
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads either form of MarshalJSON.
func (c *Counter) UnmarshalJSON(b []byte) error {
	var j counterJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	switch {
	case j.Name == "":
		return errors.New("counter without a name")
	case j.Value != nil && j.Min == nil && j.Max == nil:
		*c = C(j.Name, *j.Value)
	case j.Value == nil && j.Min != nil && j.Max != nil && *j.Min <= *j.Max:
		*c = Counter{Name: j.Name, Min: *j.Min, Max: *j.Max}
	default:
		return fmt.Errorf("counter %s: want value, or min <= max", QuoteToken(j.Name))
	}
	return nil
}

// Counters is a list of counters ordered by name (CompareNames), each name
// once. Build one with a CounterSet.
type Counters []Counter

// Get returns the named counter and whether it is present.
func (cs Counters) Get(name string) (Counter, bool) {
	i, ok := slices.BinarySearchFunc(cs, name, func(c Counter, n string) int { return CompareNames(c.Name, n) })
	if !ok {
		return Counter{Name: name}, false
	}
	return cs[i], true
}

// Value is the named counter's (minimum) value, 0 when absent.
func (cs Counters) Value(name string) uint64 {
	c, _ := cs.Get(name)
	return c.Min
}

// Match keeps the counters whose names match one of the patterns
// (path.Match); no patterns keeps all.
func (cs Counters) Match(patterns []string) Counters {
	if len(patterns) == 0 {
		return cs
	}
	var out Counters
	for _, c := range cs {
		if MatchName(patterns, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// MatchName reports whether name matches one of the patterns (path.Match);
// no patterns match every name.
func MatchName(patterns []string, name string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// String is the counters as "name=value" words.
func (cs Counters) String() string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, " ")
}

// CompareNames orders counter names: by the part before "=", then by the
// part after it, numerically when both are decimal numbers
// ("bio.write.bytes=512" before "bio.write.bytes=4096"). It returns -1, 0
// or +1.
func CompareNames(a, b string) int {
	ak, av, aeq := strings.Cut(a, "=")
	bk, bv, beq := strings.Cut(b, "=")
	if c := strings.Compare(ak, bk); c != 0 {
		return c
	}
	if aeq != beq {
		if aeq {
			return 1
		}
		return -1
	}
	an, aerr := strconv.ParseUint(av, 10, 64)
	bn, berr := strconv.ParseUint(bv, 10, 64)
	switch {
	case aerr == nil && berr == nil && an != bn:
		if an < bn {
			return -1
		}
		return 1
	case aerr == nil && berr != nil:
		return -1
	case aerr != nil && berr == nil:
		return 1
	}
	return strings.Compare(av, bv)
}

// CounterSet accumulates counts by name; Counters gives the ordered list.
// The zero value is ready to use.
type CounterSet struct{ m map[string]uint64 }

// Add adds n to the named counter (creating it, even when n is 0).
func (s *CounterSet) Add(name string, n uint64) {
	if s.m == nil {
		s.m = map[string]uint64{}
	}
	s.m[name] += n
}

// Inc adds 1 to the named counter.
func (s *CounterSet) Inc(name string) { s.Add(name, 1) }

// AddAll adds every counter of cs (its minimum).
func (s *CounterSet) AddAll(cs Counters) {
	for _, c := range cs {
		s.Add(c.Name, c.Min)
	}
}

// Counters is the set as an ordered list, nil when empty.
func (s *CounterSet) Counters() Counters {
	if len(s.m) == 0 {
		return nil
	}
	out := make(Counters, 0, len(s.m))
	for n, v := range s.m {
		out = append(out, C(n, v))
	}
	slices.SortFunc(out, func(a, b Counter) int { return CompareNames(a.Name, b.Name) })
	return out
}

// Measurement is a timing over repeated calls, in nanoseconds: count, mean,
// minimum, maximum and standard deviation. It is kept apart from counters:
// the kernel's numbers depend on the machine and its load.
type Measurement struct {
	N        int     `json:"n"`
	MeanNs   float64 `json:"mean_ns"`
	MinNs    int64   `json:"min_ns"`
	MaxNs    int64   `json:"max_ns"`
	StddevNs float64 `json:"stddev_ns"`
}

// Add records one sample.
func (m *Measurement) Add(ns int64) {
	m.Merge(Measurement{N: 1, MeanNs: float64(ns), MinNs: ns, MaxNs: ns})
}

// AddPooled records n calls timed together, ns in all: n samples of their
// mean, since one reading cannot tell them apart (their spread is not
// known, and shows as none). n < 1 records nothing.
func (m *Measurement) AddPooled(ns int64, n int) {
	if n < 1 {
		return
	}
	mean := float64(ns) / float64(n)
	m.Merge(Measurement{N: n, MeanNs: mean, MinNs: int64(math.Round(mean)), MaxNs: int64(math.Round(mean))})
}

// Merge pools another measurement's samples into m.
func (m *Measurement) Merge(o Measurement) {
	if o.N == 0 {
		return
	}
	if m.N == 0 {
		*m = o
		return
	}
	n1, n2 := float64(m.N), float64(o.N)
	n := n1 + n2
	d := o.MeanNs - m.MeanNs
	mean := m.MeanNs + d*n2/n
	m2 := m.StddevNs*m.StddevNs*n1 + o.StddevNs*o.StddevNs*n2 + d*d*n1*n2/n
	m.N += o.N
	m.MeanNs = mean
	m.StddevNs = math.Sqrt(m2 / n)
	m.MinNs = min(m.MinNs, o.MinNs)
	m.MaxNs = max(m.MaxNs, o.MaxNs)
}

// maxDataRuns is how many byte runs DataSummary writes before it abbreviates.
const maxDataRuns = 16

// DataSummary describes bytes read as runs of equal bytes, "0xab*4096
// 0x00*512", so that a comparison shows what a read returned. Past 16 runs it
// ends with "... N runs, fnv64a=HASH". Empty input gives "".
func DataSummary(b []byte) string {
	var parts []string
	runs := 0
	for i := 0; i < len(b); {
		j := i + 1
		for j < len(b) && b[j] == b[i] {
			j++
		}
		runs++
		if runs <= maxDataRuns {
			parts = append(parts, fmt.Sprintf("0x%02x*%d", b[i], j-i))
		}
		i = j
	}
	if runs > maxDataRuns {
		h := fnv.New64a()
		h.Write(b)
		parts = append(parts, fmt.Sprintf("... %d runs, fnv64a=%016x", runs, h.Sum64()))
	}
	return strings.Join(parts, " ")
}

// NewResult starts a result for a scenario: the header's scenario fields and
// one OpResult per operation with its index and canonical line.
func NewResult(s *Scenario, runner string) *Result {
	r := &Result{
		Schema:   ResultSchema,
		Scenario: s.Name,
		Pins:     s.Pins,
		Report:   slices.Clone(s.Report),
		Runner:   runner,
		Runs:     1,
		Ops:      make([]OpResult, len(s.Ops)),
	}
	for i, op := range s.Ops {
		r.Ops[i] = OpResult{Index: i + 1, Op: op.String()}
	}
	return r
}

// Finish computes Total from the operations' counters and orders every
// counter list; runners call it last.
func (r *Result) Finish() {
	var total CounterSet
	for i := range r.Ops {
		total.AddAll(r.Ops[i].Counters)
	}
	r.Total = total.Counters()
}

// Encode writes the result as indented JSON.
func (r *Result) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(compactLeaves(b), '\n'), nil
}

// leafObject is an indented JSON object holding only scalar members.
var leafObject = regexp.MustCompile(`\{\n(?:[ ]+"(?:[^"\\\n]|\\.)*": [^\n{}\[\]]*\n)+[ ]*\}`)

// compactLeaves writes each object of scalar members (a counter, a CPU
// measurement) on one line, so that golden files stay short and diff well.
func compactLeaves(b []byte) []byte {
	return leafObject.ReplaceAllFunc(b, func(m []byte) []byte {
		lines := strings.Split(string(m), "\n")
		parts := make([]string, 0, len(lines))
		for _, l := range lines[1 : len(lines)-1] {
			parts = append(parts, strings.TrimSpace(l))
		}
		return []byte("{" + strings.Join(parts, " ") + "}")
	})
}

// DecodeResult reads a result written by Encode, refusing another schema
// than ResultSchema (or the bare version number 1 older files carry) or a
// malformed counter list. The result's Schema is ResultSchema.
func DecodeResult(b []byte) (*Result, error) {
	type plain Result
	var r Result
	probe := struct {
		*plain
		Schema json.RawMessage `json:"schema"`
	}{plain: (*plain)(&r)}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	if got := string(probe.Schema); got != strconv.Itoa(SchemaVersion) && got != strconv.Quote(ResultSchema) {
		if got == "" || got == "null" {
			got = "none"
		}
		got = echoToken(got)
		return nil, fmt.Errorf("result: schema %s, want %q (or %d)", got, ResultSchema, SchemaVersion)
	}
	r.Schema = ResultSchema
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("result %s: %w", QuoteToken(r.Scenario), err)
	}
	r.normalise()
	return &r, nil
}

// ReadResultFile reads a result file written by Encode.
func ReadResultFile(name string) (*Result, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	r, err := DecodeResult(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

// normalise makes every empty list nil, as the runners leave them.
func (r *Result) normalise() {
	if len(r.Report) == 0 {
		r.Report = nil
	}
	if len(r.Varied) == 0 {
		r.Varied = nil
	}
	if len(r.Fsyncs) == 0 {
		r.Fsyncs = nil
	}
	if len(r.Total) == 0 {
		r.Total = nil
	}
	if len(r.Ops) == 0 {
		r.Ops = nil
	}
	for i := range r.Ops {
		if len(r.Ops[i].Counters) == 0 {
			r.Ops[i].Counters = nil
		}
	}
}

func (r *Result) check() error {
	lists := []Counters{r.Total}
	for i, op := range r.Ops {
		if op.Index != i+1 {
			return fmt.Errorf("op %d has index %d", i+1, op.Index)
		}
		lists = append(lists, op.Counters)
	}
	for _, cs := range lists {
		for i := 1; i < len(cs); i++ {
			if CompareNames(cs[i-1].Name, cs[i].Name) >= 0 {
				return fmt.Errorf("counters %s and %s out of order or repeated", QuoteToken(cs[i-1].Name), QuoteToken(cs[i].Name))
			}
		}
	}
	return nil
}

// MergeRuns merges results of the same scenario run several times: each
// counter becomes the range [min, max] over the runs (absent counts 0),
// CPU measurements are pooled, and Varied lists what differed. The first
// run's header, errno, data and block sizes are kept.
func MergeRuns(runs []*Result) (*Result, error) {
	if len(runs) == 0 {
		return nil, errors.New("merge: no runs")
	}
	first := runs[0]
	for _, r := range runs[1:] {
		if r.Scenario != first.Scenario || len(r.Ops) != len(first.Ops) {
			return nil, fmt.Errorf("merge: %q (%d ops) is not a run of %q (%d ops)", r.Scenario, len(r.Ops), first.Scenario, len(first.Ops))
		}
	}
	out := *first
	out.Runs = 0
	for _, r := range runs {
		out.Runs += r.Runs
	}
	varied := map[string]bool{}
	for _, v := range first.Varied {
		varied[v] = true
	}
	out.Ops = make([]OpResult, len(first.Ops))
	for i := range first.Ops {
		op := first.Ops[i]
		lists := make([]Counters, len(runs))
		var cpu *Measurement
		walls := make([]*Span, len(runs))
		for k, r := range runs {
			o := r.Ops[i]
			walls[k] = o.Wall
			lists[k] = o.Counters
			for _, f := range []struct {
				name string
				a, b any
			}{{"errno", op.Errno, o.Errno}, {"calls", op.Calls, o.Calls}, {"bytes", op.Bytes, o.Bytes}, {"block_size", op.BlockSize, o.BlockSize}, {"data", op.Data, o.Data}} {
				if f.a != f.b {
					varied[fmt.Sprintf("op %d %s", i+1, f.name)] = true
				}
			}
			if o.CPU != nil {
				if cpu == nil {
					cpu = &Measurement{}
				}
				cpu.Merge(*o.CPU)
			}
		}
		op.Counters = mergeRanges(lists, nil)
		op.CPU = cpu
		op.Wall = mergeSpans(walls...)
		out.Ops[i] = op
	}
	totals := make([]Counters, len(runs))
	walls := make([]*Span, len(runs))
	for k, r := range runs {
		totals[k] = r.Total
		walls[k] = r.Wall
	}
	out.Wall = mergeSpans(walls...)
	out.Total = mergeRanges(totals, varied)
	out.Varied = nil
	for v := range varied {
		out.Varied = append(out.Varied, v)
	}
	slices.SortFunc(out.Varied, CompareNames)
	return &out, nil
}

// mergeRanges merges counter lists into ranges; a name whose range is not
// one value is added to varied when it is not nil.
func mergeRanges(lists []Counters, varied map[string]bool) Counters {
	names := map[string]bool{}
	for _, cs := range lists {
		for _, c := range cs {
			names[c.Name] = true
		}
	}
	if len(names) == 0 {
		return nil
	}
	out := make(Counters, 0, len(names))
	for n := range names {
		c := Counter{Name: n, Min: math.MaxUint64}
		for _, cs := range lists {
			v, _ := cs.Get(n)
			c.Min = min(c.Min, v.Min)
			c.Max = max(c.Max, v.Max)
		}
		if !c.Exact() && varied != nil {
			varied[n] = true
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Counter) int { return CompareNames(a.Name, b.Name) })
	return out
}
