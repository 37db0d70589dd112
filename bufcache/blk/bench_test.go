package blk

import (
	"fmt"
	"testing"
)

// benchSubmit submits b.N metadata-only write bios of bsize bytes with flags
// through a plug to q, each step sectors after the previous (step = bsize
// sectors: a sequential stream; twice that: a gap after each bio), and reports
// the requests per bio.
func benchSubmit(b *testing.B, q *Queue, bsize uint32, merge string, flags BioFlags) {
	step := uint64(bsize >> SectorShift)
	if merge == "new" {
		step *= 2
	}
	bios := make([]Bio, 8192) // more than a full plug holds
	for i := range bios {
		bios[i].Reset(OpWrite, 0)
		bios[i].Flags = flags
		pos := uint64(i) * uint64(bsize)
		bios[i].AddPage(nil, bsize, pos/4096, uint32(pos%4096))
		bios[i].EndIO = func(*Bio) {}
	}
	var p Plug
	p.Start()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		bio := &bios[i%len(bios)]
		bio.Sector = uint64(i) * step % (1 << 30)
		SubmitBio(&p, q, bio)
	}
	if err := p.Finish(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(q.Stats().Write.Requests)/float64(b.N), "requests/op")
}

// BenchmarkSubmitBio measures SubmitBio through a plug on a Null-model queue,
// metadata-only: merge=back submits a sequential stream (every bio but the
// first of a request back-merges), merge=new leaves a gap after each bio (every
// bio is a new request, and every 16th flushes the plug).
func BenchmarkSubmitBio(b *testing.B) {
	for _, merge := range []string{"back", "new"} {
		for _, bsize := range []uint32{512, 4096} {
			b.Run(fmt.Sprintf("merge=%s/bsize=%d", merge, bsize), func(b *testing.B) {
				benchSubmit(b, newQueue(b, "sda", 1<<40, Null{}, DefaultLimits(512, 4096)), bsize, merge, 0)
			})
		}
	}
}

// kindCounter is a Tracer that counts events by kind, allocating nothing.
type kindCounter [TraceUnplug + 1]uint64

// Trace implements Tracer.
func (c *kindCounter) Trace(e TraceEvent) { c[e.Kind]++ }

// bioKindCounter is a kindCounter that is a BioTracer.
type bioKindCounter struct{ kindCounter }

// TraceBio implements BioTracer.
func (c *bioKindCounter) TraceBio(k TraceKind, _ Op, _ BioFlags, _, _ uint64) { c.kindCounter[k]++ }

// BenchmarkSubmitBioLoop618 is BenchmarkSubmitBio on a 6.18 loop device
// (LoopLimits: v6.18 merges and plug, write throttling) with 4 KiB REQ_SYNC
// writes as fsync's writeback submits them, with no tracer (trace=none),
// with one that counts every event (all), and with one that counts only
// block_bio_queue, block_split and block_rq_issue (three: what the
// workload engine's clock reads, SetTracerKinds), as a Tracer and as a
// BioTracer (three-bio: how the clock reads them). merge=new makes every
// 17th request wait in write throttling, which flushes the plug.
func BenchmarkSubmitBioLoop618(b *testing.B) {
	three := TraceKindsOf(TraceBioQueue, TraceSplit, TraceRqIssue)
	sets := []struct {
		name  string
		kinds TraceKinds
		bio   bool
	}{{"none", 0, false}, {"all", AllTraceKinds, false}, {"three", three, false}, {"three-bio", three, true}}
	for _, merge := range []string{"back", "new"} {
		for _, set := range sets {
			b.Run(fmt.Sprintf("merge=%s/trace=%s", merge, set.name), func(b *testing.B) {
				q := newQueue(b, "loop8", 1<<40, Null{}, LoopLimits(512))
				var kinds bioKindCounter
				if set.bio {
					q.SetTracerKinds(&kinds, set.kinds)
				} else {
					q.SetTracerKinds(&kinds.kindCounter, set.kinds)
				}
				benchSubmit(b, q, 4096, merge, FlagSync)
			})
		}
	}
}

// BenchmarkHDDModel measures one Service call of the WD8003FFBX model.
func BenchmarkHDDModel(b *testing.B) {
	for _, pattern := range []string{"seq", "random"} {
		b.Run("pattern="+pattern, func(b *testing.B) {
			var m Model = WD8003FFBX()
			var prev uint64
			var sum float64
			b.ReportAllocs()
			for i := range b.N {
				sector := prev
				if pattern == "random" {
					sector = uint64(i) * 7919 % (1 << 34)
				}
				sum += m.Service(prev, true, OpWrite, sector, 1024)
				prev = sector + 1024
			}
			b.ReportMetric(sum/float64(b.N), "sim-ns/op")
		})
	}
}

// BenchmarkBioAddPage measures what submit_bh does to a recycled bio:
// Reset, then AddPage of one buffer, data-less (meta) or with its bytes
// (data).
func BenchmarkBioAddPage(b *testing.B) {
	for _, data := range []bool{false, true} {
		b.Run(fmt.Sprintf("data=%v", data), func(b *testing.B) {
			var bio Bio
			var buf []byte
			if data {
				buf = make([]byte, 512)
			}
			b.ReportAllocs()
			pfn := uint64(0)
			for b.Loop() {
				bio.Reset(OpWrite, pfn)
				bio.AddPage(buf, 512, pfn, 512)
				pfn++
			}
		})
	}
}
