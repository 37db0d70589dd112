package blk

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eventLog is a Tracer that keeps every event.
type eventLog []TraceEvent

// Trace implements Tracer.
func (l *eventLog) Trace(e TraceEvent) { *l = append(*l, e) }

// kinds returns the kinds of the logged events.
func (l eventLog) kinds() []TraceKind {
	var out []TraceKind
	for _, e := range l {
		out = append(out, e.Kind)
	}
	return out
}

// count returns how many logged events are of kind k.
func (l eventLog) count(k TraceKind) int {
	n := 0
	for _, e := range l {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// tracedQueue returns a queue with lim over a 64 MiB MemDisk and its event log.
func tracedQueue(t *testing.T, lim Limits) (*Queue, *eventLog) {
	t.Helper()
	q := newQueue(t, "q", 64<<20, Null{}, lim)
	log := &eventLog{}
	q.SetTracer(log)
	return q, log
}

// flagBio returns a metadata-only bio of n bytes at sector on page frame pfn
// with flags, recorded by c.
func (c *completions) flagBio(id int, op Op, flags BioFlags, sector uint64, n uint32, pfn uint64) *Bio {
	b := c.bio(id, op, sector)
	b.Flags = flags
	if n > 0 {
		b.AddPage(nil, n, pfn, 0)
	}
	return b
}

const (
	bq  = TraceBioQueue
	bm  = TraceBioBackmerge
	fm  = TraceBioFrontmerge
	sp  = TraceSplit
	grq = TraceGetRq
	ins = TraceRqInsert
	iss = TraceRqIssue
	cpl = TraceRqComplete
	plg = TracePlug
	upl = TraceUnplug
)

func TestTraceEventSequences(t *testing.T) {
	type bio struct {
		op     Op
		flags  BioFlags
		sector uint64
		n      uint32
	}
	tests := []struct {
		name    string
		lim     Limits
		plugged bool
		bios    []bio
		want    []TraceKind
	}{
		{"5.10: three bios back-merge in the plug", DefaultLimits(512, 4096), true,
			[]bio{{OpWrite, 0, 0, 4096}, {OpWrite, 0, 8, 4096}, {OpWrite, 0, 16, 4096}},
			[]TraceKind{bq, grq, plg, bq, bm, bq, bm, upl, iss, cpl}},
		{"5.10: no front merge", DefaultLimits(512, 4096), true,
			[]bio{{OpWrite, 0, 8, 4096}, {OpWrite, 0, 0, 4096}},
			[]TraceKind{bq, grq, plg, bq, grq, upl, iss, cpl, iss, cpl}},
		{"6.18: a front merge", LoopLimits(512), true,
			[]bio{{OpWrite, FlagSync, 8, 4096}, {OpWrite, FlagSync, 0, 4096}},
			[]TraceKind{bq, grq, plg, bq, fm, upl, iss, cpl}},
		{"unplugged: issued at once", LoopLimits(512), false,
			[]bio{{OpRead, FlagRahead, 0, 16384}},
			[]TraceKind{bq, grq, iss, cpl}},
		{"a 2 MiB bio splits at 1280 KiB", LoopLimits(512), false,
			[]bio{{OpRead, 0, 0, 2 << 20}},
			[]TraceKind{bq, sp, grq, iss, cpl, grq, iss, cpl}},
		{"write-back: an empty flush", LoopLimits(512), true,
			[]bio{{OpWrite, FlagPreflush | FlagSync, 0, 0}},
			[]TraceKind{bq, grq, iss, cpl, cpl}},
		{"write-through: an empty flush vanishes", DefaultLimits(512, 512), true,
			[]bio{{OpWrite, FlagPreflush | FlagSync, 0, 0}},
			nil},
		{"write-back, no FUA: preflush and FUA data", LoopLimits(512), true,
			[]bio{{OpWrite, FlagPreflush | FlagFUA, 0, 4096}},
			[]TraceKind{bq, grq, iss, cpl, iss, cpl, iss, cpl, cpl}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, log := tracedQueue(t, tc.lim)
			c := newCompletions()
			var p Plug
			if tc.plugged {
				p.Start()
			}
			for i, b := range tc.bios {
				SubmitBio(&p, q, c.flagBio(i, b.op, b.flags, b.sector, b.n, uint64(100+2*i)))
			}
			if tc.plugged {
				require.NoError(t, p.Finish())
			}
			assert.Equal(t, tc.want, log.kinds())
			assert.Len(t, c.order, len(tc.bios), "every bio completes")
		})
	}
}

func TestTraceEventFields(t *testing.T) {
	q, log := tracedQueue(t, LoopLimits(512))
	c := newCompletions()
	var p Plug
	p.Start()
	SubmitBio(&p, q, c.flagBio(0, OpWrite, FlagSync, 8, 4096, 10))
	SubmitBio(&p, q, c.flagBio(1, OpWrite, FlagSync, 16, 4096, 20))
	require.NoError(t, p.Finish())
	SubmitBio(nil, q, c.flagBio(2, OpWrite, FlagPreflush|FlagSync, 0, 0, 0))
	w := OpWrite
	want := []TraceEvent{
		{Kind: bq, Op: w, Flags: FlagSync, Sector: 8, Bytes: 4096},
		{Kind: grq, Op: w, Flags: FlagSync, Sector: 8, Bytes: 4096},
		{Kind: plg},
		{Kind: bq, Op: w, Flags: FlagSync, Sector: 16, Bytes: 4096},
		{Kind: bm, Op: w, Flags: FlagSync, Sector: 16, Bytes: 4096},
		{Kind: upl, Count: 1},
		{Kind: iss, Op: w, Flags: FlagSync, Sector: 8, Bytes: 8192, Count: 2, Segments: 2},
		{Kind: cpl, Op: w, Flags: FlagSync, Sector: 8, Bytes: 8192, Count: 2},
		{Kind: bq, Op: w, Flags: FlagPreflush | FlagSync},
		{Kind: grq, Op: w, Flags: FlagPreflush | FlagSync},
		{Kind: iss, Op: OpFlush, Flags: FlagPreflush},
		{Kind: cpl, Op: OpFlush, Flags: FlagPreflush},
		{Kind: cpl, Op: w, Flags: FlagSync},
	}
	assert.Equal(t, want, []TraceEvent(*log))
}

func TestTraceKindString(t *testing.T) {
	assert.Equal(t, "block_bio_queue", TraceBioQueue.String())
	assert.Equal(t, "block_unplug", TraceUnplug.String())
	assert.Equal(t, "trace(10)", TraceKind(10).String())
	assert.Equal(t, "flush", OpFlush.String())
	assert.Equal(t, "6.18", Version618.String())
	assert.Equal(t, "5.10", Version(0).String())
}

// TestFlushMachinery checks what each kind of flush bio becomes on each
// kind of queue.
func TestFlushMachinery(t *testing.T) {
	wt := LoopLimits(512)
	wt.WriteCache = false
	fua := LoopLimits(512)
	fua.FUA = true
	fua510 := fua
	fua510.Version = Version510
	tests := []struct {
		name    string
		lim     Limits
		flags   BioFlags
		n       uint32
		flushes uint64 // flush requests
		empty   uint64 // empty flushes served
		writes  uint64 // data write requests
		plugged bool   // the data waits in the plug
		fuaRq   bool   // the data request carries FUA
	}{
		{"write-back: empty preflush", LoopLimits(512), FlagPreflush, 0, 1, 1, 0, false, false},
		{"write-through: empty preflush", wt, FlagPreflush, 0, 0, 0, 0, false, false},
		{"write-back: preflush data", LoopLimits(512), FlagPreflush, 4096, 1, 0, 1, false, false},
		{"write-back no FUA: FUA data", LoopLimits(512), FlagFUA, 4096, 1, 0, 1, false, false},
		{"write-back no FUA: preflush FUA data", LoopLimits(512), FlagPreflush | FlagFUA, 4096, 2, 0, 1, false, false},
		{"write-back FUA 6.18: FUA data is plugged", fua, FlagFUA, 4096, 0, 0, 1, true, true},
		{"write-back FUA 5.10: FUA data bypasses the plug", fua510, FlagFUA, 4096, 0, 0, 1, false, true},
		{"write-back FUA: preflush FUA data", fua, FlagPreflush | FlagFUA, 4096, 1, 0, 1, false, true},
		{"write-through: preflush FUA data is a plain write", wt, FlagPreflush | FlagFUA, 4096, 0, 0, 1, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, log := tracedQueue(t, tc.lim)
			c := newCompletions()
			var p Plug
			p.Start()
			SubmitBio(&p, q, c.flagBio(0, OpWrite, tc.flags|FlagSync, 0, tc.n, 7))
			assert.Equal(t, tc.plugged, p.Len() == 1, "plugged")
			assert.Equal(t, !tc.plugged, len(c.order) == 1, "completed at once")
			require.NoError(t, p.Finish())
			require.Equal(t, []int{0}, c.order)
			assert.NoError(t, c.errs[0])
			st := q.Stats()
			assert.Equal(t, tc.flushes, st.Flushes)
			assert.Equal(t, tc.empty, st.EmptyFlushes)
			assert.Equal(t, tc.writes, st.Write.Requests)
			assert.Equal(t, BlockStat{WriteIOs: tc.writes + tc.empty, WriteSectors: uint64(tc.n) >> SectorShift,
				FlushIOs: tc.flushes}, q.BlockStat())
			for _, e := range *log {
				if e.Kind == iss && e.Op == OpWrite {
					assert.Equal(t, tc.fuaRq, e.Flags&FlagFUA != 0, "FUA on the request")
					assert.Zero(t, e.Flags&FlagPreflush)
				}
			}
		})
	}
}

// A flush bio never merges, and a FUA request accepts no merge.
func TestFlushFlagsDoNotMerge(t *testing.T) {
	fua := LoopLimits(512)
	fua.FUA = true
	q, _ := tracedQueue(t, fua)
	c := newCompletions()
	var p Plug
	p.Start()
	SubmitBio(&p, q, c.flagBio(0, OpWrite, FlagSync, 0, 4096, 1))
	SubmitBio(&p, q, c.flagBio(1, OpWrite, FlagFUA, 8, 4096, 2)) // cannot merge into 0
	SubmitBio(&p, q, c.flagBio(2, OpWrite, FlagSync, 16, 4096, 3))
	require.Equal(t, 3, p.Len(), "the FUA request accepts no back merge")
	require.NoError(t, p.Finish())
	assert.Zero(t, q.Stats().Write.Merges)
}

func TestFrontMerges618(t *testing.T) {
	small := LoopLimits(512)
	small.MaxSectors = 16
	fewSegs := LoopLimits(512)
	fewSegs.MaxSegments = 2
	v510 := LoopLimits(512)
	v510.Version = Version510
	tests := []struct {
		name   string
		lim    Limits
		n      int // 4 KiB bios submitted from the highest sector down
		rqs    uint64
		fronts uint64
	}{
		{"6.18: descending bios front-merge", LoopLimits(512), 8, 1, 7},
		{"6.18: within max_sectors", small, 4, 2, 2},
		{"6.18: within max_segments", fewSegs, 4, 2, 2},
		{"5.10: none", v510, 8, 8, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, log := tracedQueue(t, tc.lim)
			q.EnableTrace(16)
			c := newCompletions()
			var p Plug
			p.Start()
			for i := range tc.n {
				SubmitBio(&p, q, c.flagBio(i, OpWrite, FlagSync, uint64(8*(tc.n-1-i)), 4096, uint64(3*i)))
			}
			require.NoError(t, p.Finish())
			st := q.Stats().Write
			assert.Equal(t, tc.rqs, st.Requests)
			assert.Equal(t, tc.fronts, st.FrontMerges)
			assert.Equal(t, uint64(tc.n)-tc.rqs, st.Merges)
			assert.Equal(t, int(tc.fronts), log.count(fm))
			// The request's bios are in sector order: they complete so.
			sector := uint64(1 << 40)
			for _, e := range q.Trace() {
				require.Less(t, e.Sector, sector, "requests go out newest first here")
				sector = e.Sector
			}
			for i, id := range c.order[:tc.n/int(tc.rqs)] {
				assert.Equal(t, tc.n/int(tc.rqs)-1-i, id, "front-merged bios complete in sector order")
			}
		})
	}
}

// TestPlugFlushRules618 checks BLK_MAX_REQUEST_COUNT and BLK_PLUG_FLUSH_SIZE
// on 6.18 queues without write throttling, with reads (never throttled).
func TestPlugFlushRules618(t *testing.T) {
	tests := []struct {
		name    string
		queues  int
		maxRqs  int
		n       int     // unmergeable reads, alternating between the queues
		size    uint32  // bytes each
		unplugs [][]int // per queue, requests per unplug
	}{
		{"32 requests fit", 1, 0, 32, 4096, [][]int{{32}}},
		{"the 33rd flushes 32", 1, 0, 33, 4096, [][]int{{32, 1}}},
		{"two queues: 64", 2, 0, 65, 4096, [][]int{{32, 1}, {32}}},
		{"MaxRequests overrides", 1, 8, 20, 4096, [][]int{{8, 8, 4}}},
		{"128 KiB flushes the next", 1, 0, 3, 128 << 10, [][]int{{1, 1, 1}}},
		{"below 128 KiB does not", 1, 0, 3, 124 << 10, [][]int{{3}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			qs := make([]*Queue, tc.queues)
			logs := make([]*eventLog, tc.queues)
			for i := range qs {
				qs[i], logs[i] = tracedQueue(t, LoopLimits(512))
			}
			c := newCompletions()
			p := Plug{MaxRequests: tc.maxRqs}
			p.Start()
			for i := range tc.n {
				// A gap between bios keeps them unmergeable.
				sector := uint64(i) * (uint64(tc.size)>>SectorShift + 8)
				SubmitBio(&p, qs[i%tc.queues], c.flagBio(i, OpRead, 0, sector, tc.size, uint64(100*i)))
			}
			require.NoError(t, p.Finish())
			for i, log := range logs {
				var unplugs []int
				for _, e := range *log {
					if e.Kind == upl {
						unplugs = append(unplugs, e.Count)
					}
				}
				assert.Equal(t, tc.unplugs[i], unplugs, "queue %d", i)
				assert.Zero(t, log.count(ins), "no sleep: issued directly")
			}
			assert.Len(t, c.order, tc.n)
		})
	}
}

// TestPlugMergeAttempt618: 6.18 tries the newest request if it is of the
// bio's queue, else the oldest of that queue, once.
func TestPlugMergeAttempt618(t *testing.T) {
	qa := newQueue(t, "a", 64<<20, Null{}, LoopLimits(512))
	qb := newQueue(t, "b", 64<<20, Null{}, LoopLimits(512))
	c := newCompletions()
	var p Plug
	p.Start()
	steps := []struct {
		q      *Queue
		sector uint64
		len    int // plugged requests after it
	}{
		{qa, 0, 1},   // A0 [0, 8)
		{qa, 100, 2}, // A1 [100, 108)
		{qa, 8, 3},   // newest is A1: not A0, which would take it; A2 [8, 16)
		{qb, 0, 4},   // B0
		{qa, 16, 5},  // newest is B0: a's oldest, A0, does not take it (A2 would); A3
		{qb, 8, 5},   // newest is A3: b's oldest, B0, takes it
		{qb, 50, 6},  // B1
		{qa, 8, 6},   // newest is B1: a's oldest, A0, takes it
	}
	for i, st := range steps {
		SubmitBio(&p, st.q, c.flagBio(i, OpRead, 0, st.sector, 4096, uint64(10*i)))
		require.Equal(t, st.len, p.Len(), "step %d", i)
	}
	require.NoError(t, p.Finish())
	assert.Equal(t, uint64(1), qa.Stats().Read.Merges)
	assert.Equal(t, uint64(1), qb.Stats().Read.Merges)
}

// stubCB is a plug callback that counts its runs.
type stubCB struct{ runs *int }

func (s stubCB) Unplug(*Plug) { *s.runs++ }

// A 6.18 plug flushed to make room runs no callbacks (blk_mq_flush_plug_list);
// v5.10's does (blk_flush_plug_list).
func TestPlugFullFlushCallbacks(t *testing.T) {
	for _, v := range []Version{Version510, Version618} {
		t.Run(v.String(), func(t *testing.T) {
			lim := LoopLimits(512)
			lim.Version = v
			q := newQueue(t, "q", 64<<20, Null{}, lim)
			c := newCompletions()
			var runs int
			var p Plug
			p.Start()
			p.CheckPlugged("md", func(any) PlugCallback { return stubCB{&runs} })
			for i := range 40 {
				SubmitBio(&p, q, c.flagBio(i, OpRead, 0, uint64(16*i), 4096, uint64(i)))
			}
			if v == Version618 {
				assert.Zero(t, runs, "the callback waits for the finish")
			} else {
				assert.Equal(t, 1, runs, "the first full flush ran it")
			}
			require.NoError(t, p.Finish())
			assert.Equal(t, 1, runs)
		})
	}
}

// TestWriteThrottle checks blk-wbt's sleeps: a task that would exceed the
// queue's write depth flushes its plug from schedule(), inserting the
// requests.
func TestWriteThrottle(t *testing.T) {
	tests := []struct {
		name    string
		depth   uint32
		op      Op
		flags   BioFlags
		n       int
		unplugs []int
		inserts int
	}{
		{"64 unmergeable sync writes: 4 unplugs of 16", WBTDefaultDepth, OpWrite, FlagSync, 64, []int{16, 16, 16, 16}, 48},
		{"16 fit", WBTDefaultDepth, OpWrite, FlagSync, 16, []int{16}, 0},
		{"writes without REQ_SYNC: wb_normal, 8", WBTDefaultDepth, OpWrite, 0, 20, []int{8, 8, 4}, 16},
		{"REQ_SYNC|REQ_IDLE is not throttled", WBTDefaultDepth, OpWrite, FlagSync | FlagIdle, 40, []int{32, 8}, 0},
		{"reads are not throttled", WBTDefaultDepth, OpRead, 0, 40, []int{32, 8}, 0},
		{"off", 0, OpWrite, FlagSync, 40, []int{32, 8}, 0},
		{"depth 2 without REQ_SYNC stays 2", 2, OpWrite, 0, 5, []int{2, 2, 1}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lim := LoopLimits(512)
			lim.WriteThrottleDepth = tc.depth
			q, log := tracedQueue(t, lim)
			c := newCompletions()
			var p Plug
			p.Start()
			for i := range tc.n {
				SubmitBio(&p, q, c.flagBio(i, tc.op, tc.flags, uint64(16*i), 4096, uint64(2*i)))
			}
			require.NoError(t, p.Finish())
			var unplugs []int
			for _, e := range *log {
				if e.Kind == upl {
					unplugs = append(unplugs, e.Count)
				}
			}
			assert.Equal(t, tc.unplugs, unplugs)
			assert.Equal(t, tc.inserts, log.count(ins))
			assert.Equal(t, len(tc.unplugs), log.count(plg))
			assert.Len(t, c.order, tc.n)
		})
	}
}

func TestErrno(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{ErrIO, ErrnoIO},
		{ErrNoSpace, ErrnoNoSpace},
		{fmt.Errorf("loop: %w", ErrNoSpace), 28},
		{ErrNotSupported, ErrnoNotSupported},
		{ErrBeyondEnd, 5},
		{ErrMisaligned, 5},
		{fmt.Errorf("%w: %w", ErrIO, ErrInjected), 5},
		{errors.New("anything else"), 5},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, Errno(tc.err), "%v", tc.err)
	}
	assert.NotErrorIs(t, ErrNoSpace, ErrIO, "ENOSPC is its own status")
}

func TestLoopLimits(t *testing.T) {
	l := LoopLimits(4096)
	assert.Equal(t, Limits{MaxSectors: 2560, MaxSegments: 128, MaxSegmentSize: 65536,
		LogicalBlockSize: 4096, PhysicalBlockSize: 4096, PageSize: 4096, SegmentAccounting: SegmentsPerBio,
		Version: Version618, WriteCache: true, WriteThrottleDepth: 16}, l)
	assert.NoError(t, l.Validate())
}

// Every recorded header is a LoopLimits queue.
func TestLoopLimitsFromRecorded(t *testing.T) {
	for _, name := range []string{"dd-bs512", "plug-write-4k-sector", "init-bsize-2k-sector", "init-bsize-1k-sector", "wberr-bs16k"} {
		r := loadRecorded(t, name)
		l, err := LoopLimitsFrom(r.attrs())
		require.NoError(t, err, name)
		assert.Equal(t, LoopLimits(r.Queue.LogicalBlockSize), l, name)
	}
}

// TestLoopLimitsFromSchedulers: each of 6.18's schedulers puts an elevator
// on the queue; bfq also turns write-back throttling off.
func TestLoopLimitsFromSchedulers(t *testing.T) {
	for _, tc := range []struct {
		sched    string
		elevator bool
		wbt      uint32
	}{
		{"", false, WBTDefaultDepth},
		{"none", false, WBTDefaultDepth},
		{"mq-deadline", true, WBTDefaultDepth},
		{"kyber", true, WBTDefaultDepth},
		{"bfq", true, 0},
	} {
		l, err := LoopLimitsFrom(QueueAttrs{LogicalBlockSize: 512, Scheduler: tc.sched})
		require.NoError(t, err, tc.sched)
		assert.Equal(t, tc.elevator, l.Elevator, tc.sched)
		assert.Equal(t, tc.wbt, l.WriteThrottleDepth, tc.sched)
	}
}

func TestLoopLimitsFromErrors(t *testing.T) {
	ok := QueueAttrs{LogicalBlockSize: 512, PhysicalBlockSize: 4096, MaxSectorsKB: 512, MaxHWSectorsKB: 1280,
		MaxSegments: 64, MaxSegmentSize: 1 << 20, WriteCache: WriteCacheThrough, Scheduler: "none"}
	l, err := LoopLimitsFrom(ok)
	require.NoError(t, err)
	assert.Equal(t, uint32(1024), l.MaxSectors)
	assert.Equal(t, uint32(4096), l.PhysicalBlockSize)
	assert.Equal(t, uint32(64), l.MaxSegments)
	assert.Equal(t, uint32(1<<20), l.MaxSegmentSize)
	assert.False(t, l.WriteCache)
	tests := []struct {
		name string
		edit func(*QueueAttrs)
	}{
		{"no logical block", func(a *QueueAttrs) { a.LogicalBlockSize = 0 }},
		{"max_sectors above hw", func(a *QueueAttrs) { a.MaxSectorsKB = 2048 }},
		{"max_sectors beyond 32 bits", func(a *QueueAttrs) { a.MaxSectorsKB, a.MaxHWSectorsKB = 1<<21, 0 }},
		{"write_cache", func(a *QueueAttrs) { a.WriteCache = "write-back" }},
		{"fua without cache", func(a *QueueAttrs) { a.FUA = true }},
		{"scheduler", func(a *QueueAttrs) { a.Scheduler = "cfq" }},
		{"nomerges", func(a *QueueAttrs) { a.NoMerges = 2 }},
		{"invalid limits", func(a *QueueAttrs) { a.MaxSegmentSize = 512 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := ok
			tc.edit(&a)
			_, err := LoopLimitsFrom(a)
			assert.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

// FuzzLoopLimitsFrom: any attributes give an ErrInvalidConfig error or limits
// that a queue accepts and that say what the attributes said.
func FuzzLoopLimitsFrom(f *testing.F) {
	f.Add(uint32(512), uint32(512), uint32(1280), uint32(1280), uint32(128), uint32(65536), "write back", false, "none", 0)
	f.Add(uint32(4096), uint32(0), uint32(0), uint32(0), uint32(0), uint32(0), "", false, "", 0)
	f.Add(uint32(1024), uint32(4096), uint32(64), uint32(32), uint32(1), uint32(4096), "write through", true, "kyber", 1)
	f.Fuzz(func(t *testing.T, lbs, pbs, maxKB, hwKB, segs, segSize uint32, wc string, fua bool, sched string, nomerges int) {
		a := QueueAttrs{LogicalBlockSize: lbs, PhysicalBlockSize: pbs, MaxSectorsKB: maxKB, MaxHWSectorsKB: hwKB,
			MaxSegments: segs, MaxSegmentSize: segSize, WriteCache: wc, FUA: fua, Scheduler: sched, NoMerges: nomerges}
		l, err := LoopLimitsFrom(a)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidConfig)
			return
		}
		require.NoError(t, l.Validate())
		assert.Equal(t, lbs, l.LogicalBlockSize)
		if maxKB != 0 {
			assert.Equal(t, 2*maxKB, l.MaxSectors)
		}
		assert.Equal(t, wc != WriteCacheThrough, l.WriteCache)
		assert.Equal(t, fua, l.FUA)
		assert.Equal(t, Version618, l.Version)
		disk, err := NewMemDisk("loop8", uint64(lbs)*64, lbs)
		require.NoError(t, err)
		_, err = NewQueue("", disk, Null{}, l)
		require.NoError(t, err)
	})
}

// bioEventLog is an eventLog that is a BioTracer: it logs TraceBio's
// arguments as the event they stand for, and counts them.
type bioEventLog struct {
	eventLog
	bios int
}

// TraceBio implements BioTracer.
func (l *bioEventLog) TraceBio(k TraceKind, op Op, flags BioFlags, sector, bytes uint64) {
	l.bios++
	l.Trace(TraceEvent{Kind: k, Op: op, Flags: flags, Sector: sector, Bytes: bytes})
}

// TestTracerKinds: a queue reporting only some kinds reports exactly the
// events of those kinds that a queue reporting all of them reports, in the
// same order, with the same fields; a BioTracer gets through TraceBio what
// a Tracer gets through Trace; none with an empty set or no tracer.
func TestTracerKinds(t *testing.T) {
	elevator := LoopLimits(512)
	elevator.Elevator = true
	type bio struct {
		op     Op
		flags  BioFlags
		sector uint64
		n      uint32
	}
	workloads := []struct {
		name string
		lim  Limits
		bios []bio
	}{
		{"merges, a split and flushes", LoopLimits(512), []bio{
			{OpWrite, FlagSync, 8, 4096}, {OpWrite, FlagSync, 0, 4096}, {OpWrite, FlagSync, 16, 4096},
			{OpRead, 0, 4096, 2 << 20}, {OpWrite, FlagPreflush | FlagSync, 0, 0},
			{OpWrite, FlagPreflush | FlagFUA, 64, 4096}}},
		{"a scheduler's inserts", elevator, []bio{
			{OpWrite, 0, 0, 4096}, {OpWrite, 0, 8, 4096}, {OpWrite, 0, 100, 4096}}},
	}
	sets := []TraceKinds{
		TraceKindsOf(TraceBioQueue, TraceSplit, TraceRqIssue),
		TraceKindsOf(TracePlug, TraceUnplug),
		TraceKindsOf(TraceRqInsert),
		TraceKindsOf(TraceRqComplete, TraceGetRq, TraceBioBackmerge, TraceBioFrontmerge),
		0,
	}
	run := func(lim Limits, bios []bio, tr Tracer, kinds TraceKinds) {
		q := newQueue(t, "q", 64<<20, Null{}, lim)
		q.SetTracerKinds(tr, kinds)
		c := newCompletions()
		var p Plug
		p.Start()
		for i, b := range bios {
			SubmitBio(&p, q, c.flagBio(i, b.op, b.flags, b.sector, b.n, uint64(100+2*i)))
		}
		require.NoError(t, p.Finish())
		require.Len(t, c.order, len(bios), "every bio completes")
	}
	var seen TraceKinds
	for _, w := range workloads {
		all := &eventLog{}
		run(w.lim, w.bios, all, AllTraceKinds)
		for _, e := range *all {
			seen |= TraceKindsOf(e.Kind)
		}
		for _, s := range sets {
			t.Run(fmt.Sprintf("%s/%#x", w.name, uint16(s)), func(t *testing.T) {
				want := []TraceEvent{}
				for _, e := range *all {
					if s.Has(e.Kind) {
						want = append(want, e)
					}
				}
				got := &eventLog{}
				run(w.lim, w.bios, got, s)
				assert.Equal(t, want, []TraceEvent(*got))
			})
		}
		t.Run(w.name+"/BioTracer", func(t *testing.T) {
			got := &bioEventLog{}
			run(w.lim, w.bios, got, AllTraceKinds)
			assert.Equal(t, []TraceEvent(*all), []TraceEvent(got.eventLog), "TraceBio's events are Trace's")
			assert.Positive(t, got.bios, "the bio tracepoints came through TraceBio")
		})
		t.Run(w.name+"/no tracer", func(t *testing.T) {
			run(w.lim, w.bios, nil, AllTraceKinds) // must not call a nil tracer
		})
	}
	assert.Equal(t, AllTraceKinds, seen, "the workloads hit every tracepoint")
	assert.False(t, TraceKindsOf(TraceBioQueue).Has(TraceSplit))
}
