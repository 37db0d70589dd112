package blk

import (
	"fmt"
	"sync"

	"github.com/bhsim/bhsim/blocksize"
)

// chunkShift sets the granularity of MemDisk's sparse store: 4 KiB chunks.
const chunkShift = 12

// MemDisk is a sparse in-memory disk: the data oracle beneath the buffer cache.
// Sectors never written read as zeros; memory grows only with what is written.
// Bios are completed synchronously, inside Submit. MemDisk is safe for concurrent
// use.
type MemDisk struct {
	name    string
	sectors uint64
	lbs     uint32

	mu     sync.Mutex
	chunks map[uint64]*[1 << chunkShift]byte
	stats  DiskStats
}

// DiskStats counts what a device served (the model of /sys/block/X/stat).
type DiskStats struct {
	Reads, Writes             uint64 // bios completed successfully
	SectorsRead, SectorsWrite uint64
	Errors                    uint64 // bios failed
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
	d.serveLocked(b, 0, b.size)
	d.mu.Unlock()
	b.Complete(nil)
}

// serveParts moves the data of a request's bio parts, in order, under one
// acquisition of the disk's lock. The parts must have been validated.
func (d *MemDisk) serveParts(parts []BioPart) {
	d.mu.Lock()
	for _, p := range parts {
		d.serveLocked(p.Bio, p.Off, p.Len)
	}
	d.mu.Unlock()
}

// serveLocked moves bytes [off, off+n) of the validated bio b to or from the
// store and counts them; the bio counts as served with the part that reaches
// its end. Vectors without data move nothing.
func (d *MemDisk) serveLocked(b *Bio, off, n uint32) {
	pos := b.Sector<<SectorShift + uint64(off)
	for it := b.spans(off, n); it.next(); {
		if it.v.Data != nil {
			d.copyLocked(b.Op, pos, it.v.Data[it.d:it.d+it.n])
		}
		pos += uint64(it.n)
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
