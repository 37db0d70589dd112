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
)

// TraceFormats returns the formats in the order above.
func TraceFormats() []TraceFormat {
	return []TraceFormat{TraceBlkparse, TraceFio, TraceCSV, TraceScenario}
}

// ParseTraceFormat returns the format called s; the error names the valid
// ones.
func ParseTraceFormat(s string) (TraceFormat, error) {
	for _, f := range TraceFormats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("source: unknown trace format %q (want blkparse, fio, csv or scenario)", s)
}

// traceDetectBytes is how much of a trace DetectTraceFormat looks at.
const traceDetectBytes = 64 << 10

// DetectTraceFormat tells a trace's format from its first bytes, "" when it
// cannot: a first non-blank line "fio version …" is fio's; a first non-blank
// line of blkparse's shape ("8,0 3 1 0.000000000 697 Q …") is blkparse's; a
// first line that is neither blank nor a '#' comment is a scenario's when
// its first word is "device" and CSV when it holds a comma.
func DetectTraceFormat(head []byte) TraceFormat {
	s := string(head)
	firstAny := true
	var fields [8]string
	for len(s) > 0 {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if firstAny {
			firstAny = false
			if strings.HasPrefix(t, "fio version ") {
				return TraceFio
			}
			n, _ := traceFields(fields[:], t)
			if n >= 6 && strings.Contains(fields[0], ",") {
				_, okDev := blkparseDev(fields[0])
				_, okCPU := traceUint(fields[1])
				_, okTime := traceSeconds(fields[3])
				if okDev && okCPU && okTime {
					return TraceBlkparse
				}
			}
		}
		if t[0] == '#' {
			continue
		}
		if w := strings.Fields(t); w[0] == "device" {
			return TraceScenario
		}
		if strings.Contains(t, ",") {
			return TraceCSV
		}
		return ""
	}
	return ""
}

// traceFormatByExt guesses a format from a file name's extension.
func traceFormatByExt(name string) TraceFormat {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".gz", ".bz2", ".zst", ".zstd":
		return traceFormatByExt(strings.TrimSuffix(name, filepath.Ext(name)))
	case ".scn":
		return TraceScenario
	case ".csv":
		return TraceCSV
	case ".iolog":
		return TraceFio
	case ".blkparse":
		return TraceBlkparse
	}
	return ""
}

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
}

// TraceSelect chooses what of a trace to replay, for the formats that hold
// more than one workload; the zero TraceSelect takes each reader's
// defaults.
type TraceSelect struct {
	// Device is the blkparse device "MAJ,MIN" replayed (BlkparseDevice);
	// "": the device of the first event, another device's event an error.
	Device string
	// File is the fio iolog file replayed (FioFile); "": the first file
	// the log names, another file's I/O an error.
	File string
	// Action is the blkparse action replayed (BlkparseReplay); 0: Q.
	Action BlkparseAction
}

// OpenTrace opens the trace file at path (StdinName, "-", for standard
// input; a FIFO or a pipe works and is read once), undoes its gzip,
// bzip2 or zstd compression (told by its magic number), tells its format
// from its content (DetectTraceFormat), or when the content does not tell
// from its extension (.blkparse, .iolog, .csv, .scn, under a .gz, .bz2 or
// .zst), and returns a streaming reader of it. Close it when done.
func OpenTrace(path string) (*Trace, error) { return OpenTraceSelect(path, TraceSelect{}) }

// OpenTraceSelect is OpenTrace replaying what sel chooses. Errors: OpenTrace's,
// and a choice the trace's format has no use for (a Device or Action for a
// trace that is not blkparse, a File for one that is not a fio iolog).
func OpenTraceSelect(path string, sel TraceSelect) (*Trace, error) {
	in, err := openInput(path)
	if err != nil {
		return nil, err
	}
	t, err := newTrace(in.r, path, "", sel)
	if err != nil {
		in.closeFn()
		return nil, err
	}
	t.closeFn, t.Compression, t.Reopenable = in.closeFn, in.comp, in.reopenable
	return t, nil
}

// NewTrace returns a reader of the trace in r, of format format, or, when
// format is "", of the format DetectTraceFormat (or name's extension)
// tells. name names the trace in errors. A scenario is read whole (at most
// 4 MiB); the other formats stream. r is read as it is: OpenTrace undoes
// a compression, NewTrace does not.
func NewTrace(r io.Reader, name string, format TraceFormat) (*Trace, error) {
	return newTrace(r, name, format, TraceSelect{})
}

// newTrace is NewTrace replaying what sel chooses (OpenTraceSelect).
func newTrace(r io.Reader, name string, format TraceFormat, sel TraceSelect) (*Trace, error) {
	br := bufio.NewReaderSize(r, traceDetectBytes)
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
			return nil, &TraceError{File: name, Msg: "cannot tell the trace's format (want blkparse's default output, a fio iolog, CSV op,offset,length or a scenario; see docs/traces.md)"}
		}
	}
	t := &Trace{Name: name, Format: format}
	switch {
	case (sel.Device != "" || sel.Action != 0) && format != TraceBlkparse:
		return nil, &TraceError{File: name, Msg: fmt.Sprintf("a device or an action to replay applies to a blkparse trace, not to a %s one", format)}
	case sel.File != "" && format != TraceFio:
		return nil, &TraceError{File: name, Msg: fmt.Sprintf("a file to replay applies to a fio iolog, not to a %s trace", format)}
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
		t.r = NewBlkparseReader(br, opts...)
	case TraceFio:
		var opts []FioOption
		if sel.File != "" {
			opts = append(opts, FioFile(sel.File))
		}
		t.r = NewFioLogReader(br, opts...)
	case TraceCSV:
		t.r = NewCSVReader(br)
	case TraceScenario:
		text, err := io.ReadAll(io.LimitReader(br, maxScenarioText+1))
		if err != nil {
			return nil, &TraceError{File: name, Format: "scenario", Msg: "reading: " + err.Error(), Err: err}
		}
		if len(text) > maxScenarioText {
			return nil, &TraceError{File: name, Format: "scenario", Msg: fmt.Sprintf("a scenario is at most %s", scenario.FormatDDSize(maxScenarioText))}
		}
		sr, err := NewScenarioTextReader(filepath.Base(name), string(text))
		if err != nil {
			return nil, err
		}
		t.r, t.Scenario = sr, sr.Scenario()
	default:
		_, err := ParseTraceFormat(string(format))
		return nil, err
	}
	return t, nil
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
