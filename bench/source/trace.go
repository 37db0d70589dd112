package source

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"unsafe"

	"github.com/bhsim/bhsim/bench/scenario"
)

// IOKind is what one I/O record does.
type IOKind uint8

// The kinds of I/O record. Every format maps its operations onto these (see
// docs/traces.md for each format's table).
const (
	// IORead reads Length bytes at Offset (pread(2)).
	IORead IOKind = iota + 1
	// IOWrite writes Length bytes at Offset (pwrite(2)).
	IOWrite
	// IOFsync is fsync(2) of the device; Offset and Length are 0.
	IOFsync
	// IOFdatasync is fdatasync(2) of the device; Offset and Length are 0.
	IOFdatasync
	// IOFlush is a cache flush seen below the page cache (a block trace's
	// PREFLUSH or flush request); Offset and Length are 0. A block trace has
	// no fsync, only the flush an fsync ends with, so a runner replaying
	// records through the page cache may treat it as fdatasync.
	IOFlush
	// IODiscard discards (trims) Length bytes at Offset.
	IODiscard
)

// ioKindNames are the kinds' names, indexed by kind.
var ioKindNames = [...]string{"", "read", "write", "fsync", "fdatasync", "flush", "discard"}

// String is the kind's name: "read", "write", "fsync", "fdatasync", "flush"
// or "discard" ("kind(N)" for an invalid kind).
func (k IOKind) String() string {
	if k.Valid() {
		return ioKindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Valid reports whether k is one of the kinds above.
func (k IOKind) Valid() bool { return k >= IORead && k <= IODiscard }

// HasData reports whether records of kind k move or name data: reads,
// writes and discards, which have a positive Length. Syncs and flushes
// have none.
func (k IOKind) HasData() bool { return k == IORead || k == IOWrite || k == IODiscard }

// IOFlags are hints a block trace records about one request; they do not
// change what the record does. Formats without them give 0.
type IOFlags uint8

// The flags, from blkparse's rwbs letters.
const (
	// FlagSync is REQ_SYNC (S): the submitter waits for the request.
	FlagSync IOFlags = 1 << iota
	// FlagMeta is REQ_META (M): filesystem metadata.
	FlagMeta
	// FlagFUA is REQ_FUA (the F after the operation): the write goes
	// through the device's volatile cache.
	FlagFUA
	// FlagAhead is REQ_RAHEAD (A): a readahead read, which the kernel
	// itself decided to issue.
	FlagAhead
)

// String names the flags as blkparse's letters in its order ("FSM" for
// FUA, sync and meta); "" for none.
func (f IOFlags) String() string {
	var b []byte
	if f&FlagFUA != 0 {
		b = append(b, 'F')
	}
	if f&FlagAhead != 0 {
		b = append(b, 'A')
	}
	if f&FlagSync != 0 {
		b = append(b, 'S')
	}
	if f&FlagMeta != 0 {
		b = append(b, 'M')
	}
	return string(b)
}

// IO is one record of a user workload: Kind of Length bytes at byte Offset
// of the device, issued by the process on CPU (0-based; formats without one
// give 0), at At nanoseconds from the start of the trace (0 when the format
// has no time: issue as soon as the CPU is free). Line is the source line (0
// if generated). Flags are a block trace's hints (0 elsewhere).
//
// Every record a reader returns is valid (IO.Valid): a read, write or
// discard has a positive Length and Offset+Length does not overflow; a
// sync or flush has Offset and Length 0.
type IO struct {
	// Kind is what the record does.
	Kind IOKind
	// Flags are a block trace's hints. (Beside Kind, so that a record is
	// 48 bytes, three 16-byte moves that a copy's loads can take whole
	// from the stores of the copy before it; at 56 the last two overlap,
	// and the next copy of a record just copied waits for them.)
	Flags IOFlags
	// Offset and Length are its byte range on the device (0 and 0 for a
	// sync or flush).
	Offset, Length uint64
	// CPU is the issuing CPU, 0 to MaxTraceCPU.
	CPU int
	// At is when it was issued, in nanoseconds from the trace's start.
	At uint64
	// Line is its line in the trace, from 1 (0 for a generated record).
	Line int
}

// MaxTraceCPU bounds IO.CPU: readers refuse a CPU number above it.
const MaxTraceCPU = 4095

// Valid returns nil for a well-formed record, or what is wrong with it: an
// invalid kind, a data record of no bytes or one whose end overflows, a sync
// or flush with an offset or length, a CPU outside [0, MaxTraceCPU].
func (io IO) Valid() error {
	switch {
	case !io.Kind.Valid():
		return fmt.Errorf("invalid kind %d", io.Kind)
	case io.Kind.HasData() && io.Length == 0:
		return fmt.Errorf("a %s of 0 bytes", io.Kind)
	case io.Kind.HasData() && io.Offset+io.Length < io.Offset:
		return fmt.Errorf("a %s of %d bytes at %d ends past 2^64", io.Kind, io.Length, io.Offset)
	case !io.Kind.HasData() && (io.Offset != 0 || io.Length != 0):
		return fmt.Errorf("a %s with offset %d and length %d (want 0 and 0)", io.Kind, io.Offset, io.Length)
	case io.CPU < 0 || io.CPU > MaxTraceCPU:
		return fmt.Errorf("cpu %d is outside 0..%d", io.CPU, MaxTraceCPU)
	}
	return nil
}

// End is the byte after the record's last: Offset+Length (Offset for a
// sync or flush, which is 0).
func (io IO) End() uint64 { return io.Offset + io.Length }

// String prints the record as one CSV line of WriteCSV's format, without the
// line number: "write,4K,4K,0,0".
func (io IO) String() string { return string(appendCSV(nil, io)) }

// Blocks maps the record onto a device of blockSize-byte blocks the way the
// kernel's block-device page cache sees a pread or pwrite: it touches the
// blocks first to last (block i holds bytes [i·B, (i+1)·B)), and
// partialHead (partialTail) reports that the first (last) block is only
// partly covered. A partly covered block of a write must be read first
// when it is not cached: a read-modify-write (a whole block is never read
// for a write). When first == last the two flags describe the same block
// and are equal. A record of no data (a sync or flush) touches no block:
// it returns first = last = 0 and no partial block; use BlockCount to tell
// it from a record of one block. blockSize 0 is taken as 512 (the sector).
func (io IO) Blocks(blockSize uint32) (first, last uint64, partialHead, partialTail bool) {
	if io.Length == 0 {
		return 0, 0, false, false
	}
	b := uint64(blockSize)
	if b == 0 {
		b = 512
	}
	end := io.Offset + io.Length // the byte after the last
	if end < io.Offset {
		end = ^uint64(0) // an invalid record: clamp rather than wrap
	}
	first, last = io.Offset/b, (end-1)/b
	headCut := io.Offset%b != 0
	tailCut := end%b != 0
	if first == last {
		p := headCut || tailCut
		return first, last, p, p
	}
	return first, last, headCut, tailCut
}

// BlockCount is the number of blockSize-byte blocks the record touches
// (0 for a sync or flush). blockSize 0 is taken as 512.
func (io IO) BlockCount(blockSize uint32) uint64 {
	if io.Length == 0 {
		return 0
	}
	first, last, _, _ := io.Blocks(blockSize)
	return last - first + 1
}

// BlockPiece is the part of one record that falls in one block: block
// Block, bytes [Off, Off+Len) of it. Partial says the piece does not cover
// the block whole (so a write of it needs a read-modify-write of an
// uncached block).
type BlockPiece struct {
	Block    uint64
	Off, Len uint32
	Partial  bool
}

// Pieces splits the record at blockSize boundaries, as the page cache's
// buffered path does: one piece per block touched, in order (none for a
// sync or flush). blockSize 0 is taken as 512.
func (io IO) Pieces(blockSize uint32) iter.Seq[BlockPiece] {
	return func(yield func(BlockPiece) bool) {
		if io.Length == 0 {
			return
		}
		b := uint64(blockSize)
		if b == 0 {
			b = 512
		}
		end := io.Offset + io.Length
		if end < io.Offset {
			end = ^uint64(0)
		}
		for pos := io.Offset; pos < end; {
			blk := pos / b
			off := pos - blk*b
			n := b - off
			if end-pos < n {
				n = end - pos
			}
			if !yield(BlockPiece{Block: blk, Off: uint32(off), Len: uint32(n), Partial: n != b}) {
				return
			}
			if pos+n < pos { // the last block of the address space
				return
			}
			pos += n
		}
	}
}

// CheckDevice returns an error naming the record's line when it does not
// fit a device of deviceSize bytes: a read, write or discard that ends past
// the device's end. Syncs and flushes always fit. The kernel would not
// refuse all of those (it shortens a pwrite that crosses the end, fails
// one that starts there with ENOSPC, and returns 0 from a pread there);
// Run refuses them because such a record means the trace was taken on a
// bigger device than the one given, which would make every figure wrong.
func (io IO) CheckDevice(deviceSize uint64) error {
	// Offset+Length, not End(): a method call on the copy of io spills it
	// to the stack and reloads it wider than it was stored, a stall on
	// the path every record takes.
	if end := io.Offset + io.Length; !io.Kind.HasData() || end <= deviceSize && end >= io.Offset {
		return nil
	}
	return &TraceError{Line: io.Line, Msg: fmt.Sprintf("%s of %d bytes at offset %d ends at %d, past the device's end (%d bytes, %s)",
		io.Kind, io.Length, io.Offset, io.End(), deviceSize, scenario.FormatDDSize(deviceSize))}
}

// IOReader streams records: Next returns io.EOF after the last one, and an
// error naming the line for a bad one. After an error other than io.EOF
// the reader is done: every later call returns the same error.
type IOReader interface {
	Next() (IO, error)
}

// SliceReader is an IOReader over records held in memory: Next returns
// Records in order, then Err (io.EOF when Err is nil). It lets a caller run
// records built in code, or tested, as a trace. O(1) per record.
type SliceReader struct {
	Records []IO
	Err     error
}

// Next implements IOReader.
func (s *SliceReader) Next() (IO, error) {
	if len(s.Records) == 0 {
		if s.Err != nil {
			return IO{}, s.Err
		}
		return IO{}, io.EOF
	}
	r := s.Records[0]
	s.Records = s.Records[1:]
	return r, nil
}

// ReadAll reads r to its end and returns its records and the error that
// ended it (nil for io.EOF). It holds the whole trace in memory: O(records).
func ReadAll(r IOReader) ([]IO, error) {
	var out []IO
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// TraceError is a bad record or line of a trace: File:Line: Format: Msg,
// as in "app.csv:12: csv: unknown op "rd" (want read, write, ...)". File is
// empty for a reader built on an io.Reader (OpenTrace fills it in); Line is
// 0 only for an error that belongs to no line (a bad option, the input
// failing).
type TraceError struct {
	File   string // the trace's name, "" when unknown
	Line   int    // the line from 1; 0 when no line is at fault
	Format string // the reader: "blkparse", "fio", "csv", "scenario", "gen"; "" for a record check
	Msg    string
	Err    error // the underlying error (a read error, ErrNoRecords), if any
}

// ErrNoRecords is wrapped by the *TraceError of a workload with no record
// at all (Run, TraceWorkload): nothing to simulate, and no line at fault.
var ErrNoRecords = errors.New("source: no records")

// Error prints "file:line: format: msg", leaving out what is unknown.
func (e *TraceError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
		if e.Line > 0 {
			b.WriteString(strconv.Itoa(e.Line))
			b.WriteString(":")
		}
		b.WriteString(" ")
	} else if e.Line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	}
	if e.Format != "" {
		b.WriteString(e.Format)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap is the underlying error.
func (e *TraceError) Unwrap() error { return e.Err }

// traceMaxLine bounds one line of a text trace: a longer line is an error,
// so that a reader's memory stays bounded whatever its input.
const traceMaxLine = 64 << 10

// traceLines reads a text trace line by line with bounded memory, counting
// lines from 1.
type traceLines struct {
	sc     *bufio.Scanner
	format string
	line   int
	err    error // sticky
	// view makes next return a view of the scanner's buffer rather than a
	// copy: valid only until the next call, for a reader that keeps no
	// part of a line (it copies what it keeps: strings.Clone, an error's
	// formatting). It saves the allocation of every line.
	view bool
}

func newTraceLines(r io.Reader, format string) *traceLines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), traceMaxLine)
	return &traceLines{sc: sc, format: format}
}

// next returns the next line without its end ("\n" or "\r\n"), io.EOF at the
// end, or a *TraceError (a line too long, the input failing).
func (t *traceLines) next() (string, error) {
	if t.err != nil {
		return "", t.err
	}
	if !t.sc.Scan() {
		err := t.sc.Err()
		switch {
		case err == nil:
			t.err = io.EOF
		case errors.Is(err, bufio.ErrTooLong):
			t.err = t.fail(t.line+1, "line longer than %d bytes", traceMaxLine)
		default:
			t.err = &TraceError{Line: t.line + 1, Format: t.format, Msg: "reading: " + err.Error(), Err: err}
		}
		return "", t.err
	}
	t.line++
	var s string
	if b := t.sc.Bytes(); t.view && len(b) > 0 {
		s = unsafe.String(&b[0], len(b))
	} else {
		s = string(b)
	}
	if n := len(s); n > 0 && s[n-1] == '\r' {
		s = s[:n-1]
	}
	return s, nil
}

// fail makes a *TraceError for line.
func (t *traceLines) fail(line int, msg string, args ...any) *TraceError {
	return &TraceError{Line: line, Format: t.format, Msg: fmt.Sprintf(msg, args...)}
}

// stop makes err the reader's sticky error and returns it.
func (t *traceLines) stop(err error) error {
	t.err = err
	return err
}

// traceFields splits s at runs of blanks (spaces and tabs) into dst, which
// it reuses, and reports whether s had more fields than dst holds (then dst
// holds the first len(dst)). It allocates nothing.
func traceFields(dst []string, s string) (n int, more bool) {
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			break
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		if n == len(dst) {
			return n, true
		}
		dst[n] = s[i:j]
		n++
		i = j
	}
	return n, false
}

// traceUint parses decimal digits only (no sign, no base prefix, no
// underscores) into a uint64.
func traceUint(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	var v uint64
	if len(s) < 20 { // 19 digits cannot overflow
		for i := 0; i < len(s); i++ {
			d := s[i] - '0'
			if d > 9 {
				return 0, false
			}
			v = v*10 + uint64(d)
		}
		return v, true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// traceSeconds parses "SEC.FRACTION" (blkparse's "%5d.%09lu", fio or
// tracefs time stamps) into nanoseconds; at most 9 fraction digits.
func traceSeconds(s string) (uint64, bool) {
	sec, frac, _ := strings.Cut(s, ".")
	v, ok := traceUint(sec)
	if !ok || v > (^uint64(0))/1e9-1 {
		return 0, false
	}
	ns := uint64(0)
	if frac != "" || strings.Contains(s, ".") {
		if len(frac) == 0 || len(frac) > 9 {
			return 0, false
		}
		f, ok := traceUint(frac)
		if !ok {
			return 0, false
		}
		for i := len(frac); i < 9; i++ {
			f *= 10
		}
		ns = f
	}
	return v*1e9 + ns, true
}

// traceSize parses a byte count: decimal digits, or what ParseDDSize takes
// (a positive number with a K, M, G, T or P suffix in either case), without
// its error's allocation.
func traceSize(s string) (uint64, bool) {
	n := len(s)
	if n < 2 {
		return traceUint(s)
	}
	var shift uint
	switch s[n-1] | 0x20 { // ParseDDSize's suffixes, in any case
	case 'k':
		shift = 10
	case 'm':
		shift = 20
	case 'g':
		shift = 30
	case 't':
		shift = 40
	case 'p':
		shift = 50
	default:
		return traceUint(s)
	}
	v, ok := traceUint(s[:n-1])
	if !ok || v == 0 || v > (1<<63)>>shift {
		return 0, false
	}
	return v << shift, true
}
