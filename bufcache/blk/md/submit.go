package md

import (
	"fmt"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// Submit implements blk.Device. It models md_submit_bio and the personality's
// make_request (v5.10) for a task that holds no plug: md is bio-based, so every
// bio arrives here on its own, unmerged, and costs the per-bio work the Stats
// count.
//
//   - Reads on every level, and raid0/raid10 writes, are mapped chunk by chunk
//     (raid0_make_request, raid10_make_request, raid5's chunk_aligned_read): a bio
//     crossing chunk boundaries is split (Stats.Splits), and each piece becomes one
//     member bio per copy written (raid10: both copies) or one member bio read
//     from the copy raid10's read_balance picks (see the package doc). Member
//     bios alias the parent's memory.
//   - RAID6 writes go through the stripe cache (raid5_make_request): the bio is
//     attached to the stripe_head of every PAGE_SIZE unit it touches
//     (Stats.StripeAttach), and with no plug to wait in, those stripes are
//     handled as soon as the bio is attached, in one batch: each a full-stripe
//     write or a read-modify-write / reconstruct-write with pre-reads, whichever
//     reads less (see the package doc), one 4 KiB member bio per member it reads
//     or writes. A stripe another submitter holds is waited for or handled first
//     (see SubmitPlugged).
//
// Members are driven from the calling goroutine (or, for a round of member bios
// that completes later, from the goroutine completing its last member bio). b
// completes exactly once, after every member bio it needed completed, with nil
// or an error: raid0 passes the first member error on; raid10 and raid6 mark a
// failing member faulty and complete from the other copy or from parity, and
// fail only when the redundancy is gone (ErrLastCopy, ErrDataLost). A flush
// (blk.Bio.IsFlush) completes at once: md_flush_request, which flushes every
// member, is not modelled, and the flags of data bios are not passed to the
// member bios. A bio that is empty, unaligned to the logical
// block size, reaches past the end or has an operation other than read and
// write completes with blk.CheckBio's error (blk.ErrMisaligned,
// blk.ErrBeyondEnd, blk.ErrNotSupported), and one mixing data and
// metadata-only vectors with ErrMixedData; neither is counted. A RAID6 write
// may wait for stripes other submitters are handling, so a member that
// completes only after Submit returns must not wait for the submitter's next
// RAID6 write. Allocates nothing once the array's free lists and stripe cache
// have warmed up. Complexity O(member bios · segments per bio).
func (a *Array) Submit(b *blk.Bio) { a.submit(nil, b) }

// SubmitPlugged implements blk.PlugSubmitter: md_submit_bio running in a task
// that holds plug p (blk.SubmitBio calls it when p is started; with p nil or
// not started it is Submit).
//
//   - raid0 and raid10 write member bios go through p, where they merge in the
//     member queues, as the personality runs in the submitting task.
//   - RAID6 writes attach to their stripe_heads and wait in p: the array
//     registers its callback on p once per plug (blk_check_plugged with
//     raid5_unplug, release_stripe_plug), and when p is flushed — Finish,
//     Flush, a full plug, or a sleep of the submitter — the stripes are handed
//     to the handler, the model of raid5d, which handles them in one batch
//     under its own plug, so consecutive stripes' member bios merge in the
//     member queues. A stream of small sequential writes fills whole stripes
//     before they are handled: eight 512-byte bios of a page and both data units
//     of a four-disk row make full-stripe writes, with no pre-reads, as one
//     4 KiB bio per page does. The submitter's plug is flushed early, as the
//     kernel's task sleeps, when the stripe cache has no free stripe_head
//     (Config.StripeCacheSize) and when a bio overlaps a write already waiting
//     in the same stripe (add_stripe_bio's overlap). A stripe waiting in
//     another submitter's plug is handled first by the submitter that needs it,
//     so bios of that plug may complete on this goroutine; one another
//     unplugged Submit is still attaching to, or one being handled, is waited
//     for.
//   - Reads bypass the stripe cache (chunk_aligned_read) and, like raid0 and
//     raid10 reads, go to the members through p, as the kernel submits them
//     in the reading task: they are dispatched when p is flushed, after the
//     stripes waiting in p have been handled, so they see those writes.
//
// Completion, errors and cost are as for Submit, except that a plugged RAID6
// write completes when its stripes are handled: at the flush of p, on the
// flushing goroutine.
func (a *Array) SubmitPlugged(p *blk.Plug, b *blk.Bio) { a.submit(p, b) }

// submit validates b and runs the personality for it, with p the submitter's
// plug or nil.
func (a *Array) submit(p *blk.Plug, b *blk.Bio) {
	if err := blk.CheckBio(a, b); err != nil {
		b.Complete(err)
		return
	}
	if b.IsFlush() {
		b.Complete(nil) // md_flush_request's flush of the members is not modelled
		return
	}
	data, err := payloadMode(b)
	if err != nil {
		b.Complete(fmt.Errorf("%w: %s sector %d on %s", err, b.Op, b.Sector, a.name))
		return
	}
	r := a.get()
	r.parent, r.data = b, data
	r.start = b.Sector << blk.SectorShift
	r.end = r.start + uint64(b.Size())
	r.t.BiosIn, r.t.BytesIn = 1, uint64(b.Size())
	if b.Op == blk.OpWrite && a.level == Raid6 {
		r.t.WriteBios = 1
		a.writeStripes(p, r)
		return
	}
	r.plug = p
	r.mapBio()
}

// issueMapped sends the parent to the members chunk by chunk: each piece inside
// one chunk goes to every copy on a write, and on a read to the copy
// read_balance picks (readCopy). Every piece after the first is a bio_split,
// whose remainder passes through the personality again.
func (r *request) issueMapped() {
	a, p := r.a, r.parent
	vecs := p.Vecs()
	chunk := uint64(a.ChunkSize())
	for off := r.start; off < r.end; {
		within := off & (chunk - 1)
		n := min(r.end-off, chunk-within)
		c := off >> a.chunkShift
		if p.Op == blk.OpRead {
			l, degraded := a.readCopy(c, within)
			if degraded {
				r.t.DegradedReads++
			}
			r.issuePiece(l, within, vecs, uint32(off-r.start), uint32(n))
		} else {
			copies, nc := a.chunkCopies(c)
			for _, l := range copies[:nc] {
				r.issuePiece(l, within, vecs, uint32(off-r.start), uint32(n))
			}
		}
		if off != r.start {
			r.t.Splits++
		}
		if p.Op == blk.OpWrite && a.level != Raid0 {
			r.t.WriteBios++ // each piece passes raid10_make_request: md_write_start, an r10bio
		}
		off += n
	}
}

// issuePiece sends the n bytes of the parent's vectors vecs from byte from to
// copy l of their chunk, within bytes into it.
func (r *request) issuePiece(l location, within uint64, vecs []blk.Vec, from, n uint32) {
	mb := r.bios.next(r.parent.Op, l.dev, l.sector+within>>blk.SectorShift, endMember, r)
	addVecs(mb, vecs, from, n)
	r.submit(l.dev, mb)
}
