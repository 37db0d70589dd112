package blk

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// byteReader decodes fuzz input; past the end it reads zeros.
type byteReader []byte

func (r *byteReader) next() byte {
	if len(*r) == 0 {
		return 0
	}
	b := (*r)[0]
	*r = (*r)[1:]
	return b
}

// fuzzBio is one submitted bio with what the oracle needs.
type fuzzBio struct {
	bio      *Bio
	disk     int
	data     []byte // the bio's memory, in order
	subLBS   bool   // some vector is not a whole number of logical blocks
	checkErr error  // CheckBio's verdict at submission
	flush    bool   // an empty preflush bio
	done     int    // completions
	err      error
}

// fuzzRig holds the queues, the plug and the oracle of one FuzzPlug run.
type fuzzRig struct {
	t      *testing.T
	lim    Limits
	qs     [2]*Queue
	flat   [2][]byte
	p      Plug
	bios   []*fuzzBio
	next   [2]uint64 // where each disk's last bio ended
	pfn    uint64
	failed uint64
	events [2]fuzzEvents
	// flagged counts the data bios submitted with a flush flag, which the
	// flush machinery takes past a scheduler.
	flagged uint64
}

// fuzzEvents counts a queue's trace events and checks what each one says.
type fuzzEvents struct {
	t      *testing.T
	lim    *Limits
	kinds  [TraceUnplug + 1]uint64
	issued [OpFlush + 1]uint64 // TraceRqIssue per operation
	unplug uint64              // requests the unplugs announced
}

// Trace implements Tracer.
func (e *fuzzEvents) Trace(ev TraceEvent) {
	e.kinds[ev.Kind]++
	switch ev.Kind {
	case TraceRqIssue:
		e.issued[ev.Op]++
		if ev.Op == OpFlush {
			require.Zero(e.t, ev.Bytes)
			require.Equal(e.t, FlagPreflush, ev.Flags)
			break
		}
		require.Positive(e.t, ev.Bytes)
		require.LessOrEqual(e.t, ev.Bytes, uint64(e.lim.MaxSectors)<<SectorShift)
		require.Zero(e.t, ev.Flags&FlagPreflush, "the preflush is the flush request's")
		if !e.lim.FUA {
			require.Zero(e.t, ev.Flags&FlagFUA, "an emulated FUA is a flush")
		}
	case TraceRqComplete:
		require.NoError(e.t, ev.Err)
	case TraceUnplug:
		require.Positive(e.t, ev.Count)
		e.unplug += uint64(ev.Count)
	case TraceBioFrontmerge:
		require.Equal(e.t, Version618, e.lim.Version, "v5.10 front merges are not modelled")
	case TraceRqInsert:
		require.True(e.t, e.lim.WriteThrottleDepth != 0 || e.lim.Elevator, "only a throttled task's plug, or a scheduler, inserts")
	}
}

const fuzzDisk = 512 << 10 // bytes per disk

func newFuzzRig(t *testing.T, in *byteReader) *fuzzRig {
	cfg := in.next()
	lbs := uint32(512)
	if cfg&1 != 0 {
		lbs = 4096
	}
	lim := DefaultLimits(lbs, max(lbs, 512<<(cfg>>1&3)))
	if cfg&8 != 0 {
		lim.SegmentAccounting = SegmentsCoalesced
	}
	lim.MaxSegments = 1 + uint32(in.next()%16)
	lim.MaxSegmentSize = 4096 << (in.next() % 3)
	minSectors := max(lim.PageSize, lim.PhysicalBlockSize) >> SectorShift
	lim.MaxSectors = minSectors * (1 + uint32(in.next()%8))
	require.NoError(t, lim.Validate())
	// The kernel: v5.10 or v6.18, a write cache with or without FUA, write
	// throttling at depth 0, 1, 2 or 16, a scheduler or none.
	kern := in.next()
	lim.Version = Version(kern & 1)
	lim.WriteCache = kern&2 != 0
	lim.FUA = lim.WriteCache && kern&4 != 0
	lim.WriteThrottleDepth = []uint32{0, 1, 2, WBTDefaultDepth}[kern>>3&3]
	lim.Elevator = kern&0x20 != 0
	require.NoError(t, lim.Validate())
	rig := &fuzzRig{t: t, lim: lim, pfn: 1}
	rig.p.MaxRequests = int(cfg >> 4)
	rig.p.NewestOnly = cfg&0x40 != 0
	for i := range rig.qs {
		rig.qs[i] = newQueue(t, []string{"sda", "sdb"}[i], fuzzDisk, Null{}, lim)
		rig.qs[i].EnableTrace(1 << 14)
		rig.events[i] = fuzzEvents{t: t, lim: &rig.lim}
		rig.qs[i].SetTracer(&rig.events[i])
		rig.flat[i] = make([]byte, fuzzDisk)
	}
	return rig
}

// overlapsInFlight reports whether [s, e) of disk d overlaps a bio not yet
// completed: the page cache never has two I/Os of one block in flight (the
// buffer is locked), and the oracle relies on that.
func (r *fuzzRig) overlapsInFlight(d int, s, e uint64) bool {
	for _, fb := range r.bios {
		if fb.done == 0 && fb.disk == d && fb.bio.Sector < e && s < fb.bio.Sector+fb.bio.Sectors() {
			return true
		}
	}
	return false
}

// submit decodes and submits one bio.
func (r *fuzzRig) submit(in *byteReader) {
	d := int(in.next() & 1)
	q := r.qs[d]
	ctl := in.next()
	op := OpWrite
	if ctl&1 != 0 {
		op = OpRead
	}
	lbs := uint64(r.lim.LogicalBlockSize)
	size := lbs * uint64(1+in.next()%24)
	sector := r.next[d]
	if ctl&2 != 0 { // a random place, sometimes past the end
		sector = uint64(in.next()) * 8 * (fuzzDisk >> SectorShift) / 1800
	}
	if ctl&4 != 0 {
		sector &^= lbs>>SectorShift - 1
	}
	// Flags: ctl bit 3 REQ_SYNC, bit 4 REQ_PREFLUSH, bit 7 REQ_FUA; a write
	// with both flush flags is an empty flush.
	var flags BioFlags
	if ctl&8 != 0 {
		flags |= FlagSync
	}
	if ctl&0x10 != 0 {
		flags |= FlagPreflush
	}
	if ctl&0x80 != 0 {
		flags |= FlagFUA
	}
	if op == OpWrite && flags&flushFlags == flushFlags {
		b := &Bio{}
		b.Reset(OpWrite, sector)
		b.Flags = FlagPreflush | flags&FlagSync
		fb := &fuzzBio{disk: d, flush: true, bio: b}
		b.EndIO = func(b *Bio) { r.complete(fb, b) }
		fb.checkErr = CheckBio(q, b)
		r.bios = append(r.bios, fb)
		SubmitBio(&r.p, q, b)
		require.Equal(r.t, 1, fb.done, "a flush completes at once")
		return
	}
	end := sector + size>>SectorShift
	if r.overlapsInFlight(d, sector, end) {
		return
	}
	r.next[d] = end

	if flags&flushFlags != 0 {
		r.flagged++
	}
	fb := &fuzzBio{disk: d, data: make([]byte, size)}
	id := len(r.bios)
	for i := range fb.data {
		fb.data[i] = byte(id*13 + i)
	}
	b := &Bio{}
	b.Reset(op, sector)
	b.Flags = flags
	b.EndIO = func(b *Bio) { r.complete(fb, b) }
	// Cut the memory into vectors at 512-byte boundaries, laid out by the
	// pattern in ctl's high bits.
	for rest := fb.data; len(rest) > 0; {
		n := min(uint32(len(rest)), 512*uint32(1+in.next()%16))
		if n%uint32(lbs) != 0 {
			fb.subLBS = true
		}
		switch ctl >> 5 & 3 {
		case 0: // contiguous frames
			b.AddPage(rest[:n], n, r.pfn, 0)
			r.pfn += uint64(n+4095) / 4096
		case 1: // scattered frames
			r.pfn += 2 + uint64(n+4095)/4096
			b.AddPage(rest[:n], n, r.pfn, 0)
		case 2: // unknown location
			b.AddVec(rest[:n], n)
		case 3: // within and across pages, continuing byte by byte
			b.AddPage(rest[:n], n, r.pfn, 512*(uint32(id)%8))
			r.pfn += uint64(512*(uint32(id)%8)+n) / 4096
		}
		rest = rest[n:]
	}
	fb.bio = b
	fb.checkErr = CheckBio(q, b)
	r.bios = append(r.bios, fb)
	SubmitBio(&r.p, q, b)
	if op == OpWrite && fb.err == nil {
		// Not failed at submission: the data reaches the disk. No bio in
		// flight overlaps it, so the oracle may take it now.
		copy(r.flat[d][sector<<SectorShift:], fb.data)
	}
}

// complete records a completion and checks a read against the oracle.
func (r *fuzzRig) complete(fb *fuzzBio, b *Bio) {
	fb.done++
	fb.err = b.Err
	if b.Err != nil {
		r.failed++
		return
	}
	if b.Op == OpRead && !fb.flush {
		s := b.Sector << SectorShift
		if !bytes.Equal(r.flat[fb.disk][s:s+uint64(b.Size())], fb.data) {
			r.t.Errorf("read of disk %d sector %d returned other data than written", fb.disk, b.Sector)
		}
	}
}

// checkPlug recomputes every plugged request from its parts.
func (r *fuzzRig) checkPlug() {
	t := r.t
	for _, rq := range r.p.Requests() {
		var runs runs
		sector := rq.Sector()
		for _, part := range rq.Bios() {
			require.Equal(t, sector, part.Bio.Sector+uint64(part.Off>>SectorShift), "parts are contiguous")
			sector += uint64(part.Len) >> SectorShift
			pr := r.lim.bioRuns(part.Bio, part.Off, part.Len)
			runs.append(&pr, r.lim.SegmentAccounting == SegmentsCoalesced, uint64(r.lim.MaxSegmentSize))
		}
		require.Equal(t, rq.Sector()+rq.Sectors(), sector)
		require.Equal(t, runs.segs, uint64(rq.Segments()))
		require.LessOrEqual(t, rq.Sectors(), uint64(r.lim.MaxSectors))
		require.LessOrEqual(t, rq.Segments(), r.lim.MaxSegments)
	}
}

// finish ends the run and checks every invariant.
func (r *fuzzRig) finish() {
	t := r.t
	for r.p.Active() {
		require.NoError(t, r.p.Finish())
	}
	lbsSectors := uint64(r.lim.LogicalBlockSize) >> SectorShift
	var okBios, okSectors, parts, splits, traced, flushes uint64
	for i, fb := range r.bios {
		require.Equal(t, 1, fb.done, "bio %d completes exactly once", i)
		switch {
		case fb.flush:
			require.NoError(t, fb.checkErr)
			require.NoError(t, fb.err)
			if r.lim.WriteCache {
				flushes++
			}
		case fb.checkErr != nil:
			require.Error(t, fb.err)
			assert.True(t, errors.Is(fb.err, ErrBeyondEnd) || errors.Is(fb.err, ErrMisaligned), "bio %d: %v", i, fb.err)
		case fb.err != nil:
			require.True(t, fb.subLBS, "bio %d failed: %v", i, fb.err)
			require.ErrorIs(t, fb.err, ErrMisaligned)
		default:
			okBios++
			okSectors += fb.bio.Sectors()
		}
	}
	for d, q := range r.qs {
		st := q.Stats()
		parts += st.Read.Bios + st.Write.Bios
		splits += st.Read.Splits + st.Write.Splits
		for _, e := range q.Trace() {
			if e.Op == OpFlush {
				continue
			}
			traced += e.Sectors
			require.Positive(t, e.Sectors)
			require.LessOrEqual(t, e.Sectors, uint64(r.lim.MaxSectors))
			require.Positive(t, e.Segments)
			require.LessOrEqual(t, e.Segments, r.lim.MaxSegments)
			require.Zero(t, e.Sector%lbsSectors)
			require.Zero(t, e.Sectors%lbsSectors)
			require.LessOrEqual(t, e.Sector+e.Sectors, q.Sectors())
		}
		got := make([]byte, fuzzDisk)
		_, err := q.store.ReadAt(got, 0)
		require.NoError(t, err)
		require.True(t, bytes.Equal(r.flat[d], got), "disk %d matches the oracle", d)
	}
	require.Equal(t, okBios, parts-splits, "every good bio was carried")
	require.Equal(t, okSectors, traced, "every good sector was traced")
	require.Equal(t, r.failed, r.qs[0].Stats().Errors+r.qs[1].Stats().Errors)
	var emptyFlushes uint64
	for d, q := range r.qs {
		st, ev := q.Stats(), &r.events[d]
		emptyFlushes += st.EmptyFlushes
		require.Equal(t, st.Read.Requests, ev.issued[OpRead])
		require.Equal(t, st.Write.Requests, ev.issued[OpWrite])
		require.Equal(t, st.Flushes, ev.issued[OpFlush])
		require.Equal(t, st.Read.Requests+st.Write.Requests+st.EmptyFlushes, ev.kinds[TraceGetRq])
		require.Equal(t, st.Read.Merges+st.Write.Merges, ev.kinds[TraceBioBackmerge]+ev.kinds[TraceBioFrontmerge])
		require.Equal(t, st.Read.FrontMerges+st.Write.FrontMerges, ev.kinds[TraceBioFrontmerge])
		require.Equal(t, st.Read.Splits+st.Write.Splits, ev.kinds[TraceSplit])
		require.GreaterOrEqual(t, ev.kinds[TraceRqComplete], ev.kinds[TraceRqIssue]+st.EmptyFlushes)
		require.LessOrEqual(t, ev.unplug, st.Read.Requests+st.Write.Requests, "only requests are unplugged")
		if data := st.Read.Requests + st.Write.Requests; r.lim.Elevator {
			require.LessOrEqual(t, ev.kinds[TraceRqInsert], data, "a request is inserted once")
			if r.flagged == 0 {
				require.Equal(t, data, ev.kinds[TraceRqInsert], "every request goes through the scheduler")
			}
		} else {
			require.LessOrEqual(t, ev.kinds[TraceRqInsert], ev.unplug)
		}
		if r.lim.WriteCache {
			require.GreaterOrEqual(t, st.Flushes, st.EmptyFlushes)
		} else {
			require.Zero(t, st.Flushes)
		}
		bs := st.BlockStat()
		require.Equal(t, st.Write.Requests+st.EmptyFlushes, bs.WriteIOs)
		require.Equal(t, st.Flushes, bs.FlushIOs)
	}
	require.Equal(t, flushes, emptyFlushes, "every empty flush on a write-back queue has a flush request")
}

func FuzzPlug(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0})
	f.Add([]byte{0x08, 3, 1, 2, 0, 0, 0x20, 7, 1, 1, 0, 0x20, 7, 1, 1, 5, 0, 1, 0x42, 9, 200, 6})
	f.Add([]byte{0x01, 15, 0, 7, 0, 1, 0x60, 23, 3, 1, 0x02, 5, 255, 0, 0, 0x04, 23, 2, 2, 2})
	f.Add([]byte{0x4f, 1, 2, 0, 0, 0, 0x40, 1, 1, 0, 1, 0x40, 1, 1, 7, 0, 0, 0x22, 11, 4, 4, 4, 6, 5})
	f.Add(bytes.Repeat([]byte{0x30, 1, 0x00, 3, 0}, 40))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := byteReader(data)
		rig := newFuzzRig(t, &in)
		rig.p.Start()
		for steps := 0; len(in) > 0 && steps < 400; steps++ {
			switch k := in.next() % 8; {
			case k < 5:
				rig.submit(&in)
			case k == 5:
				rig.p.Flush()
			case k == 6:
				rig.p.Start()
			default:
				if rig.p.Active() {
					require.NoError(t, rig.p.Finish())
				} else {
					require.ErrorIs(t, rig.p.Finish(), ErrPlugNotStarted)
					rig.p.Start()
				}
			}
			rig.checkPlug()
		}
		rig.finish()
	})
}
