package md

import (
	"math/bits"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// location is one copy of a chunk: a member's index and the member sector where
// the chunk begins.
type location struct {
	dev    int
	sector uint64
}

// chunkCopies returns where array data chunk c lives: n copies, copies[0] being
// the one reads use. It models the personalities' address mapping in v5.10:
// raid0's map_sector over a single zone (members of equal size), raid10's
// raid10_find_phys for layouts n2 and f2, and for raid6 the data part of
// raid5_compute_sector. c must be below the array's chunk count. O(1).
func (a *Array) chunkCopies(c uint64) (copies [2]location, n int) {
	switch a.level {
	case Raid0:
		return [2]location{a.slot(c)}, 1
	case Raid10Near2:
		// Copy k of chunk c fills slot 2c+k of a raid0-like striping, so the
		// two copies sit side by side, wrapping to the next row when n is odd.
		return [2]location{a.slot(2 * c), a.slot(2*c + 1)}, 2
	case Raid10Far2:
		// The far copy lives in the second half of the next member (the copy of
		// the last member's chunk wraps to member 0).
		near := a.slot(c)
		far := location{dev: (near.dev + 1) % len(a.members), sector: near.sector + a.rowSector(a.rowChunks)}
		return [2]location{near, far}, 2
	default: // Raid6
		row, k := divmod(c, a.dataDisks())
		return [2]location{{a.dataDev(row, int(k)), a.rowSector(row)}}, 1
	}
}

// slot maps chunk slot s of a plain raid0 striping: member s mod n, row s / n.
func (a *Array) slot(s uint64) location {
	row, dev := divmod(s, uint64(len(a.members)))
	return location{dev: int(dev), sector: a.rowSector(row)}
}

// divmod returns s / n and s % n, n > 0: a shift and a mask when n is a
// power of two (arrays of 2, 4 or 8 members, raid6 over 4 or 6), where a
// 64-bit division would cost tens of cycles on every bio md maps.
func divmod(s, n uint64) (uint64, uint64) {
	if n&(n-1) == 0 {
		return s >> bits.TrailingZeros64(n), s & (n - 1)
	}
	return s / n, s % n
}

// rowSector is the member sector where chunk row row begins.
func (a *Array) rowSector(row uint64) uint64 { return row << (a.chunkShift - blk.SectorShift) }

// dataDisks is the number of data chunks in a RAID6 stripe row (n − 2).
func (a *Array) dataDisks() uint64 { return uint64(len(a.members)) - 2 }

// parityDevs returns the members holding P and Q in RAID6 stripe row row. The
// left-symmetric layout (ALGORITHM_LEFT_SYMMETRIC, mdadm's default) puts P on the
// last member in row 0 and moves it one member left per row; Q follows P.
func (a *Array) parityDevs(row uint64) (pd, qd int) {
	n := len(a.members)
	pd = n - 1 - int(row%uint64(n))
	return pd, (pd + 1) % n
}

// dataDev returns the member holding data chunk k (0 ≤ k < n−2) of RAID6 stripe
// row row: left-symmetric data starts just after Q and wraps around, so
// consecutive chunks land on consecutive members across row boundaries.
func (a *Array) dataDev(row uint64, k int) int {
	pd, _ := a.parityDevs(row)
	return (pd + 2 + k) % len(a.members)
}

// ArraySector returns the array sector whose data member dev holds at
// member sector sector: the inverse of the personality's address mapping
// (chunkCopies), for either copy of a raid10 chunk. ok is false for a
// sector that holds no data of the array: a RAID6 row's P or Q, the
// members' tail beyond the last whole chunk, a member the array does not
// have. It lets a tracer of the members' queues tell which array data a
// member request carries. O(1).
func (a *Array) ArraySector(dev int, sector uint64) (uint64, bool) {
	n := uint64(len(a.members))
	if dev < 0 || uint64(dev) >= n {
		return 0, false
	}
	shift := a.chunkShift - blk.SectorShift
	row, off := sector>>shift, sector&(1<<shift-1)
	var c uint64 // the array chunk
	switch a.level {
	case Raid0:
		c = row*n + uint64(dev)
	case Raid10Near2:
		c = (row*n + uint64(dev)) / 2
	case Raid10Far2:
		if row >= a.rowChunks { // a far copy: the near one is on the member before
			row -= a.rowChunks
			dev = int((uint64(dev) + n - 1) % n)
		}
		c = row*n + uint64(dev)
	default: // Raid6
		pd, qd := a.parityDevs(row)
		if dev == pd || dev == qd {
			return 0, false
		}
		k := (uint64(dev) + 2*n - uint64(pd) - 2) % n
		c = row*a.dataDisks() + k
	}
	if row >= a.rowChunks || c<<shift >= a.sectors {
		return 0, false
	}
	return c<<shift + off, true
}
