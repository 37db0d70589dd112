package bufcache

import (
	"errors"
	"fmt"

	"github.com/bhsim/bhsim/blocksize"
)

// Errno is a Linux error number (include/uapi/asm-generic/errno-base.h), as a
// system call returns it negated: what a program calling read(2), write(2),
// fsync(2), ioctl(2) or open(2) on the block device node would see. ErrnoOf
// maps the model's errors to it.
type Errno uint16

// The error numbers the model's block-device file operations return.
const (
	EPERM  Errno = 1  // operation not permitted: write to a read-only device
	EIO    Errno = 5  // I/O error: a failed read, or writeback failed (fsync)
	ENXIO  Errno = 6  // no such device or address: getblk past the end
	EBADF  Errno = 9  // bad file descriptor: closed, or not open for the operation
	EFAULT Errno = 14 // bad address: the user buffer
	EBUSY  Errno = 16 // device busy: another holder has it exclusively
	EINVAL Errno = 22 // invalid argument: a block size BLKBSZSET refuses
	ENOSPC Errno = 28 // no space left: a write at or past the device's end
	// EOPNOTSUPP (include/uapi/asm-generic/errno.h): operation not
	// supported, BLKDISCARD on a device without discard.
	EOPNOTSUPP Errno = 95
)

// errnoNames are the symbolic names, for String.
var errnoNames = map[Errno]string{EPERM: "EPERM", EIO: "EIO", ENXIO: "ENXIO", EBADF: "EBADF", EFAULT: "EFAULT",
	EBUSY: "EBUSY", EINVAL: "EINVAL", ENOSPC: "ENOSPC", EOPNOTSUPP: "EOPNOTSUPP"}

// String returns the symbolic name ("EIO"), or "errno(n)" for a number the
// model does not return.
func (e Errno) String() string {
	if s, ok := errnoNames[e]; ok {
		return s
	}
	return fmt.Sprintf("errno(%d)", uint16(e))
}

// Errors of the block-device file operations (File, BlockDevice.Open), beside
// those of the write and read paths (ErrReadOnly, ErrNoSpace, ErrIO,
// ErrFault).
var (
	// ErrBusy is -EBUSY: an exclusive open, or BLKBSZSET through a
	// descriptor that is not the exclusive one, while another descriptor
	// holds the device with O_EXCL (bd_prepare_to_claim).
	ErrBusy = errors.New("bufcache: device busy")
	// ErrBadFile is -EBADF: an operation on a closed File, a pwrite through
	// one not open for writing or a pread through one not open for reading.
	ErrBadFile = errors.New("bufcache: bad file descriptor")
	// ErrInvalid is -EINVAL: an ioctl argument out of range (a negative
	// block size, open flags asking for neither reading nor writing).
	ErrInvalid = errors.New("bufcache: invalid argument")
)

// errnoOf maps each sentinel to its errno, in the order ErrnoOf tries them.
var errnoOf = []struct {
	err   error
	errno Errno
}{
	{ErrReadOnly, EPERM},
	{ErrNoSpace, ENOSPC},
	{ErrFault, EFAULT},
	{ErrBusy, EBUSY},
	{ErrBadFile, EBADF},
	{ErrInvalid, EINVAL},
	{ErrInvalidBlockSize, EINVAL},
	{ErrBeyondDevice, ENXIO},
	{ErrBuffersBusy, EBUSY},
	{ErrIO, EIO},
	{ErrUnmapped, EIO},
	{ErrOutOfRange, EIO},
}

// ErrnoOf returns the errno the kernel returns to user space for err: 0 for
// nil; the Errno an error in err's chain reports through an Errno() Errno
// method, or is; EINVAL for a *blocksize.SizeError (set_blocksize's
// refusals); the errno of the first of the model's sentinels err wraps; EIO
// for any other error. O(length of the chain).
func ErrnoOf(err error) Errno {
	if err == nil {
		return 0
	}
	var e Errno
	if errors.As(err, &e) {
		return e
	}
	var carrier interface{ Errno() Errno }
	if errors.As(err, &carrier) {
		return carrier.Errno()
	}
	var se *blocksize.SizeError
	if errors.As(err, &se) {
		return EINVAL
	}
	for _, m := range errnoOf {
		if errors.Is(err, m.err) {
			return m.errno
		}
	}
	return EIO
}

// Error returns the C library's message for the error number ("Input/output
// error"), so that an Errno is itself an error.
func (e Errno) Error() string {
	switch e {
	case EPERM:
		return "operation not permitted"
	case EIO:
		return "input/output error"
	case ENXIO:
		return "no such device or address"
	case EBADF:
		return "bad file descriptor"
	case EFAULT:
		return "bad address"
	case EBUSY:
		return "device or resource busy"
	case EINVAL:
		return "invalid argument"
	case ENOSPC:
		return "no space left on device"
	case EOPNOTSUPP:
		return "operation not supported"
	}
	return e.String()
}
