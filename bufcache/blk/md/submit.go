package md

import (
	"fmt"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// Submit implements blk.Device. It models md_submit_bio and the personality's
// make_request (v5.10): md is bio-based, so every bio arrives here on its own,
// unmerged, and costs the per-bio work the Stats count.
//
//   - Reads on every level, and raid0/raid10 writes, are mapped chunk by chunk
//     (raid0_make_request, raid10_make_request, raid5's chunk_aligned_read): a bio
//     crossing chunk boundaries is split (Stats.Splits), and each piece becomes one
//     member bio per copy written (raid10: both copies) or one member bio read
//     from the first copy. Member bios alias the parent's memory.
//   - RAID6 writes go through the stripe cache (raid5_make_request,
//     handle_stripe): one stripe per PAGE_SIZE-wide unit touched, each either a
//     full-stripe write or a read-modify-write / reconstruct-write with pre-reads,
//     whichever reads less (see the package doc). Each stripe sends one 4 KiB
//     member bio per member it writes or reads. RAID6 writes are serialised per
//     array, as raid5d handles stripes one at a time, from their pre-reads to their
//     parity writes, so a member that completes only after Submit returns must not
//     wait for the submitter's next RAID6 write.
//
// Members are driven from the calling goroutine (or, for a round that completes
// later, from the goroutine completing its last member bio). b completes exactly
// once, after every member bio completed, with nil or the first member error.
// A bio that is empty, unaligned to the logical block size, reaches past the end
// or has an operation other than read and write completes with blk.CheckBio's
// error (blk.ErrMisaligned, blk.ErrBeyondEnd, blk.ErrNotSupported), and one
// mixing data and metadata-only vectors with ErrMixedData; neither is counted. Allocates nothing once the array's free lists have warmed up.
// Complexity O(member bios · segments per bio).
func (a *Array) Submit(b *blk.Bio) { a.submit(nil, b) }

// SubmitPlugged implements blk.PlugSubmitter: as Submit, but raid0 and raid10
// write member bios go through p, the submitter's plug, where they merge in the
// member queues as in the kernel (md_submit_bio runs in the submitting task,
// under its plug). Reads and RAID6 writes, whose rounds wait for their member
// bios, are submitted directly.
func (a *Array) SubmitPlugged(p *blk.Plug, b *blk.Bio) { a.submit(p, b) }

func (a *Array) submit(p *blk.Plug, b *blk.Bio) {
	if err := blk.CheckBio(a, b); err != nil {
		b.Complete(err)
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
	r.phase = phaseMap
	r.plug = nil
	if b.Op == blk.OpWrite && a.level != Raid6 {
		r.plug = p
	}
	if a.level == Raid6 && b.Op == blk.OpWrite {
		a.stripeMu.Lock()
		r.locked = true
		r.planStripes()
		r.phase = phasePreRead
	}
	r.run()
}

// issueMapped sends the parent to the members chunk by chunk: each piece inside
// one chunk goes to every copy on a write and to the first copy on a read
// (raid10's read_balance is not modelled yet). Every piece after the first is a
// bio_split.
func (r *request) issueMapped() {
	a, p := r.a, r.parent
	vecs := p.Vecs()
	chunk := uint64(a.ChunkSize())
	for off := r.start; off < r.end; {
		within := off & (chunk - 1)
		n := min(r.end-off, chunk-within)
		copies, nc := a.chunkCopies(off >> a.chunkShift)
		if p.Op == blk.OpRead {
			nc = 1
		}
		for _, l := range copies[:nc] {
			mb := r.newBio(p.Op, l.sector+within>>blk.SectorShift)
			addVecs(mb, vecs, uint32(off-r.start), uint32(n))
			r.submit(l.dev, mb)
		}
		if off != r.start {
			r.t.Splits++
		}
		off += n
	}
}
