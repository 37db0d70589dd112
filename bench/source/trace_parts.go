package source

import (
	"bufio"
	"bytes"
	"io"
	"os"
)

// MinTracePart is the least a part of a trace split by OpenTraceParts
// holds, in bytes: below it a part would cost its goroutine more than it
// saves.
const MinTracePart = 4 << 20

// OpenTraceParts opens the trace at path as OpenTraceSelect(path, sel)
// does, split into up to n parts that a caller reads at once, one
// goroutine each, for about 1/n of the time a whole read's parsing takes
// (splitting reads the file before the last part once more, to count its
// lines: a plain copy and count, not a parse). The parts
// are consecutive ranges of the file, each of whole lines, and together
// they are the whole trace: read in turn, their records are the whole
// trace's, in its order and with its line numbers (the part after the
// header takes the header's columns), and each part's first error is the
// error the whole trace would give at that line. The first error in part
// order is therefore the whole trace's first error.
//
// Only a plain CSV file (TraceCSV, not compressed, a regular file) of at
// least 2 × MinTracePart bytes is split, into at most size / MinTracePart
// parts of about equal size (each starts at the first line start at or
// after its share, so a part can be up to a line shorter), and only when
// its first record lies in the first part;
// any other trace comes back whole, as the one element. Each part is a
// *Trace of its own (its Consumed counts its own range); close each.
// Errors: OpenTraceSelect's, and the file failing to read while it is
// split. O(size of the file before the last part) to count its lines.
func OpenTraceParts(path string, sel TraceSelect, n int) ([]*Trace, error) {
	return openTraceParts(path, sel, n, MinTracePart)
}

// openTraceParts is OpenTraceParts with parts of at least minPart bytes.
func openTraceParts(path string, sel TraceSelect, n int, minPart int64) ([]*Trace, error) {
	t, err := OpenTraceSelect(path, sel)
	if err != nil {
		return nil, err
	}
	n = int(min(int64(max(n, 1)), t.size/max(minPart, 1)))
	if n < 2 || t.Format != TraceCSV || t.Compression != CompressNone || !t.Reopenable {
		return []*Trace{t}, nil
	}
	parts, err := splitCSV(path, t.size, n)
	if err != nil || parts == nil {
		if err != nil {
			t.Close()
			return nil, &TraceError{File: path, Msg: "reading: " + err.Error(), Err: err}
		}
		return []*Trace{t}, nil
	}
	t.Close()
	return parts, nil
}

// splitCSV opens the CSV file at path, of size bytes, as up to n parts
// (OpenTraceParts); nil when it is not to be split: its first record is
// not in the first part, or no line ends near where a second part would
// start.
func splitCSV(path string, size int64, n int) ([]*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	starts, err := partStarts(f, size, n)
	if err != nil || len(starts) < 2 {
		return nil, err
	}
	lines, err := linesBefore(f, starts)
	if err != nil {
		return nil, err
	}
	probe := NewCSVReader(bufio.NewReaderSize(io.NewSectionReader(f, 0, starts[1]), 64<<10))
	if _, err := probe.Next(); err != nil {
		return nil, nil // no record in the first part, or a bad one: read whole
	}
	var parts []*Trace
	for k, lo := range starts {
		hi := size
		if k+1 < len(starts) {
			hi = starts[k+1]
		}
		p, err := openPart(path, lo, hi)
		if err != nil {
			for _, q := range parts {
				q.Close()
			}
			return nil, err
		}
		if k > 0 { // a part after the first continues the header's columns
			c := p.r.(*CSVReader)
			c.lines.line = lines[k]
			c.started, c.cols, c.ncols, c.inOrder = true, probe.cols, probe.ncols, probe.inOrder
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// openPart opens bytes [lo, hi) of the CSV file at path as a trace, as
// OpenTraceSelect opens a whole file (its Consumed counts the part's
// bytes).
func openPart(path string, lo, hi int64) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	cr := &countingReader{r: io.NewSectionReader(f, lo, hi-lo)}
	t, err := newTrace(cr, path, TraceSelect{Format: TraceCSV})
	if err != nil {
		f.Close()
		return nil, err
	}
	t.closeFn, t.Reopenable, t.file, t.size = f.Close, true, cr, hi-lo
	return t, nil
}

// partStarts returns where each of up to n parts of f (size bytes) starts:
// 0, then for each k the first line that starts at or after k·size/n, so
// that no line is cut; a start that no line end within traceMaxLine
// bytes gives (the line there is too long for any reader) is left out, as
// is one that would make an empty part.
func partStarts(f io.ReaderAt, size int64, n int) ([]int64, error) {
	starts := []int64{0}
	buf := make([]byte, traceMaxLine+1)
	for k := 1; k < n; k++ {
		at := size*int64(k)/int64(n) - 1 // a '\n' here starts a line at size·k/n
		if at < starts[len(starts)-1] {
			continue
		}
		m, err := f.ReadAt(buf, at)
		if err != nil && err != io.EOF {
			return nil, err
		}
		i := bytes.IndexByte(buf[:m], '\n')
		if i < 0 || at+int64(i)+1 >= size {
			continue
		}
		starts = append(starts, at+int64(i)+1)
	}
	return starts, nil
}

// linesBefore returns, for each start, how many lines of f end before it.
// O(the last start).
func linesBefore(f io.ReaderAt, starts []int64) ([]int, error) {
	lines := make([]int, len(starts))
	buf := make([]byte, 1<<20)
	var off int64
	count := 0
	for k, start := range starts {
		for off < start {
			m, err := f.ReadAt(buf[:min(int64(len(buf)), start-off)], off)
			count += bytes.Count(buf[:m], []byte{'\n'})
			off += int64(m)
			if err != nil && off < start {
				return nil, err
			}
		}
		lines[k] = count
	}
	return lines, nil
}
