package blk

import (
	"errors"
	"fmt"
)

// SectorShift is log2 of the 512-byte sector every block-layer address counts in.
const SectorShift = 9

// Device is a block device queue as the buffer cache sees it: a size, a logical
// block size and a submit_bio entry. Submit must complete b exactly once, by
// calling b.Complete. For now bufcache needs the completion before Submit
// returns or on the submitting goroutine, because it counts completion events
// on the submitting CPU's plain counters; asynchronous completion comes with the
// write path's device models and their own clock.
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

// Errors a device completes bios with.
var (
	// ErrIO is the generic I/O error (BLK_STS_IOERR, -EIO).
	ErrIO = errors.New("blk: I/O error")
	// ErrBeyondEnd is returned for a bio that reaches past the device's last sector
	// (the kernel's "attempt to access beyond end of device").
	ErrBeyondEnd = errors.New("blk: access beyond end of device")
	// ErrMisaligned is returned for a bio whose start or length is not a multiple
	// of the logical block size.
	ErrMisaligned = errors.New("blk: bio not aligned to the logical block size")
)

// CheckBio validates b against d's geometry: the checks submit_bio_noacct makes
// before a driver sees a bio. It returns nil or an error wrapping ErrBeyondEnd or
// ErrMisaligned.
func CheckBio(d Device, b *Bio) error {
	lbs := uint64(d.LogicalBlockSize())
	start := b.Sector << SectorShift
	if start%lbs != 0 || uint64(b.size)%lbs != 0 || b.size == 0 {
		return fmt.Errorf("%w: %s sector %d, %d bytes, logical block %d on %s",
			ErrMisaligned, b.Op, b.Sector, b.size, lbs, d.Name())
	}
	if end := b.Sector + b.Sectors(); end < b.Sector || end > d.Sectors() {
		return fmt.Errorf("%w: %s sectors [%d, %d) on %s of %d sectors",
			ErrBeyondEnd, b.Op, b.Sector, b.Sector+b.Sectors(), d.Name(), d.Sectors())
	}
	return nil
}
