package bufcache

import (
	"sync/atomic"

	"github.com/bhsim/bhsim/internal/enum"
)

// TraceKind says which kernel tracepoint a TraceEvent mirrors. The names are
// the tracepoints' (include/trace/events/filemap.h, readahead, writeback.h,
// block.h, v6.18), so that a runner derives from the model the counters it
// derives from the host's trace (bench/host).
type TraceKind uint8

const (
	// TraceFolioAdd is mm_filemap_add_to_page_cache: a folio of Order at
	// Index entered the page cache (Pages = 1 << Order).
	TraceFolioAdd TraceKind = iota
	// TraceFolioRemove is mm_filemap_delete_from_page_cache: the folio at
	// Index, of Order, left it.
	TraceFolioRemove
	// TraceFolioDirty is writeback_dirty_folio: the folio at Index went from
	// clean to dirty (__folio_mark_dirty).
	TraceFolioDirty
	// TraceBufferDirty is block_dirty_buffer: mark_buffer_dirty was called
	// on the buffer of block Index (b_blocknr), whose b_size is Pages bytes.
	// It fires on every call, whether the buffer was dirty or not, as the
	// tracepoint does.
	TraceBufferDirty
	// TraceRASync is page_cache_sync_ra: a read missed at Index, wanting
	// Pages pages (req_count).
	TraceRASync
	// TraceRAAsync is page_cache_async_ra: a read hit the readahead mark of
	// the folio at Index, wanting Pages pages.
	TraceRAAsync
	// TraceRAOrder is page_cache_ra_order: a readahead window of Pages pages
	// from Index, asking for folios of Order (ra->order as the caller left
	// it, before page_cache_ra_order clamps it).
	TraceRAOrder
	// TraceRAUnbounded is page_cache_ra_unbounded: Pages pages (nr_to_read)
	// from Index read with folios of the mapping's minimum order.
	TraceRAUnbounded
	// TraceWBErrSet is filemap_set_wb_err: writeback failed and Err was
	// recorded in the mapping's errseq.
	TraceWBErrSet
	// TraceWBErrReport is file_check_and_advance_wb_err when the file's
	// cursor moves: Err is reported to a File (nil: the cursor moved past an
	// error another file already saw).
	TraceWBErrReport
	// NumTraceKinds is the number of kinds.
	NumTraceKinds
)

// traceNames names the kinds after their tracepoints.
var traceNames = enum.New[TraceKind]("trace", []string{
	TraceFolioAdd:    "mm_filemap_add_to_page_cache",
	TraceFolioRemove: "mm_filemap_delete_from_page_cache",
	TraceFolioDirty:  "writeback_dirty_folio",
	TraceBufferDirty: "block_dirty_buffer",
	TraceRASync:      "page_cache_sync_ra",
	TraceRAAsync:     "page_cache_async_ra",
	TraceRAOrder:     "page_cache_ra_order",
	TraceRAUnbounded: "page_cache_ra_unbounded",
	TraceWBErrSet:    "filemap_set_wb_err",
	TraceWBErrReport: "file_check_and_advance_wb_err",
}...)

// String returns the tracepoint's name ("trace(n)" for another value).
func (k TraceKind) String() string { return traceNames.String(k) }

// TraceEvent is one page-cache event: which tracepoint (Kind), on which
// device and CPU, and its arguments. Fields a kind does not use are zero.
type TraceEvent struct {
	Kind TraceKind
	// Dev is the device whose page cache the event concerns.
	Dev *BlockDevice
	// CPU is the simulated CPU the event happened on.
	CPU int
	// Index is a page index (folios, readahead) or a block number
	// (TraceBufferDirty).
	Index uint64
	// Order is a folio order (TraceFolioAdd, TraceFolioRemove,
	// TraceFolioDirty) or the order readahead asks for (TraceRAOrder).
	Order uint8
	// Pages is a folio's or a window's length in pages; for
	// TraceBufferDirty, the buffer's size in bytes.
	Pages uint64
	// Err is the writeback error of TraceWBErrSet and TraceWBErrReport.
	Err error
}

// Tracer receives page-cache events. Trace is called synchronously on the
// goroutine driving the event's CPU, so a Tracer shared by several CPUs must
// be safe for concurrent use. The event is passed by value: tracing
// allocates nothing.
type Tracer interface {
	Trace(TraceEvent)
}

// tracerBox holds a Tracer behind an atomic pointer, so that tracing can be
// switched on and off while CPUs run.
type tracerBox struct{ t Tracer }

// tracerSlot is where a machine or a device keeps its tracer.
type tracerSlot struct{ p atomic.Pointer[tracerBox] }

// set installs t (nil switches tracing off).
func (s *tracerSlot) set(t Tracer) {
	if t == nil {
		s.p.Store(nil)
		return
	}
	s.p.Store(&tracerBox{t})
}

// get returns the installed tracer, or nil.
func (s *tracerSlot) get() Tracer {
	if b := s.p.Load(); b != nil {
		return b.t
	}
	return nil
}

// SetTracer makes t receive the page-cache events of every device of m that
// has no tracer of its own (nil: none). Safe while CPUs run; events already
// under way may still reach the previous tracer.
func (m *Machine) SetTracer(t Tracer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tracer.set(t)
	for _, d := range m.devices {
		d.updateTracer()
	}
}

// SetTracer makes t receive the page-cache events of d, in place of the
// machine's tracer (nil: the machine's again).
func (d *BlockDevice) SetTracer(t Tracer) {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	d.ownTracer = t
	d.updateTracer()
}

// updateTracer installs the tracer d's events go to: its own, or the
// machine's. The caller holds the machine's mu.
func (d *BlockDevice) updateTracer() {
	if d.ownTracer != nil {
		d.tracer.set(d.ownTracer)
		return
	}
	d.tracer.set(d.m.tracer.get())
}

// tracing returns the tracer of d's events (its own or the machine's) or
// nil: one atomic load, inlined where an event may be traced, so that an
// untraced device builds no event.
func (d *BlockDevice) tracing() Tracer { return d.tracer.get() }

// emit sends ev, completed with the device and CPU, to t (d's tracing()).
// Callers test tracing() first, so an untraced event is not even built:
//
//	if t := d.tracing(); t != nil {
//		d.emit(t, cpu, TraceEvent{...})
//	}
func (d *BlockDevice) emit(t Tracer, cpu *CPU, ev TraceEvent) {
	ev.Dev, ev.CPU = d, cpu.id
	t.Trace(ev)
}
