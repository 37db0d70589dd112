package host

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
)

// BlkparseOptions configure WriteBlkparse.
type BlkparseOptions struct {
	// Device is the device whose events are converted, "MAJ,MIN" ("7,8");
	// empty: the device of the first block event. Events of other devices
	// are skipped (and counted in BlkparseStats.Skipped).
	Device string
}

// BlkparseStats is what a conversion did.
type BlkparseStats struct {
	// Device is the device converted ("7,8"); Events the lines written
	// before the summary; Skipped the trace's lines that were not events
	// of the device blkparse shows (other events, comments, markers,
	// other devices).
	Device  string
	Events  int
	Skipped int
}

// maxBlkparsePending bounds the device-less events (plugs, unplugs) held
// before the first event that names the device.
const maxBlkparsePending = 4096

// WriteBlkparse converts the raw text of a tracing instance's trace file
// (what Options.TraceDump receives) into blkparse's default text output, so
// that a trace the host runner recorded reads like one blktrace users
// have: one line per block event,
//
//	7,8    0        1     0.000000000 18100  Q  WS 0 + 8 [record]
//
// (device, CPU, per-CPU sequence from 1, seconds.nanoseconds since the first
// event, pid, action, rwbs, the action's fields), then blkparse's per-CPU
// and total summary. The tracepoints map onto blkparse's actions as
// blktrace maps them: block_bio_queue Q, block_bio_backmerge and
// block_rq_merge M, block_bio_frontmerge F, block_getrq G, block_rq_insert
// I, block_rq_issue D, block_rq_complete and block_bio_complete C,
// block_rq_requeue R, block_plug P, block_unplug U, block_split X,
// block_bio_remap and block_rq_remap A, block_bio_bounce B. Events blktrace
// has no action for (block_dirty_buffer, block_touch_buffer, block_rq_error,
// block_io_start, block_io_done) and non-block events are skipped.
//
// rwbs is rewritten from the tracepoints' spelling to blktrace's: a flush
// request ("FF") becomes "FN", a secure erase ("DE") "D", zone and other
// operations W or N by direction, a read of no bytes "N", plugs and
// unplugs "N"; the atomic flag is dropped. Plugs and unplugs carry no
// device in the raw trace: they are the converted device's. The summary's
// counts follow blkparse's accounting (queued, dispatched, completed and
// merged reads and writes with their KiB, the device's maximum depth,
// unplugs; a flush counts as a read, as blkparse counts it), with blkparse's
// thousands separators.
//
// It streams: memory is bounded by the CPUs (for the summary) and at most
// 4096 device-less events before the first that names the device. Lines of
// other shapes are skipped, never an error; the error is reading r or
// writing w, or an invalid Device.
func WriteBlkparse(w io.Writer, r io.Reader, opts BlkparseOptions) (BlkparseStats, error) {
	c := &blkConv{out: bufio.NewWriter(w), cpus: map[int]*blkIOStats{}, seq: map[int]int{}}
	if opts.Device != "" {
		maj, min, ok := blkParseDev(opts.Device)
		if !ok {
			return c.stats, fmt.Errorf("host: blkparse: device %q is not MAJ,MIN", opts.Device)
		}
		c.setDevice(maj, min)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		c.line(sc.Text())
	}
	if err := sc.Err(); err != nil {
		return c.stats, fmt.Errorf("host: blkparse: reading the trace: %w", err)
	}
	// Device-less events of a trace that never named a device are dropped.
	c.stats.Skipped += len(c.pending)
	c.pending = nil
	c.summary()
	if err := c.out.Flush(); err != nil {
		return c.stats, fmt.Errorf("host: blkparse: writing: %w", err)
	}
	return c.stats, nil
}

// blkIOStats is blkparse's struct io_stats, the part it prints.
type blkIOStats struct {
	// queued, dispatched, completed, merged and requeued count events and
	// their KiB by direction (index 0 reads, 1 writes), as blkparse's
	// Queued, Dispatches, Completed, Merges and Requeued lines show them.
	queued, dispatched, completed, merged, requeued blkRW
	ioUnplugs, timerUnplugs                         uint64
	events                                          uint64
	touched                                         bool
}

// blkRW counts events and KiB by direction: 0 reads, 1 writes.
type blkRW struct{ n, kb [2]uint64 }

// add counts one event of kb KiB in direction w.
func (r *blkRW) add(w int, kb uint64) { r.n[w]++; r.kb[w] += kb }

// plus returns r and o summed.
func (r blkRW) plus(o blkRW) blkRW {
	for w := range 2 {
		r.n[w] += o.n[w]
		r.kb[w] += o.kb[w]
	}
	return r
}

// line is blkparse's "reads, KiB / writes, KiB" pair of columns.
func (r blkRW) line(read, write string) string {
	return fmt.Sprintf(" %-16s %s, %siB\t %-17s %s, %siB\n", read, blkSize(r.n[0], false), blkSize(r.kb[0], true),
		write, blkSize(r.n[1], false), blkSize(r.kb[1], true))
}

// blkEvent is one converted event, before its line is written.
type blkEvent struct {
	cpu    int
	pid    int
	at     uint64 // nanoseconds, the trace's clock
	action string
	rwbs   string
	rest   string
	write  bool   // blktrace's TC_WRITE
	bytes  uint64 // blktrace's t->bytes
}

type blkConv struct {
	out      *bufio.Writer
	devSet   bool
	maj, min uint64
	dev      string
	genesis  uint64
	started  bool
	last     uint64
	seq      map[int]int
	cpus     map[int]*blkIOStats
	depth    [2]uint64
	maxDepth [2]uint64
	pending  []blkEvent
	stats    BlkparseStats
}

func (c *blkConv) setDevice(maj, min uint64) {
	c.devSet, c.maj, c.min = true, maj, min
	c.dev = fmt.Sprintf("%d,%d", maj, min)
	c.stats.Device = c.dev
}

func blkParseDev(s string) (maj, min uint64, ok bool) {
	a, b, found := strings.Cut(s, ",")
	x, err1 := strconv.ParseUint(a, 10, 32)
	y, err2 := strconv.ParseUint(b, 10, 32)
	return x, y, found && err1 == nil && err2 == nil
}

// blkRawLine splits "  task-pid  [cpu] flags  timestamp: name: args".
func blkRawLine(line string) (pid, cpu int, at uint64, name, args string, ok bool) {
	if strings.HasPrefix(strings.TrimSpace(line), "#") {
		return
	}
	open := strings.Index(line, "[")
	if open < 0 {
		return
	}
	closeAt := strings.IndexByte(line[open:], ']')
	if closeAt < 0 {
		return
	}
	closeAt += open
	task := strings.TrimSpace(line[:open])
	dash := strings.LastIndexByte(task, '-')
	if dash < 0 {
		return
	}
	var err error
	if pid, err = strconv.Atoi(task[dash+1:]); err != nil || pid < 0 {
		return
	}
	if cpu, err = strconv.Atoi(line[open+1 : closeAt]); err != nil || cpu < 0 || cpu > 4095 {
		return
	}
	rest := line[closeAt+1:]
	colon := strings.Index(rest, ": ")
	if colon < 0 {
		return
	}
	head := strings.Fields(rest[:colon])
	if len(head) == 0 {
		return
	}
	if at, ok = blkSeconds(head[len(head)-1]); !ok {
		return
	}
	rest = rest[colon+2:]
	name, args, found := strings.Cut(rest, ": ")
	if !found {
		name, args = strings.TrimSuffix(rest, ":"), ""
	}
	if name == "" || strings.ContainsAny(name, " []") {
		return 0, 0, 0, "", "", false
	}
	return pid, cpu, at, name, args, true
}

// blkSeconds reads "5274.048597" into nanoseconds.
func blkSeconds(s string) (uint64, bool) {
	sec, frac, _ := strings.Cut(s, ".")
	v, err := strconv.ParseUint(sec, 10, 64)
	if err != nil || len(frac) > 9 || v > 1<<33 {
		return 0, false
	}
	ns := uint64(0)
	if frac != "" {
		f, err := strconv.ParseUint(frac, 10, 64)
		if err != nil {
			return 0, false
		}
		for i := len(frac); i < 9; i++ {
			f *= 10
		}
		ns = f
	}
	return v*1e9 + ns, true
}

// blkActions maps tracepoints onto blkparse's actions.
var blkActions = map[string]string{
	"block_bio_queue": "Q", "block_bio_backmerge": "M", "block_rq_merge": "M",
	"block_bio_frontmerge": "F", "block_getrq": "G", "block_rq_insert": "I",
	"block_rq_issue": "D", "block_rq_complete": "C", "block_bio_complete": "C",
	"block_rq_requeue": "R", "block_plug": "P", "block_unplug": "U",
	"block_split": "X", "block_bio_remap": "A", "block_rq_remap": "A",
	"block_bio_bounce": "B", "block_sleeprq": "S",
}

// blkRWBS rewrites a tracepoint's rwbs (blk_fill_rwbs, read by
// scenario.ParseRWBS) as blktrace's fill_rwbs would print it
// ([F](D|W|R|N)[F][A][S][M]), and reports whether blktrace's write bit is
// set. bytes is the event's data size (a read of none is N). Write zeroes
// print as W, a secure erase as D, a zone operation as W when it is a write
// (op_is_write) and N otherwise, a flush request as FN; blktrace has no
// letter for the atomic flag. Old blkparse's barrier is not a tracepoint's.
func blkRWBS(s string, bytes uint64) (out string, write, ok bool) {
	p, ok := scenario.ParseRWBS(s)
	if !ok || p.Barrier {
		return "", false, false
	}
	op, preflush := p.Op, p.Preflush
	switch op {
	case 'R':
		if bytes == 0 {
			op = 'N'
		}
	case 'W', 'D':
		write = true
	case 'F': // REQ_OP_FLUSH: no data, not a write
		op, preflush = 'N', true
	case 'Z':
		op, write = 'N', p.ZoneWrite()
		if write {
			op = 'W'
		}
	}
	var b strings.Builder
	if preflush {
		b.WriteByte('F')
	}
	b.WriteByte(op)
	for _, f := range [...]struct {
		on     bool
		letter byte
	}{{p.FUA, 'F'}, {p.Ahead, 'A'}, {p.Sync, 'S'}, {p.Meta, 'M'}} {
		if f.on {
			b.WriteByte(f.letter)
		}
	}
	return b.String(), write, true
}

// blkComm returns the "[comm]" of args from index i on ("[kworker/u8:3]"),
// or "".
func blkComm(args string) string {
	i := strings.Index(args, " [")
	if i < 0 {
		if strings.HasPrefix(args, "[") {
			i = -1
		} else {
			return ""
		}
	}
	s := args[i+1:]
	j := strings.LastIndexByte(s, ']')
	if j < 0 {
		return ""
	}
	return s[:j+1]
}

// blkSectors finds "SECTOR + N" in words.
func blkSectors(w []string) (sector, n uint64, ok bool) {
	for i := 1; i+1 < len(w); i++ {
		if w[i] == "+" {
			s, err1 := strconv.ParseUint(w[i-1], 10, 64)
			c, err2 := strconv.ParseUint(w[i+1], 10, 64)
			return s, c, err1 == nil && err2 == nil
		}
	}
	return 0, 0, false
}

// line converts one line of the raw trace, or counts it skipped.
func (c *blkConv) line(line string) {
	if !c.convert(line) {
		c.stats.Skipped++
	}
}

// convert converts one line of the raw trace: a block event of the
// converted device is written (a plug or unplug before the device is
// known is held), and false means the line is skipped. The first event
// that names a device chooses it, without BlkparseOptions.Device, and
// writes the events held.
func (c *blkConv) convert(line string) bool {
	pid, cpu, at, name, args, ok := blkRawLine(line)
	if !ok {
		return false
	}
	action, known := blkActions[name]
	if !known {
		return false
	}
	ev := blkEvent{cpu: cpu, pid: pid, at: at, action: action}
	if action == "P" || action == "U" {
		return c.plug(ev, args)
	}
	w := strings.Fields(args)
	if len(w) < 2 {
		return false
	}
	maj, min, ok := blkParseDev(w[0])
	if !ok {
		return false
	}
	if !c.devSet {
		c.setDevice(maj, min)
		for _, p := range c.pending {
			c.emit(p)
		}
		c.pending = nil
	}
	if maj != c.maj || min != c.min {
		return false
	}
	sector, n, hasSectors := blkSectors(w)
	bytes := blkBytes(name, w, n)
	rwbs, write, ok := blkRWBS(w[1], bytes)
	if !ok {
		return false
	}
	ev.rwbs, ev.write, ev.bytes = rwbs, write, bytes
	if ev.rest, ok = blkActionFields(action, w, args, sector, n, hasSectors); !ok {
		return false
	}
	c.emit(ev)
	return true
}

// plug converts a plug (P, "[comm]") or unplug (U, "[comm] depth") event
// ev of args: written, or held while the device is not known (at most
// maxBlkparsePending); false means it is skipped.
func (c *blkConv) plug(ev blkEvent, args string) bool {
	ev.rwbs = "N"
	comm := blkComm(args)
	if comm == "" {
		return false
	}
	ev.rest = comm
	if ev.action == "U" {
		w := strings.Fields(args)
		depth, err := strconv.ParseUint(w[len(w)-1], 10, 32)
		if err != nil {
			return false
		}
		ev.rest = comm + " " + strconv.FormatUint(depth, 10)
	}
	if !c.devSet {
		if len(c.pending) >= maxBlkparsePending {
			return false
		}
		c.pending = append(c.pending, ev)
		return true
	}
	c.emit(ev)
	return true
}

// blkBytes is the data size of event name of words w with n sectors:
// n × 512, or the request's bytes that block_rq_insert, _issue and _merge
// print third.
func blkBytes(name string, w []string, n uint64) uint64 {
	bytes := n * 512
	if (name == "block_rq_insert" || name == "block_rq_issue" || name == "block_rq_merge") && len(w) > 2 {
		if v, err := strconv.ParseUint(w[2], 10, 64); err == nil {
			bytes = v
		}
	}
	return bytes
}

// blkActionFields writes the fields blkparse prints after the rwbs for
// action, from the event's words w (args split) and its sector and count
// when it has them: "SECTOR + N [comm]" (or "[comm]" for none), "SECTOR +
// N [errno]" for a completion or requeue, "SECTOR / SECTOR [comm]" for a
// split, "SECTOR + N <- (MAJ,MIN) SECTOR" for a remap. False: the event
// lacks what its action prints, and is skipped.
func blkActionFields(action string, w []string, args string, sector, n uint64, hasSectors bool) (string, bool) {
	switch action {
	case "C", "R":
		// "7,8 WS () 0 + 8 be,0,4 [0]" (rq) or "7,8 W 0 + 8 [0]" (bio)
		errno := "[0]"
		if last := w[len(w)-1]; strings.HasPrefix(last, "[") && strings.HasSuffix(last, "]") {
			errno = last
		}
		if !hasSectors {
			return "", false
		}
		if n > 0 {
			return fmt.Sprintf("%d + %d %s", sector, n, errno), true
		}
		return fmt.Sprintf("%d %s", sector, errno), true
	case "X":
		// "7,8 W 0 / 8 [comm]"
		if len(w) < 5 || w[3] != "/" {
			return "", false
		}
		return fmt.Sprintf("%s / %s %s", w[2], w[4], blkComm(args)), true
	case "A":
		// "8,0 W 2048 + 8 <- (8,1) 0"
		i := strings.Index(args, " <- ")
		if !hasSectors || i < 0 {
			return "", false
		}
		from := strings.Fields(args[i+4:])
		if len(from) < 2 {
			return "", false
		}
		return fmt.Sprintf("%d + %d <- %s %s", sector, n, from[0], from[1]), true
	default: // Q M F G I D B S
		comm := blkComm(args)
		if !hasSectors || comm == "" {
			return "", false
		}
		if n > 0 {
			return fmt.Sprintf("%d + %d %s", sector, n, comm), true
		}
		return comm, true
	}
}

// emit writes one event line and accounts it as blkparse does.
func (c *blkConv) emit(ev blkEvent) {
	if !c.started {
		c.started, c.genesis = true, ev.at
	}
	rel := uint64(0)
	if ev.at > c.genesis {
		rel = ev.at - c.genesis
	}
	c.last = max(c.last, rel)
	c.seq[ev.cpu]++
	st := c.cpus[ev.cpu]
	if st == nil {
		st = &blkIOStats{}
		c.cpus[ev.cpu] = st
	}
	st.touched = true
	st.events++
	c.stats.Events++
	fmt.Fprintf(c.out, "%3d,%-3d %2d %8d %5d.%09d %5d %2s %3s %s\n",
		c.maj, c.min, ev.cpu, c.seq[ev.cpu], rel/1e9, rel%1e9, ev.pid, ev.action, ev.rwbs, ev.rest)
	kb := ev.bytes >> 10
	w := 0
	if ev.write {
		w = 1
	}
	switch ev.action {
	case "Q":
		st.queued.add(w, kb)
	case "M", "F":
		st.merged.add(w, kb)
	case "D":
		st.dispatched.add(w, kb)
		c.depth[w]++
		c.maxDepth[w] = max(c.maxDepth[w], c.depth[w])
	case "C":
		if c.depth[w] > 0 {
			c.depth[w]--
		}
		st.completed.add(w, kb)
	case "R":
		if c.depth[w] > 0 {
			c.depth[w]--
		}
		st.requeued.n[w]++
		st.dispatched.kb[w] -= min(kb, st.dispatched.kb[w])
	case "U":
		st.ioUnplugs++
	}
}

// blkGroup prints n with thousands separators, as "%'Lu" does in an
// English locale.
func blkGroup(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// blkSize is blkparse's size_cnv: a count (or KiB with inKB) in eight
// columns, scaled by 1000 with a K, M, G suffix past a million.
func blkSize(n uint64, inKB bool) string {
	suffixes := []string{"", "K", "M", "G", "P"}
	i := 0
	if inKB {
		i = 1
	}
	for n > 1000*1000 && i < len(suffixes)-1 {
		i++
		n /= 1000
	}
	return fmt.Sprintf("%8s%s", blkGroup(n), suffixes[i])
}

func (c *blkConv) dumpStats(s *blkIOStats, title string, depth bool) {
	o := c.out
	fmt.Fprintf(o, "%s\n", title)
	fmt.Fprint(o, s.queued.line("Reads Queued:", "Writes Queued:"))
	fmt.Fprint(o, s.dispatched.line("Read Dispatches:", "Write Dispatches:"))
	fmt.Fprintf(o, " Reads Requeued:  %s\t\t Writes Requeued:  %s\n", blkSize(s.requeued.n[0], false), blkSize(s.requeued.n[1], false))
	fmt.Fprint(o, s.completed.line("Reads Completed:", "Writes Completed:"))
	fmt.Fprint(o, s.merged.line("Read Merges:", "Write Merges:"))
	if depth {
		fmt.Fprintf(o, " Read depth:      %8s%8s\t Write depth:      %8s\n", blkGroup(c.maxDepth[0]), " ", blkGroup(c.maxDepth[1]))
	}
	fmt.Fprintf(o, " IO unplugs:      %8s%8s\t Timer unplugs:    %8s\n", blkGroup(s.ioUnplugs), " ", blkGroup(s.timerUnplugs))
}

// summary prints blkparse's closing per-CPU and total statistics.
func (c *blkConv) summary() {
	if !c.devSet || c.stats.Events == 0 {
		return
	}
	cpus := make([]int, 0, len(c.cpus))
	for cpu := range c.cpus {
		cpus = append(cpus, cpu)
	}
	slices.Sort(cpus)
	var total blkIOStats
	for _, cpu := range cpus {
		s := c.cpus[cpu]
		c.dumpStats(s, fmt.Sprintf("CPU%d (%s):", cpu, c.dev), true)
		total.queued, total.dispatched = total.queued.plus(s.queued), total.dispatched.plus(s.dispatched)
		total.completed, total.merged = total.completed.plus(s.completed), total.merged.plus(s.merged)
		total.requeued = total.requeued.plus(s.requeued)
		total.ioUnplugs += s.ioUnplugs
		total.timerUnplugs += s.timerUnplugs
	}
	if len(cpus) > 1 {
		fmt.Fprintf(c.out, "\n")
		c.dumpStats(&total, fmt.Sprintf("Total (%s):", c.dev), false)
	}
	var rrate, wrate uint64
	if msec := c.last / 1e6; msec > 0 {
		rrate = 1000 * total.completed.kb[0] / msec
		wrate = 1000 * total.completed.kb[1] / msec
	}
	fmt.Fprintf(c.out, "\nThroughput (R/W): %sKiB/s / %sKiB/s\n", blkGroup(rrate), blkGroup(wrate))
	fmt.Fprintf(c.out, "Events (%s): %s entries\n", c.dev, blkGroup(uint64(c.stats.Events)))
	fmt.Fprintf(c.out, "Skips: 0 forward (0 -   0.0%%)\n")
}
