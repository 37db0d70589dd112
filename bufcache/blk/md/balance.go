package md

import (
	"github.com/bhsim/bhsim/internal/conc"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// mirror is what raid10 keeps per member for read balancing (struct
// raid10_info and the rdev's nr_pending, v5.10): the array's member bios in
// flight on it, reads and writes, and where its head is, the member sector
// just after the last I/O that completed there (head_position, set by
// update_head_pos when a read or a write of an r10bio completes).
type mirror struct {
	pending conc.Int32
	head    conc.Uint64
}

// balanced reports whether the array balances reads between copies by what
// is in flight: raid10 near-2 (read_balance's nr_pending and head-position
// rules apply to near copies only; far-2 always reads the lowest address).
func (a *Array) balanced() bool { return a.level == Raid10Near2 }

// mirrorStart counts a member bio sent to member dev in the member's
// nr_pending (atomic_inc in read_balance and raid10_write_request). O(1).
func (a *Array) mirrorStart(dev int) {
	if a.balanced() {
		a.mirrors[dev].pending.Add(1)
	}
}

// mirrorDone ends member bio h in its member's nr_pending and moves the
// member's head to the end of the I/O (rdev_dec_pending and update_head_pos,
// from raid10_end_read_request and raid10_end_write_request). O(1).
func (a *Array) mirrorDone(h *memberBio) {
	if a.balanced() {
		m := &a.mirrors[h.dev]
		m.head.Store(h.bio.Sector + h.bio.Sectors())
		m.pending.Add(-1)
	}
}

// readCopy returns the copy a read of array chunk c, starting within bytes
// into the chunk, is sent to, and whether a faulty member made it differ from
// the copy an array with every member working would use. It models raid10's
// read_balance (v5.10) on rotating members, which the Helios4's are; the
// other levels keep one copy of each chunk, which it returns.
//
//   - far-2 reads the copy at the lowest member address: the first copy, in
//     the first half of the members ("for far > 1 always use the lowest
//     address"), so a sequential read streams like raid0;
//   - near-2 reads the first copy, in slot order, whose member has nothing of
//     the array's in flight (nr_pending 0); when every copy's member is busy,
//     the one whose head is nearest the read (|addr − head_position|; ties to
//     the earlier slot).
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
	best, bestDist := -1, ^uint64(0)
	for i, l := range copies {
		if skipFaulty && a.faulty(l.dev) {
			continue
		}
		addr := l.sector + within>>blk.SectorShift
		var dist uint64
		switch {
		case !a.balanced():
			dist = addr // far-2: the lowest address
		case a.mirrors[l.dev].pending.Load() != 0:
			h := a.mirrors[l.dev].head.Load()
			dist = max(addr, h) - min(addr, h)
		}
		if dist < bestDist {
			best, bestDist = i, dist
		}
	}
	return best
}
