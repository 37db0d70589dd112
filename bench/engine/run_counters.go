package engine

import (
	"sync"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// counting turns the model's trace events — the page cache's
// (bufcache.Tracer) and the block layer's (blk.Tracer) — into the counters
// the kernel runner derives from the host's tracepoints, through the same
// vocabulary (counters.go: each Count* function names the tracepoint it
// mirrors), one operation at a time.
type counting struct {
	mu      sync.Mutex
	cs      scenario.CounterSet
	writing bool // inside a pwrite: read bios are read-modify-write reads
}

// Trace implements bufcache.Tracer.
func (c *counting) Trace(ev bufcache.TraceEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs := &c.cs
	switch ev.Kind {
	case bufcache.TraceFolioAdd:
		scenario.CountFolioAdd(cs, uint(ev.Order))
	case bufcache.TraceFolioRemove:
		scenario.CountFolioRemove(cs, uint(ev.Order))
	case bufcache.TraceFolioDirty:
		scenario.CountFolioDirty(cs)
	case bufcache.TraceBufferDirty:
		scenario.CountBufferDirty(cs)
	case bufcache.TraceRASync:
		scenario.CountReadaheadSync(cs)
	case bufcache.TraceRAAsync:
		scenario.CountReadaheadAsync(cs)
	case bufcache.TraceRAOrder:
		scenario.CountReadaheadOrder(cs, uint(ev.Order), ev.Pages)
	case bufcache.TraceRAUnbounded:
		scenario.CountReadaheadUnbounded(cs, ev.Pages)
	case bufcache.TraceWBErrSet:
		scenario.CountWBErrSet(cs)
	case bufcache.TraceWBErrReport:
		scenario.CountWBErrReport(cs)
	}
}

// blockTracer adapts counting to the queue's tracer.
type blockTracer struct{ c *counting }

// opDir is a block-layer operation's direction.
func opDir(op blk.Op) scenario.Dir {
	switch op {
	case blk.OpRead:
		return scenario.DirRead
	case blk.OpWrite:
		return scenario.DirWrite
	case blk.OpFlush:
		return scenario.DirFlush
	}
	return scenario.DirOther
}

// Trace implements blk.Tracer.
func (t blockTracer) Trace(e blk.TraceEvent) {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	cs := &c.cs
	preflush, fua := e.Flags&blk.FlagPreflush != 0, e.Flags&blk.FlagFUA != 0
	switch e.Kind {
	case blk.TraceBioQueue:
		scenario.CountBioQueued(cs, scenario.BioQueued{Dir: opDir(e.Op), Bytes: e.Bytes, Preflush: preflush, FUA: fua,
			Ahead: e.Flags&blk.FlagRahead != 0, InWrite: c.writing})
	case blk.TraceBioBackmerge:
		scenario.CountMerge(cs, scenario.MergeBack)
	case blk.TraceBioFrontmerge:
		scenario.CountMerge(cs, scenario.MergeFront)
	case blk.TraceSplit:
		scenario.CountBioSplit(cs)
	case blk.TraceGetRq:
		scenario.CountGetRq(cs)
	case blk.TraceRqInsert:
		scenario.CountRqInsert(cs)
	case blk.TraceRqIssue:
		scenario.CountRqIssued(cs, scenario.RqIssued{Dir: opDir(e.Op), Bytes: e.Bytes, Sectors: e.Bytes / 512, Preflush: preflush, FUA: fua})
	case blk.TraceRqComplete:
		scenario.CountRqComplete(cs, blk.Errno(e.Err))
	case blk.TracePlug:
		if !e.Worker { // the host runner counts the task's plugs only
			scenario.CountPlug(cs)
		}
	case blk.TraceUnplug:
		if !e.Worker {
			scenario.CountUnplug(cs, uint64(e.Count))
		}
	}
}

// stat adds the sysfs stat counters of the interval from before to now.
func (c *counting) stat(before, now blk.BlockStat) {
	c.mu.Lock()
	defer c.mu.Unlock()
	scenario.CountStat(&c.cs, diskStat(before), diskStat(now))
}

// diskStat is the part of a queue's statistics the stat.* counters keep.
func diskStat(s blk.BlockStat) scenario.DiskStat {
	return scenario.DiskStat{ReadIOs: s.ReadIOs, ReadMerges: s.ReadMerges, ReadSectors: s.ReadSectors,
		WriteIOs: s.WriteIOs, WriteMerges: s.WriteMerges, WriteSectors: s.WriteSectors, FlushIOs: s.FlushIOs}
}

// take returns the counters since the last take and starts anew.
func (c *counting) take() scenario.Counters {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs := c.cs.Counters()
	c.cs = scenario.CounterSet{}
	return cs
}

// setWriting marks whether a pwrite is running (for rmw.read.*).
func (c *counting) setWriting(on bool) {
	c.mu.Lock()
	c.writing = on
	c.mu.Unlock()
}
