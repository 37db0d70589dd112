package host

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
)

// markerPrefix starts every trace_marker line the runner writes.
const markerPrefix = "bhsim "

// event is one line of a tracing instance's trace file.
type event struct {
	pid  int
	name string // the event's name, "tracing_mark_write" for a marker
	args string // the rest of the line, as the event's print format made it
}

// parseTraceLine reads one line of the trace file: "  task-pid  [cpu]
// flags  timestamp: name: args". Comment lines and lines of another shape
// give ok false.
func parseTraceLine(line string) (ev event, ok bool) {
	if strings.HasPrefix(strings.TrimSpace(line), "#") {
		return ev, false
	}
	open := strings.Index(line, "[")
	if open < 0 {
		return ev, false
	}
	task := strings.TrimSpace(line[:open])
	dash := strings.LastIndexByte(task, '-')
	if dash < 0 {
		return ev, false
	}
	pid, err := strconv.Atoi(task[dash+1:])
	if err != nil {
		return ev, false
	}
	rest := line[open:]
	// After "[cpu] flags timestamp" comes ": name: args".
	colon := strings.Index(rest, ": ")
	if colon < 0 {
		return ev, false
	}
	rest = rest[colon+2:]
	name, args, found := strings.Cut(rest, ": ")
	if !found {
		name, args = strings.TrimSuffix(rest, ":"), ""
	}
	if name == "" || strings.ContainsAny(name, " []") {
		return ev, false
	}
	return event{pid: pid, name: name, args: args}, true
}

// marker reads a runner marker: "bhsim begin 3" gives ("begin", 3).
func (ev event) marker() (what string, op int, ok bool) {
	if ev.name != "tracing_mark_write" || !strings.HasPrefix(ev.args, markerPrefix) {
		return "", 0, false
	}
	f := strings.Fields(strings.TrimPrefix(ev.args, markerPrefix))
	if len(f) != 2 {
		return "", 0, false
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n <= 0 {
		return "", 0, false
	}
	return f[0], n, true
}

// rwbs is a block event's operation and flags, as blk_fill_rwbs writes them
// for the runner's loop device: an optional F (preflush), the operation (R,
// W, D, DE, F, N), then F (FUA), A (readahead), S (sync), M (meta).
type rwbs struct {
	op       byte // 'R', 'W', 'D', 'F' (flush), 'N'
	preflush bool
	fua      bool
	ahead    bool
	sync     bool
}

// parseRWBS reads a tracepoint's rwbs (scenario.ParseRWBS) and refuses
// what the runner's scenarios cannot make: zone operations, write zeroes,
// atomic writes and blkparse's barrier.
func parseRWBS(s string) (rwbs, bool) {
	p, ok := scenario.ParseRWBS(s)
	if !ok || p.Op == 'Z' || p.Zeroes || p.Atomic || p.Barrier {
		return rwbs{}, false
	}
	return rwbs{op: p.Op, preflush: p.Preflush, fua: p.FUA, ahead: p.Ahead, sync: p.Sync}, true
}

// dir is the operation's direction in counter names.
func (r rwbs) dir() scenario.Dir {
	switch r.op {
	case 'R':
		return scenario.DirRead
	case 'W':
		return scenario.DirWrite
	case 'D':
		return scenario.DirDiscard
	case 'F':
		return scenario.DirFlush
	}
	return scenario.DirOther
}

// filter holds what identifies the runner's device in events.
type filter struct {
	major, minor uint32 // the loop device
	bdevIno      uint64 // the block device inode's number (its dev_t)
	backingDev   string // "maj:min" of the tmpfs holding the backing file
	tid          int    // the thread that runs the scenario
}

// blockDev checks a block event's "maj,min" first word.
func (f filter) blockDev(word string) bool {
	return word == fmt.Sprintf("%d,%d", f.major, f.minor)
}

// inodeEvent checks a filemap, readahead or wb_err event's device and inode:
// the block device's inode, never the backing file's.
func (f filter) inodeEvent(dev string, ino uint64) bool {
	if ino != f.bdevIno {
		return false
	}
	return dev != f.backingDev && strings.HasPrefix(dev, "0:")
}

// keyValues reads "k=v" words and "k v" pairs of an event's args into a map
// (later words win).
func keyValues(args string) map[string]string {
	kv := map[string]string{}
	words := strings.Fields(args)
	for i := 0; i < len(words); i++ {
		if k, v, ok := strings.Cut(words[i], "="); ok {
			kv[k] = v
			continue
		}
		if i+1 < len(words) && !strings.Contains(words[i+1], "=") {
			kv[words[i]] = words[i+1]
			i++
		}
	}
	return kv
}

func parseUint(s string) (uint64, bool) {
	base := 10
	if strings.HasPrefix(s, "0x") {
		s, base = s[2:], 16
	}
	v, err := strconv.ParseUint(s, base, 64)
	return v, err == nil
}

// counter reads one tracepoint's event into counters (the workload.Count*
// function of its tracepoint): it reports whether the event belonged to
// the runner's device. inWrite says the event falls in a pwrite operation.
type counter func(f filter, ev event, inWrite bool, cs *scenario.CounterSet) bool

// counters are the readers of the runner's tracepoints, by event name.
var counters = map[string]counter{
	"block_bio_queue":                   filter.countBio,
	"block_bio_backmerge":               filter.countBio,
	"block_bio_frontmerge":              filter.countBio,
	"block_getrq":                       filter.countBio,
	"block_split":                       filter.countDevEvent,
	"block_rq_merge":                    filter.countDevEvent,
	"block_dirty_buffer":                filter.countDevEvent,
	"block_rq_insert":                   filter.countRq,
	"block_rq_issue":                    filter.countRq,
	"block_rq_complete":                 filter.countRqComplete,
	"block_plug":                        filter.countPlug,
	"block_unplug":                      filter.countPlug,
	"mm_filemap_add_to_page_cache":      filter.countFilemap,
	"mm_filemap_delete_from_page_cache": filter.countFilemap,
	"page_cache_sync_ra":                filter.countReadahead,
	"page_cache_async_ra":               filter.countReadahead,
	"page_cache_ra_order":               filter.countReadahead,
	"page_cache_ra_unbounded":           filter.countReadahead,
	"writeback_dirty_folio":             filter.countDirtyFolio,
	"filemap_set_wb_err":                filter.countWBErr,
	"file_check_and_advance_wb_err":     filter.countWBErr,
}

// count adds one event's counters to cs. inWrite says the event falls in a
// pwrite operation (a read bio there is a read-modify-write read). It
// reports whether the event belonged to the runner's device.
func (f filter) count(ev event, inWrite bool, cs *scenario.CounterSet) bool {
	c, ok := counters[ev.name]
	return ok && c(f, ev, inWrite, cs)
}

// countBio reads block_bio_queue, the bio merges and block_getrq, whose
// arguments are "7,3 W 0 + 8 [comm]".
func (f filter) countBio(ev event, inWrite bool, cs *scenario.CounterSet) bool {
	w := strings.Fields(ev.args)
	if len(w) < 5 || !f.blockDev(w[0]) || w[3] != "+" {
		return false
	}
	r, ok := parseRWBS(w[1])
	n, ok2 := parseUint(w[4])
	if !ok || !ok2 {
		return false
	}
	switch ev.name {
	case "block_bio_backmerge":
		scenario.CountMerge(cs, scenario.MergeBack)
	case "block_bio_frontmerge":
		scenario.CountMerge(cs, scenario.MergeFront)
	case "block_getrq":
		scenario.CountGetRq(cs)
	default:
		scenario.CountBioQueued(cs, scenario.BioQueued{Dir: r.dir(), Bytes: n * 512,
			Preflush: r.preflush, FUA: r.fua, Ahead: r.ahead, InWrite: inWrite})
	}
	return true
}

// countDevEvent reads block_split, block_rq_merge and block_dirty_buffer,
// of which only the device, the first word, matters.
func (f filter) countDevEvent(ev event, _ bool, cs *scenario.CounterSet) bool {
	w := strings.Fields(ev.args)
	if len(w) < 1 || !f.blockDev(w[0]) {
		return false
	}
	switch ev.name {
	case "block_split":
		scenario.CountBioSplit(cs)
	case "block_rq_merge":
		scenario.CountMerge(cs, scenario.MergeRq)
	default:
		scenario.CountBufferDirty(cs)
	}
	return true
}

// countRq reads block_rq_insert and block_rq_issue, whose arguments are
// "7,3 W 4096 () 0 + 8 none,0,0 [comm]".
func (f filter) countRq(ev event, _ bool, cs *scenario.CounterSet) bool {
	w := strings.Fields(ev.args)
	if len(w) < 7 || !f.blockDev(w[0]) {
		return false
	}
	r, ok := parseRWBS(w[1])
	bytes, ok2 := parseUint(w[2])
	if !ok || !ok2 {
		return false
	}
	if ev.name == "block_rq_insert" {
		scenario.CountRqInsert(cs)
		return true
	}
	var sectors uint64
	if plus := slices.Index(w, "+"); plus > 0 && plus+1 < len(w) {
		sectors, _ = parseUint(w[plus+1])
	}
	scenario.CountRqIssued(cs, scenario.RqIssued{Dir: r.dir(), Bytes: bytes, Sectors: sectors,
		Preflush: r.preflush, FUA: r.fua})
	return true
}

// countRqComplete reads block_rq_complete, whose arguments are "7,3 W () 0
// + 8 none,0,0 [0]", the last the (negative) error.
func (f filter) countRqComplete(ev event, _ bool, cs *scenario.CounterSet) bool {
	w := strings.Fields(ev.args)
	if len(w) < 2 || !f.blockDev(w[0]) {
		return false
	}
	errno := 0
	if e, err := strconv.Atoi(strings.Trim(w[len(w)-1], "[]")); err == nil {
		errno = -e
	}
	scenario.CountRqComplete(cs, errno)
	return true
}

// countPlug reads block_plug and block_unplug ("[comm] 3", the requests it
// flushes), which carry no device: they are the scenario's thread's.
func (f filter) countPlug(ev event, _ bool, cs *scenario.CounterSet) bool {
	if ev.pid != f.tid {
		return false
	}
	if ev.name == "block_plug" {
		scenario.CountPlug(cs)
		return true
	}
	w := strings.Fields(ev.args)
	n, ok := uint64(0), len(w) > 0
	if ok {
		n, ok = parseUint(w[len(w)-1])
	}
	if !ok {
		return false
	}
	scenario.CountUnplug(cs, n)
	return true
}

// countFilemap reads mm_filemap_add_to_page_cache and
// mm_filemap_delete_from_page_cache, whose arguments are "dev 0:5 ino
// 700003 pfn=0x1 ofs=0 order=0".
func (f filter) countFilemap(ev event, _ bool, cs *scenario.CounterSet) bool {
	kv := keyValues(ev.args)
	ino, ok := parseUint("0x" + kv["ino"])
	order, ok2 := parseUint(kv["order"])
	if !ok || !ok2 || order > 30 || !f.inodeEvent(kv["dev"], ino) {
		return false
	}
	if ev.name == "mm_filemap_delete_from_page_cache" {
		scenario.CountFolioRemove(cs, uint(order))
	} else {
		scenario.CountFolioAdd(cs, uint(order))
	}
	return true
}

// countReadahead reads the readahead events, whose arguments are
// "dev=0:5 ino=700003 index=0 ... order=0 size=32 ...".
func (f filter) countReadahead(ev event, _ bool, cs *scenario.CounterSet) bool {
	kv := keyValues(ev.args)
	ino, ok := parseUint("0x" + kv["ino"])
	if !ok || !f.inodeEvent(kv["dev"], ino) {
		return false
	}
	switch ev.name {
	case "page_cache_sync_ra":
		scenario.CountReadaheadSync(cs)
	case "page_cache_async_ra":
		scenario.CountReadaheadAsync(cs)
	case "page_cache_ra_order":
		order, ok := parseUint(kv["order"])
		size, ok2 := parseUint(kv["size"])
		if !ok || !ok2 {
			return false
		}
		scenario.CountReadaheadOrder(cs, uint(order), size)
	case "page_cache_ra_unbounded":
		n, ok := parseUint(kv["nr_to_read"])
		if !ok {
			return false
		}
		scenario.CountReadaheadUnbounded(cs, n)
	}
	return true
}

// countDirtyFolio reads writeback_dirty_folio, whose arguments are "bdi
// 7:3: ino=7340035 index=0".
func (f filter) countDirtyFolio(ev event, _ bool, cs *scenario.CounterSet) bool {
	kv := keyValues(ev.args)
	ino, ok := parseUint(kv["ino"])
	if !ok || ino != f.bdevIno || kv["bdi"] != fmt.Sprintf("%d:%d:", f.major, f.minor) {
		return false
	}
	scenario.CountFolioDirty(cs)
	return true
}

// countWBErr reads filemap_set_wb_err and file_check_and_advance_wb_err
// ("... dev=0:3 ino=0x700008 ...").
func (f filter) countWBErr(ev event, _ bool, cs *scenario.CounterSet) bool {
	kv := keyValues(ev.args)
	ino, ok := parseUint(kv["ino"])
	if !ok || !f.inodeEvent(kv["dev"], ino) {
		return false
	}
	if ev.name == "filemap_set_wb_err" {
		scenario.CountWBErrSet(cs)
	} else {
		scenario.CountWBErrReport(cs)
	}
	return true
}

// attribution spreads a trace over operations: every event after "bhsim
// begin K" and before the next begin marker counts for operation K (so an
// event that completes after operation K returned, before K+1 began, is
// K's); events before the first marker are the setup's and are dropped.
type attribution struct {
	f       filter
	isWrite func(op int) bool
	ops     []scenario.CounterSet
	cur     int
	// Dropped counts lines that were not events of the runner's device.
	dropped int
	begins  int
}

func newAttribution(f filter, nops int, isWrite func(op int) bool) *attribution {
	return &attribution{f: f, isWrite: isWrite, ops: make([]scenario.CounterSet, nops)}
}

func (a *attribution) line(line string) {
	ev, ok := parseTraceLine(line)
	if !ok {
		return
	}
	if what, op, ok := ev.marker(); ok {
		if what == "begin" && op <= len(a.ops) {
			a.cur = op
			a.begins++
		}
		return
	}
	if a.cur == 0 {
		a.dropped++
		return
	}
	if !a.f.count(ev, a.isWrite(a.cur), &a.ops[a.cur-1]) {
		a.dropped++
	}
}

// lostEvents is the error of a run whose trace buffer of bufferKB KiB per
// CPU kept only kept of the written events (the trace file's header, as
// decimal text): it names a buffer that would have held them, a quarter
// more than the lost share asks for, or, past MaxTraceBufferKB, says to
// move fewer bytes.
func lostEvents(bufferKB int, kept, written string) error {
	k, _ := strconv.ParseFloat(kept, 64)
	w, _ := strconv.ParseFloat(written, 64)
	need := MaxTraceBufferKB + 1
	if k > 0 {
		need = (int(float64(bufferKB)*w/k*1.25) + 1023) / 1024 * 1024
	}
	if need > MaxTraceBufferKB {
		return fmt.Errorf("host: the trace buffer of %d KiB per CPU lost events (%s of %s kept), and the largest, Options.TraceBufferKB %d, would not hold them: move fewer bytes in the scenario",
			bufferKB, kept, written, MaxTraceBufferKB)
	}
	return fmt.Errorf("host: the trace buffer of %d KiB per CPU lost events (%s of %s kept): set Options.TraceBufferKB to %d or more (at most %d), or move fewer bytes in the scenario",
		bufferKB, kept, written, need, MaxTraceBufferKB)
}
