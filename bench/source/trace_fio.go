package source

import (
	"io"
	"strings"
)

// FioOption configures NewFioLogReader.
type FioOption func(*FioLogReader)

// FioFile replays only the I/O of the file (or device) named name and skips
// that of other files. Without it the first file an I/O action names is the
// trace's, and I/O on another file is an error: one workload has one
// device.
func FioFile(name string) FioOption {
	return func(r *FioLogReader) { r.file = name; r.fileSet = true }
}

// fioMaxFiles bounds the files one iolog may add, so that the reader's
// memory stays bounded.
const fioMaxFiles = 1024

// FioLogReader reads fio's iolog format, version 2 or 3 (fio's
// write_iolog writes version 3; read_iolog replays both). The first line is
// "fio version 2 iolog" or "fio version 3 iolog"; every other line is a file
// action, "FILE ACTION" (v2) or "TIMESTAMP FILE ACTION" (v3) with ACTION
// add, open or close, or an I/O action, "FILE ACTION OFFSET LENGTH" (v2) or
// "TIMESTAMP FILE ACTION OFFSET LENGTH" (v3), with ACTION read, write,
// sync, datasync, trim or (v2 only) wait. Offsets and lengths are decimal
// bytes, v3 time stamps decimal microseconds from the start of the run.
// File names have no blanks (fio reads them with %s).
//
// read → IORead, write → IOWrite, trim → IODiscard, sync → IOFsync,
// datasync → IOFdatasync (their offset and length, 0 0 as fio writes
// them, are ignored). At is the time stamp in nanoseconds for v3; for v2
// it is the sum of the wait actions so far ("wait for OFFSET microseconds,
// relative to the previous wait", as fio's documentation describes it).
// File actions yield no record but are checked: an I/O action needs its
// file added and open, open needs it added, close needs it open. CPU is 0.
//
// Stricter than fio, which logs a bad line and goes on: a line of another
// shape, an unknown action, a read, write or trim of 0 bytes and a v3 wait
// are errors naming the line; blank lines are skipped. Version 1 iologs
// ("rw, offset, length", unsupported since fio 1.20) are refused.
type FioLogReader struct {
	lines    *traceLines
	version  int
	file     string // the replayed file
	fileSet  bool
	state    map[string]bool // file → open
	waited   uint64          // v2: the waits so far, in nanoseconds
	fields   [6]string
	header   bool
	replayed string
}

// NewFioLogReader returns a reader of the fio iolog in r.
func NewFioLogReader(r io.Reader, opts ...FioOption) *FioLogReader {
	f := &FioLogReader{lines: newTraceLines(r, "fio"), state: map[string]bool{}}
	for _, o := range opts {
		o(f)
	}
	f.replayed = f.file
	return f
}

// Version is the iolog's version (2 or 3), 0 before the first Next.
func (f *FioLogReader) Version() int { return f.version }

// Next returns the next I/O record, io.EOF after the last.
func (f *FioLogReader) Next() (IO, error) {
	if !f.header {
		line, err := f.lines.next()
		if err == io.EOF {
			return IO{}, f.lines.stop(f.lines.fail(1, "empty input: no \"fio version 2 iolog\" or \"fio version 3 iolog\" line"))
		}
		if err != nil {
			return IO{}, err
		}
		switch {
		case strings.HasPrefix(line, "fio version 2 iolog"):
			f.version = 2
		case strings.HasPrefix(line, "fio version 3 iolog"):
			f.version = 3
		default:
			return IO{}, f.lines.stop(f.lines.fail(1, "not a fio iolog: the first line must be \"fio version 2 iolog\" or \"fio version 3 iolog\" (version 1 is not supported, as by fio since 1.20)"))
		}
		f.header = true
	}
	for {
		line, err := f.lines.next()
		if err != nil {
			return IO{}, err
		}
		var rec IO
		ok, err := f.parse(line, &rec)
		if err != nil {
			return IO{}, f.lines.stop(err)
		}
		if ok {
			return rec, nil
		}
	}
}

// parse reads one line after the header: an I/O record (ok, in rec), a
// line to skip (blank, a file action, a v2 wait), or an error.
func (f *FioLogReader) parse(line string, rec *IO) (bool, error) {
	n := f.lines.line
	w := f.fields[:]
	nf, more := traceFields(w, line)
	if nf == 0 {
		return false, nil
	}
	var at uint64
	if f.version == 3 {
		ts, ok := traceUint(w[0])
		if !ok || ts > (^uint64(0))/1000 {
			return false, f.lines.fail(n, "time stamp %q is not a number of microseconds", w[0])
		}
		at = ts * 1000
		w, nf = w[1:], nf-1
	} else {
		at = f.waited
	}
	switch {
	case more || nf != 2 && nf != 4:
		if f.version == 3 {
			return false, f.lines.fail(n, "want TIMESTAMP FILE ACTION or TIMESTAMP FILE ACTION OFFSET LENGTH")
		}
		return false, f.lines.fail(n, "want FILE ACTION or FILE ACTION OFFSET LENGTH")
	case nf == 2:
		return false, f.fileAction(n, w[0], w[1])
	}
	return f.ioAction(n, at, w[0], w[1], w[2], w[3], rec)
}

// fileAction applies file action act (add, open or close) of line n to
// file name: open needs it added, close needs it open, and at most
// fioMaxFiles are added.
func (f *FioLogReader) fileAction(n int, name, act string) error {
	open, added := f.state[name]
	switch act {
	case "add":
		if !added {
			if len(f.state) >= fioMaxFiles {
				return f.lines.fail(n, "more than %d files", fioMaxFiles)
			}
			f.state[name] = false
		}
	case "open":
		if !added {
			return f.lines.fail(n, "open of %s, which was not added (add it first)", name)
		}
		f.state[name] = true
	case "close":
		if !open {
			return f.lines.fail(n, "close of %s, which is not open", name)
		}
		f.state[name] = false
	case "read", "write", "sync", "datasync", "trim", "wait":
		return f.lines.fail(n, "%s needs an offset and a length", act)
	default:
		return f.lines.fail(n, "unknown file action %q (want add, open or close)", act)
	}
	return nil
}

// ioAction reads I/O action act of line n, at time at, on file name with
// the texts of its offset and length: a record of the replayed file (ok,
// in rec), a v2 wait (which adds to the time) or an I/O of another file
// chosen away, skipped, or an error.
func (f *FioLogReader) ioAction(n int, at uint64, name, act, offText, lenText string, rec *IO) (bool, error) {
	off, ok1 := traceUint(offText)
	length, ok2 := traceUint(lenText)
	if !ok1 || !ok2 {
		return false, f.lines.fail(n, "offset %q and length %q must be decimal byte counts", offText, lenText)
	}
	var kind IOKind
	switch act {
	case "read":
		kind = IORead
	case "write":
		kind = IOWrite
	case "trim":
		kind = IODiscard
	case "sync":
		kind = IOFsync
	case "datasync":
		kind = IOFdatasync
	case "wait":
		return false, f.wait(n, off)
	case "add", "open", "close":
		return false, f.lines.fail(n, "file action %s takes no offset and length", act)
	default:
		return false, f.lines.fail(n, "unknown I/O action %q (want read, write, sync, datasync, trim or wait)", act)
	}
	open, added := f.state[name]
	switch {
	case !added:
		return false, f.lines.fail(n, "%s on %s, which was not added (add and open it first)", act, name)
	case !open:
		return false, f.lines.fail(n, "%s on %s, which is not open", act, name)
	}
	if f.replayed == "" {
		f.replayed = name
	}
	if name != f.replayed {
		if f.fileSet {
			return false, nil
		}
		return false, f.lines.fail(n, "I/O on %s, but the trace's file is %s (choose one with TraceSelect.File)", name, f.replayed)
	}
	*rec = IO{Kind: kind, At: at, Line: n}
	if kind.HasData() {
		if length == 0 {
			return false, f.lines.fail(n, "a %s of 0 bytes", act)
		}
		if off+length < off {
			return false, f.lines.fail(n, "%d bytes at offset %d end past 2^64", length, off)
		}
		rec.Offset, rec.Length = off, length
	}
	return true, nil
}

// wait applies the wait action of line n, of us microseconds: v2 only,
// and the waits add up to at most 2^64 nanoseconds.
func (f *FioLogReader) wait(n int, us uint64) error {
	if f.version == 3 {
		return f.lines.fail(n, "wait is not allowed in a version 3 iolog (its time stamps say when)")
	}
	if us > (^uint64(0)-f.waited)/1000 {
		return f.lines.fail(n, "the waits add up past 2^64 nanoseconds")
	}
	f.waited += us * 1000
	return nil
}
