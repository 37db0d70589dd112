package blk

import (
	"fmt"

	"github.com/bhsim/bhsim/internal/conc"

	"github.com/bhsim/bhsim/blocksize"
)

// chunkShift sets the granularity of MemDisk's sparse store: 4 KiB chunks.
const chunkShift = 12

// MemDisk is a sparse in-memory disk: the data oracle beneath the buffer cache.
// Sectors never written read as zeros; memory grows only with what is written,
// in 4 KiB chunks. Bios are completed synchronously, inside Submit. MemDisk is
// safe for concurrent use until Confine; a confined one (a one-goroutine
// machine's) for one goroutine at a time only.
//
// Its chunks are also the pages of the file behind a loop device: a chunk is
// allocated when data is first written to it. [MemDisk.SetBackingFull]
// models that file's tmpfs filling up.
type MemDisk struct {
	name    string
	sectors uint64
	lbs     uint32

	mu     conc.Mutex
	chunks map[uint64]*[1 << chunkShift]byte
	full   bool   // the backing store cannot grow
	limit  uint64 // chunks the backing store may hold (0: no limit)
	stats  DiskStats
}

// BackingPageSize is the allocation unit of a MemDisk's store, the page of a
// tmpfs file behind a loop device.
const BackingPageSize = 1 << chunkShift

// DiskStats counts what a device served (the model of /sys/block/X/stat).
type DiskStats struct {
	Reads, Writes             uint64 // bios completed successfully
	SectorsRead, SectorsWrite uint64
	Errors                    uint64 // bios (or parts of them, under a Queue) failed
}

// checkDisk validates the geometry of a new disk: logical a power of two in
// [512, 65536], sizeBytes a positive multiple of it. O(1).
func checkDisk(name string, sizeBytes uint64, logical uint32) error {
	if !inPow2Range(logical, 512, 65536) {
		return fmt.Errorf("blk: %s: logical block size %d is not a power of two in [512, 65536]", name, logical)
	}
	if sizeBytes == 0 || sizeBytes%uint64(logical) != 0 {
		return fmt.Errorf("blk: %s: size %d is not a positive multiple of the logical block size %d", name, sizeBytes, logical)
	}
	return nil
}

// inPow2Range reports whether v is a power of two in [lo, hi]. O(1).
func inPow2Range(v, lo, hi uint32) bool { return v >= lo && v <= hi && blocksize.IsPowerOfTwo(v) }

// NewMemDisk returns an empty disk of the given size in bytes with the given
// logical block size. Errors: logical not a power of two in [512, 65536], or size
// not a positive multiple of logical.
func NewMemDisk(name string, sizeBytes uint64, logical uint32) (*MemDisk, error) {
	if err := checkDisk(name, sizeBytes, logical); err != nil {
		return nil, err
	}
	return &MemDisk{
		name:    name,
		sectors: sizeBytes >> SectorShift,
		lbs:     logical,
		chunks:  make(map[uint64]*[1 << chunkShift]byte),
	}, nil
}

// Name implements Device.
func (d *MemDisk) Name() string { return d.name }

// Confine implements Confiner: d's lock becomes confined.
func (d *MemDisk) Confine() { d.mu.Confine() }

// Confined reports whether d is confined.
func (d *MemDisk) Confined() bool { return d.mu.Confined() }

// Sectors implements Device.
func (d *MemDisk) Sectors() uint64 { return d.sectors }

// LogicalBlockSize implements Device.
func (d *MemDisk) LogicalBlockSize() uint32 { return d.lbs }

// Submit implements Device: it validates b (CheckBio), moves the data and
// completes b before returning. Vectors without data move nothing. A flush
// ([Bio.IsFlush]) completes at once and is not counted: the disk has no cache.
func (d *MemDisk) Submit(b *Bio) {
	if err := CheckBio(d, b); err != nil {
		d.mu.Lock()
		d.stats.Errors++
		d.mu.Unlock()
		b.Complete(err)
		return
	}
	if b.size == 0 {
		b.Complete(nil)
		return
	}
	d.mu.Lock()
	err := d.serveLocked(b, 0, b.size)
	d.mu.Unlock()
	b.Complete(err)
}

// serveParts moves the data of a request's bio parts, in order, under one
// acquisition of the disk's lock, and returns the first error (ErrNoSpace),
// after which nothing more is moved. The parts must have been validated.
func (d *MemDisk) serveParts(parts []BioPart) error {
	var err error
	d.mu.Lock()
	for _, p := range parts {
		if err = d.serveLocked(p.Bio, p.Off, p.Len); err != nil {
			break
		}
	}
	d.mu.Unlock()
	return err
}

// serveLocked moves bytes [off, off+n) of the validated bio b to or from the
// store and counts them; the bio counts as served with the part that reaches
// its end. Vectors without data move nothing. With the backing store full, a
// write stops at the first chunk never allocated: the bytes before it are
// written, the part counts as failed, and the error wraps ErrNoSpace.
func (d *MemDisk) serveLocked(b *Bio, off, n uint32) error {
	pos := b.Sector<<SectorShift + uint64(off)
	checkRoom := (d.full || d.limit != 0) && b.Op == OpWrite
	if b.data || checkRoom { // a metadata-only bio moves nothing, and only a full store refuses one
		for it := b.spans(off, n); it.next(); {
			m := uint64(it.n)
			if checkRoom {
				if gap := d.noRoomLocked(pos, m); gap < pos+m {
					if it.v.Data != nil {
						d.copyLocked(OpWrite, pos, it.v.Data[it.d:it.d+uint32(gap-pos)])
					}
					d.stats.Errors++
					return fmt.Errorf("%w: write sectors [%d, %d) on %s: backing page %d was never written",
						ErrNoSpace, b.Sector+uint64(off>>SectorShift), b.Sector+uint64((off+n)>>SectorShift), d.name, gap>>chunkShift)
				}
			}
			if it.v.Data != nil {
				d.copyLocked(b.Op, pos, it.v.Data[it.d:it.d+it.n])
			}
			pos += m
		}
	}
	end := off+n == b.size
	if b.Op == OpWrite {
		d.stats.SectorsWrite += uint64(n) >> SectorShift
		if end {
			d.stats.Writes++
		}
	} else {
		d.stats.SectorsRead += uint64(n) >> SectorShift
		if end {
			d.stats.Reads++
		}
	}
	return nil
}

// noRoomLocked returns the first byte of [pos, pos+n) that the store has
// no room for — in a chunk never allocated while the store is full, or
// past its limit counting the chunks this write allocates before it — or
// pos+n if there is none. O(chunks in the range).
func (d *MemDisk) noRoomLocked(pos, n uint64) uint64 {
	held := uint64(len(d.chunks))
	for c := pos >> chunkShift; c<<chunkShift < pos+n; c++ {
		if d.chunks[c] != nil {
			continue
		}
		if d.full || held >= d.limit {
			return max(c<<chunkShift, pos)
		}
		held++
	}
	return pos + n
}

// SetBackingFull models the loop device over a file on a tmpfs that can no
// longer grow (the scenarios' "backing full"), full true, or room again, full
// false. While full, a write fails where it reaches a BackingPageSize page of
// the store never written before: the loop driver writes a request's
// segments in order, each into the file's page cache, and the tmpfs refuses
// to allocate a page, so the request completes with -ENOSPC
// (BLK_STS_NOSPC; the error wraps ErrNoSpace, Errno 28) after the bytes
// before that page were written. Writes to pages already written succeed;
// reads of pages never written return zeroes, full or not. Allocation is
// known only for data: a page written only by metadata-only bios was never
// allocated, and fails. (A loop segment that reached an allocated and an
// unallocated page would be a short write, reported as -EIO; page-cache
// segments never straddle pages, and the model reports ENOSPC.) O(1).
func (d *MemDisk) SetBackingFull(full bool) {
	d.mu.Lock()
	d.full = full
	d.mu.Unlock()
}

// SetBackingSize models a backing store that holds at most size bytes (the
// scenarios' "backing size=8M"), rounded down to BackingPageSize pages; 0
// lifts the limit. A write that would allocate a page past it fails as one
// to a full store does (SetBackingFull), at once when the store already
// holds more. O(1).
func (d *MemDisk) SetBackingSize(size uint64) {
	d.mu.Lock()
	d.limit = size >> chunkShift
	if size != 0 && d.limit == 0 {
		d.full = true // no page at all
	}
	d.mu.Unlock()
}

// copyLocked moves buf to (write) or from (read) the store at byte offset pos.
func (d *MemDisk) copyLocked(op Op, pos uint64, buf []byte) {
	for len(buf) > 0 {
		idx, off := pos>>chunkShift, pos&(1<<chunkShift-1)
		c := d.chunks[idx]
		var n int
		if op == OpWrite {
			if c == nil {
				c = new([1 << chunkShift]byte)
				d.chunks[idx] = c
			}
			n = copy(c[off:], buf)
		} else if c == nil {
			n = min(len(buf), int(1<<chunkShift-off))
			clear(buf[:n])
		} else {
			n = copy(buf, c[off:])
		}
		buf, pos = buf[n:], pos+uint64(n)
	}
}

// ReadAt copies the disk's bytes at byte offset off into p, outside any bio:
// the oracle's view for tests. It returns an error if the range is past the end.
func (d *MemDisk) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || uint64(off)+uint64(len(p)) > d.sectors<<SectorShift {
		return 0, fmt.Errorf("%w: ReadAt(%d bytes at %d) on %s", ErrBeyondEnd, len(p), off, d.name)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.copyLocked(OpRead, uint64(off), p)
	return len(p), nil
}

// Stats returns the disk's counters.
func (d *MemDisk) Stats() DiskStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

// StoredBytes is the memory the sparse store holds, in bytes.
func (d *MemDisk) StoredBytes() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return uint64(len(d.chunks)) << chunkShift
}
