package scenario

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// This file is the counter vocabulary: every counter family the model's
// counting (RunModel) and the kernel runner's tracepoint counting (package
// bench/host) produce, declared once with its name pattern, its unit,
// whether the kernel repeats it from run to run and the tracepoint it
// mirrors. Callers count through the Count* functions and never spell a
// name; ParseCounter classifies a name back into its family.
// docs/scenario-language.md ("Counters") lists the same families
// (TestCounterFamiliesDocumented).

// Dir is a block I/O's operation as counter names spell it (bio.<dir>,
// rq.<dir>, stat.<dir>.ios): the rwbs operation letter R, W, F, D, or
// another (N).
type Dir uint8

const (
	// DirRead is a read (rwbs R, REQ_OP_READ).
	DirRead Dir = iota
	// DirWrite is a write (rwbs W, REQ_OP_WRITE).
	DirWrite
	// DirFlush is a flush: a flush request (rwbs F, REQ_OP_FLUSH) or an
	// empty write with REQ_PREFLUSH (fsync's flush bio).
	DirFlush
	// DirDiscard is a discard (rwbs D or DE).
	DirDiscard
	// DirOther is an operation without data of another kind (rwbs N).
	DirOther
	numDirs
)

// dirWords are the directions' words in counter names.
var dirWords = [numDirs]string{DirRead: "read", DirWrite: "write", DirFlush: "flush", DirDiscard: "discard", DirOther: "other"}

// String returns the direction's word: "read", "write", "flush", "discard"
// or "other" ("" for a value out of range).
func (d Dir) String() string {
	if d >= numDirs {
		return ""
	}
	return dirWords[d]
}

// CounterUnit is what a counter's value counts.
type CounterUnit string

// The units of the counter families.
const (
	UnitBios     CounterUnit = "bios"     // bios queued, split or merged
	UnitRequests CounterUnit = "requests" // block-layer requests
	UnitBytes    CounterUnit = "bytes"    // bytes of I/O
	UnitSectors  CounterUnit = "sectors"  // 512-byte sectors
	UnitPages    CounterUnit = "pages"    // pages of the page cache
	UnitFolios   CounterUnit = "folios"   // page-cache folios
	UnitBuffers  CounterUnit = "buffers"  // buffer heads
	UnitEvents   CounterUnit = "events"   // firings of a tracepoint
	UnitIOs      CounterUnit = "ios"      // completed I/Os (sysfs stat)
	UnitMerges   CounterUnit = "merges"   // bios merged into requests (sysfs stat)
)

// CounterFamily is one family of counters: a name, or a name pattern whose
// <dir> is a Dir's word and whose <n> (<k>, <errno>) is a decimal number.
// Its methods describe it; CounterFamilies lists them all.
type CounterFamily uint8

// The counter families, in the order of docs/scenario-language.md.
const (
	// FamilyBio is bio.<dir>: bios queued (block_bio_queue).
	FamilyBio CounterFamily = iota
	// FamilyBioBytes is bio.<dir>.bytes=<n>: bios of n bytes.
	FamilyBioBytes
	// FamilyBioPreflush is bio.preflush: bios with REQ_PREFLUSH.
	FamilyBioPreflush
	// FamilyBioFUA is bio.fua: bios with REQ_FUA.
	FamilyBioFUA
	// FamilyBioReadAhead is bio.read.ahead: bios with REQ_RAHEAD.
	FamilyBioReadAhead
	// FamilyBioSplit is bio.split: bios split (block_split).
	FamilyBioSplit
	// FamilyMergeBack is merge.back: bios merged at a request's back.
	FamilyMergeBack
	// FamilyMergeFront is merge.front: bios merged at a request's front.
	FamilyMergeFront
	// FamilyMergeRq is merge.rq: requests merged into another.
	FamilyMergeRq
	// FamilyRqGet is rq.get: requests allocated (block_getrq).
	FamilyRqGet
	// FamilyRqInsert is rq.insert: requests inserted (block_rq_insert).
	FamilyRqInsert
	// FamilyRq is rq.<dir>: requests issued (block_rq_issue).
	FamilyRq
	// FamilyRqBytes is rq.<dir>.bytes=<n>: data requests of n bytes issued.
	FamilyRqBytes
	// FamilyRqPreflush is rq.<dir>.preflush: requests issued with a preflush.
	FamilyRqPreflush
	// FamilyRqFUA is rq.<dir>.fua: requests issued with FUA.
	FamilyRqFUA
	// FamilyRqComplete is rq.complete: requests completed.
	FamilyRqComplete
	// FamilyRqError is rq.error: requests completed with an error.
	FamilyRqError
	// FamilyRqErrno is rq.error.errno=<errno>: requests failed with errno.
	FamilyRqErrno
	// FamilySectorsRead is sectors.read: sectors of read requests issued.
	FamilySectorsRead
	// FamilySectorsWritten is sectors.written: sectors of write requests
	// issued.
	FamilySectorsWritten
	// FamilyRMWBios is rmw.read.bios: read bios queued inside a pwrite.
	FamilyRMWBios
	// FamilyRMWBytes is rmw.read.bytes: their bytes.
	FamilyRMWBytes
	// FamilyPlug is plug.plug: plugs started (block_plug).
	FamilyPlug
	// FamilyUnplug is plug.unplug: plugs flushed (block_unplug).
	FamilyUnplug
	// FamilyUnplugRqs is plug.unplug.rqs: the requests those flushed.
	FamilyUnplugRqs
	// FamilyBufferDirty is buffer.dirty: buffers dirtied.
	FamilyBufferDirty
	// FamilyFolioAdd is pagecache.add.order=<k>: folios of order k added.
	FamilyFolioAdd
	// FamilyFolioAddPages is pagecache.add.pages: the pages of those.
	FamilyFolioAddPages
	// FamilyFolioRemove is pagecache.remove.order=<k>: folios of order k
	// removed.
	FamilyFolioRemove
	// FamilyFolioRemovePages is pagecache.remove.pages: the pages of those.
	FamilyFolioRemovePages
	// FamilyFolioDirty is pagecache.dirty: folios dirtied.
	FamilyFolioDirty
	// FamilyReadaheadSync is readahead.sync: synchronous readahead calls.
	FamilyReadaheadSync
	// FamilyReadaheadAsync is readahead.async: asynchronous readahead calls.
	FamilyReadaheadAsync
	// FamilyReadaheadOrder is readahead.order=<k>: windows asking for
	// folios of order k.
	FamilyReadaheadOrder
	// FamilyReadaheadWindow is readahead.window.pages=<n>: windows of n
	// pages.
	FamilyReadaheadWindow
	// FamilyReadaheadUnbounded is readahead.unbounded.pages=<n>: unbounded
	// readaheads of n pages.
	FamilyReadaheadUnbounded
	// FamilyWBErrSet is wberr.set: writeback errors recorded.
	FamilyWBErrSet
	// FamilyWBErrReport is wberr.report: writeback errors checked for a file.
	FamilyWBErrReport
	// FamilyStatIOs is stat.<dir>.ios: I/Os completed (sysfs stat).
	FamilyStatIOs
	// FamilyStatMerges is stat.<dir>.merges: bios merged (sysfs stat).
	FamilyStatMerges
	// FamilyStatSectors is stat.<dir>.sectors: sectors completed (sysfs stat).
	FamilyStatSectors
	numFamilies
)

// statFile is the source of the stat.* families.
const statFile = "/sys/block/<dev>/stat"

// family is what the vocabulary knows of one counter family.
type family struct {
	pattern string      // the name, "<dir>", "<n>", "<k>" or "<errno>" for its variable parts
	unit    CounterUnit // what its value counts
	ranged  bool        // the kernel may count it differently from run to run
	firing  bool        // each count is a firing of source that no other firing counter counts
	source  string      // the tracepoint (or sysfs file) it mirrors
}

// families declares every counter family. Ranged families are those whose
// counts depend on how requests form (plugging, merging, splitting against
// physically contiguous pages): docs/host-kernel.md ("What varied between
// runs") records that only those varied; TestCounterFamiliesRecorded checks
// that every counter the recordings saw vary is in one.
var families = [numFamilies]family{
	FamilyBio:                {"bio.<dir>", UnitBios, false, true, "block_bio_queue"},
	FamilyBioBytes:           {"bio.<dir>.bytes=<n>", UnitBios, false, false, "block_bio_queue"},
	FamilyBioPreflush:        {"bio.preflush", UnitBios, false, false, "block_bio_queue"},
	FamilyBioFUA:             {"bio.fua", UnitBios, false, false, "block_bio_queue"},
	FamilyBioReadAhead:       {"bio.read.ahead", UnitBios, false, false, "block_bio_queue"},
	FamilyBioSplit:           {"bio.split", UnitBios, true, true, "block_split"},
	FamilyMergeBack:          {"merge.back", UnitBios, true, true, "block_bio_backmerge"},
	FamilyMergeFront:         {"merge.front", UnitBios, true, true, "block_bio_frontmerge"},
	FamilyMergeRq:            {"merge.rq", UnitRequests, true, true, "block_rq_merge"},
	FamilyRqGet:              {"rq.get", UnitRequests, true, true, "block_getrq"},
	FamilyRqInsert:           {"rq.insert", UnitRequests, true, true, "block_rq_insert"},
	FamilyRq:                 {"rq.<dir>", UnitRequests, true, true, "block_rq_issue"},
	FamilyRqBytes:            {"rq.<dir>.bytes=<n>", UnitRequests, true, false, "block_rq_issue"},
	FamilyRqPreflush:         {"rq.<dir>.preflush", UnitRequests, true, false, "block_rq_issue"},
	FamilyRqFUA:              {"rq.<dir>.fua", UnitRequests, true, false, "block_rq_issue"},
	FamilyRqComplete:         {"rq.complete", UnitRequests, true, true, "block_rq_complete"},
	FamilyRqError:            {"rq.error", UnitRequests, true, false, "block_rq_complete"},
	FamilyRqErrno:            {"rq.error.errno=<errno>", UnitRequests, true, false, "block_rq_complete"},
	FamilySectorsRead:        {"sectors.read", UnitSectors, false, false, "block_rq_issue"},
	FamilySectorsWritten:     {"sectors.written", UnitSectors, false, false, "block_rq_issue"},
	FamilyRMWBios:            {"rmw.read.bios", UnitBios, false, false, "block_bio_queue"},
	FamilyRMWBytes:           {"rmw.read.bytes", UnitBytes, false, false, "block_bio_queue"},
	FamilyPlug:               {"plug.plug", UnitEvents, true, true, "block_plug"},
	FamilyUnplug:             {"plug.unplug", UnitEvents, true, true, "block_unplug"},
	FamilyUnplugRqs:          {"plug.unplug.rqs", UnitRequests, true, false, "block_unplug"},
	FamilyBufferDirty:        {"buffer.dirty", UnitBuffers, false, true, "block_dirty_buffer"},
	FamilyFolioAdd:           {"pagecache.add.order=<k>", UnitFolios, false, true, "mm_filemap_add_to_page_cache"},
	FamilyFolioAddPages:      {"pagecache.add.pages", UnitPages, false, false, "mm_filemap_add_to_page_cache"},
	FamilyFolioRemove:        {"pagecache.remove.order=<k>", UnitFolios, false, true, "mm_filemap_delete_from_page_cache"},
	FamilyFolioRemovePages:   {"pagecache.remove.pages", UnitPages, false, false, "mm_filemap_delete_from_page_cache"},
	FamilyFolioDirty:         {"pagecache.dirty", UnitFolios, false, true, "writeback_dirty_folio"},
	FamilyReadaheadSync:      {"readahead.sync", UnitEvents, false, true, "page_cache_sync_ra"},
	FamilyReadaheadAsync:     {"readahead.async", UnitEvents, false, true, "page_cache_async_ra"},
	FamilyReadaheadOrder:     {"readahead.order=<k>", UnitEvents, false, true, "page_cache_ra_order"},
	FamilyReadaheadWindow:    {"readahead.window.pages=<n>", UnitEvents, false, false, "page_cache_ra_order"},
	FamilyReadaheadUnbounded: {"readahead.unbounded.pages=<n>", UnitEvents, false, true, "page_cache_ra_unbounded"},
	FamilyWBErrSet:           {"wberr.set", UnitEvents, false, true, "filemap_set_wb_err"},
	FamilyWBErrReport:        {"wberr.report", UnitEvents, false, true, "file_check_and_advance_wb_err"},
	FamilyStatIOs:            {"stat.<dir>.ios", UnitIOs, true, false, statFile},
	FamilyStatMerges:         {"stat.<dir>.merges", UnitMerges, true, false, statFile},
	FamilyStatSectors:        {"stat.<dir>.sectors", UnitSectors, false, false, statFile},
}

// CounterFamilies returns every counter family, in declaration order.
// O(families).
func CounterFamilies() []CounterFamily {
	out := make([]CounterFamily, numFamilies)
	for i := range out {
		out[i] = CounterFamily(i)
	}
	return out
}

// info returns f's declaration (the zero family for a value out of range).
func (f CounterFamily) info() family {
	if f >= numFamilies {
		return family{}
	}
	return families[f]
}

// Pattern is the family's name pattern ("bio.<dir>.bytes=<n>"), or its one
// name ("rq.get").
func (f CounterFamily) Pattern() string { return f.info().pattern }

// String is the family's pattern.
func (f CounterFamily) String() string { return f.Pattern() }

// Unit is what the family's counters count.
func (f CounterFamily) Unit() CounterUnit { return f.info().unit }

// Deterministic reports whether the kernel counts the family's counters the
// same on every run of a scenario; a ranged family's (request formation:
// plugs, merges, splits, requests) may differ, and a recording holds it as
// min..max.
func (f CounterFamily) Deterministic() bool { return f < numFamilies && !f.info().ranged }

// Source is the tracepoint the family mirrors ("block_bio_queue"), or the
// sysfs file for the stat.* families.
func (f CounterFamily) Source() string { return f.info().source }

// Firing reports whether each count of the family's counters is one firing
// of its tracepoint that no other firing family counts (bio.<dir> is,
// bio.<dir>.bytes=<n> is not: it counts the same firings again).
func (f CounterFamily) Firing() bool { return f.info().firing }

// CounterName is a counter's name, parsed: its family and the direction
// and number its pattern holds (zero where it holds none).
type CounterName struct {
	Family CounterFamily
	Dir    Dir
	N      int64
}

// String builds the name. It allocates; the Count* functions name their
// counters without allocating once a name has been built.
func (n CounterName) String() string {
	return string(appendName(nil, n))
}

// ParseCounter classifies a counter name: the family whose pattern it
// matches, with the direction and number. It reports false for a name of
// no family. O(families × len(name)), no allocation.
func ParseCounter(name string) (CounterName, bool) {
	for f := range numFamilies {
		if n, ok := matchPattern(f, name); ok {
			return n, true
		}
	}
	return CounterName{}, false
}

// matchPattern matches name against f's pattern.
func matchPattern(f CounterFamily, name string) (CounterName, bool) {
	out := CounterName{Family: f}
	p := families[f].pattern
	for p != "" {
		open := strings.IndexByte(p, '<')
		if open < 0 {
			return out, name == p
		}
		if !strings.HasPrefix(name, p[:open]) {
			return out, false
		}
		name = name[open:]
		end := strings.IndexByte(p, '>')
		ph := p[open+1 : end]
		p = p[end+1:]
		if ph == "dir" {
			d, ok := cutDir(name)
			if !ok {
				return out, false
			}
			out.Dir, name = d, name[len(d.String()):]
			continue
		}
		// A number ends the name in every pattern.
		if p != "" {
			return out, false
		}
		digits := name
		if ph == "errno" {
			digits = strings.TrimPrefix(digits, "-")
		}
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			return out, false
		}
		n, err := strconv.ParseInt(name, 10, 64)
		out.N = n
		return out, err == nil
	}
	return out, name == ""
}

// cutDir reads the direction word that starts s.
func cutDir(s string) (Dir, bool) {
	for d, w := range dirWords {
		if strings.HasPrefix(s, w) {
			return Dir(d), true
		}
	}
	return 0, false
}

// appendName appends n's name to b.
func appendName(b []byte, n CounterName) []byte {
	p := n.Family.Pattern()
	for p != "" {
		open := strings.IndexByte(p, '<')
		if open < 0 {
			return append(b, p...)
		}
		b = append(b, p[:open]...)
		end := strings.IndexByte(p, '>')
		if p[open+1:end] == "dir" {
			b = append(b, n.Dir.String()...)
		} else {
			b = strconv.AppendInt(b, n.N, 10)
		}
		p = p[end+1:]
	}
	return b
}

// fixedNames are the names of the families without a number, by
// direction (every direction is the same name for a family without <dir>).
var fixedNames = func() (t [numFamilies][numDirs]string) {
	for f := range numFamilies {
		for d := range numDirs {
			t[f][d] = CounterName{Family: f, Dir: d}.String()
		}
	}
	return t
}()

// maxNumbered bounds the numbered names kept: past it a new name is built
// each time (one allocation) rather than kept.
const maxNumbered = 1 << 14

// numbered keeps the names with a number (bio.write.bytes=4096) once built,
// so that counting a name seen before allocates nothing.
var numbered struct {
	sync.RWMutex
	m map[CounterName]string
}

// numberedName returns the name of family f (one with a number) for
// direction d and number n, built on its first use and kept.
func numberedName(f CounterFamily, d Dir, n int64) string {
	k := CounterName{Family: f, Dir: d, N: n}
	numbered.RLock()
	s, ok := numbered.m[k]
	numbered.RUnlock()
	if ok {
		return s
	}
	s = k.String()
	numbered.Lock()
	if numbered.m == nil {
		numbered.m = map[CounterName]string{}
	}
	if len(numbered.m) < maxNumbered {
		numbered.m[k] = s
	}
	numbered.Unlock()
	return s
}

// incN adds one to the counter of family f (one with a number) for
// direction d and number n.
func incN(cs *CounterSet, f CounterFamily, d Dir, n int64) {
	cs.Add(numberedName(f, d, n), 1)
}

// addDir adds v to the counter of family f (one without a number) for
// direction d.
func addDir(cs *CounterSet, f CounterFamily, d Dir, v uint64) {
	cs.Add(fixedNames[f][d], v)
}

// add adds v to the counter of family f (one without a direction or a
// number).
func add(cs *CounterSet, f CounterFamily, v uint64) {
	cs.Add(fixedNames[f][0], v)
}

// counterRoots are the first parts of the families' names (bio, rq,
// stat...), sorted: a report pattern that starts with none of them (nor
// with a wildcard) can match nothing (checkPattern).
var counterRoots = func() []string {
	var roots []string
	for _, f := range families {
		root, _, _ := strings.Cut(f.pattern, ".")
		roots = append(roots, root)
	}
	slices.Sort(roots)
	return slices.Compact(roots)
}()

// BioQueued is one bio entering the block layer, as block_bio_queue shows
// it.
type BioQueued struct {
	// Dir is the bio's operation; a write of no bytes with Preflush is
	// counted as a flush (fsync's empty flush bio).
	Dir Dir
	// Bytes is the bio's size.
	Bytes uint64
	// Preflush, FUA and Ahead are the bio's REQ_PREFLUSH, REQ_FUA and
	// REQ_RAHEAD.
	Preflush, FUA, Ahead bool
	// InWrite says the bio was queued during a pwrite: a read then is a
	// read-modify-write read.
	InWrite bool
}

// CountBioQueued counts a bio queued (block_bio_queue): bio.<dir> and, for
// a bio with data, bio.<dir>.bytes=<n> (bios); bio.preflush, bio.fua and
// bio.read.ahead for its flags (bios); and for a read inside a pwrite
// rmw.read.bios (bios) and rmw.read.bytes (bytes). No allocation once its
// names have been counted.
func CountBioQueued(cs *CounterSet, b BioQueued) {
	d := b.Dir
	if d == DirWrite && b.Bytes == 0 && b.Preflush {
		d = DirFlush
	}
	addDir(cs, FamilyBio, d, 1)
	if b.Bytes > 0 {
		incN(cs, FamilyBioBytes, d, int64(b.Bytes))
	}
	if b.Preflush {
		add(cs, FamilyBioPreflush, 1)
	}
	if b.FUA {
		add(cs, FamilyBioFUA, 1)
	}
	if b.Ahead {
		add(cs, FamilyBioReadAhead, 1)
	}
	if d == DirRead && b.InWrite {
		add(cs, FamilyRMWBios, 1)
		add(cs, FamilyRMWBytes, b.Bytes)
	}
}

// CountBioSplit counts a bio split (block_split): bio.split, in bios.
func CountBioSplit(cs *CounterSet) { add(cs, FamilyBioSplit, 1) }

// MergeKind is a merge's kind: a bio into a request's back or front, or a
// request into another.
type MergeKind uint8

// The kinds of merges.
const (
	MergeBack  MergeKind = iota // block_bio_backmerge: merge.back
	MergeFront                  // block_bio_frontmerge: merge.front
	MergeRq                     // block_rq_merge: merge.rq
)

// CountMerge counts a merge: merge.back (block_bio_backmerge) and
// merge.front (block_bio_frontmerge) in bios, merge.rq (block_rq_merge) in
// requests.
func CountMerge(cs *CounterSet, k MergeKind) {
	switch k {
	case MergeBack:
		add(cs, FamilyMergeBack, 1)
	case MergeFront:
		add(cs, FamilyMergeFront, 1)
	case MergeRq:
		add(cs, FamilyMergeRq, 1)
	}
}

// CountGetRq counts a request allocated (block_getrq): rq.get, in requests.
func CountGetRq(cs *CounterSet) { add(cs, FamilyRqGet, 1) }

// CountRqInsert counts a request inserted into the queue (block_rq_insert):
// rq.insert, in requests.
func CountRqInsert(cs *CounterSet) { add(cs, FamilyRqInsert, 1) }

// RqIssued is one request issued to the driver, as block_rq_issue shows it.
type RqIssued struct {
	// Dir is the request's operation; a write of no bytes and no sectors
	// with Preflush is counted as a flush.
	Dir Dir
	// Bytes and Sectors are the request's size.
	Bytes, Sectors uint64
	// Preflush and FUA are the request's REQ_PREFLUSH and REQ_FUA.
	Preflush, FUA bool
}

// CountRqIssued counts a request issued (block_rq_issue), in requests:
// rq.<dir>; for a read or a write rq.<dir>.bytes=<n> and sectors.read or
// sectors.written (sectors); rq.<dir>.preflush for a data request with a
// preflush and rq.<dir>.fua. No allocation once its names have been
// counted.
func CountRqIssued(cs *CounterSet, r RqIssued) {
	d := r.Dir
	if d == DirWrite && r.Bytes == 0 && r.Sectors == 0 && r.Preflush {
		d = DirFlush
	}
	addDir(cs, FamilyRq, d, 1)
	switch d {
	case DirRead:
		incN(cs, FamilyRqBytes, d, int64(r.Bytes))
		add(cs, FamilySectorsRead, r.Sectors)
	case DirWrite:
		incN(cs, FamilyRqBytes, d, int64(r.Bytes))
		add(cs, FamilySectorsWritten, r.Sectors)
	}
	if r.Preflush && d != DirFlush {
		addDir(cs, FamilyRqPreflush, d, 1)
	}
	if r.FUA {
		addDir(cs, FamilyRqFUA, d, 1)
	}
}

// CountRqComplete counts a request completed (block_rq_complete), in
// requests: rq.complete, and for errno (positive, 0 for success) not 0
// rq.error and rq.error.errno=<errno>.
func CountRqComplete(cs *CounterSet, errno int) {
	add(cs, FamilyRqComplete, 1)
	if errno != 0 {
		add(cs, FamilyRqError, 1)
		incN(cs, FamilyRqErrno, 0, int64(errno))
	}
}

// CountPlug counts a plug started (block_plug): plug.plug, in events.
func CountPlug(cs *CounterSet) { add(cs, FamilyPlug, 1) }

// CountUnplug counts a plug flushed (block_unplug): plug.unplug (events)
// and plug.unplug.rqs, the requests it flushed.
func CountUnplug(cs *CounterSet, rqs uint64) {
	add(cs, FamilyUnplug, 1)
	add(cs, FamilyUnplugRqs, rqs)
}

// CountBufferDirty counts a buffer dirtied (block_dirty_buffer):
// buffer.dirty, in buffers.
func CountBufferDirty(cs *CounterSet) { add(cs, FamilyBufferDirty, 1) }

// CountFolioAdd counts a folio of the given order added to the page cache
// (mm_filemap_add_to_page_cache): pagecache.add.order=<k> (folios) and
// pagecache.add.pages (pages, 1<<order). Precondition: order < 64.
func CountFolioAdd(cs *CounterSet, order uint) {
	incN(cs, FamilyFolioAdd, 0, int64(order))
	add(cs, FamilyFolioAddPages, 1<<order)
}

// CountFolioRemove counts a folio of the given order removed from the page
// cache (mm_filemap_delete_from_page_cache): pagecache.remove.order=<k>
// (folios) and pagecache.remove.pages (pages). Precondition: order < 64.
func CountFolioRemove(cs *CounterSet, order uint) {
	incN(cs, FamilyFolioRemove, 0, int64(order))
	add(cs, FamilyFolioRemovePages, 1<<order)
}

// CountFolioDirty counts a folio dirtied (writeback_dirty_folio):
// pagecache.dirty, in folios.
func CountFolioDirty(cs *CounterSet) { add(cs, FamilyFolioDirty, 1) }

// CountReadaheadSync counts a synchronous readahead (page_cache_sync_ra):
// readahead.sync, in events.
func CountReadaheadSync(cs *CounterSet) { add(cs, FamilyReadaheadSync, 1) }

// CountReadaheadAsync counts an asynchronous readahead
// (page_cache_async_ra): readahead.async, in events.
func CountReadaheadAsync(cs *CounterSet) { add(cs, FamilyReadaheadAsync, 1) }

// CountReadaheadOrder counts a readahead window read in folios of the given
// order (page_cache_ra_order): readahead.order=<k> and
// readahead.window.pages=<n>, in events.
func CountReadaheadOrder(cs *CounterSet, order uint, pages uint64) {
	incN(cs, FamilyReadaheadOrder, 0, int64(order))
	incN(cs, FamilyReadaheadWindow, 0, int64(pages))
}

// CountReadaheadUnbounded counts an unbounded readahead of the given pages
// (page_cache_ra_unbounded): readahead.unbounded.pages=<n>, in events.
func CountReadaheadUnbounded(cs *CounterSet, pages uint64) {
	incN(cs, FamilyReadaheadUnbounded, 0, int64(pages))
}

// CountWBErrSet counts a writeback error recorded in a mapping
// (filemap_set_wb_err): wberr.set, in events.
func CountWBErrSet(cs *CounterSet) { add(cs, FamilyWBErrSet, 1) }

// CountWBErrReport counts a file's check of its mapping's writeback error
// (file_check_and_advance_wb_err): wberr.report, in events.
func CountWBErrReport(cs *CounterSet) { add(cs, FamilyWBErrReport, 1) }

// DiskStat is the part of /sys/block/<dev>/stat the counters keep: the
// completed I/Os, merges and sectors of reads and writes, and the
// completed flushes.
type DiskStat struct {
	ReadIOs, ReadMerges, ReadSectors    uint64
	WriteIOs, WriteMerges, WriteSectors uint64
	FlushIOs                            uint64
}

// CountStat adds what grew from before to after (/sys/block/<dev>/stat):
// stat.<dir>.ios (ios), stat.<dir>.merges (merges) and stat.<dir>.sectors
// (sectors) of reads and writes, and stat.flush.ios. A field that did not
// grow adds no counter.
func CountStat(cs *CounterSet, before, after DiskStat) {
	for _, s := range [...]struct {
		f             CounterFamily
		d             Dir
		before, after uint64
	}{
		{FamilyStatIOs, DirRead, before.ReadIOs, after.ReadIOs},
		{FamilyStatMerges, DirRead, before.ReadMerges, after.ReadMerges},
		{FamilyStatSectors, DirRead, before.ReadSectors, after.ReadSectors},
		{FamilyStatIOs, DirWrite, before.WriteIOs, after.WriteIOs},
		{FamilyStatMerges, DirWrite, before.WriteMerges, after.WriteMerges},
		{FamilyStatSectors, DirWrite, before.WriteSectors, after.WriteSectors},
		{FamilyStatIOs, DirFlush, before.FlushIOs, after.FlushIOs},
	} {
		if s.after > s.before {
			addDir(cs, s.f, s.d, s.after-s.before)
		}
	}
}

// CounterRoots returns the first parts of the counter families' names
// (bio, rq, stat...), sorted: the words a report pattern may start with.
func CounterRoots() []string { return slices.Clone(counterRoots) }
