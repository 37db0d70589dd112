package engine

import (
	"fmt"
	"io"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// StepOptions turn on Run's step mode, for teaching in the manner of the
// OSTEP simulators: after each operation a short block on W — the
// operation, whether each page it touched was cached (HIT) or not (MISS),
// its cost and the bios it submitted (the answers), then the state: the
// touched pages' buffer rings with each buffer's state bits, the CPU's bh
// LRU slots, the dirty folios and the requests still in flight. With Quiz
// the answers print as "?" (a problem to work out by hand); with Show as
// well they print (its answer key). Step mode costs an allocation or two
// per operation: it is for short workloads.
type StepOptions struct {
	W          io.Writer
	Quiz, Show bool
}

// FreshStepProblem is the generator spec (source.ParseGenerator) of a fresh
// step-mode problem, `bhsim run --step -s SEED` without a workload: a small
// class problem of reads, writes and syncs on two CPUs, which the seed
// makes different and repeatable.
const FreshStepProblem = "random:dev=64K,n=8,size=512-4K,sizestep=512,reads=0.3,fsync=3,cpus=2"

// stepMaxPages and stepMaxBios bound what one block shows.
const (
	stepMaxPages = 4
	stepMaxBios  = 8
)

// pageAccess is whether a page was cached before an operation.
type pageAccess struct {
	page uint64
	word string // HIT, MISS, MISS (cached, not uptodate)
}

// stepper prints step mode's blocks.
type stepper struct {
	e       *engine
	o       StepOptions
	err     error
	access  []pageAccess // each touched page before the op
	reqDone []float64    // completion times of requests, for "in flight"
	// bioList and discards are the operation's bios: its calls' block
	// steps' bios (noteSteps) and a discard's.
	bioList  []blockStep
	discards [][2]uint64
}

// newStepper returns e's stepper, which prints the run's header first.
func newStepper(e *engine, o StepOptions) *stepper {
	s := &stepper{e: e, o: o}
	s.printf("%s\n", e.result(false).Header())
	return s
}

// printf writes unless a write failed (the first error is Run's).
func (s *stepper) printf(format string, args ...any) {
	if s.err == nil {
		_, s.err = fmt.Fprintf(s.o.W, format, args...)
	}
}

// pages are the page indexes rec touches (at most stepMaxPages).
func (s *stepper) pages(rec source.IO) []uint64 {
	if !rec.Kind.HasData() {
		return nil
	}
	ps := uint64(s.e.mr.m.PageSize())
	var out []uint64
	for p := rec.Offset / ps; p <= (rec.End()-1)/ps && len(out) < stepMaxPages; p++ {
		out = append(out, p)
	}
	return out
}

// before notes whether each page rec touches is cached and uptodate.
func (s *stepper) before(_ int, rec source.IO, _ float64) {
	s.access = s.access[:0]
	s.bioList, s.discards = s.bioList[:0], s.discards[:0]
	ps := uint64(s.e.mr.m.PageSize())
	for _, p := range s.pages(rec) {
		f := s.e.mr.dev.PeekFolio(p * ps)
		word := "MISS"
		if f != nil && f.Has(bufcache.FolioUptodate) {
			word = "HIT"
		} else if f != nil {
			word = "MISS (cached, not uptodate)"
		}
		s.access = append(s.access, pageAccess{p, word})
	}
}

// after prints the operation's block.
func (s *stepper) after(i int, rec source.IO, start, cpuNS, done float64, err error) {
	e := s.e
	hide := s.o.Quiz && !s.o.Show
	answer := func(v string) string {
		if hide {
			return "?"
		}
		return v
	}
	s.printf("%d. cpu%d at %s: %s\n", e.done+1, i, fmtNS(start), describeIO(rec, e.mr.dev.BlockSize()))
	if len(s.access) > 0 {
		acc := make([]string, len(s.access))
		for j, a := range s.access {
			acc[j] = fmt.Sprintf("page %d %s", a.page, answer(a.word))
		}
		s.printf("   Access: %s\n", strings.Join(acc, ", "))
	}
	result := "ok"
	if err != nil {
		result = bufcache.ErrnoOf(err).String()
	}
	s.printf("   Cost:   %s\n", answer(fmt.Sprintf("cpu %s, done at %s (latency %s), %s", fmtNS(cpuNS), fmtNS(done), fmtNS(done-start), result)))
	s.printf("   Bios:   %s\n", answer(s.bios()))
	for _, p := range s.pages(rec) {
		s.printf("   %s\n", s.page(p))
	}
	s.printf("   LRU cpu%d: %s\n", i, s.lru(i))
	s.prune(done)
	s.printf("   dirty folios %d, requests in flight %d\n\n", e.mr.dev.NrDirty(), len(s.reqDone))
}

// beforeClose starts a close's block (RunOptions.LastClose).
func (s *stepper) beforeClose() {
	s.access = s.access[:0]
	s.bioList, s.discards = s.bioList[:0], s.discards[:0]
}

// closed prints the block of cpu i's close of its file, which began at
// start, took cpuNS of its CPU and completed at done; last says it is the
// device's last close, which writes back what is dirty and drops the page
// cache.
func (s *stepper) closed(i int, last bool, start, cpuNS, done float64, err error) {
	what := "close(2) of the device"
	if last {
		what += ", its last: sync_blockdev writes back what is dirty, kill_bdev drops the page cache"
	}
	s.printf("-. cpu%d at %s: %s\n", i, fmtNS(start), what)
	result := "ok"
	if err != nil {
		result = bufcache.ErrnoOf(err).String()
	}
	answer := func(v string) string {
		if s.o.Quiz && !s.o.Show {
			return "?"
		}
		return v
	}
	s.printf("   Cost:   %s\n", answer(fmt.Sprintf("cpu %s, done at %s (latency %s), %s", fmtNS(cpuNS), fmtNS(done), fmtNS(done-start), result)))
	s.printf("   Bios:   %s\n", answer(s.bios()))
	s.prune(done)
	s.printf("   dirty folios %d, cached pages %d, requests in flight %d\n\n", s.e.mr.dev.NrDirty(), s.e.mr.dev.NrPages(), len(s.reqDone))
}

// noteRequest records a request's completion time (for "in flight").
func (s *stepper) noteRequest(t float64) { s.reqDone = append(s.reqDone, t) }

// noteSteps records the bios among an operation's block steps.
func (s *stepper) noteSteps(steps []blockStep) {
	for _, st := range steps {
		if st.kind == blk.TraceBioQueue {
			s.bioList = append(s.bioList, st)
		}
	}
}

// prune drops the requests completed by t.
func (s *stepper) prune(t float64) {
	kept := s.reqDone[:0]
	for _, d := range s.reqDone {
		if d > t {
			kept = append(kept, d)
		}
	}
	s.reqDone = kept
}

// bios lists the operation's bios as "write 8+8" (sector+sectors) with
// their flags, "none" for none; on an array each is a member's, "sdb
// write 8+8" in its sectors.
func (s *stepper) bios() string {
	list := s.bioList
	if len(list) == 0 && len(s.discards) == 0 {
		return "none"
	}
	var parts []string
	for _, d := range s.discards {
		parts = append(parts, fmt.Sprintf("discard %d+%d", d[0], d[1]))
	}
	for j, b := range list {
		if j == stepMaxBios {
			parts = append(parts, fmt.Sprintf("… %d more", len(list)-j))
			break
		}
		name := map[blk.Op]string{blk.OpRead: "read", blk.OpWrite: "write", blk.OpFlush: "flush"}[b.op]
		if s.e.mr.array != nil { // a member's bio, in its sectors
			name = MemberName(int(b.disk)) + " " + name
		}
		if b.bytes == 0 {
			parts = append(parts, name+" (empty)"+bioFlags(b.flags))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d+%d%s", name, b.sector, b.bytes/512, bioFlags(b.flags)))
	}
	return strings.Join(parts, ", ")
}

// bioFlags names a bio's REQ_ flags the way the lesson needs them.
func bioFlags(f blk.BioFlags) string {
	var fl []string
	for _, x := range []struct {
		f    blk.BioFlags
		name string
	}{{blk.FlagSync, "sync"}, {blk.FlagPreflush, "preflush"}, {blk.FlagFUA, "fua"}, {blk.FlagRahead, "ahead"}} {
		if f&x.f != 0 {
			fl = append(fl, x.name)
		}
	}
	if len(fl) == 0 {
		return ""
	}
	return " (" + strings.Join(fl, ",") + ")"
}

// page prints page p's folio and its buffer ring: "page 1: folio 1+1
// pages, uptodate dirty; buffers [4 UDM] [- U--] …", each buffer's block
// number ("-" while unmapped) and state (U uptodate, D dirty, M mapped, L
// locked, N new, '-' for a clear bit).
func (s *stepper) page(p uint64) string {
	ps := uint64(s.e.mr.m.PageSize())
	f := s.e.mr.dev.PeekFolio(p * ps)
	if f == nil {
		return fmt.Sprintf("page %d: not cached", p)
	}
	var flags []string
	for _, x := range []struct {
		f    bufcache.FolioFlag
		name string
	}{{bufcache.FolioUptodate, "uptodate"}, {bufcache.FolioDirty, "dirty"}, {bufcache.FolioWriteback, "writeback"}} {
		if f.Has(x.f) {
			flags = append(flags, x.name)
		}
	}
	if len(flags) == 0 {
		flags = append(flags, "not uptodate")
	}
	out := fmt.Sprintf("page %d: folio %d+%d pages, %s; ", p, f.Index(), f.NrPages(), strings.Join(flags, " "))
	head := f.Buffers()
	if head == nil {
		return out + "no buffers"
	}
	var bhs []string
	for bh := head; ; {
		nr := "-" // not mapped: no block number yet
		if bh.Has(bufcache.BHMapped) {
			nr = fmt.Sprint(bh.BlockNr())
		}
		bhs = append(bhs, fmt.Sprintf("[%s %s]", nr, bhLetters(bh)))
		if bh = bh.Next(); bh == nil || bh == head || len(bhs) == 16 {
			break
		}
	}
	return out + "buffers " + strings.Join(bhs, " ")
}

// bhLetters is a buffer's state as letters: U uptodate, D dirty, M mapped,
// then L locked and N new when set; '-' for a clear U, D or M.
func bhLetters(bh *bufcache.BufferHead) string {
	b := []byte("---")
	for j, x := range []struct {
		s bufcache.BHState
		c byte
	}{{bufcache.BHUptodate, 'U'}, {bufcache.BHDirty, 'D'}, {bufcache.BHMapped, 'M'}} {
		if bh.Has(x.s) {
			b[j] = x.c
		}
	}
	if bh.Has(bufcache.BHLock) {
		b = append(b, 'L')
	}
	if bh.Has(bufcache.BHNew) {
		b = append(b, 'N')
	}
	return string(b)
}

// lru lists CPU i's bh LRU slots, most recent first, as block numbers.
func (s *stepper) lru(i int) string {
	es := s.e.mr.m.LRUEntries(i)
	if len(es) == 0 {
		return "empty"
	}
	var parts []string
	for _, bh := range es {
		parts = append(parts, fmt.Sprintf("[%d]", bh.BlockNr()))
	}
	return strings.Join(parts, " ")
}

// describeIO prints a record for a person: "write 100 bytes at 5000
// (blocks 4-4 of 1K, partial)".
func describeIO(rec source.IO, bs uint32) string {
	if !rec.Kind.HasData() {
		return rec.Kind.String()
	}
	first, last, head, tail := rec.Blocks(bs)
	part := ""
	switch {
	case first == last && head:
		part = ", partial"
	case head && tail:
		part = ", partial first and last"
	case head:
		part = ", partial first"
	case tail:
		part = ", partial last"
	}
	size := scenario.FormatDDSize(rec.Length)
	if rec.Length < 1024 {
		size += " bytes"
	}
	return fmt.Sprintf("%s %s at %d (blocks %d-%d of %s%s)", rec.Kind, size, rec.Offset, first, last, scenario.FormatDDSize(uint64(bs)), part)
}

// fmtNS prints simulated nanoseconds in µs with one decimal.
func fmtNS(ns float64) string { return fmt.Sprintf("%.1f µs", ns/1e3) }
