package workload

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
		rec, ok, err := f.parse(line)
		if err != nil {
			return IO{}, f.lines.stop(err)
		}
		if ok {
			return rec, nil
		}
	}
}

func (f *FioLogReader) parse(line string) (IO, bool, error) {
	n := f.lines.line
	fail := func(msg string, args ...any) (IO, bool, error) {
		return IO{}, false, f.lines.fail(n, msg, args...)
	}
	w := f.fields[:]
	nf, more := traceFields(w, line)
	if nf == 0 {
		return IO{}, false, nil
	}
	var at uint64
	if f.version == 3 {
		ts, ok := traceUint(w[0])
		if !ok || ts > (^uint64(0))/1000 {
			return fail("time stamp %q is not a number of microseconds", w[0])
		}
		at = ts * 1000
		w, nf = w[1:], nf-1
	} else {
		at = f.waited
	}
	switch {
	case more || nf != 2 && nf != 4:
		if f.version == 3 {
			return fail("want TIMESTAMP FILE ACTION or TIMESTAMP FILE ACTION OFFSET LENGTH")
		}
		return fail("want FILE ACTION or FILE ACTION OFFSET LENGTH")
	case nf == 2:
		name, act := w[0], w[1]
		open, added := f.state[name]
		switch act {
		case "add":
			if !added {
				if len(f.state) >= fioMaxFiles {
					return fail("more than %d files", fioMaxFiles)
				}
				f.state[name] = false
			}
		case "open":
			if !added {
				return fail("open of %s, which was not added (add it first)", name)
			}
			f.state[name] = true
		case "close":
			if !open {
				return fail("close of %s, which is not open", name)
			}
			f.state[name] = false
		case "read", "write", "sync", "datasync", "trim", "wait":
			return fail("%s needs an offset and a length", act)
		default:
			return fail("unknown file action %q (want add, open or close)", act)
		}
		return IO{}, false, nil
	}
	name, act := w[0], w[1]
	off, ok1 := traceUint(w[2])
	length, ok2 := traceUint(w[3])
	if !ok1 || !ok2 {
		return fail("offset %q and length %q must be decimal byte counts", w[2], w[3])
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
		if f.version == 3 {
			return fail("wait is not allowed in a version 3 iolog (its time stamps say when)")
		}
		if off > (^uint64(0)-f.waited)/1000 {
			return fail("the waits add up past 2^64 nanoseconds")
		}
		f.waited += off * 1000
		return IO{}, false, nil
	case "add", "open", "close":
		return fail("file action %s takes no offset and length", act)
	default:
		return fail("unknown I/O action %q (want read, write, sync, datasync, trim or wait)", act)
	}
	open, added := f.state[name]
	switch {
	case !added:
		return fail("%s on %s, which was not added (add and open it first)", act, name)
	case !open:
		return fail("%s on %s, which is not open", act, name)
	}
	if f.replayed == "" {
		f.replayed = name
	}
	if name != f.replayed {
		if f.fileSet {
			return IO{}, false, nil
		}
		return fail("I/O on %s, but the trace's file is %s (choose one with FioFile or TraceSelect.File)", name, f.replayed)
	}
	rec := IO{Kind: kind, At: at, Line: n}
	if kind.HasData() {
		if length == 0 {
			return fail("a %s of 0 bytes", act)
		}
		if off+length < off {
			return fail("%d bytes at offset %d end past 2^64", length, off)
		}
		rec.Offset, rec.Length = off, length
	}
	return rec, true, nil
}
