package host

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/scenario"
)

// testFilter is loop8 (7:8, dev_t 0x700008) run by thread 24937, with its
// backing file on a tmpfs 0:40.
var testFilter = filter{major: 7, minor: 8, bdevIno: 0x700008, backingDev: "0:40", tid: 24937}

func TestParseTraceLine(t *testing.T) {
	tests := []struct {
		line string
		ok   bool
		want event
	}{
		{"          record-24937   [001] ...1.  1266.792856: tracing_mark_write: bhsim begin 1", true, event{24937, "tracing_mark_write", "bhsim begin 1"}},
		{"     ksoftirqd/1-22      [001] ..s..  1266.793198: block_rq_complete: 7,8 WS () 0 + 8 be,0,4 [-28]", true, event{22, "block_rq_complete", "7,8 WS () 0 + 8 be,0,4 [-28]"}},
		{"  kworker/u8:3-my-task-77 [000] d..2.  1.000001: block_plug: [kworker/u8:3]", true, event{77, "block_plug", "[kworker/u8:3]"}},
		{"# entries-in-buffer/entries-written: 43/43   #P:2", false, event{}},
		{"", false, event{}},
		{"garbage", false, event{}},
		{"task-x [001] ..... 1.0: ev: a", false, event{}},
		{"task-1 [001] ..... 1.0 no colon", false, event{}},
	}
	for _, tt := range tests {
		got, ok := parseTraceLine(tt.line)
		assert.Equal(t, tt.ok, ok, tt.line)
		if tt.ok {
			assert.Equal(t, tt.want, got, tt.line)
		}
	}
}

func TestParseRWBS(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		want rwbs
	}{
		{"W", true, rwbs{op: 'W'}},
		{"WS", true, rwbs{op: 'W', sync: true}},
		{"FWS", true, rwbs{op: 'W', preflush: true, sync: true}},
		{"FF", true, rwbs{op: 'F', preflush: true}},
		{"F", true, rwbs{op: 'F'}},
		{"WFS", true, rwbs{op: 'W', fua: true, sync: true}},
		{"RA", true, rwbs{op: 'R', ahead: true}},
		{"RM", true, rwbs{op: 'R'}},
		{"DE", true, rwbs{op: 'D'}},
		{"N", true, rwbs{op: 'N'}},
		{"", false, rwbs{}},
		{"X", false, rwbs{}},
		{"WQ", false, rwbs{}},
	}
	for _, tt := range tests {
		got, ok := parseRWBS(tt.in)
		assert.Equal(t, tt.ok, ok, tt.in)
		if tt.ok {
			assert.Equal(t, tt.want, got, tt.in)
		}
	}
}

// TestCountEvents reads one trace line of each kind into the counters, and
// checks that threadFirings counts one firing for each event the runner's
// thread makes and none for another thread's.
func TestCountEvents(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		inWrite bool
		want    string // counters, "" when the event is not the device's
	}{
		{"bio write", "record-24937 [001] ..... 1.0: block_bio_queue: 7,8 WS 0 + 8 [record]", false, "bio.write=1 bio.write.bytes=4096=1"},
		{"bio other device", "record-24937 [001] ..... 1.0: block_bio_queue: 7,9 WS 0 + 8 [record]", false, ""},
		{"rmw read", "record-24937 [001] ..... 1.0: block_bio_queue: 7,8 R 0 + 8 [record]", true, "bio.read=1 bio.read.bytes=4096=1 rmw.read.bios=1 rmw.read.bytes=4096"},
		{"readahead bio", "record-24937 [001] ..... 1.0: block_bio_queue: 7,8 RA 0 + 256 [record]", false, "bio.read=1 bio.read.ahead=1 bio.read.bytes=131072=1"},
		{"flush bio", "record-24937 [001] ..... 1.0: block_bio_queue: 7,8 FWS 0 + 0 [record]", false, "bio.flush=1 bio.preflush=1"},
		{"back merge", "record-24937 [001] ..... 1.0: block_bio_backmerge: 7,8 WS 8 + 8 [record]", false, "merge.back=1"},
		{"front merge", "record-24937 [001] ..... 1.0: block_bio_frontmerge: 7,8 WS 0 + 8 [record]", false, "merge.front=1"},
		{"getrq", "record-24937 [001] ..... 1.0: block_getrq: 7,8 WS 0 + 8 [record]", false, "rq.get=1"},
		{"rq issue", "record-24937 [001] ..... 1.0: block_rq_issue: 7,8 WS 524288 () 0 + 1024 be,0,4 [record]", false, "rq.write=1 rq.write.bytes=524288=1 sectors.written=1024"},
		{"rq read", "record-24937 [001] ..... 1.0: block_rq_issue: 7,8 RA 16384 () 0 + 32 be,0,4 [record]", false, "rq.read=1 rq.read.bytes=16384=1 sectors.read=32"},
		{"rq flush", "kworker-5 [001] ..... 1.0: block_rq_issue: 7,8 FF 0 () 0 + 0 be,0,4 [kworker]", false, "rq.flush=1"},
		{"rq fua", "kworker-5 [001] ..... 1.0: block_rq_issue: 7,8 FWFS 4096 () 0 + 8 be,0,4 [kworker]", false, "rq.write=1 rq.write.bytes=4096=1 rq.write.fua=1 rq.write.preflush=1 sectors.written=8"},
		{"rq insert", "record-24937 [001] ..... 1.0: block_rq_insert: 7,8 WS 4096 () 0 + 8 be,0,4 [record]", false, "rq.insert=1"},
		{"rq complete error", "ksoftirqd/1-22 [001] ..s.. 1.0: block_rq_complete: 7,8 WS () 0 + 8 be,0,4 [-28]", false, "rq.complete=1 rq.error=1 rq.error.errno=28=1"},
		{"rq complete", "ksoftirqd/1-22 [001] ..s.. 1.0: block_rq_complete: 7,8 WS () 0 + 8 be,0,4 [0]", false, "rq.complete=1"},
		{"split", "record-24937 [001] ..... 1.0: block_split: 7,8 RA 0 / 2048 [record]", false, "bio.split=1"},
		{"rq merge", "record-24937 [001] ..... 1.0: block_rq_merge: 7,8 WS 4096 () 0 + 8 be,0,4 [record]", false, "merge.rq=1"},
		{"plug", "record-24937 [001] ..... 1.0: block_plug: [record]", false, "plug.plug=1"},
		{"unplug", "record-24937 [001] ..... 1.0: block_unplug: [record] 16", false, "plug.unplug=1 plug.unplug.rqs=16"},
		{"unplug other thread", "record-1 [001] ..... 1.0: block_unplug: [record] 16", false, ""},
		{"dirty buffer", "record-24937 [001] .N... 1.0: block_dirty_buffer: 7,8 sector=0 size=4096", false, "buffer.dirty=1"},
		{"pagecache add", "record-24937 [001] ..... 1.0: mm_filemap_add_to_page_cache: dev 0:3 ino 700008 pfn=0x10971a ofs=0 order=2", false, "pagecache.add.order=2=1 pagecache.add.pages=4"},
		{"pagecache remove", "record-24937 [001] d..2. 1.0: mm_filemap_delete_from_page_cache: dev 0:3 ino 700008 pfn=0x1 ofs=0 order=0", false, "pagecache.remove.order=0=1 pagecache.remove.pages=1"},
		{"backing file page", "record-24937 [001] ..... 1.0: mm_filemap_add_to_page_cache: dev 0:40 ino 700008 pfn=0x1 ofs=0 order=0", false, ""},
		{"other fs inode", "record-24937 [001] ..... 1.0: mm_filemap_add_to_page_cache: dev 253:0 ino 700008 pfn=0x1 ofs=0 order=0", false, ""},
		{"other inode", "record-24937 [001] ..... 1.0: mm_filemap_add_to_page_cache: dev 0:3 ino 700009 pfn=0x1 ofs=0 order=0", false, ""},
		{"huge order", "record-24937 [001] ..... 1.0: mm_filemap_add_to_page_cache: dev 0:3 ino 700008 pfn=0x1 ofs=0 order=99", false, ""},
		{"sync ra", "r-24937 [000] ..... 1.0: page_cache_sync_ra: dev=0:3 ino=700008 index=0 req_count=1 order=0 size=0 async_size=0 ra_pages=32 mmap_miss=0 prev_pos=-1", false, "readahead.sync=1"},
		{"ra order", "r-24937 [000] ..... 1.0: page_cache_ra_order: dev=0:3 ino=700008 index=0 order=0 size=4 async_size=3 ra_pages=32", false, "readahead.order=0=1 readahead.window.pages=4=1"},
		{"ra order without a size", "r-24937 [000] ..... 1.0: page_cache_ra_order: dev=0:3 ino=700008 index=0 order=0 async_size=3 ra_pages=32", false, ""},
		{"async ra", "r-24937 [000] ..... 1.0: page_cache_async_ra: dev=0:3 ino=700008 index=1 req_count=1 order=0 size=4 async_size=3 ra_pages=32 mmap_miss=0 prev_pos=4096", false, "readahead.async=1"},
		{"unbounded ra", "r-24937 [000] ..... 1.0: page_cache_ra_unbounded: dev=0:3 ino=700008 index=0 nr_to_read=16 lookahead_size=0", false, "readahead.unbounded.pages=16=1"},
		{"dirty folio", "record-24937 [001] dN.1. 1.0: writeback_dirty_folio: bdi 7:8: ino=7340040 index=0", false, "pagecache.dirty=1"},
		{"dirty folio other bdi", "record-24937 [001] dN.1. 1.0: writeback_dirty_folio: bdi 7:9: ino=7340040 index=0", false, ""},
		{"set wb err", "ksoftirqd/1-22 [001] .Ns.. 1.0: filemap_set_wb_err: dev=0:3 ino=0x700008 errseq=0x0", false, "wberr.set=1"},
		{"report wb err", "r-24937 [001] ...1. 1.0: file_check_and_advance_wb_err: file=0000000096675488 dev=0:3 ino=0x700008 old=0x0 new=0x1005", false, "wberr.report=1"},
		{"unknown event", "r-24937 [001] ...1. 1.0: sched_switch: prev=a", false, ""},
		{"short bio", "r-24937 [001] ..... 1.0: block_bio_queue: 7,8 W", false, ""},
		{"bad rwbs", "r-24937 [001] ..... 1.0: block_bio_queue: 7,8 Q 0 + 8 [r]", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, ok := parseTraceLine(tt.line)
			require.True(t, ok)
			var cs scenario.CounterSet
			got := testFilter.count(ev, tt.inWrite, &cs)
			assert.Equal(t, tt.want != "", got)
			assert.Equal(t, tt.want, cs.Counters().String())
			for _, c := range cs.Counters() {
				_, ok := scenario.ParseCounter(c.Name)
				assert.True(t, ok, "%s belongs to no counter family", c.Name)
			}
			if got { // one firing in the runner's thread (pid 24937), none in another's
				want := map[bool]float64{true: 1, false: 0}[ev.pid == 24937]
				assert.InDelta(t, want, threadFirings(cs.Counters()), 0, "threadFirings of %s", tt.want)
			}
		})
	}
}

func TestAttribution(t *testing.T) {
	trace := `# tracer: nop
#
# entries-in-buffer/entries-written: 9/9   #P:2
 record-24937 [001] ..... 1.0: block_bio_queue: 7,8 R 0 + 8 [record]
 record-24937 [001] ...1. 1.1: tracing_mark_write: bhsim begin 1
 record-24937 [001] ..... 1.2: block_bio_queue: 7,8 R 0 + 8 [record]
 record-24937 [001] ...1. 1.3: tracing_mark_write: bhsim end 1
 ksoftirqd/1-22 [001] ..s.. 1.4: block_rq_complete: 7,8 R () 0 + 8 be,0,4 [0]
 record-24937 [001] ...1. 1.5: tracing_mark_write: bhsim begin 2
 record-24937 [001] ..... 1.6: block_bio_queue: 7,8 R 8 + 8 [record]
 record-24937 [001] ..... 1.7: block_bio_queue: 7,9 R 8 + 8 [record]
 record-24937 [001] ...1. 1.8: tracing_mark_write: bhsim end 2
 record-24937 [001] ...1. 1.9: tracing_mark_write: bhsim begin 7
`
	a := newAttribution(testFilter, 2, func(op int) bool { return op == 2 })
	for _, l := range strings.Split(trace, "\n") {
		a.line(l)
	}
	assert.Equal(t, 2, a.begins)
	assert.Equal(t, 2, a.dropped, "the setup's bio and the other device's")
	assert.Equal(t, "bio.read=1 bio.read.bytes=4096=1 rq.complete=1", a.ops[0].Counters().String())
	assert.Equal(t, "bio.read=1 bio.read.bytes=4096=1 rmw.read.bios=1 rmw.read.bytes=4096", a.ops[1].Counters().String())
}

func TestMarker(t *testing.T) {
	tests := []struct {
		args string
		what string
		op   int
		ok   bool
	}{
		{"bhsim begin 3", "begin", 3, true},
		{"bhsim end 12", "end", 12, true},
		{"bhsim begin 0", "", 0, false},
		{"bhsim begin x", "", 0, false},
		{"other begin 3", "", 0, false},
		{"bhsim begin", "", 0, false},
	}
	for _, tt := range tests {
		what, op, ok := event{name: "tracing_mark_write", args: tt.args}.marker()
		assert.Equal(t, tt.ok, ok, tt.args)
		assert.Equal(t, tt.what, what, tt.args)
		assert.Equal(t, tt.op, op, tt.args)
	}
	_, _, ok := event{name: "block_plug", args: "bhsim begin 1"}.marker()
	assert.False(t, ok)
}

// TestOptionsDefaults: one run, the default timeout plus what the device
// rules add (RulesTime), the trace buffer left to Run; bad values refused.
func TestOptionsDefaults(t *testing.T) {
	plain, err := scenario.Parse("plain.scn", "device size=16M\nopen a rdwr\npwrite a off=0 len=1M repeat=4\n")
	require.NoError(t, err)
	o, err := Options{}.withDefaults(plain)
	require.NoError(t, err)
	assert.Equal(t, 1, o.Runs)
	assert.Equal(t, DefaultTimeout, o.Timeout)
	assert.Zero(t, o.TraceBufferKB, "0: sized from the scenario by Run (TraceBufferFor)")
	ruled, err := scenario.Parse("ruled.scn", "device size=16M sector=4096 wbps=1M wiops=16\nopen a rdwr\npwrite a off=0 len=1M repeat=4\n")
	require.NoError(t, err)
	assert.Equal(t, 4*time.Second+64*time.Second, RulesTime(ruled), "4M at 1M/s, 1024 bios of 4K at 16/s")
	o, err = Options{}.withDefaults(ruled)
	require.NoError(t, err)
	assert.Equal(t, DefaultTimeout+68*time.Second, o.Timeout)
	for _, bad := range []Options{{Runs: -1}, {Runs: MaxRuns + 1}, {Timeout: -1}, {TraceBufferKB: -1}, {TraceBufferKB: MaxTraceBufferKB + 1}} {
		_, err := bad.withDefaults(plain)
		assert.Error(t, err, "%+v", bad)
	}
}

// FuzzTraceLine checks that no trace line, however malformed, panics the
// parser or the counters.
func FuzzTraceLine(f *testing.F) {
	for _, l := range []string{
		"          record-24937   [001] ...1.  1266.792856: tracing_mark_write: bhsim begin 1",
		"     ksoftirqd/1-22      [001] ..s..  1266.793198: block_rq_complete: 7,8 WS () 0 + 8 be,0,4 [-28]",
		"record-24937 [001] ..... 1.0: block_rq_issue: 7,8 WS 524288 () 0 + 1024 be,0,4 [record]",
		"record-24937 [001] ..... 1.0: mm_filemap_add_to_page_cache: dev 0:3 ino 700008 pfn=0x10971a ofs=0 order=2",
		"record-24937 [001] dN.1. 1.0: writeback_dirty_folio: bdi 7:8: ino=7340040 index=0",
		"record-24937 [001] ..... 1.0: block_unplug: [record] 16",
	} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		a := newAttribution(testFilter, 3, func(int) bool { return true })
		a.line(line)
		if ev, ok := parseTraceLine(line); ok {
			var cs scenario.CounterSet
			testFilter.count(ev, true, &cs)
			_, _, _ = ev.marker()
		}
	})
}

// TestTraceBufferFor sizes the buffer from the scenario's I/O: a small
// scenario gets the default, the 64 MiB dd at 512-byte sectors that lost
// 10 % of its 396592 events in 16 MiB gets well over what held them, and
// no size passes the bounds.
func TestTraceBufferFor(t *testing.T) {
	most := max(DefaultTraceBufferKB, min(MaxTraceBufferKB, traceBudgetKB/runtime.NumCPU()))
	for _, tt := range []struct {
		name, text string
		atLeast    int
	}{
		{"small", "device size=1M\nopen a rdwr\npwrite a off=0 len=4K\nfsync a\n", DefaultTraceBufferKB},
		{"64 MiB at 512-byte sectors", "device size=1G\nopen a rdwr\nblkbszset a 512\npwrite a off=0 len=4K repeat=16384\nfsync a\n", 2 * 16384 * 396592 / 357852},
		{"64 MiB at 4096-byte sectors", "device size=1G sector=4096\nopen a rdwr\npwrite a off=0 len=1M repeat=64\nfsync a\n", DefaultTraceBufferKB},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Parse("t.scn", tt.text)
			require.NoError(t, err)
			kb := TraceBufferFor(s)
			assert.GreaterOrEqual(t, kb, min(tt.atLeast, most))
			assert.LessOrEqual(t, kb, most)
			assert.Zero(t, kb%1024, "whole MiB")
		})
	}
}

// TestLostEvents: the error names the buffer, what it kept, and a size that
// would hold the events, or that none would.
func TestLostEvents(t *testing.T) {
	for _, tt := range []struct {
		buffer        int
		kept, written string
		want          string
	}{
		{16384, "357852", "396592", "host: the trace buffer of 16384 KiB per CPU lost events (357852 of 396592 kept): set Options.TraceBufferKB to 23552 or more (at most 262144), or move fewer bytes in the scenario"},
		{262144, "100", "1000", "would not hold them: move fewer bytes in the scenario"},
		{16384, "0", "1000", "would not hold them"},
	} {
		assert.ErrorContains(t, lostEvents(tt.buffer, tt.kept, tt.written), tt.want)
	}
}
