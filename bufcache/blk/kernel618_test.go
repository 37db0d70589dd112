package blk

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This file replays, on a LoopLimits queue, the bio streams that Linux 6.18's
// page cache submitted in scenarios of the corpus (testdata/scenarios), and
// checks the block-layer counters the host recorded for them
// (testdata/kernel/6.18), named as the host runner names them (go doc
// ./bench/host, Counters). The streams are what docs/host-kernel.md says the
// kernel submitted: fsync's writeback is one REQ_SYNC bio per dirty buffer in
// index order inside one plug, then an empty REQ_PREFLUSH|REQ_SYNC bio unless
// the writeback failed; the last close writes back without a flush; a
// read-modify-write reads one block per bio, each in its own plug; readahead
// reads one REQ_RAHEAD bio per window, in its own plug.

// recordedDir holds the host's recorded results.
var recordedDir = filepath.Join("..", "..", "testdata", "kernel", "6.18")

// recordedCounter is one counter of a recorded result: a value, or a range
// over the runs.
type recordedCounter struct {
	Name  string  `json:"name"`
	Value *uint64 `json:"value"`
	Min   *uint64 `json:"min"`
	Max   *uint64 `json:"max"`
}

// recordedResult is the part of a recorded result the replays check.
type recordedResult struct {
	Queue struct {
		LogicalBlockSize  uint32 `json:"logical_block_size"`
		PhysicalBlockSize uint32 `json:"physical_block_size"`
		MaxSectorsKB      uint32 `json:"max_sectors_kb"`
		MaxHWSectorsKB    uint32 `json:"max_hw_sectors_kb"`
		MaxSegments       uint32 `json:"max_segments"`
		MaxSegmentSize    uint32 `json:"max_segment_size"`
		Scheduler         string `json:"scheduler"`
		WriteCache        string `json:"write_cache"`
		FUA               bool   `json:"fua"`
		NoMerges          int    `json:"nomerges"`
	} `json:"queue"`
	Ops []recordedOp `json:"ops"`
}

// recordedOp is one operation of a recorded result.
type recordedOp struct {
	Index    int               `json:"index"`
	Op       string            `json:"op"`
	Counters []recordedCounter `json:"counters"`
}

// loadRecorded reads the recorded result of scenario name.
func loadRecorded(t *testing.T, name string) *recordedResult {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(recordedDir, name+".json"))
	require.NoError(t, err)
	var r recordedResult
	require.NoError(t, json.Unmarshal(raw, &r))
	return &r
}

// attrs returns the recorded queue header as QueueAttrs.
func (r *recordedResult) attrs() QueueAttrs {
	h := r.Queue
	return QueueAttrs{LogicalBlockSize: h.LogicalBlockSize, PhysicalBlockSize: h.PhysicalBlockSize,
		MaxSectorsKB: h.MaxSectorsKB, MaxHWSectorsKB: h.MaxHWSectorsKB, MaxSegments: h.MaxSegments,
		MaxSegmentSize: h.MaxSegmentSize, WriteCache: h.WriteCache, FUA: h.FUA, Scheduler: h.Scheduler,
		NoMerges: h.NoMerges}
}

// blockCounter reports whether a counter is the block layer's (the ones this
// package must reproduce; the page cache's are bufcache's).
func blockCounter(name string) bool {
	for _, p := range []string{"bio.", "rq.", "merge.", "plug.", "sectors.", "stat."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// hostCounters derives the host runner's counters from a queue's trace, as
// bench/host does from the kernel's.
type hostCounters map[string]uint64

// Trace implements Tracer.
func (c hostCounters) Trace(e TraceEvent) {
	dir := e.Op.String()
	switch e.Kind {
	case TraceBioQueue:
		if e.Op == OpWrite && e.Bytes == 0 && e.Flags&FlagPreflush != 0 {
			dir = "flush"
		}
		c["bio."+dir]++
		if e.Bytes > 0 {
			c[fmt.Sprintf("bio.%s.bytes=%d", dir, e.Bytes)]++
		}
		if e.Flags&FlagPreflush != 0 {
			c["bio.preflush"]++
		}
		if e.Flags&FlagFUA != 0 {
			c["bio.fua"]++
		}
		if e.Flags&FlagRahead != 0 {
			c["bio.read.ahead"]++
		}
	case TraceBioBackmerge:
		c["merge.back"]++
	case TraceBioFrontmerge:
		c["merge.front"]++
	case TraceSplit:
		c["bio.split"]++
	case TraceGetRq:
		c["rq.get"]++
	case TraceRqInsert:
		c["rq.insert"]++
	case TraceRqIssue:
		c["rq."+dir]++
		if e.Op != OpFlush {
			c[fmt.Sprintf("rq.%s.bytes=%d", dir, e.Bytes)]++
			c["sectors."+map[Op]string{OpRead: "read", OpWrite: "written"}[e.Op]] += e.Bytes >> SectorShift
			if e.Flags&FlagPreflush != 0 {
				c["rq."+dir+".preflush"]++
			}
		}
		if e.Flags&FlagFUA != 0 {
			c["rq."+dir+".fua"]++
		}
	case TraceRqComplete:
		c["rq.complete"]++
		if e.Err != nil {
			c["rq.error"]++
			c[fmt.Sprintf("rq.error.errno=%d", Errno(e.Err))]++
		}
	case TracePlug:
		c["plug.plug"]++
	case TraceUnplug:
		c["plug.unplug"]++
		c["plug.unplug.rqs"] += uint64(e.Count)
	}
}

// addStat adds the difference of two /sys/block stat snapshots, as the host
// runner reads them around an operation.
func (c hostCounters) addStat(before, after BlockStat) {
	for name, d := range map[string]uint64{
		"stat.read.ios": after.ReadIOs - before.ReadIOs, "stat.read.merges": after.ReadMerges - before.ReadMerges,
		"stat.read.sectors": after.ReadSectors - before.ReadSectors, "stat.write.ios": after.WriteIOs - before.WriteIOs,
		"stat.write.merges": after.WriteMerges - before.WriteMerges, "stat.write.sectors": after.WriteSectors - before.WriteSectors,
		"stat.flush.ios": after.FlushIOs - before.FlushIOs,
	} {
		if d > 0 {
			c[name] += d
		}
	}
}

// loopRig is a 6.18 loop device, as a recorded header describes it, and the
// page-cache side of a replay: where buffers lie in memory.
type loopRig struct {
	t    *testing.T
	q    *Queue
	disk *MemDisk
	bs   uint32 // the block device's block size (BLKBSZSET)
	data bool   // bios carry data (the backing store tracks allocation by it)
	errs int    // bios completed with an error since the last count
}

// newLoopRig makes a loop device of size bytes with the header of recorded
// result r.
func newLoopRig(t *testing.T, r *recordedResult, size uint64, bs uint32) *loopRig {
	t.Helper()
	lim, err := LoopLimitsFrom(r.attrs())
	require.NoError(t, err)
	disk, err := NewMemDisk("loop8", size, lim.LogicalBlockSize)
	require.NoError(t, err)
	q, err := NewQueue("", disk, Null{}, lim)
	require.NoError(t, err)
	return &loopRig{t: t, q: q, disk: disk, bs: bs}
}

// pfnOf places page index i of the block device's page cache in memory:
// folios of 2^order pages are physically contiguous, folios are not next to
// each other.
func pfnOf(i uint64, order uint) uint64 {
	folio := i >> order
	return folio<<(order+1) + i&(1<<order-1) + 1000
}

// bio returns a bio of op over bytes [pos, pos+n) of the device, through
// folios of the given order, with flags. O(pages).
func (r *loopRig) bio(op Op, flags BioFlags, pos uint64, n uint32, order uint) *Bio {
	b := &Bio{}
	b.Reset(op, pos>>SectorShift)
	b.Flags = flags
	b.EndIO = func(b *Bio) {
		if b.Err != nil {
			r.errs++
		}
	}
	for end := pos + uint64(n); pos < end; {
		page, off := pos/DefPageSize, uint32(pos%DefPageSize)
		// One vector per folio the range crosses, as bio_add_folio adds it.
		folioEnd := (page>>order + 1) << order * DefPageSize
		m := uint32(min(end, folioEnd) - pos)
		var data []byte
		if r.data {
			data = make([]byte, m)
			for i := range data {
				data[i] = 0xe5
			}
		}
		b.AddPage(data, m, pfnOf(page, order), off)
		pos += uint64(m)
	}
	return b
}

// writeback submits one REQ_SYNC bio per dirty buffer (index order) inside
// one plug, as fsync's and the last close's writeback do, and reports whether
// every bio succeeded. order is the page-cache folio order.
func (r *loopRig) writeback(buffers []uint64, order uint) bool {
	r.errs = 0
	var p Plug
	p.Start()
	for _, i := range buffers {
		SubmitBio(&p, r.q, r.bio(OpWrite, FlagSync, i*uint64(r.bs), r.bs, order))
	}
	require.NoError(r.t, p.Finish())
	return r.errs == 0
}

// flush sends fsync's empty preflush bio (blkdev_issue_flush, FWS).
func (r *loopRig) flush() {
	b := &Bio{}
	b.Reset(OpWrite, 0)
	b.Flags = FlagPreflush | FlagSync
	b.EndIO = func(*Bio) {}
	r.q.Submit(b)
}

// fsync is writeback then, if it succeeded, the flush (a failed writeback
// makes fsync return EIO before blkdev_issue_flush).
func (r *loopRig) fsync(buffers []uint64, order uint) {
	if r.writeback(buffers, order) {
		r.flush()
	}
}

// reads submits one read bio per range in its own plug (read-modify-write
// reads, readahead windows).
func (r *loopRig) reads(flags BioFlags, order uint, ranges ...[2]uint64) {
	for _, rg := range ranges {
		var p Plug
		p.Start()
		SubmitBio(&p, r.q, r.bio(OpRead, flags, rg[0], uint32(rg[1]), order))
		require.NoError(r.t, p.Finish())
	}
}

// seq returns n buffer indices from first with the given stride.
func seq(first, n, stride uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = first + uint64(i)*stride
	}
	return out
}

// blocks returns the read ranges of n blocks of bs bytes from block first.
func blocks(first, n uint64, bs uint32) [][2]uint64 {
	out := make([][2]uint64, n)
	for i := range out {
		out[i] = [2]uint64{(first + uint64(i)) * uint64(bs), uint64(bs)}
	}
	return out
}

// replayStep is one operation of a scenario: what the page cache submits for
// it. Steps with an index are checked against that operation's recorded
// counters.
type replayStep struct {
	op  int // the recorded operation's index; 0: not checked
	run func(r *loopRig)
}

// TestReplay618 replays scenarios of the corpus and compares every
// block-layer counter of the replayed operations with the host's recording:
// exact where the runs agreed, within the range where they varied.
func TestReplay618(t *testing.T) {
	mib := seq(0, 256, 1) // 1 MiB of 4 KiB buffers
	tests := []struct {
		scenario string
		size     uint64
		bs       uint32
		data     bool
		steps    []replayStep
	}{
		{"dd-bs512", 64 << 20, 512, false, []replayStep{{5, func(r *loopRig) { r.fsync(seq(0, 2048, 1), 0) }}}},
		{"dd-bs1k", 64 << 20, 1024, false, []replayStep{{5, func(r *loopRig) { r.fsync(seq(0, 1024, 1), 0) }}}},
		{"dd-bs2k", 64 << 20, 2048, false, []replayStep{{5, func(r *loopRig) { r.fsync(seq(0, 512, 1), 0) }}}},
		{"dd-bs4k", 64 << 20, 4096, false, []replayStep{{5, func(r *loopRig) { r.fsync(mib, 0) }}}},
		{"dd-bs8k", 64 << 20, 8192, false, []replayStep{
			{4, func(r *loopRig) { r.reads(0, 1, blocks(0, 128, 8192)...) }},
			{5, func(r *loopRig) { r.fsync(seq(0, 128, 1), 1) }}}},
		{"dd-bs16k", 64 << 20, 16384, false, []replayStep{
			{4, func(r *loopRig) { r.reads(0, 2, blocks(0, 64, 16384)...) }},
			{5, func(r *loopRig) { r.fsync(seq(0, 64, 1), 2) }}}},
		{"dd-bs32k", 64 << 20, 32768, false, []replayStep{
			{4, func(r *loopRig) { r.reads(0, 3, blocks(0, 32, 32768)...) }},
			{5, func(r *loopRig) { r.fsync(seq(0, 32, 1), 3) }}}},
		{"dd-bs64k", 64 << 20, 65536, false, []replayStep{
			{4, func(r *loopRig) { r.reads(0, 4, blocks(0, 16, 65536)...) }},
			{5, func(r *loopRig) { r.fsync(seq(0, 16, 1), 4) }}}},
		{"pwrite-no-io-before-fsync", 64 << 20, 4096, false, []replayStep{{3, func(r *loopRig) { r.fsync(mib, 8) }}}},
		{"plug-write-4m", 64 << 20, 4096, false, []replayStep{{3, func(r *loopRig) { r.fsync(seq(0, 1024, 1), 4) }}}},
		{"plug-write-4m-bs512", 64 << 20, 512, false, []replayStep{{4, func(r *loopRig) { r.fsync(seq(0, 8192, 1), 4) }}}},
		{"plug-write-4k-sector", 64 << 20, 4096, false, []replayStep{{3, func(r *loopRig) { r.fsync(mib, 0) }}}},
		{"sparse-pages-bs4k", 16 << 20, 4096, false, []replayStep{{3, func(r *loopRig) { r.fsync(seq(0, 64, 2), 0) }}}},
		{"sparse-pages-bs16k", 16 << 20, 16384, false, []replayStep{
			{3, func(r *loopRig) { r.reads(0, 2, blocks(0, 8, 16384)...) }},
			{4, func(r *loopRig) { r.fsync(seq(0, 8, 2), 2) }}}},
		{"sparse-buffers-bs512", 16 << 20, 512, false, []replayStep{{4, func(r *loopRig) { r.fsync(seq(0, 4, 2), 0) }}}},
		{"sparse-buffers-bs1k", 16 << 20, 1024, false, []replayStep{{4, func(r *loopRig) { r.fsync(seq(1, 8, 4), 0) }}}},
		{"rmw-unaligned-bs1k", 16 << 20, 1024, false, []replayStep{
			{3, func(r *loopRig) { r.reads(0, 0, blocks(0, 2, 1024)...) }},
			{4, func(r *loopRig) { r.fsync(seq(0, 2, 1), 0) }}}},
		{"rewrite-bs16k", 16 << 20, 16384, false, []replayStep{
			{4, func(r *loopRig) { r.fsync(seq(0, 1, 1), 2) }},
			{6, func(r *loopRig) { r.fsync(seq(0, 1, 1), 2) }}}},
		{"last-close-syncs-dirty", 16 << 20, 4096, false, []replayStep{{3, func(r *loopRig) { r.writeback(seq(0, 16, 1), 4) }}}},
		{"openers-fsync-other-fd", 16 << 20, 4096, false, []replayStep{
			{4, func(r *loopRig) { r.fsync(seq(0, 4, 1), 2) }},
			{5, func(r *loopRig) { r.fsync(nil, 0) }}}},
		{"read-cold-4k", 64 << 20, 4096, false, []replayStep{
			{2, func(r *loopRig) { r.reads(FlagRahead, 0, [2]uint64{0, 16 << 10}) }}}},
		{"read-cold-1m", 64 << 20, 4096, false, []replayStep{ // scattered order-0 pages: the first bio splits
			{2, func(r *loopRig) {
				r.reads(FlagRahead, 0, [2]uint64{0, 1 << 20})
				r.reads(FlagRahead, 2, [2]uint64{1 << 20, 1 << 20})
			}}}},
		{"read-cold-1m", 64 << 20, 4096, false, []replayStep{ // contiguous pages: no split
			{2, func(r *loopRig) {
				r.reads(FlagRahead, 8, [2]uint64{0, 1 << 20})
				r.reads(FlagRahead, 2, [2]uint64{1 << 20, 1 << 20})
			}}}},
		{"wberr-fsync-once", 16 << 20, 4096, true, []replayStep{
			{2, func(r *loopRig) { r.disk.SetBackingFull(true) }},
			{4, func(r *loopRig) { r.fsync(seq(0, 1, 1), 0) }},
			{5, func(r *loopRig) { r.fsync(nil, 0) }}}},
		{"wberr-allocated-ok", 16 << 20, 4096, true, []replayStep{
			{3, func(r *loopRig) { r.fsync(seq(0, 1, 1), 0) }},
			{4, func(r *loopRig) { r.disk.SetBackingFull(true) }},
			{6, func(r *loopRig) { r.fsync(seq(0, 1, 1), 0) }}}},
		{"wberr-bs16k", 16 << 20, 16384, true, []replayStep{
			{3, func(r *loopRig) { r.disk.SetBackingFull(true) }},
			{5, func(r *loopRig) { r.fsync(seq(0, 1, 1), 2) }},
			{6, func(r *loopRig) { r.fsync(nil, 0) }}}},
	}
	for _, tc := range tests {
		t.Run(tc.scenario, func(t *testing.T) {
			rec := loadRecorded(t, tc.scenario)
			r := newLoopRig(t, rec, tc.size, tc.bs)
			r.data = tc.data
			for _, st := range tc.steps {
				got := hostCounters{}
				r.q.SetTracer(got)
				before := r.q.BlockStat()
				st.run(r)
				got.addStat(before, r.q.BlockStat())
				r.q.SetTracer(nil)
				if st.op == 0 {
					continue
				}
				i := slices.IndexFunc(rec.Ops, func(o recordedOp) bool { return o.Index == st.op })
				require.GreaterOrEqual(t, i, 0, "op %d", st.op)
				op := rec.Ops[i]
				want := map[string]recordedCounter{}
				for _, c := range op.Counters {
					if blockCounter(c.Name) {
						want[c.Name] = c
					}
				}
				for name, c := range want {
					lo, hi := c.bounds()
					assert.True(t, got[name] >= lo && got[name] <= hi,
						"op %d %q: %s = %d, the host recorded %d..%d", st.op, op.Op, name, got[name], lo, hi)
				}
				for name, v := range got {
					if _, ok := want[name]; !ok && v != 0 {
						assert.Failf(t, "counter the host did not record",
							"op %d %q: %s = %d, the host recorded 0", st.op, op.Op, name, v)
					}
				}
			}
		})
	}
}

// bounds returns the counter's range.
func (c recordedCounter) bounds() (uint64, uint64) {
	if c.Value != nil {
		return *c.Value, *c.Value
	}
	return *c.Min, *c.Max
}
