package source

import (
	"fmt"
	"io"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
)

// BlkparseAction is the blkparse action whose events a BlkparseReader
// replays.
type BlkparseAction byte

// The actions a BlkparseReader can replay.
const (
	// BlkparseQueue replays Q events: every bio as it was queued, before the
	// block layer merged it (the default; what the page cache submitted).
	BlkparseQueue BlkparseAction = 'Q'
	// BlkparseIssue replays D events: requests as the driver received them,
	// after merging.
	BlkparseIssue BlkparseAction = 'D'
	// BlkparseInsert replays I events: requests inserted into the I/O
	// scheduler (or the plug's flush list).
	BlkparseInsert BlkparseAction = 'I'
	// BlkparseComplete replays C events: requests as they completed, in
	// completion order, on the completing CPU.
	BlkparseComplete BlkparseAction = 'C'
)

// BlkparseOption configures NewBlkparseReader.
type BlkparseOption func(*BlkparseReader)

// BlkparseReplay selects the action replayed (BlkparseQueue by default). An
// action other than Q, D, I and C makes Next fail.
func BlkparseReplay(a BlkparseAction) BlkparseOption {
	return func(r *BlkparseReader) { r.action = a }
}

// BlkparseDevice replays only the events of device "MAJ,MIN" ("8,0") and
// skips those of other devices. Without it the device of the first
// replayed event is the trace's, and a replayed event of another device is
// an error: one workload has one device. A device that is not two decimal
// numbers with a comma makes Next fail.
func BlkparseDevice(dev string) BlkparseOption {
	return func(r *BlkparseReader) { r.devOpt = dev; r.devSet = true }
}

// BlkparseReader reads blkparse's default text output — the lines blktrace
// users have:
//
//	8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]
//
// (device, CPU, sequence, seconds.nanoseconds, pid, action, rwbs, then the
// action's own fields) and replays the events of one action (Q by default)
// as records. Sectors are 512 bytes whatever the device's sector size (as
// blktrace counts them); CPU is the event's CPU; At is its time. rwbs maps
// as follows: R → IORead, W → IOWrite, D → IODiscard; a leading F
// (PREFLUSH, or a flush request "FN") is IOFlush, and on a write that
// carries data it gives IOFlush then IOWrite, in that order, both of the
// line; F after the operation (FUA), A (readahead), S (sync) and M (meta)
// become IOFlags; an empty read or write without F, an N (no data) event and
// a passthrough (SCSI command) event are skipped. Other actions (M, G, P, U,
// X, …) and blktrace's message lines are skipped; an unknown action of one
// or two letters is skipped too.
//
// blkparse's closing summary — the per-CPU and total blocks ("CPU0
// (8,0):", " Reads Queued: …", "Total (8,0):", "Throughput (R/W): …",
// "Events (8,0): …", "Skips: …") and the per-process blocks of -s — is
// recognised and skipped; event lines after it (a concatenation of two
// outputs) are read again. Any other line is an error naming it. Output of
// a custom format (blkparse -f or -F) is not supported. The reader holds one
// line at a time.
type BlkparseReader struct {
	lines   *traceLines
	action  BlkparseAction
	devOpt  string
	devSet  bool
	dev     string // the replayed device, once known
	checked bool
	summary bool // inside blkparse's summary
	pending IO   // the write of a PREFLUSH write, returned after its flush
	hasPend bool
	fields  [24]string
	// recentQ are the latest replayed Q events' sector and count, for
	// matching merges (noteMerge); orphans counts merges without one.
	recentQ    [blkRecentQueues][2]uint64
	nextQ      int
	orphans    int
	orphanLine int
}

// NewBlkparseReader returns a reader of blkparse text from r.
func NewBlkparseReader(r io.Reader, opts ...BlkparseOption) *BlkparseReader {
	b := &BlkparseReader{lines: newTraceLines(r, "blkparse"), action: BlkparseQueue}
	for _, o := range opts {
		o(b)
	}
	return b
}

// Next returns the next replayed record, io.EOF after the last.
func (b *BlkparseReader) Next() (IO, error) {
	if !b.checked {
		b.checked = true
		switch b.action {
		case BlkparseQueue, BlkparseIssue, BlkparseInsert, BlkparseComplete:
		default:
			return IO{}, b.lines.stop(&TraceError{Format: "blkparse", Msg: fmt.Sprintf("cannot replay action %q (want Q, D, I or C)", string(rune(b.action)))})
		}
		if b.devSet {
			if _, ok := blkparseDev(b.devOpt); !ok {
				return IO{}, b.lines.stop(&TraceError{Format: "blkparse", Msg: fmt.Sprintf("device %q is not MAJ,MIN (8,0)", b.devOpt)})
			}
			b.dev = b.devOpt
		}
	}
	if b.hasPend {
		b.hasPend = false
		return b.pending, nil
	}
	for {
		line, err := b.lines.next()
		if err != nil {
			return IO{}, err
		}
		var rec IO
		ok, err := b.parse(line, &rec)
		if err != nil {
			return IO{}, b.lines.stop(err)
		}
		if ok {
			return rec, nil
		}
	}
}

// blkparseDev checks "MAJ,MIN" and returns it normalised.
func blkparseDev(s string) (string, bool) {
	maj, min, ok := strings.Cut(s, ",")
	_, ok1 := traceUint(maj)
	_, ok2 := traceUint(min)
	return s, ok && ok1 && ok2 && maj != "" && min != ""
}

// blkparseInputLine reports whether s is the line blkparse prints for each
// per-CPU input file it opens, "Input file sda.blktrace.0 added", at the
// top of a saved output (blkparse -i sda > out.txt).
func blkparseInputLine(s string) bool {
	return strings.HasPrefix(s, "Input file ") && strings.HasSuffix(s, " added")
}

// blkparseSummaryLine reports whether s is a line of blkparse's summary.
func blkparseSummaryLine(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' {
		// " Reads Queued: ...", " IO unplugs: ...", " Allocation wait: ..."
		t := strings.TrimLeft(s, " \t")
		c, _, ok := strings.Cut(t, ":")
		return ok && c != "" && t[0] >= 'A' && t[0] <= 'Z' && !strings.ContainsAny(c, ",[]")
	}
	for _, p := range []string{"Throughput (R/W):", "Events (", "Skips:"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	if strings.HasSuffix(s, "):") && (strings.HasPrefix(s, "CPU") || strings.HasPrefix(s, "Total (")) {
		return true
	}
	// A per-process header of blkparse -s: "kjournald (697)" or
	// "fio (1234, ...)".
	if strings.HasSuffix(s, ")") {
		if i := strings.LastIndex(s, " ("); i > 0 {
			num := strings.TrimSuffix(strings.TrimSuffix(s[i+2:len(s)-1], ", ..."), ",")
			_, ok := traceUint(num)
			return ok
		}
	}
	return false
}

// parse reads one line: a replayed record (ok, in rec), a line to skip,
// or an error.
func (b *BlkparseReader) parse(line string, rec *IO) (bool, error) {
	if strings.TrimSpace(line) == "" {
		return false, nil
	}
	n := b.lines.line
	f := b.fields[:]
	nf, _ := traceFields(f, line)
	if nf == 0 || !strings.Contains(f[0], ",") {
		return false, b.nonEvent(n, line)
	}
	if nf < 6 {
		if b.summary && blkparseSummaryLine(line) {
			return false, nil
		}
		return false, b.lines.fail(n, "an event line needs at least device, cpu, sequence, time, pid and action")
	}
	var ev blkEvent
	replay, err := b.event(n, f[:nf], &ev)
	if err != nil {
		return false, err
	}
	if !replay {
		if b.action == BlkparseQueue && (ev.act == 'M' || ev.act == 'F') && nf > 7 {
			return false, b.noteMerge(n, f[7:nf], &ev)
		}
		return false, nil
	}
	sector, count, skip, err := b.sectors(n, f[7:nf])
	if err != nil || skip {
		return false, err
	}
	if b.action == BlkparseQueue && count > 0 {
		b.noteQueue(sector, count)
	}
	return b.record(n, &ev, sector, count, rec)
}

// nonEvent handles line n, which does not start with a device: a line of
// blkparse's summary (which it enters), a line inside the summary, or an
// error.
func (b *BlkparseReader) nonEvent(n int, line string) error {
	if blkparseInputLine(strings.TrimSpace(line)) {
		return nil
	}
	if blkparseSummaryLine(line) {
		b.summary = true
		return nil
	}
	if b.summary {
		return nil
	}
	return b.lines.fail(n, "not a line of blkparse's default output (want \"MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS ...\")")
}

// blkEvent is what an event line's leading fields give a record: the
// device, CPU, time and rwbs.
type blkEvent struct {
	dev string
	cpu uint64
	at  uint64
	rw  blkRWBS
	act byte // the action's letter (0 for a two-letter action)
}

// event checks the leading fields of event line n (f: at least device,
// CPU, sequence, time, pid and action), leaves the summary and fills ev.
// It reports whether the event is to be replayed: of the replayed action
// and, with BlkparseDevice, of its device; a message ("m") is not. ev is
// filled for every event but a message.
func (b *BlkparseReader) event(n int, f []string, ev *blkEvent) (bool, error) {
	dev, ok := blkparseDev(f[0])
	if !ok {
		return false, b.lines.fail(n, "device %q is not MAJ,MIN", f[0])
	}
	b.summary = false
	cpu, ok := traceUint(f[1])
	if !ok || cpu > MaxTraceCPU {
		return false, b.lines.fail(n, "cpu %q is not a number from 0 to %d", f[1], MaxTraceCPU)
	}
	if _, ok := traceUint(f[2]); !ok {
		return false, b.lines.fail(n, "sequence %q is not a number", f[2])
	}
	at, ok := traceSeconds(f[3])
	if !ok {
		return false, b.lines.fail(n, "time %q is not SECONDS.NANOSECONDS", f[3])
	}
	if _, ok := traceUint(f[4]); !ok {
		return false, b.lines.fail(n, "pid %q is not a number", f[4])
	}
	act := f[5]
	if len(act) > 2 || !blkparseLetters(act) {
		return false, b.lines.fail(n, "action %q is not a blkparse action letter (Q, M, G, I, D, C, P, U, X, ...)", act)
	}
	if act == "m" { // a message: "m N text"
		return false, nil
	}
	if len(f) < 7 {
		return false, b.lines.fail(n, "no rwbs after the action")
	}
	rw, ok := parseBlkRWBS(f[6])
	if !ok {
		return false, b.lines.fail(n, "rwbs %q is not blkparse's (an optional F, then R, W, D or N, then F, A, S, M)", f[6])
	}
	*ev = blkEvent{dev: dev, cpu: cpu, at: at, rw: rw}
	if len(act) == 1 {
		ev.act = act[0]
	}
	if len(act) != 1 || BlkparseAction(act[0]) != b.action || b.devSet && dev != b.dev {
		return false, nil
	}
	return true, nil
}

// blkRecentQueues is how many of the latest Q events a BlkparseReader
// remembers to match merges with.
const blkRecentQueues = 32

// blkOrphanLimit is how many merges without their Q a Q replay lets by
// (a trace started between a bio's Q and its merge has one per CPU at
// most) before it refuses the trace.
const blkOrphanLimit = 4

// noteMerge checks merge event ev of line n (rest: its fields after the
// rwbs) in a Q replay: a merged bio was queued first, so its Q is among
// the latest. A trace whose merges come without their Q — an old
// blktrace's — would lose those bios when its Q events are replayed: past
// blkOrphanLimit such merges it is an error that names the fix.
func (b *BlkparseReader) noteMerge(n int, rest []string, ev *blkEvent) error {
	if b.dev != "" && ev.dev != b.dev {
		return nil
	}
	sector, count, skip, err := b.sectors(n, rest)
	if err != nil || skip || count == 0 {
		return nil // not a merge of sectors: nothing to match
	}
	for _, q := range b.recentQ {
		if q == [2]uint64{sector, count} {
			return nil
		}
	}
	b.orphans++
	if b.orphans == 1 {
		b.orphanLine = n
	}
	if b.orphans > blkOrphanLimit {
		return b.lines.fail(n, "%d merges (M or F events, the first on line %d) of bios with no Q event before them: this trace does not log every bio it merges as queued, so a replay of its Q events would drop those bios; replay its D (issued) events (TraceSelect.Action D) instead", b.orphans, b.orphanLine)
	}
	return nil
}

// noteQueue remembers a replayed Q event of count sectors at sector.
func (b *BlkparseReader) noteQueue(sector, count uint64) {
	b.recentQ[b.nextQ%blkRecentQueues] = [2]uint64{sector, count}
	b.nextQ++
}

// sectors reads the action's own fields of line n (rest, after the rwbs):
// "SECTOR + N [name]" (with " (ELAPSED)" before the name under -t),
// "SECTOR [error]" for an empty completion, "[name]" for an empty queue,
// issue or insert, "BYTES (CDB) [name]" for a passthrough command, which
// is skipped. It returns the sector and count, 0 and 0 without them.
func (b *BlkparseReader) sectors(n int, rest []string) (sector, count uint64, skip bool, err error) {
	switch {
	case len(rest) == 2 && rest[1] == "+":
		return 0, 0, false, b.lines.fail(n, "%q is truncated: no COUNT after SECTOR +", strings.Join(rest, " "))
	case len(rest) >= 3 && rest[1] == "+":
		s, ok1 := traceUint(rest[0])
		c, ok2 := traceUint(rest[2])
		if !ok1 || !ok2 {
			return 0, 0, false, b.lines.fail(n, "%q is not SECTOR + COUNT", strings.Join(rest[:3], " "))
		}
		if !blkparseNameAfter(rest[3:]) {
			return 0, 0, false, b.lines.fail(n, "no [process] or [error] after SECTOR + COUNT")
		}
		return s, c, false, nil
	case len(rest) >= 1 && strings.HasPrefix(rest[0], "["):
		return 0, 0, false, nil // no sectors
	case len(rest) >= 2 && b.action == BlkparseComplete && !strings.HasPrefix(rest[0], "("):
		if _, ok := traceUint(rest[0]); !ok {
			return 0, 0, false, b.lines.fail(n, "%q is not a sector", rest[0])
		}
		return 0, 0, false, nil
	case len(rest) >= 2:
		if _, ok := traceUint(rest[0]); ok { // a passthrough command's bytes
			return 0, 0, true, nil
		}
		return 0, 0, false, b.lines.fail(n, "%q is not SECTOR + COUNT", strings.Join(rest, " "))
	default:
		return 0, 0, false, b.lines.fail(n, "no SECTOR + COUNT or [process] after the rwbs")
	}
}

// blkparseNameAfter reports whether tail, the fields after SECTOR + COUNT,
// are an optional -t "(ELAPSED)" (which may hold spaces: "(%8llu)"), then
// a [process] or [error] that may hold spaces too.
func blkparseNameAfter(tail []string) bool {
	if len(tail) > 0 && strings.HasPrefix(tail[0], "(") {
		for len(tail) > 0 && !strings.HasSuffix(tail[0], ")") {
			tail = tail[1:]
		}
		if len(tail) > 0 {
			tail = tail[1:]
		}
	}
	return len(tail) > 0 && strings.HasPrefix(tail[0], "[") && strings.HasSuffix(tail[len(tail)-1], "]")
}

// record makes the record of replayed event ev of line n, of count sectors
// at sector, in rec: the device becomes the trace's if it has none and
// must be it otherwise. A PREFLUSH event gives its flush, and keeps the
// write (or read, or discard) it carries as pending; an empty event
// without one is skipped.
func (b *BlkparseReader) record(n int, ev *blkEvent, sector, count uint64, rec *IO) (bool, error) {
	if b.dev == "" {
		b.dev = ev.dev
	} else if ev.dev != b.dev {
		return false, b.lines.fail(n, "device %s is not the trace's device %s (choose one with TraceSelect.Device)", ev.dev, b.dev)
	}
	*rec = IO{CPU: int(ev.cpu), At: ev.at, Line: n, Flags: ev.rw.flags}
	if count > 0 {
		if count > (^uint64(0))/512 || sector > (^uint64(0))/512 || sector*512 > ^uint64(0)-count*512 {
			return false, b.lines.fail(n, "%d sectors at sector %d do not fit 64-bit byte offsets", count, sector)
		}
		rec.Offset, rec.Length = sector*512, count*512
	}
	switch {
	case ev.rw.op == 'D' && count > 0:
		rec.Kind = IODiscard
	case ev.rw.op == 'W' && count > 0:
		rec.Kind = IOWrite
	case ev.rw.op == 'R' && count > 0:
		rec.Kind = IORead
	}
	if ev.rw.preflush {
		if rec.Kind != 0 {
			b.pending, b.hasPend = *rec, true
		}
		*rec = IO{Kind: IOFlush, CPU: int(ev.cpu), At: ev.at, Line: n, Flags: ev.rw.flags}
		return true, nil
	}
	return rec.Kind != 0, nil
}

// blkparseLetters reports whether s is one or more ASCII letters.
func blkparseLetters(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// blkRWBS is a blkparse rwbs field.
type blkRWBS struct {
	op       byte // 'R', 'W', 'D', 'N'
	preflush bool // a leading F: PREFLUSH, or a flush request
	flags    IOFlags
}

// parseBlkRWBS reads blkparse's rwbs ([F](D|W|R|N)[F][A][S][M]) and, leniently,
// the kernel tracepoints' flush request (F, DE) and old blkparse's barrier
// B; not the kernel's zone operations, write zeroes or atomic flag, which
// blkparse never prints.
func parseBlkRWBS(s string) (blkRWBS, bool) {
	p, ok := scenario.ParseRWBS(s)
	if !ok || p.Op == 'Z' || p.Zeroes || p.Atomic {
		return blkRWBS{}, false
	}
	r := blkRWBS{op: p.Op, preflush: p.Preflush || p.Barrier}
	if p.Op == 'F' { // the kernel's REQ_OP_FLUSH
		r.op, r.preflush = 'N', true
	}
	if p.FUA || p.Barrier {
		r.flags |= FlagFUA
	}
	if p.Ahead {
		r.flags |= FlagAhead
	}
	if p.Sync {
		r.flags |= FlagSync
	}
	if p.Meta {
		r.flags |= FlagMeta
	}
	return r, true
}
