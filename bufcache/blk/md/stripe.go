package md

import (
	"slices"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// stripe is one stripe_head of a RAID6 write: the PAGE_SIZE-wide unit at one
// member offset on every member of a stripe row.
type stripe struct {
	row  uint64 // chunk row
	unit uint64 // unit index within the chunk
	// rmw selects read-modify-write (pre-read the written data units and P, Q);
	// otherwise reconstruct-write (pre-read the data units not wholly
	// overwritten, none for a full-stripe write).
	rmw bool
}

// planStripes lists the stripe units a RAID6 write touches, row by row in
// member-offset order, chooses how each computes its parity, counts them, and
// sizes the stripe cache pages when the write carries data. It models
// raid5_make_request adding the bio to each stripe_head and handle_stripe_dirtying
// choosing between rmw and rcw (v5.10). O(stripes · members).
func (r *request) planStripes() {
	a := r.a
	chunk := uint64(a.ChunkSize())
	rowBytes := a.dataDisks() * chunk
	last := chunk>>pageShift - 1 // the last unit of a chunk
	r.stripes = r.stripes[:0]
	for row := r.start / rowBytes; row*rowBytes < r.end; row++ {
		lo := max(r.start, row*rowBytes) - row*rowBytes // the write within the row's data
		hi := min(r.end, (row+1)*rowBytes) - row*rowBytes
		k0, k1 := lo/chunk, (hi-1)/chunk                       // data chunks of its first and last byte
		u0, u1 := lo%chunk>>pageShift, (hi-1)%chunk>>pageShift // and their units
		switch {
		case k0 == k1:
			r.planUnits(row, u0, u1)
		case k1-k0 >= 2 || u0 <= u1+1: // every unit offset is touched in some chunk
			r.planUnits(row, 0, last)
		default: // the tail of one chunk and the head of the next
			r.planUnits(row, 0, u1)
			r.planUnits(row, u0, last)
		}
	}
	if r.data {
		need := len(r.stripes) * len(a.members) * pageSize
		r.pages = slices.Grow(r.pages[:0], need)[:need]
	}
}

// planUnits plans the stripes of units first..last (inclusive) of row: rmw if it
// needs strictly fewer pre-reads than rcw, as handle_stripe_dirtying decides
// with rmw enabled (ties go to rcw).
func (r *request) planUnits(row, first, last uint64) {
	nd := r.a.dataDisks()
	for u := first; u <= last; u++ {
		s := stripe{row: row, unit: u}
		var touched, whole uint64
		for k := range nd {
			if lo, hi := r.cover(&s, k); hi > lo {
				touched++
				if hi-lo == pageSize {
					whole++
				}
			}
		}
		rcwReads, rmwReads := nd-whole, touched+2
		s.rmw = rmwReads < rcwReads
		r.stripes = append(r.stripes, s)
		r.t.Stripes++
		r.t.ParityBytes += 2 * pageSize
		switch {
		case rcwReads == 0:
			r.t.FullStripeWrites++
		case s.rmw:
			r.t.RMWWrites++
		default:
			r.t.RMWWrites++
			r.t.ReconstructWrites++
		}
	}
}

// unitStart is the array byte offset of data unit k of stripe s.
func (r *request) unitStart(s *stripe, k uint64) uint64 {
	return (s.row*r.a.dataDisks()+k)<<r.a.chunkShift + s.unit<<pageShift
}

// cover returns the bytes [lo, hi) of data unit k of stripe s that the write
// overwrites; lo == hi when it leaves the unit alone.
func (r *request) cover(s *stripe, k uint64) (lo, hi uint64) {
	base := r.unitStart(s, k)
	lo, hi = max(r.start, base), min(r.end, base+pageSize)
	if lo >= hi {
		return 0, 0
	}
	return lo - base, hi - base
}

// issueStripes sends every stripe's member bios for op: the pre-reads its
// parity method needs, or the writes of its touched data units and P and Q
// (ops_run_io: one bio per member per stripe_head).
func (r *request) issueStripes(op blk.Op) {
	a := r.a
	for i := range r.stripes {
		s := &r.stripes[i]
		for k := range a.dataDisks() {
			lo, hi := r.cover(s, k)
			touched := hi > lo
			if op == blk.OpWrite && touched || op == blk.OpRead && (s.rmw && touched || !s.rmw && hi-lo < pageSize) {
				r.unitIO(op, i, a.dataDev(s.row, int(k)))
			}
		}
		if op == blk.OpWrite || s.rmw {
			pd, qd := a.parityDevs(s.row)
			r.unitIO(op, i, pd)
			r.unitIO(op, i, qd)
		}
	}
}

// unitIO sends stripe i's page of member dev to or from that member.
func (r *request) unitIO(op blk.Op, i, dev int) {
	s := &r.stripes[i]
	mb := r.newBio(op, r.a.rowSector(s.row)+s.unit<<(pageShift-blk.SectorShift))
	mb.AddVec(r.page(i, dev), pageSize)
	if op == blk.OpRead {
		r.t.MemberReads++
	}
	r.submit(dev, mb)
}

// page returns stripe i's stripe cache page for member dev, or nil for a
// metadata-only write.
func (r *request) page(i, dev int) []byte {
	if !r.data {
		return nil
	}
	o := (i*len(r.a.members) + dev) * pageSize
	return r.pages[o : o+pageSize : o+pageSize]
}

// computeParity copies the write's data into the stripe cache and computes P and
// Q of every stripe, after the pre-reads completed: by folding each touched
// unit's old and new contents into the old P and Q (read-modify-write:
// ops_run_prexor6 then ops_run_reconstruct6 with xor_syndrome), or by generating
// them from all the data units (reconstruct-write: gen_syndrome). Metadata-only
// writes compute nothing. O(stripes · members · PAGE_SIZE).
func (r *request) computeParity() {
	if !r.data {
		return
	}
	a, vecs := r.a, r.parent.Vecs()
	for i := range r.stripes {
		s := &r.stripes[i]
		pd, qd := a.parityDevs(s.row)
		p, q := r.page(i, pd), r.page(i, qd)
		r.units = r.units[:0]
		for k := range a.dataDisks() {
			d := r.page(i, a.dataDev(s.row, int(k)))
			r.units = append(r.units, d)
			lo, hi := r.cover(s, k)
			if lo == hi {
				continue
			}
			if s.rmw {
				xorSyndrome(p[lo:hi], q[lo:hi], d[lo:hi], int(k))
			}
			copyPayload(d[lo:hi], vecs, uint32(r.unitStart(s, k)+lo-r.start))
			if s.rmw {
				xorSyndrome(p[lo:hi], q[lo:hi], d[lo:hi], int(k))
			}
		}
		if !s.rmw {
			genSyndrome(p, q, r.units)
		}
	}
}
