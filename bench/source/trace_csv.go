package source

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/bhsim/bhsim/bench/scenario"
)

// CSVHeader is the header line WriteCSV writes and NewCSVReader accepts:
// the columns in their order.
const CSVHeader = "op,offset,length,cpu,time"

// CSVReader reads the plain CSV trace format, the one to convert anything
// else to: one record a line,
//
//	op,offset,length[,cpu[,time]]
//
// op is read, write, fsync, fdatasync, flush or discard (trim is a synonym
// of discard; r and w of read and write), in any case. offset and length
// are byte counts: decimal, or with a K, M, G, T or P suffix (powers of
// 1024: 4K, 1M), as ParseDDSize reads them; a read, write or discard has a
// positive length, and a sync or flush has offset and length 0 or empty.
// cpu is the issuing CPU from 0 (default 0). time is when the I/O is
// issued: decimal nanoseconds, or a number with a unit as
// time.ParseDuration reads it ("1.5ms", "20us", "3s"); default 0 (issue
// when the CPU is free).
//
// Blanks around fields are ignored, and so is one pair of double quotes
// around a field; quoted commas and newlines are not supported (no field
// needs them). Blank lines and lines whose first non-blank is '#' are
// comments. The first record may be a header naming the columns in any
// order: each of CSVHeader's names at most once, op, offset and length at
// least ("offset,length,op,time"); the lines after it have its columns.
// The reader holds one line at a time.
type CSVReader struct {
	lines   *traceLines
	started bool
	// cols maps a header's columns onto CSVHeader's: column i of a line
	// is field cols[i]; ncols is the header's columns (0: no header, the
	// canonical order); inOrder says cols[i] is i for each of them.
	cols    [5]int
	ncols   int
	inOrder bool
}

// NewCSVReader returns a reader of the CSV trace in r.
func NewCSVReader(r io.Reader) *CSVReader {
	c := &CSVReader{lines: newTraceLines(r, "csv")}
	c.lines.view = true // a record keeps no part of its line
	return c
}

// Next returns the next record, io.EOF after the last.
func (c *CSVReader) Next() (IO, error) {
	for {
		line, err := c.lines.next()
		if err != nil {
			return IO{}, err
		}
		rec, ok, err := c.parse(line)
		if err != nil {
			return IO{}, c.lines.stop(err)
		}
		if ok {
			return rec, nil
		}
	}
}

// csvSplit splits s at commas into dst (trimming blanks and one pair of
// quotes from each field); more reports fields past len(dst).
func csvSplit(dst []string, s string) (n int, more bool) {
	start := 0
	for i := 0; i < len(s); i++ { // a byte loop: fields are short
		if s[i] != ',' {
			continue
		}
		if n == len(dst) {
			return n, true
		}
		dst[n] = csvField(s[start:i])
		n++
		start = i + 1
	}
	if n == len(dst) {
		return n, true
	}
	dst[n] = csvField(s[start:])
	return n + 1, false
}

// csvField trims a field of blanks (strings.TrimSpace's) and of one pair
// of double quotes with the blanks inside them. A field that starts and
// ends with a printable ASCII byte other than a quote, as most do, is
// returned as it is without a scan.
func csvField(f string) string {
	if n := len(f); n > 0 && f[0] > ' ' && f[0] < 0x7f && f[0] != '"' && f[n-1] > ' ' && f[n-1] < 0x7f && f[n-1] != '"' {
		return f
	}
	f = strings.TrimSpace(f)
	if len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
		f = strings.TrimSpace(f[1 : len(f)-1])
	}
	return f
}

var csvColumns = strings.Split(CSVHeader, ",")

func (c *CSVReader) parse(line string) (IO, bool, error) {
	n := c.lines.line
	t := strings.TrimSpace(line)
	if t == "" || t[0] == '#' {
		return IO{}, false, nil
	}
	var fields [5]string // on the stack: a line's fields are views of it
	f := fields[:]
	nf, more := csvSplit(f, t)
	first := !c.started
	c.started = true
	if first && csvHeaderLike(f[:nf]) {
		return IO{}, false, c.header(n, t, f[:nf], more)
	}
	if c.ncols > 0 {
		if more || nf != c.ncols {
			return IO{}, false, c.lines.fail(n, "want the header's %d columns, got %d", c.ncols, nf)
		}
		if !c.inOrder {
			var g [5]string
			for i := 0; i < nf; i++ {
				g[c.cols[i]] = f[i]
			}
			f = g[:]
		}
		nf = 5
	}
	if more {
		return IO{}, false, c.lines.fail(n, "want op,offset,length[,cpu[,time]], got more than 5 fields")
	}
	if nf < 3 {
		return IO{}, false, c.lines.fail(n, "want op,offset,length[,cpu[,time]], got %d fields", nf)
	}
	return c.record(n, f, nf)
}

// csvHeaderLike reports whether a first line's fields f are a header: its
// first field one of CSVHeader's names.
func csvHeaderLike(f []string) bool {
	for _, col := range csvColumns {
		if len(f) > 0 && strings.EqualFold(f[0], col) {
			return true
		}
	}
	return false
}

// header reads header line n (t, its fields f; more: it had more than 5):
// CSVHeader's names in any order, op, offset and length among them.
func (c *CSVReader) header(n int, t string, f []string, more bool) error {
	if more {
		return c.lines.fail(n, "header %q: more than the 5 columns of %s", t, CSVHeader)
	}
	seen := 0
	c.inOrder = true
	for i, name := range f {
		k := -1
		for j, col := range csvColumns {
			if strings.EqualFold(name, col) {
				k = j
			}
		}
		switch {
		case k < 0:
			return c.lines.fail(n, "header column %d is %q, not one of %s", i+1, name, CSVHeader)
		case seen&(1<<k) != 0:
			return c.lines.fail(n, "header column %d: %s is named twice", i+1, csvColumns[k])
		}
		seen |= 1 << k
		c.cols[i] = k
		c.inOrder = c.inOrder && k == i
	}
	if seen&7 != 7 {
		return c.lines.fail(n, "header %q: want op, offset and length among its columns (%s)", t, CSVHeader)
	}
	c.ncols = len(f)
	return nil
}

// record makes the record of line n from fields f (nf of them, in
// CSVHeader's order; those past nf, or empty, are absent).
func (c *CSVReader) record(n int, f []string, nf int) (IO, bool, error) {
	fail := func(msg string, args ...any) (IO, bool, error) {
		return IO{}, false, c.lines.fail(n, msg, args...)
	}
	var rec IO
	kind, ok := csvOp(f[0])
	if !ok {
		if kind, ok = csvOp(strings.ToLower(f[0])); !ok {
			return fail("unknown op %q (want read, write, fsync, fdatasync, flush or discard)", f[0])
		}
	}
	rec.Kind = kind
	if rec.Kind.HasData() {
		off, ok := traceSize(f[1])
		if !ok {
			return fail("offset %q is not a byte count (4096, 4K, 1M)", f[1])
		}
		length, ok := traceSize(f[2])
		if !ok || length == 0 {
			return fail("length %q is not a positive byte count (4096, 4K, 1M)", f[2])
		}
		if off+length < off {
			return fail("%d bytes at offset %d end past 2^64", length, off)
		}
		rec.Offset, rec.Length = off, length
	} else if (f[1] != "" && f[1] != "0") || (f[2] != "" && f[2] != "0") {
		return fail("%s takes no offset and length (0 or empty), got %q and %q", rec.Kind, f[1], f[2])
	}
	if nf > 3 && f[3] != "" {
		cpu, ok := traceUint(f[3])
		if !ok || cpu > MaxTraceCPU {
			return fail("cpu %q is not a number from 0 to %d", f[3], MaxTraceCPU)
		}
		rec.CPU = int(cpu)
	}
	if nf > 4 && f[4] != "" {
		at, ok := csvTime(f[4])
		if !ok {
			return fail("time %q is not nanoseconds or a duration with a unit (1500, 1.5us, 2ms)", f[4])
		}
		rec.At = at
	}
	rec.Line = n
	return rec, true, nil
}

// csvOp is the kind of lower-case op name s (CSVReader's names).
func csvOp(s string) (IOKind, bool) {
	switch s {
	case "read", "r":
		return IORead, true
	case "write", "w":
		return IOWrite, true
	case "fsync":
		return IOFsync, true
	case "fdatasync":
		return IOFdatasync, true
	case "flush":
		return IOFlush, true
	case "discard", "trim":
		return IODiscard, true
	}
	return 0, false
}

// csvTime reads decimal nanoseconds or a non-negative time.ParseDuration
// duration.
func csvTime(s string) (uint64, bool) {
	if v, ok := traceUint(s); ok {
		return v, true
	}
	if s == "" || s[0] < '0' || s[0] > '9' { // no sign
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return uint64(d), true
}

// appendCSV appends the record as a CSV line without its newline:
// op,offset,length,cpu,time with sizes as FormatDDSize prints them and
// the time in nanoseconds.
func appendCSV(b []byte, io IO) []byte {
	b = append(b, io.Kind.String()...)
	b = append(b, ',')
	b = append(b, scenario.FormatDDSize(io.Offset)...)
	b = append(b, ',')
	b = append(b, scenario.FormatDDSize(io.Length)...)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(io.CPU), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, io.At, 10)
	return b
}

// WriteCSV writes every record of r to w in the CSV trace format: each
// comment as a "# " line (a generator's header, the source of a
// conversion), CSVHeader, then one line per record; sizes with the largest
// suffix that divides them (FormatDDSize), times in nanoseconds. Flags and
// line numbers are not written. It streams, and returns the number of
// records written and the first error of r or w.
func WriteCSV(w io.Writer, r IOReader, comments ...string) (int, error) {
	bw := bufio.NewWriter(w)
	for _, c := range comments {
		for _, l := range strings.Split(c, "\n") {
			bw.WriteString(strings.TrimRight("# "+l, " "))
			bw.WriteByte('\n')
		}
	}
	bw.WriteString(CSVHeader + "\n")
	var buf []byte
	n := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			bw.Flush()
			return n, err
		}
		buf = appendCSV(buf[:0], rec)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return n, fmt.Errorf("source: writing CSV: %w", err)
		}
		n++
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("source: writing CSV: %w", err)
	}
	return n, nil
}
