package bufcache

import "errors"

// Errors returned by the model. Each is wrapped with the operation's details;
// test with errors.Is.
var (
	// ErrInvalidBlockSize: getblk with a size that is not a power of two in
	// [512, PAGE_SIZE] or not a multiple of the logical block size (the kernel
	// prints "getblk(): invalid block size" and returns NULL).
	ErrInvalidBlockSize = errors.New("bufcache: invalid block size")
	// ErrOutOfRange: the block's page index does not fit pgoff_t ("requested
	// out-of-range block").
	ErrOutOfRange = errors.New("bufcache: requested out-of-range block")
	// ErrBeyondDevice: the block lies at or past the end of the device (grow
	// returns -ENXIO and getblk NULL).
	ErrBeyondDevice = errors.New("bufcache: block beyond end of device")
	// ErrSizeMismatch: getblk with a size other than the device's block size.
	// The kernel's __getblk_slow then loops forever (grow creates buffers of one
	// size, lookup searches with i_blkbits: the 2019 syzbot livelock); the model
	// stops after one futile round and returns this instead.
	ErrSizeMismatch = errors.New("bufcache: getblk size differs from the device block size")
	// ErrIO: a read or write failed on the device (-EIO).
	ErrIO = errors.New("bufcache: I/O error")
	// ErrUnmapped: synchronous write of a buffer that is not mapped (-EIO).
	ErrUnmapped = errors.New("bufcache: buffer not mapped")
	// ErrNotCached: no folio is cached at that page index.
	ErrNotCached = errors.New("bufcache: page not cached")
	// ErrNoBuffers: the folio has no buffer ring.
	ErrNoBuffers = errors.New("bufcache: page has no buffers")
	// ErrBuffersBusy: a buffer of the folio is referenced, dirty or locked, or
	// the folio is under writeback.
	ErrBuffersBusy = errors.New("bufcache: buffers busy")
	// ErrBadDevice: Open of a nil disk, an empty one, or one whose size in
	// bytes passes MAX_LFS_FILESIZE.
	ErrBadDevice = errors.New("bufcache: bad device")
	// ErrUnknownEvent: ParseEvent of a name that is no event's.
	ErrUnknownEvent = errors.New("bufcache: unknown event")
	// ErrUnknownAllocVariant: ParseAllocVariant of a name that is no
	// variant's, or a Config whose Alloc is not one of the constants.
	ErrUnknownAllocVariant = errors.New("bufcache: unknown alloc variant")
)
