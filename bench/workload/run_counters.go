package workload

import (
	"fmt"
	"sync"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// counting turns the model's trace events — the page cache's
// (bufcache.Tracer) and the block layer's (blk.Tracer) — into the counters
// the kernel runner derives from the host's tracepoints, under the same
// names (see docs/scenario-language.md), one operation at a time.
//
// The names mirror the tracepoints: bio.* from block_bio_queue,
// merge.back/front from block_bio_backmerge/frontmerge, rq.* from
// block_getrq, block_rq_insert, block_rq_issue and block_rq_complete,
// plug.* from block_plug/unplug, pagecache.* from mm_filemap_add_to_page_cache,
// mm_filemap_delete_from_page_cache and writeback_dirty_folio, buffer.dirty
// from block_dirty_buffer, readahead.* from page_cache_ra_order and
// page_cache_ra_unbounded, wberr.* from filemap_set_wb_err and
// file_check_and_advance_wb_err; stat.* are /sys/block/<dev>/stat deltas.
type counting struct {
	mu      sync.Mutex
	cs      CounterSet
	writing bool // inside a pwrite: read bios are read-modify-write reads
}

// Trace implements bufcache.Tracer.
func (c *counting) Trace(ev bufcache.TraceEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch ev.Kind {
	case bufcache.TraceFolioAdd:
		c.cs.Inc(fmt.Sprintf("pagecache.add.order=%d", ev.Order))
		c.cs.Add("pagecache.add.pages", ev.Pages)
	case bufcache.TraceFolioRemove:
		c.cs.Inc(fmt.Sprintf("pagecache.remove.order=%d", ev.Order))
		c.cs.Add("pagecache.remove.pages", ev.Pages)
	case bufcache.TraceFolioDirty:
		c.cs.Inc("pagecache.dirty")
	case bufcache.TraceBufferDirty:
		c.cs.Inc("buffer.dirty")
	case bufcache.TraceRASync:
		c.cs.Inc("readahead.sync")
	case bufcache.TraceRAAsync:
		c.cs.Inc("readahead.async")
	case bufcache.TraceRAOrder:
		c.cs.Inc(fmt.Sprintf("readahead.order=%d", ev.Order))
		c.cs.Inc(fmt.Sprintf("readahead.window.pages=%d", ev.Pages))
	case bufcache.TraceRAUnbounded:
		c.cs.Inc(fmt.Sprintf("readahead.unbounded.pages=%d", ev.Pages))
	case bufcache.TraceWBErrSet:
		c.cs.Inc("wberr.set")
	case bufcache.TraceWBErrReport:
		c.cs.Inc("wberr.report")
	}
}

// blockTracer adapts counting to the queue's tracer.
type blockTracer struct{ c *counting }

// opNames names a block-layer operation as the counters do.
var opNames = map[blk.Op]string{blk.OpRead: "read", blk.OpWrite: "write", blk.OpFlush: "flush"}

// Trace implements blk.Tracer.
func (t blockTracer) Trace(e blk.TraceEvent) {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	dir := opNames[e.Op]
	switch e.Kind {
	case blk.TraceBioQueue:
		c.bioQueued(dir, e)
	case blk.TraceBioBackmerge:
		c.cs.Inc("merge.back")
	case blk.TraceBioFrontmerge:
		c.cs.Inc("merge.front")
	case blk.TraceSplit:
		c.cs.Inc("bio.split")
	case blk.TraceGetRq:
		c.cs.Inc("rq.get")
	case blk.TraceRqInsert:
		c.cs.Inc("rq.insert")
	case blk.TraceRqIssue:
		c.rqIssued(dir, e)
	case blk.TraceRqComplete:
		c.cs.Inc("rq.complete")
		if e.Err != nil {
			c.cs.Inc("rq.error")
			c.cs.Inc(fmt.Sprintf("rq.error.errno=%d", blk.Errno(e.Err)))
		}
	case blk.TracePlug:
		c.cs.Inc("plug.plug")
	case blk.TraceUnplug:
		c.cs.Inc("plug.unplug")
		c.cs.Add("plug.unplug.rqs", uint64(e.Count))
	}
}

// bioQueued counts a bio entering the block layer (block_bio_queue): an
// empty write with REQ_PREFLUSH is fsync's flush, a read inside a pwrite is
// a read-modify-write read.
func (c *counting) bioQueued(dir string, e blk.TraceEvent) {
	if e.Op == blk.OpWrite && e.Bytes == 0 && e.Flags&blk.FlagPreflush != 0 {
		dir = "flush"
	}
	c.cs.Inc("bio." + dir)
	if e.Bytes > 0 {
		c.cs.Inc(fmt.Sprintf("bio.%s.bytes=%d", dir, e.Bytes))
	}
	if e.Flags&blk.FlagPreflush != 0 {
		c.cs.Inc("bio.preflush")
	}
	if e.Flags&blk.FlagFUA != 0 {
		c.cs.Inc("bio.fua")
	}
	if e.Flags&blk.FlagRahead != 0 {
		c.cs.Inc("bio.read.ahead")
	}
	if e.Op == blk.OpRead && c.writing {
		c.cs.Inc("rmw.read.bios")
		c.cs.Add("rmw.read.bytes", e.Bytes)
	}
}

// rqIssued counts a request issued to the driver (block_rq_issue): its
// size, its sectors, and whether it carries a preflush or FUA.
func (c *counting) rqIssued(dir string, e blk.TraceEvent) {
	c.cs.Inc("rq." + dir)
	if e.Op == blk.OpFlush {
		return
	}
	c.cs.Inc(fmt.Sprintf("rq.%s.bytes=%d", dir, e.Bytes))
	c.cs.Add("sectors."+map[blk.Op]string{blk.OpRead: "read", blk.OpWrite: "written"}[e.Op], e.Bytes/512)
	if e.Flags&blk.FlagPreflush != 0 {
		c.cs.Inc("rq." + dir + ".preflush")
	}
	if e.Flags&blk.FlagFUA != 0 {
		c.cs.Inc("rq." + dir + ".fua")
	}
}

// stat adds the sysfs stat counters of the interval from before to now.
func (c *counting) stat(before, now blk.BlockStat) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range []struct {
		name string
		v    uint64
	}{
		{"stat.read.ios", now.ReadIOs - before.ReadIOs}, {"stat.read.merges", now.ReadMerges - before.ReadMerges},
		{"stat.read.sectors", now.ReadSectors - before.ReadSectors},
		{"stat.write.ios", now.WriteIOs - before.WriteIOs}, {"stat.write.merges", now.WriteMerges - before.WriteMerges},
		{"stat.write.sectors", now.WriteSectors - before.WriteSectors},
		{"stat.flush.ios", now.FlushIOs - before.FlushIOs},
	} {
		if s.v > 0 {
			c.cs.Add(s.name, s.v)
		}
	}
}

// take returns the counters since the last take and starts anew.
func (c *counting) take() Counters {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs := c.cs.Counters()
	c.cs = CounterSet{}
	return cs
}

// setWriting marks whether a pwrite is running (for rmw.read.*).
func (c *counting) setWriting(on bool) {
	c.mu.Lock()
	c.writing = on
	c.mu.Unlock()
}
