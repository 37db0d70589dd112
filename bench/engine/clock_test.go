package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/bhsim/bhsim/bufcache/blk"
)

func bio(op blk.Op, n uint64) blockStep {
	return blockStep{kind: blk.TraceBioQueue, op: op, bytes: n}
}

func rq(op blk.Op, parts int, svc float64) blockStep {
	return blockStep{kind: blk.TraceRqIssue, op: op, parts: parts, svc: svc}
}

func TestClockPlace(t *testing.T) {
	flush := blockStep{kind: blk.TraceBioQueue, op: blk.OpWrite, flags: blk.FlagPreflush}
	for _, tc := range []struct {
		name  string
		steps []blockStep
		start float64
		cpu   float64
		wait  bool
		want  placed
	}{
		{"no I/O: the CPU work alone", nil, 10, 5, true, placed{15, 15, 15}},
		{"a read waits for its request", []blockStep{bio(blk.OpRead, 4096), rq(blk.OpRead, 1, 100)}, 0, 10, false,
			placed{10, 110, 110}},
		{"a buffered write does not wait for its writeback", []blockStep{bio(blk.OpWrite, 4096), rq(blk.OpWrite, 1, 100)}, 0, 10, false,
			placed{10, 10, 110}},
		{"two bios in one request leave when the second does",
			[]blockStep{bio(blk.OpWrite, 512), bio(blk.OpWrite, 512), rq(blk.OpWrite, 2, 50)}, 0, 20, true, placed{20, 70, 70}},
		{"the disk serves requests one at a time",
			[]blockStep{bio(blk.OpWrite, 512), rq(blk.OpWrite, 1, 50), bio(blk.OpWrite, 512), rq(blk.OpWrite, 1, 50)}, 0, 20, true,
			placed{20, 110, 110}}, // 10+50, then max(20, 60)+50
		{"a flush follows the writes before it",
			[]blockStep{bio(blk.OpWrite, 4096), rq(blk.OpWrite, 1, 100), flush, rq(blk.OpFlush, 1, 30)}, 0, 10, true,
			placed{10, 135, 135}}, // write 5..105, flush sent at 105, served 105..135
		{"a split part goes with its bio", []blockStep{bio(blk.OpWrite, 8192), {kind: blk.TraceSplit, op: blk.OpWrite, bytes: 4096},
			rq(blk.OpWrite, 1, 10), rq(blk.OpWrite, 1, 10)}, 0, 10, true, placed{10, 30, 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clock{}
			got := c.place(tc.steps, tc.start, tc.cpu, tc.wait, span{})
			assert.Equal(t, tc.want, got)
			for i := range c.disks {
				assert.True(t, c.disks[i].parts.empty(), "every bio part went into a request")
			}
		})
	}
}

func TestClockPlaceAllocates(t *testing.T) {
	c := clock{}
	steps := []blockStep{bio(blk.OpWrite, 512), bio(blk.OpWrite, 512), rq(blk.OpWrite, 2, 5)}
	now := 0.0
	c.place(steps, now, 1, true, span{})
	allocs := testing.AllocsPerRun(100, func() { now = c.place(steps, now, 1, true, span{}).done })
	assert.Zero(t, allocs)
}

func TestClockReadahead(t *testing.T) {
	// A read of sectors 0..8 whose call also reads ahead 8..256: the call
	// waits for its own request, and a later read of sector 16 for the
	// readahead's.
	c := clock{}
	own := blockStep{kind: blk.TraceRqIssue, op: blk.OpRead, sector: 0, at: 0, bytes: 4096, parts: 1, svc: 100}
	ahead := blockStep{kind: blk.TraceRqIssue, op: blk.OpRead, sector: 8, at: 8, bytes: 124 << 10, parts: 1, svc: 1000}
	first := c.place([]blockStep{bio(blk.OpRead, 4096), own, bio(blk.OpRead, 124<<10), ahead}, 0, 10, false, span{0, 8})
	assert.Equal(t, placed{10, 105, 1105}, first)
	second := c.place(nil, first.done, 10, false, span{16, 24})
	assert.Equal(t, 1105.0, second.done, "waits for the readahead in flight")
	third := c.place(nil, second.done, 10, false, span{24, 32})
	assert.Equal(t, 1115.0, third.done, "the readahead has completed")
	assert.Empty(t, c.reads)
}

// TestClockCountsFoliosOnce: the write requests a place puts on the clock
// carry the pages whose writeback ended in the model since the last
// place, spread over them by their sizes, so a 4 KiB folio whose eight
// 512-byte buffers went out in two requests counts once in the pages
// written, as WB_WRITTEN counts it; without the device's count each
// request carries its bytes in pages.
func TestClockCountsFoliosOnce(t *testing.T) {
	w := func(bytes uint64, svc float64) blockStep {
		return blockStep{kind: blk.TraceRqIssue, op: blk.OpWrite, bytes: bytes, parts: 1, svc: svc}
	}
	steps := []blockStep{bio(blk.OpWrite, 2048), w(2048, 10), bio(blk.OpWrite, 2048), w(2048, 10)}
	for _, tc := range []struct {
		name          string
		ended         int64 // pages whose writeback ended with the call
		inflight, all int64 // in flight at 0, written by the end
	}{
		{"one folio, two requests", 1, 1, 1},
		{"no device count: a page a request", -1, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clock{}
			if tc.ended >= 0 {
				c.ended = func() int64 { return tc.ended }
			}
			c.place(steps, 0, 4, false, span{})
			inflight, written := c.writesAt(0)
			assert.Equal(t, tc.inflight, inflight)
			assert.Zero(t, written)
			inflight, written = c.writesAt(1e9)
			assert.Zero(t, inflight)
			assert.Equal(t, tc.all, written)
		})
	}
}

// TestClockWritesOutOfOrder: an array's members complete their writes out
// of the order they were placed in, and a sync waits for the last to
// complete, not the last placed; balance_dirty_pages's counts follow the
// completions.
func TestClockWritesOutOfOrder(t *testing.T) {
	on := func(s blockStep, disk uint8) blockStep { s.disk = disk; return s }
	c := clock{}
	steps := []blockStep{on(bio(blk.OpWrite, 8192), 0), on(rq(blk.OpWrite, 1, 1000), 0),
		on(bio(blk.OpWrite, 4096), 1), on(rq(blk.OpWrite, 1, 10), 1)}
	steps[1].bytes, steps[3].bytes = 8192, 4096
	p := c.place(steps, 0, 2, true, span{})
	assert.InDelta(t, 1001, p.ioDone, 1e-9, "the slow member's write completes last")
	assert.InDelta(t, 1001, c.lastWrite(), 1e-9, "a sync waits for it, not for the last placed")
	inflight, written := c.writesAt(500)
	assert.Equal(t, [2]int64{2, 1}, [2]int64{inflight, written}, "at 500: the fast member's page written, the slow one's two in flight")
	c.forget(500)
	inflight, written = c.writesAt(2000)
	assert.Equal(t, [2]int64{0, 3}, [2]int64{inflight, written})
}

// meterEvents decodes b into block trace events for a step meter, three
// bytes an event: its kind (a bio, a split part, a request of the bios
// queued so far, a mark or a restore), its direction and size, and its
// disk. Marks come back as their positions in the events: each opens or
// closes a flusher pass inside the call.
func meterEvents(b []byte) (events []blk.TraceEvent, disks []uint8, marks map[int]bool) {
	marks = map[int]bool{}
	sizes := []uint64{0, 512, 512, 4096, 1024}
	var parts [4]int // the bio parts queued on each disk and not yet in a request
	for i := 0; i+2 < len(b); i += 3 {
		op := blk.OpWrite
		if b[i+1]&1 != 0 {
			op = blk.OpRead
		}
		size := sizes[int(b[i+1]>>1)%len(sizes)]
		var flags blk.BioFlags
		if size == 0 {
			flags = blk.FlagPreflush
		}
		d := b[i+2] % 4
		switch b[i] % 6 {
		case 0, 1, 2:
			events = append(events, blk.TraceEvent{Kind: blk.TraceBioQueue, Op: op, Flags: flags, Sector: uint64(i), Bytes: size})
			if size > 0 {
				parts[d]++
			}
		case 3:
			if parts[d] == 0 {
				continue
			}
			events = append(events, blk.TraceEvent{Kind: blk.TraceSplit, Op: op, Sector: uint64(i), Bytes: 512})
			parts[d]++
		case 4:
			if parts[d] == 0 {
				continue
			}
			events = append(events, blk.TraceEvent{Kind: blk.TraceRqIssue, Op: op, Sector: uint64(i), Bytes: 4096, Count: parts[d], ServiceNS: float64(10 + b[i+1])})
			parts[d] = 0
		case 5: // a pass's requests take only its own bios
			marks[len(events)] = true
			parts = [4]int{}
			continue
		}
		disks = append(disks, d)
	}
	return events, disks, marks
}

// meterPlaced feeds events to a meter, with runs or not, and places its
// steps on a fresh clock: what the clock gives, and the meter's counts of
// the call's own steps. A mark opens a pass inside the call, the next
// closes it: the pass's steps are placed on their own and taken back out
// of the call's (restore), as the flusher's are.
func meterPlaced(events []blk.TraceEvent, disks []uint8, marks map[int]bool, runs bool) (out []placed, steps, queued, issued, bios int) {
	m := stepMeter{runs: runs}
	c := clock{}
	var pass *meterMark
	closePass := func(at float64) {
		out = append(out, c.place(m.steps[pass.steps:], at, 5, false, span{}))
		m.restore(*pass)
		pass = nil
	}
	for i, e := range events {
		if marks[i] {
			if pass != nil {
				closePass(float64(i))
			} else {
				mk := m.mark()
				pass = &mk
			}
		}
		m.disk = disks[i]
		m.Trace(e)
	}
	if pass != nil {
		closePass(float64(len(events)))
	}
	for _, s := range m.steps {
		steps++
		if s.kind == blk.TraceBioQueue {
			bios += s.bios()
		}
	}
	out = append(out, c.place(m.steps, 1000, 50, true, span{}))
	for i := range c.disks {
		out = append(out, placed{c.disks[i].free, c.disks[i].busy, float64(len(c.disks[i].parts.live()))})
	}
	return out, steps, m.queued, m.issued, bios
}

// TestStepMeterRuns runs consecutive bios of one disk, direction, flags
// and size into one step, and bios in turn to several disks into a step a
// disk, and the clock places them exactly as it places them one by one:
// the same times, counts and bios; a bio never joins a step from before a
// mark, nor an empty flush.
func TestStepMeterRuns(t *testing.T) {
	for _, tc := range []struct {
		name      string
		events    []byte
		wantSteps int // with runs
	}{
		{"eight buffers' bios, one request", []byte{0, 2, 0, 0, 2, 0, 0, 2, 0, 0, 2, 0, 0, 2, 0, 0, 2, 0, 0, 2, 0, 0, 2, 0, 4, 0, 0}, 2},
		{"sizes and directions part runs", []byte{0, 2, 0, 0, 2, 0, 0, 6, 0, 0, 6, 0, 0, 3, 0, 0, 3, 0, 4, 0, 0}, 4},
		{"disks part runs", []byte{0, 2, 0, 0, 2, 1, 0, 2, 1, 4, 0, 0, 4, 0, 1}, 4},
		{"bios in turn to two disks: a step each", []byte{0, 2, 0, 0, 2, 1, 0, 2, 0, 0, 2, 1, 0, 2, 0, 0, 2, 1, 0, 2, 0, 4, 0, 0, 4, 0, 1}, 4},
		{"in turn to three disks, the last round cut short", []byte{0, 2, 0, 0, 2, 1, 0, 2, 2, 0, 2, 0, 0, 2, 1, 0, 2, 2, 0, 2, 0, 4, 0, 0, 4, 0, 1, 4, 0, 2}, 6},
		{"a bio out of turn ends the turn", []byte{0, 2, 0, 0, 2, 1, 0, 2, 0, 0, 2, 1, 0, 2, 1, 0, 2, 0, 4, 0, 0, 4, 0, 1}, 6},
		{"a turn may hold two sizes", []byte{0, 2, 0, 0, 2, 1, 0, 6, 0, 0, 2, 1, 4, 0, 0, 4, 0, 1}, 5},
		{"empty flushes stay apart", []byte{0, 0, 0, 0, 0, 0, 0, 2, 0, 4, 0, 0}, 4},
		{"a split part follows its run", []byte{0, 2, 0, 0, 2, 0, 3, 0, 0, 0, 2, 0, 4, 0, 0}, 4},
		{"a pass's bios do not join the call's run", []byte{0, 2, 0, 0, 2, 0, 5, 0, 0, 0, 2, 0, 0, 2, 0, 4, 0, 0}, 1},
		{"after a pass the call's bios start a run of their own", []byte{0, 2, 0, 5, 0, 0, 0, 2, 0, 4, 0, 0, 5, 0, 0, 0, 2, 0, 0, 2, 0, 4, 0, 0}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events, disks, marks := meterEvents(tc.events)
			wantOut, wantSteps, wantQ, wantI, wantBios := meterPlaced(events, disks, marks, false)
			gotOut, gotSteps, gotQ, gotI, gotBios := meterPlaced(events, disks, marks, true)
			assert.Equal(t, wantOut, gotOut, "placed as one by one")
			assert.Equal(t, [3]int{wantQ, wantI, wantBios}, [3]int{gotQ, gotI, gotBios}, "bio passes, requests, bios")
			assert.Equal(t, tc.wantSteps, gotSteps, "steps with runs (%d without)", wantSteps)
		})
	}
}

// FuzzStepMeterRuns holds a meter with runs to one without over any
// sequence of bios to four disks, split parts, requests, marks and
// restores.
func FuzzStepMeterRuns(f *testing.F) {
	f.Add([]byte{0, 2, 0, 0, 2, 0, 5, 0, 0, 0, 2, 0, 3, 0, 0, 4, 0, 0})
	f.Add([]byte{0, 0, 0, 1, 3, 1, 2, 6, 0, 4, 7, 1, 4, 2, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 3000 {
			return
		}
		events, disks, marks := meterEvents(b)
		wantOut, _, wantQ, wantI, wantBios := meterPlaced(events, disks, marks, false)
		gotOut, _, gotQ, gotI, gotBios := meterPlaced(events, disks, marks, true)
		assert.Equal(t, wantOut, gotOut)
		assert.Equal(t, [3]int{wantQ, wantI, wantBios}, [3]int{gotQ, gotI, gotBios})
	})
}
