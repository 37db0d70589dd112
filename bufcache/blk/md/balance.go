package md

import (
	"github.com/bhsim/bhsim/internal/conc"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// mirror is what raid10 keeps per member for read balancing (struct
// raid10_info and the rdev, v5.10): the array's member bios in flight on it,
// reads and writes (nr_pending), where its head is, the member sector just
// after the last I/O that completed there (head_position, set by
// update_head_pos when a read or a write of an r10bio completes), and
// whether the member is non-rotational (blk_queue_nonrot).
type mirror struct {
	pending conc.Int32
	head    conc.Uint64
	nonrot  bool
}

// initMirrors sets up read balancing for a raid10 array over members. A
// member is non-rotational if it says so (a blk.Queue whose timing model is
// not an HDD); one that does not say, a bare store, counts as rotating, the
// block layer's default until a driver sets QUEUE_FLAG_NONROT. In-flight I/O
// and heads are tracked only where read_balance consults them: near-2 on
// any members, far-2 only with a non-rotational member.
func (a *Array) initMirrors(members []blk.Device) {
	if a.level != Raid10Near2 && a.level != Raid10Far2 {
		return
	}
	mirrors := make([]mirror, len(members))
	nonrot := false
	for i, m := range members {
		r, ok := m.(interface{ Rotational() bool })
		mirrors[i].nonrot = ok && !r.Rotational()
		nonrot = nonrot || mirrors[i].nonrot
	}
	if a.level == Raid10Near2 || nonrot {
		a.mirrors = mirrors
	}
}

// mirrorStart counts a member bio sent to member dev in the member's
// nr_pending (atomic_inc in read_balance and raid10_write_request). O(1).
func (a *Array) mirrorStart(dev int) {
	if a.mirrors != nil {
		a.mirrors[dev].pending.Add(1)
	}
}

// mirrorDone ends member bio h in its member's nr_pending and moves the
// member's head to the end of the I/O (rdev_dec_pending and update_head_pos,
// from raid10_end_read_request and raid10_end_write_request). O(1).
func (a *Array) mirrorDone(h *memberBio) {
	if a.mirrors != nil {
		m := &a.mirrors[h.dev]
		m.head.Store(h.bio.Sector + h.bio.Sectors())
		m.pending.Add(-1)
	}
}

// readCopy returns the copy a read of array chunk c, starting within bytes
// into the chunk, is sent to, and whether a faulty member made it differ from
// the copy an array with every member working would use. It models raid10's
// read_balance (v5.10); the other levels keep one copy of each chunk, which
// it returns. Among the copies, in slot order (the first copy first):
//
//   - if any of them is on a non-rotational member, the first of those with
//     the fewest of the array's I/Os in flight (nr_pending);
//   - otherwise the first at the smallest distance. far-2's distance is the
//     member address itself ("for far > 1 always use the lowest address"),
//     so it reads the first copy, in the first half of the members, and a
//     sequential read streams like raid0. near-2's is 0 for a member with
//     none of the array's I/O in flight and |addr − head_position| for a
//     busy one, so a read goes to an idle mirror unless an earlier copy's
//     busy member has its head right where the read starts (the end of the
//     I/O before it, in a sequential stream).
//
// A faulty member is skipped, as read_balance skips one; the read then goes
// to the other copy (raid10 keeps a chunk's last copy working). O(copies).
func (a *Array) readCopy(c, within uint64) (l location, degraded bool) {
	copies, n := a.chunkCopies(c)
	if n == 1 {
		return copies[0], false
	}
	all := a.pickCopy(copies[:n], within, false)
	if a.Degraded() == 0 {
		return copies[all], false
	}
	working := a.pickCopy(copies[:n], within, true)
	if working < 0 { // every copy lost: let the read fail on the first
		return copies[0], false
	}
	return copies[working], working != all
}

// pickCopy is readCopy's choice among copies for a read within bytes into
// their chunk, skipping faulty members if skipFaulty; -1 if it skips all.
func (a *Array) pickCopy(copies []location, within uint64, skipFaulty bool) int {
	bestDist, bestPending := -1, -1
	minDist, minPending := ^uint64(0), int32(1<<31-1)
	for i, l := range copies {
		if skipFaulty && a.faulty(l.dev) {
			continue
		}
		addr := l.sector + within>>blk.SectorShift
		var dist uint64
		switch {
		case a.level == Raid10Far2:
			dist = addr
		case a.mirrors[l.dev].pending.Load() != 0:
			h := a.mirrors[l.dev].head.Load()
			dist = max(addr, h) - min(addr, h)
		}
		if dist < minDist {
			bestDist, minDist = i, dist
		}
		if a.mirrors != nil && a.mirrors[l.dev].nonrot {
			if p := a.mirrors[l.dev].pending.Load(); p < minPending {
				bestPending, minPending = i, p
			}
		}
	}
	if bestPending >= 0 { // has_nonrot_disk
		return bestPending
	}
	return bestDist
}
