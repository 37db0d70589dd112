package source

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
)

// TraceFormat names a trace format.
type TraceFormat string

// The trace formats (docs/traces.md).
const (
	TraceBlkparse TraceFormat = "blkparse" // blkparse's default text output (BlkparseReader)
	TraceFio      TraceFormat = "fio"      // fio's iolog, version 2 or 3 (FioLogReader)
	TraceCSV      TraceFormat = "csv"      // op,offset,length[,cpu[,time]] (CSVReader)
	TraceScenario TraceFormat = "scenario" // the scenario language (ScenarioReader)
	TraceMSR      TraceFormat = "msr"      // MSR Cambridge CSV (NewMSRReader)
	TraceSPC      TraceFormat = "spc"      // SPC / UMass ASU,LBA,size,opcode,timestamp (NewSPCReader)
	TraceAlibaba  TraceFormat = "alibaba"  // Alibaba block traces device_id,opcode,offset,length,timestamp (NewAlibabaReader)
	TraceDiskSim  TraceFormat = "disksim"  // DiskSim ASCII time devno blkno size flags (NewDiskSimReader)
	TraceFioLog   TraceFormat = "fiolog"   // fio's latency, bandwidth or IOPS log with offsets (NewFioStatLogReader)
	TraceColumns  TraceFormat = "columns"  // a CSV whose columns a ColumnMap or its header names, as libCacheSim's (NewColumnReader)
)

// TraceFormats returns the formats in the order above.
func TraceFormats() []TraceFormat {
	return []TraceFormat{TraceBlkparse, TraceFio, TraceCSV, TraceScenario, TraceMSR, TraceSPC, TraceAlibaba,
		TraceDiskSim, TraceFioLog, TraceColumns}
}

// ParseTraceFormat returns the format called s ("libcachesim" is
// TraceColumns); the error names the valid ones.
func ParseTraceFormat(s string) (TraceFormat, error) {
	if strings.EqualFold(s, "libcachesim") {
		return TraceColumns, nil
	}
	var names []string
	for _, f := range TraceFormats() {
		if string(f) == strings.ToLower(s) {
			return f, nil
		}
		names = append(names, string(f))
	}
	return "", fmt.Errorf("source: unknown trace format %q (want %s)", s, strings.Join(names, ", "))
}

// traceDetectBytes is how much of a trace DetectTraceFormat looks at.
const traceDetectBytes = 64 << 10

// maxScenarioText bounds a scenario read as a trace (scenarios are small:
// MaxOps lines).
const maxScenarioText = 4 << 20

// Trace is an opened trace of any format: an IOReader whose errors name
// the trace (TraceError.File is Name).
type Trace struct {
	// Name is the trace's name in errors: the path OpenTrace opened.
	Name string
	// Format is the trace's format.
	Format TraceFormat
	// Compression is how the file was compressed (CompressNone for a
	// plain one).
	Compression Compression
	// Reopenable reports whether the trace can be opened again from its
	// start: a regular file. Standard input, a pipe and a FIFO are read
	// once.
	Reopenable bool
	// Scenario is the scenario of a scenario trace (its Device is the
	// trace's device), nil for other formats.
	Scenario *scenario.Scenario

	r       IOReader
	closeFn func() error
	file    *countingReader // nil for a stream
	size    int64
}

// Consumed returns how much of the trace's file has been read: the bytes
// read from it as it is stored (compressed, for a compressed trace) and
// its size, a measure of progress through a trace whose records are not
// counted beforehand. Both are 0 for standard input, a pipe or a FIFO,
// whose size is not known. Safe to call from any goroutine while another
// reads the trace. O(1).
func (t *Trace) Consumed() (read, size int64) {
	if t.file == nil {
		return 0, 0
	}
	return t.file.n.Load(), t.size
}

// TraceSelect chooses what of a trace to replay, for the formats that hold
// more than one workload, and how to read it; the zero TraceSelect takes
// each reader's defaults and tells the format from the content.
type TraceSelect struct {
	// Device is the device replayed: blkparse's "MAJ,MIN"
	// (BlkparseDevice), or the value of the device column of MSR's
	// DiskNumber, SPC's ASU, Alibaba's device_id, DiskSim's devno or a
	// column map's device (ColumnDevice); "": the device of the first
	// record, another device's record an error.
	Device string
	// File is the fio iolog file replayed (FioFile); "": the first file
	// the log names, another file's I/O an error.
	File string
	// Action is the blkparse action replayed (BlkparseReplay); 0: Q.
	Action BlkparseAction
	// Format is the trace's format; "": told from the content
	// (DetectTraceFormat), or from the file's extension.
	Format TraceFormat
	// Columns is the column map of a TraceColumns trace (ParseColumnMap);
	// nil: the one its header line names (HeaderColumnMap). Setting it
	// makes the format TraceColumns.
	Columns *ColumnMap
}

// OpenTrace opens the trace file at path (StdinName, "-", for standard
// input; a FIFO or a pipe works and is read once), undoes its gzip,
// bzip2 or zstd compression (told by its magic number), tells its format
// from its content (DetectTraceFormat), or when the content does not tell
// from its extension (.blkparse, .iolog, .csv, .scn, .spc, .disksim, under
// a .gz, .bz2 or .zst), and returns a streaming reader of it. Close it when
// done.
func OpenTrace(path string) (*Trace, error) { return OpenTraceSelect(path, TraceSelect{}) }

// OpenTraceSelect is OpenTrace replaying what sel chooses. Errors: OpenTrace's,
// and a choice the trace's format has no use for (an Action for a trace
// that is not blkparse, a Device for one without devices, a File for one
// that is not a fio iolog, Columns with another Format).
func OpenTraceSelect(path string, sel TraceSelect) (*Trace, error) {
	in, err := openInput(path)
	if err != nil {
		return nil, err
	}
	t, err := newTrace(in.r, path, sel)
	if err != nil {
		in.closeFn()
		return nil, err
	}
	t.closeFn, t.Compression, t.Reopenable = in.closeFn, in.comp, in.reopenable
	t.file, t.size = in.file, in.size
	return t, nil
}

// NewTrace returns a reader of the trace in r, of format format, or, when
// format is "", of the format DetectTraceFormat (or name's extension)
// tells. name names the trace in errors. A scenario is read whole (at most
// 4 MiB); the other formats stream. r is read as it is: OpenTrace undoes
// a compression, NewTrace does not.
func NewTrace(r io.Reader, name string, format TraceFormat) (*Trace, error) {
	return newTrace(r, name, TraceSelect{Format: format})
}

// newTrace is NewTrace replaying what sel chooses (OpenTraceSelect).
func newTrace(r io.Reader, name string, sel TraceSelect) (*Trace, error) {
	br := bufio.NewReaderSize(r, traceDetectBytes)
	format := sel.Format
	if sel.Columns != nil && format == "" {
		format = TraceColumns
	}
	if format == "" {
		head, err := br.Peek(traceDetectBytes)
		if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, &TraceError{File: name, Msg: "reading: " + err.Error(), Err: err}
		}
		format = DetectTraceFormat(head)
		if format == "" {
			format = traceFormatByExt(name)
		}
		if format == "" {
			return nil, &TraceError{File: name, Msg: "cannot tell the trace's format (want one of " + formatList() + "; see docs/traces.md, or give the format)"}
		}
	}
	if err := sel.check(format); err != nil {
		return nil, &TraceError{File: name, Msg: err.Error()}
	}
	t := &Trace{Name: name, Format: format}
	var err error
	if format == TraceScenario {
		err = t.readScenario(br)
	} else {
		t.r, err = newFormatReader(br, name, format, sel)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// formatList names the formats for an error: "blkparse, fio, …".
func formatList() string {
	var names []string
	for _, f := range TraceFormats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// hasDevices reports whether records of format f name their device.
func hasDevices(f TraceFormat) bool {
	switch f {
	case TraceBlkparse, TraceMSR, TraceSPC, TraceAlibaba, TraceDiskSim, TraceColumns:
		return true
	}
	return false
}

// check refuses a choice format has no use for.
func (sel TraceSelect) check(format TraceFormat) error {
	switch {
	case sel.Action != 0 && format != TraceBlkparse:
		return fmt.Errorf("an action to replay applies to a blkparse trace, not to a %s one", format)
	case sel.Device != "" && !hasDevices(format):
		return fmt.Errorf("a device to replay applies to a trace whose records name devices (blkparse, msr, spc, alibaba, disksim, columns), not to a %s one", format)
	case sel.File != "" && format != TraceFio:
		return fmt.Errorf("a file to replay applies to a fio iolog, not to a %s trace", format)
	case sel.Columns != nil && format != TraceColumns:
		return fmt.Errorf("a column map applies to a column-mapped CSV (format columns), not to a %s trace", format)
	}
	return nil
}

// newFormatReader returns the reader of format (not a scenario) over br.
func newFormatReader(br *bufio.Reader, name string, format TraceFormat, sel TraceSelect) (IOReader, error) {
	var col []ColumnOption
	if sel.Device != "" {
		col = append(col, ColumnDevice(sel.Device))
	}
	switch format {
	case TraceBlkparse:
		var opts []BlkparseOption
		if sel.Device != "" {
			opts = append(opts, BlkparseDevice(sel.Device))
		}
		if sel.Action != 0 {
			opts = append(opts, BlkparseReplay(sel.Action))
		}
		return NewBlkparseReader(br, opts...), nil
	case TraceFio:
		var opts []FioOption
		if sel.File != "" {
			opts = append(opts, FioFile(sel.File))
		}
		return NewFioLogReader(br, opts...), nil
	case TraceCSV:
		return NewCSVReader(br), nil
	case TraceMSR:
		return NewMSRReader(br, col...), nil
	case TraceSPC:
		return NewSPCReader(br, col...), nil
	case TraceAlibaba:
		return NewAlibabaReader(br, col...), nil
	case TraceDiskSim:
		return NewDiskSimReader(br, col...), nil
	case TraceFioLog:
		return NewFioStatLogReader(br), nil
	case TraceColumns:
		if sel.Columns != nil {
			return NewColumnReader(br, *sel.Columns, col...), nil
		}
		return newHeaderColumnReader(br, name, col)
	}
	_, err := ParseTraceFormat(string(format))
	return nil, err
}

// newHeaderColumnReader is the reader of a column-mapped CSV whose header
// line (its first line that is neither blank nor a comment) names its
// columns (HeaderColumnMap).
func newHeaderColumnReader(br *bufio.Reader, name string, opts []ColumnOption) (IOReader, error) {
	head, err := br.Peek(traceDetectBytes)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, &TraceError{File: name, Format: "columns", Msg: "reading: " + err.Error(), Err: err}
	}
	for _, line := range strings.Split(string(head), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		var fields [maxColumns]string
		n, _ := csvSplit(fields[:], t)
		m, ok := HeaderColumnMap(fields[:n])
		if !ok {
			break
		}
		return NewColumnReader(br, m, opts...), nil
	}
	return nil, &TraceError{File: name, Format: "columns", Msg: "no header line naming an offset and a length column (offset or lba, size or length); give a column map (time=0,op=1,offset=2,length=3)"}
}

// readScenario reads the scenario in br (at most maxScenarioText).
func (t *Trace) readScenario(br *bufio.Reader) error {
	text, err := io.ReadAll(io.LimitReader(br, maxScenarioText+1))
	if err != nil {
		return &TraceError{File: t.Name, Format: "scenario", Msg: "reading: " + err.Error(), Err: err}
	}
	if len(text) > maxScenarioText {
		return &TraceError{File: t.Name, Format: "scenario", Msg: fmt.Sprintf("a scenario is at most %s", scenario.FormatDDSize(maxScenarioText))}
	}
	sr, err := NewScenarioTextReader(filepath.Base(t.Name), string(text))
	if err != nil {
		return err
	}
	t.r, t.Scenario = sr, sr.Scenario()
	return nil
}

// Next returns the next record, io.EOF after the last; errors name the
// trace and the line.
func (t *Trace) Next() (IO, error) {
	rec, err := t.r.Next()
	if err != nil && err != io.EOF {
		var te *TraceError
		if errors.As(err, &te) && te.File == "" {
			c := *te
			c.File = t.Name
			return rec, &c
		}
	}
	return rec, err
}

// Close closes the file OpenTrace opened and its decompressor (nothing
// for NewTrace; standard input stays open).
func (t *Trace) Close() error {
	if t.closeFn == nil {
		return nil
	}
	c := t.closeFn
	t.closeFn = nil
	return c()
}

// TraceSummary is what a trace holds, kind by kind: the records, the bytes
// they move, the extent of the device they touch, the CPUs they use and
// their time span.
type TraceSummary struct {
	Records uint64
	// Count and Bytes are indexed by IOKind.
	Count [IODiscard + 1]uint64
	Bytes [IODiscard + 1]uint64
	// End is the largest End of a record: the device must be at least this
	// large.
	End uint64
	// CPUs is the largest CPU plus one.
	CPUs int
	// FirstAt and LastAt are the smallest and largest At.
	FirstAt, LastAt uint64
}

// SummarizeTrace reads r to its end and sums its records.
func SummarizeTrace(r IOReader) (TraceSummary, error) {
	var s TraceSummary
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return s, err
		}
		s.Add(rec)
	}
}

// Add adds one record to the summary.
func (s *TraceSummary) Add(rec IO) {
	if s.Records == 0 || rec.At < s.FirstAt {
		s.FirstAt = rec.At
	}
	if rec.At > s.LastAt {
		s.LastAt = rec.At
	}
	s.Records++
	if rec.Kind.Valid() {
		s.Count[rec.Kind]++
		s.Bytes[rec.Kind] += rec.Length
	}
	if rec.End() > s.End {
		s.End = rec.End()
	}
	if rec.CPU+1 > s.CPUs {
		s.CPUs = rec.CPU + 1
	}
}

// Merge adds o, the summary of the records that follow s's, to s: the
// result is the summary of both records together. O(1).
func (s *TraceSummary) Merge(o TraceSummary) {
	if o.Records == 0 {
		return
	}
	if s.Records == 0 || o.FirstAt < s.FirstAt {
		s.FirstAt = o.FirstAt
	}
	s.LastAt = max(s.LastAt, o.LastAt)
	s.Records += o.Records
	for k := range s.Count {
		s.Count[k] += o.Count[k]
		s.Bytes[k] += o.Bytes[k]
	}
	s.End = max(s.End, o.End)
	s.CPUs = max(s.CPUs, o.CPUs)
}

// String prints the summary on one line: "12 records: write 8 (32K), fsync
// 4; end 32K; 1 cpu; 0..1500 ns".
func (s TraceSummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d records:", s.Records)
	sep := " "
	for k := IORead; k <= IODiscard; k++ {
		if s.Count[k] == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s%s %d", sep, k, s.Count[k])
		if k.HasData() {
			fmt.Fprintf(&b, " (%s)", scenario.FormatDDSize(s.Bytes[k]))
		}
		sep = ", "
	}
	cpus := "cpus"
	if s.CPUs == 1 {
		cpus = "cpu"
	}
	fmt.Fprintf(&b, "; end %s; %d %s; %d..%d ns", scenario.FormatDDSize(s.End), s.CPUs, cpus, s.FirstAt, s.LastAt)
	return b.String()
}
