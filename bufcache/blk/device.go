package blk

import "fmt"

// SectorShift is log2 of the 512-byte sector every block-layer address counts in.
const SectorShift = 9

// Device is a block device queue as the buffer cache sees it: a size, a logical
// block size and a submit_bio entry. Submit must complete b exactly once, by
// calling b.Complete. bufcache needs the completion before Submit returns or
// on the submitting goroutine, because it counts completion events on the
// submitting CPU's plain counters. Device time is therefore simulated, not
// waited for: a [Queue] completes synchronously and adds each request's
// modelled service time to its busy time.
type Device interface {
	// Name identifies the device in messages ("loop0", "sda").
	Name() string
	// Sectors is the capacity in 512-byte sectors (bdev_nr_sectors).
	Sectors() uint64
	// LogicalBlockSize is queue_logical_block_size: the smallest unit the device
	// addresses (512 for 512e disks like the WD8003FFBX, 4096 for 4Kn).
	LogicalBlockSize() uint32
	// Submit starts b (submit_bio).
	Submit(b *Bio)
}

// CheckBio validates b against d's geometry: the checks submit_bio_noacct
// (v5.10, v6.18) makes before a driver sees a bio. It returns nil or an error
// wrapping ErrNotSupported (an operation other than OpRead and OpWrite),
// ErrMisaligned (a start or length not a multiple of the logical block, or an
// empty bio other than a flush, see [Bio.IsFlush]) or ErrBeyondEnd. A flush
// passes whatever its sector. It allocates only when it returns an error.
// O(1).
func CheckBio(d Device, b *Bio) error {
	if b.Op != OpRead && b.Op != OpWrite {
		return fmt.Errorf("%w: %s at sector %d on %s", ErrNotSupported, b.Op, b.Sector, d.Name())
	}
	if b.IsFlush() {
		return nil
	}
	lbs := uint64(d.LogicalBlockSize())
	start := b.Sector << SectorShift
	if misaligned(start, uint64(b.size), lbs) || b.size == 0 {
		return fmt.Errorf("%w: %s sector %d, %d bytes, logical block %d on %s",
			ErrMisaligned, b.Op, b.Sector, b.size, lbs, d.Name())
	}
	if end := b.Sector + b.Sectors(); end < b.Sector || end > d.Sectors() {
		return fmt.Errorf("%w: %s sectors [%d, %d) on %s of %d sectors",
			ErrBeyondEnd, b.Op, b.Sector, b.Sector+b.Sectors(), d.Name(), d.Sectors())
	}
	return nil
}

// misaligned reports whether start or size is not a multiple of lbs: a
// mask for the power of two every device's logical block size is (a 64-bit
// division costs tens of cycles, twice a bio), a division otherwise.
func misaligned(start, size, lbs uint64) bool {
	if lbs&(lbs-1) == 0 {
		return (start|size)&(lbs-1) != 0
	}
	return start%lbs != 0 || size%lbs != 0
}

// bioFits reports whether b passes CheckBio on a device of logical blocks
// of lbs bytes, a power of two, and the given sectors: a read or write of
// whole logical blocks within the device. False means CheckBio decides
// (an empty flush passes it) and words the error. It is the queue's check
// without CheckBio's calls through the Device interface. O(1).
func bioFits(b *Bio, lbs, sectors uint64) bool {
	end := b.Sector + b.Sectors()
	return (b.Op == OpRead || b.Op == OpWrite) && b.size != 0 &&
		(b.Sector<<SectorShift|uint64(b.size))&(lbs-1) == 0 && end >= b.Sector && end <= sectors
}

// Confiner is implemented by the devices that can confine their locks and
// counters (package internal/conc's confinement): Queue, MemDisk and md's
// Array. Confine declares that from now on one goroutine at a time submits
// to the device, reads its statistics and traces, and runs every completion;
// a device built on others confines them too, where they implement
// Confiner. bufcache's Machine.AddDisk (and so Open) calls it for a machine
// with Config.OneGoroutine. Confinement is for good: add a confined device
// to no machine that several goroutines drive. A type that embeds a
// Confiner and completes bios on another goroutine must override Confine,
// or confining it confines the embedded device under it.
type Confiner interface {
	Confine()
}

// Confine confines d if it implements Confiner; other devices are left as
// they are (they keep their own synchronisation).
func Confine(d Device) {
	if c, ok := d.(Confiner); ok {
		c.Confine()
	}
}
