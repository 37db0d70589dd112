package blk

import "errors"

// Errors a device completes bios with.
var (
	// ErrIO is the generic I/O error (BLK_STS_IOERR, -EIO).
	ErrIO = errors.New("blk: I/O error")
	// ErrBeyondEnd is returned for a bio that reaches past the device's last sector
	// (the kernel's "attempt to access beyond end of device").
	ErrBeyondEnd = errors.New("blk: access beyond end of device")
	// ErrMisaligned is returned for a bio whose start or length is not a multiple
	// of the logical block size, or whose memory cannot be cut into requests
	// within the queue limits at logical-block boundaries.
	ErrMisaligned = errors.New("blk: bio not aligned to the logical block size")
	// ErrNotSupported is returned for a bio whose operation the device does not
	// know (BLK_STS_NOTSUPP, -EOPNOTSUPP).
	ErrNotSupported = errors.New("blk: operation not supported")
	// ErrInjected marks a failure a FaultyDevice injected. The bio's error
	// wraps ErrIO too: to the layers above it is an ordinary I/O error.
	ErrInjected = errors.New("blk: injected fault")
	// ErrReadOnly marks a write a FaultyDevice failed because it was made
	// read-only (FaultyDevice.SetReadOnly), as a disk that turns
	// write-protected under the host fails writes. The bio's error wraps ErrIO
	// too: the buffer cache's end_io sees only failure (-EIO at the next
	// sync); -EROFS and -EPERM belong to open(2) and write(2), not to bios.
	ErrReadOnly = errors.New("blk: write to a read-only device")
	// ErrNoSpace is returned for a write the device cannot store because its
	// backing store is full (BLK_STS_NOSPC, -ENOSPC): what the loop driver
	// completes a request with when the file behind it cannot grow
	// ([MemDisk.SetBackingFull]). It does not wrap ErrIO: the kernel reports
	// it as its own status, block_rq_complete's error -28.
	ErrNoSpace = errors.New("blk: no space left on the backing store")
)

// Errno values of the completion statuses the model produces
// (blk_status_to_errno, block/blk-core.c).
const (
	// ErrnoIO is EIO, for BLK_STS_IOERR.
	ErrnoIO = 5
	// ErrnoNoSpace is ENOSPC, for BLK_STS_NOSPC.
	ErrnoNoSpace = 28
	// ErrnoNotSupported is EOPNOTSUPP, for BLK_STS_NOTSUPP.
	ErrnoNotSupported = 95
)

// Errno returns the errno the kernel reports for a bio or request completed
// with err, as blk_status_to_errno maps the block status (positive; the
// tracepoint block_rq_complete prints it negated): 0 for nil,
// ErrnoNoSpace for an error wrapping ErrNoSpace, ErrnoNotSupported for
// ErrNotSupported, and ErrnoIO for every other error — ErrIO and what wraps
// it, and also ErrBeyondEnd and ErrMisaligned, which bio_check_eod and
// blk_mq_submit_bio's alignment check fail with BLK_STS_IOERR. O(depth of
// err's chain); it does not allocate.
func Errno(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrNoSpace):
		return ErrnoNoSpace
	case errors.Is(err, ErrNotSupported):
		return ErrnoNotSupported
	}
	return ErrnoIO
}

// Errors of the request layer's configuration and use.
var (
	// ErrInvalidConfig is returned by NewQueue, Limits.Validate and the timing
	// models' Validate methods for a configuration the kernel would refuse or
	// that cannot be priced.
	ErrInvalidConfig = errors.New("blk: invalid queue configuration")
	// ErrPlugNotStarted is returned by Plug.Finish on a plug that is not
	// started.
	ErrPlugNotStarted = errors.New("blk: plug finished without a matching start")
	// ErrNoCutPoint is returned by PowerLog.CutAt and PowerLog.CutPerDisk
	// for a cut point that the log does not have.
	ErrNoCutPoint = errors.New("blk: no such power-cut point")
)
