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
