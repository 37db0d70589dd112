package iomap

import (
	"fmt"

	"github.com/bhsim/bhsim/bufcache"
)

// Iter models struct iomap_iter and the loop iomap_iter() drives (fs/iomap/
// iter.c, v6.6): a range [pos, pos+len) of an inode — here a block device's —
// walked one mapping at a time. The caller processes each mapping and records
// how much it did; the iterator advances by that much:
//
//	it := iomap.NewIter(cpu, d, ops, pos, n, iomap.IterWrite)
//	for it.Next() {
//		it.SetProcessed(work(it.Pos(), it.Length(), it.Map()))
//	}
//	err := it.Err()
//
// An Iter is driven by the goroutine that drives its CPU. It allocates
// nothing itself.
type Iter struct {
	cpu   *bufcache.CPU
	dev   *bufcache.BlockDevice
	ops   Ops
	pos   uint64
	len   uint64
	flags IterFlags
	iomap IOMap
	// processed is iter->processed when positive; perr when negative.
	processed uint64
	perr      error
	err       error // why the iteration ended
	done      bool
}

// NewIter returns an iterator over [pos, pos+length) of d's inode with ops,
// for the operation flags; call Next to get the first mapping. O(1).
func NewIter(cpu *bufcache.CPU, d *bufcache.BlockDevice, ops Ops, pos, length uint64, flags IterFlags) Iter {
	return Iter{cpu: cpu, dev: d, ops: ops, pos: pos, len: length, flags: flags}
}

// Next models iomap_iter(): finish the previous mapping, if any — call End,
// then advance pos by what was processed — and get the next one from Begin.
// It returns false when the iteration is over: the range is done, the last
// mapping was processed with no progress, or an error happened (Err). In
// order:
//
//   - End's error ends the iteration if nothing was processed;
//   - an error recorded by SetProcessed ends it;
//   - no progress ends it (without error);
//   - more processed than the mapping offered is a WARN and -EIO (ErrIO);
//   - pos and len advance; an exhausted range ends it;
//   - Begin is called (EvIomapBegin); its error ends the iteration. A mapping
//     that does not cover pos is a WARN (EvWarning), as in
//     iomap_iter_done, and is still returned; an empty mapping, which would
//     make the kernel call Begin again for ever, is ErrInvalidMapping.
//
// Once Next has returned false it keeps returning false. O(1) plus the Ops.
func (it *Iter) Next() bool {
	if it.done {
		return false
	}
	if it.iomap.Length != 0 {
		offered := it.Length()
		err := it.ops.End(it.cpu, it.dev, it.pos, offered, it.processed, it.flags, it.iomap)
		switch {
		case err != nil && it.processed == 0 && it.perr == nil:
			return it.stop(err)
		case it.perr != nil:
			return it.stop(it.perr)
		case it.processed == 0:
			return it.stop(nil)
		case it.processed > offered:
			it.cpu.CountEvent(bufcache.EvWarning)
			return it.stop(fmt.Errorf("%w: %d bytes processed of a %d-byte mapping at %d", bufcache.ErrIO, it.processed, offered, it.pos))
		}
		it.pos += it.processed
		it.len -= it.processed
		if it.len == 0 {
			return it.stop(nil)
		}
	}
	it.processed, it.perr, it.iomap = 0, nil, IOMap{}
	it.cpu.CountEvent(bufcache.EvIomapBegin)
	m, err := it.ops.Begin(it.cpu, it.dev, it.pos, it.len, it.flags)
	if err != nil {
		return it.stop(err)
	}
	end := m.Offset + m.Length
	if m.Length == 0 || end < m.Offset {
		return it.stop(fmt.Errorf("%w: %v for position %d", ErrInvalidMapping, m, it.pos))
	}
	if m.Offset > it.pos || end <= it.pos {
		it.cpu.CountEvent(bufcache.EvWarning) // iomap_iter_done's WARN_ON_ONCE
	}
	it.iomap = m
	return true
}

// stop ends the iteration with err.
func (it *Iter) stop(err error) bool {
	it.done, it.err = true, err
	return false
}

// SetProcessed records what the caller did with the current mapping
// (iter->processed): n bytes from Pos, or, when n is 0, the error err that
// stopped it. A caller that made progress and then failed reports the
// progress (as iomap_write_iter returns "written ? written : status"): err is
// then ignored.
func (it *Iter) SetProcessed(n uint64, err error) {
	it.processed, it.perr = n, nil
	if n == 0 {
		it.perr = err
	}
}

// Err returns the error that ended the iteration, or nil.
func (it *Iter) Err() error { return it.err }

// Pos returns the current position (iter->pos).
func (it *Iter) Pos() uint64 { return it.pos }

// Len returns the bytes of the range left from Pos (iter->len).
func (it *Iter) Len() uint64 { return it.len }

// Map returns the current mapping (iter->iomap).
func (it *Iter) Map() IOMap { return it.iomap }

// Length models iomap_length(): the bytes of the current mapping from Pos,
// at most Len. As in the kernel the distance to the mapping's end is
// unsigned: a mapping ending before Pos yields Len, which the write path's
// own checks then reject.
func (it *Iter) Length() uint64 {
	return min(it.len, it.iomap.Offset+it.iomap.Length-it.pos)
}
