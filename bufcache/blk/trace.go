package blk

import (
	"bufio"
	"fmt"
	"io"
)

// TraceEntry records one request dispatched to the device, like a blktrace
// "D" (issue) event.
type TraceEntry struct {
	// Seq numbers the queue's dispatched requests from 1; a gap in a trace
	// shows entries the bounded trace dropped.
	Seq uint64
	// Op, Sector and Sectors are the request's operation and sector range.
	Op      Op
	Sector  uint64
	Sectors uint64
	// Bios is the number of bio parts the request carried.
	Bios uint32
	// Segments is the request's segment count under the queue's accounting.
	Segments uint32
	// ServiceNS is the model's price for the request.
	ServiceNS float64
}

// traceRing keeps the newest len(buf) entries.
type traceRing struct {
	buf  []TraceEntry
	next int  // where the next entry goes
	full bool // buf has wrapped
}

// record stores e, overwriting the oldest entry when full; nothing when the
// trace is disabled. O(1), no allocation.
func (t *traceRing) record(e TraceEntry) {
	if len(t.buf) == 0 {
		return
	}
	t.buf[t.next] = e
	t.next++
	if t.next == len(t.buf) {
		t.next, t.full = 0, true
	}
}

// entries returns a copy of the kept entries, oldest first.
func (t *traceRing) entries() []TraceEntry {
	if !t.full {
		return append([]TraceEntry(nil), t.buf[:t.next]...)
	}
	return append(append(make([]TraceEntry, 0, len(t.buf)), t.buf[t.next:]...), t.buf[:t.next]...)
}

// EnableTrace makes the queue keep the newest n dispatched requests, dropping
// what it had recorded; n ≤ 0 disables the trace (the default). Memory is
// bounded by n entries whatever the length of the run. O(n).
func (q *Queue) EnableTrace(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.trace = traceRing{}
	if n > 0 {
		q.trace.buf = make([]TraceEntry, n)
	}
}

// Trace returns a copy of the recorded requests, oldest first. O(entries).
func (q *Queue) Trace() []TraceEntry {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.trace.entries()
}

// WriteTrace writes the recorded requests to w, oldest first, one line each in
// a blkparse-like format:
//
//	sda 7 D W 2048 + 1024 [bios 128, segs 128] 2066.0 us
//
// The fields are the queue's name, the sequence number, the action (always D,
// issued to the driver), R or W, the first sector, "+" and the number of
// sectors, the bio parts and segments the request carried, and the model's
// service time in microseconds with one decimal. It returns the first write
// error. O(entries).
func (q *Queue) WriteTrace(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, e := range q.Trace() {
		rw := 'R'
		if e.Op == OpWrite {
			rw = 'W'
		}
		fmt.Fprintf(bw, "%s %d D %c %d + %d [bios %d, segs %d] %.1f us\n",
			q.name, e.Seq, rw, e.Sector, e.Sectors, e.Bios, e.Segments, e.ServiceNS/1e3)
	}
	return bw.Flush()
}
