package host

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/workload"
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

// parseRWBS reads a tracepoint's rwbs (workload.ParseRWBS) and refuses
// what the runner's scenarios cannot make: zone operations, write zeroes,
// atomic writes and blkparse's barrier.
func parseRWBS(s string) (rwbs, bool) {
	p, ok := workload.ParseRWBS(s)
	if !ok || p.Op == 'Z' || p.Zeroes || p.Atomic || p.Barrier {
		return rwbs{}, false
	}
	return rwbs{op: p.Op, preflush: p.Preflush, fua: p.FUA, ahead: p.Ahead, sync: p.Sync}, true
}

// dir is the operation as a counter name's direction word.
func (r rwbs) dir() string {
	switch r.op {
	case 'R':
		return "read"
	case 'W':
		return "write"
	case 'D':
		return "discard"
	case 'F':
		return "flush"
	}
	return "other"
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

// count adds one event's counters to cs. inWrite says the event falls in a
// pwrite operation (a read bio there is a read-modify-write read). It
// reports whether the event belonged to the runner's device.
func (f filter) count(ev event, inWrite bool, cs *workload.CounterSet) bool {
	switch ev.name {
	case "block_bio_queue", "block_bio_backmerge", "block_bio_frontmerge", "block_getrq":
		// "7,3 W 0 + 8 [comm]"
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
			cs.Inc("merge.back")
		case "block_bio_frontmerge":
			cs.Inc("merge.front")
		case "block_getrq":
			cs.Inc("rq.get")
		default:
			bytes := n * 512
			d := r.dir()
			if r.op == 'W' && n == 0 && r.preflush {
				d = "flush"
			}
			cs.Inc("bio." + d)
			if bytes > 0 {
				cs.Inc(fmt.Sprintf("bio.%s.bytes=%d", d, bytes))
			}
			if r.preflush {
				cs.Inc("bio.preflush")
			}
			if r.fua {
				cs.Inc("bio.fua")
			}
			if r.ahead {
				cs.Inc("bio.read.ahead")
			}
			if r.op == 'R' && inWrite {
				cs.Inc("rmw.read.bios")
				cs.Add("rmw.read.bytes", bytes)
			}
		}
		return true
	case "block_split":
		w := strings.Fields(ev.args)
		if len(w) < 1 || !f.blockDev(w[0]) {
			return false
		}
		cs.Inc("bio.split")
		return true
	case "block_rq_merge":
		w := strings.Fields(ev.args)
		if len(w) < 1 || !f.blockDev(w[0]) {
			return false
		}
		cs.Inc("merge.rq")
		return true
	case "block_rq_insert", "block_rq_issue":
		// "7,3 W 4096 () 0 + 8 none,0,0 [comm]"
		w := strings.Fields(ev.args)
		if len(w) < 7 || !f.blockDev(w[0]) {
			return false
		}
		r, ok := parseRWBS(w[1])
		bytes, ok2 := parseUint(w[2])
		if !ok || !ok2 {
			return false
		}
		plus := -1
		for i, x := range w {
			if x == "+" {
				plus = i
				break
			}
		}
		var sectors uint64
		if plus > 0 && plus+1 < len(w) {
			sectors, _ = parseUint(w[plus+1])
		}
		if ev.name == "block_rq_insert" {
			cs.Inc("rq.insert")
			return true
		}
		d := r.dir()
		if r.op == 'W' && bytes == 0 && sectors == 0 && r.preflush {
			d = "flush"
		}
		cs.Inc("rq." + d)
		if d == "read" || d == "write" {
			cs.Inc(fmt.Sprintf("rq.%s.bytes=%d", d, bytes))
			if d == "read" {
				cs.Add("sectors.read", sectors)
			} else {
				cs.Add("sectors.written", sectors)
			}
		}
		if r.preflush && d != "flush" {
			cs.Inc("rq." + d + ".preflush")
		}
		if r.fua {
			cs.Inc("rq." + d + ".fua")
		}
		return true
	case "block_rq_complete":
		// "7,3 W () 0 + 8 none,0,0 [0]"
		w := strings.Fields(ev.args)
		if len(w) < 2 || !f.blockDev(w[0]) {
			return false
		}
		cs.Inc("rq.complete")
		last := w[len(w)-1]
		if e, err := strconv.Atoi(strings.Trim(last, "[]")); err == nil && e != 0 {
			cs.Inc("rq.error")
			cs.Inc(fmt.Sprintf("rq.error.errno=%d", -e))
		}
		return true
	case "block_plug", "block_unplug":
		if ev.pid != f.tid {
			return false
		}
		if ev.name == "block_plug" {
			cs.Inc("plug.plug")
			return true
		}
		// "[comm] 3"
		w := strings.Fields(ev.args)
		n, ok := uint64(0), len(w) > 0
		if ok {
			n, ok = parseUint(w[len(w)-1])
		}
		if !ok {
			return false
		}
		cs.Inc("plug.unplug")
		cs.Add("plug.unplug.rqs", n)
		return true
	case "block_dirty_buffer":
		w := strings.Fields(ev.args)
		if len(w) < 1 || !f.blockDev(w[0]) {
			return false
		}
		cs.Inc("buffer.dirty")
		return true
	case "mm_filemap_add_to_page_cache", "mm_filemap_delete_from_page_cache":
		// "dev 0:5 ino 700003 pfn=0x1 ofs=0 order=0"
		kv := keyValues(ev.args)
		ino, ok := parseUint("0x" + kv["ino"])
		order, ok2 := parseUint(kv["order"])
		if !ok || !ok2 || order > 30 || !f.inodeEvent(kv["dev"], ino) {
			return false
		}
		what := "add"
		if ev.name == "mm_filemap_delete_from_page_cache" {
			what = "remove"
		}
		cs.Inc(fmt.Sprintf("pagecache.%s.order=%d", what, order))
		cs.Add("pagecache."+what+".pages", 1<<order)
		return true
	case "page_cache_sync_ra", "page_cache_async_ra", "page_cache_ra_order", "page_cache_ra_unbounded":
		// "dev=0:5 ino=700003 index=0 ... order=0 size=32 ..."
		kv := keyValues(ev.args)
		ino, ok := parseUint("0x" + kv["ino"])
		if !ok || !f.inodeEvent(kv["dev"], ino) {
			return false
		}
		switch ev.name {
		case "page_cache_sync_ra":
			cs.Inc("readahead.sync")
		case "page_cache_async_ra":
			cs.Inc("readahead.async")
		case "page_cache_ra_order":
			cs.Inc("readahead.order=" + kv["order"])
			cs.Inc("readahead.window.pages=" + kv["size"])
		case "page_cache_ra_unbounded":
			cs.Inc("readahead.unbounded.pages=" + kv["nr_to_read"])
		}
		return true
	case "writeback_dirty_folio":
		// "bdi 7:3: ino=7340035 index=0"
		kv := keyValues(ev.args)
		ino, ok := parseUint(kv["ino"])
		if !ok || ino != f.bdevIno || kv["bdi"] != fmt.Sprintf("%d:%d:", f.major, f.minor) {
			return false
		}
		cs.Inc("pagecache.dirty")
		return true
	case "filemap_set_wb_err", "file_check_and_advance_wb_err":
		kv := keyValues(ev.args)
		ino, ok := parseUint(kv["ino"])
		if !ok || !f.inodeEvent(kv["dev"], ino) {
			return false
		}
		if ev.name == "filemap_set_wb_err" {
			cs.Inc("wberr.set")
		} else {
			cs.Inc("wberr.report")
		}
		return true
	}
	return false
}

// attribution spreads a trace over operations: every event after "bhsim
// begin K" and before the next begin marker counts for operation K (so an
// event that completes after operation K returned, before K+1 began, is
// K's); events before the first marker are the setup's and are dropped.
type attribution struct {
	f       filter
	isWrite func(op int) bool
	ops     []workload.CounterSet
	cur     int
	// Dropped counts lines that were not events of the runner's device.
	dropped int
	begins  int
}

func newAttribution(f filter, nops int, isWrite func(op int) bool) *attribution {
	return &attribution{f: f, isWrite: isWrite, ops: make([]workload.CounterSet, nops)}
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
