package bufcache

import (
	"errors"
	"fmt"

	"github.com/bhsim/bhsim/blocksize"
)

// ErrFault is -EFAULT: the user buffer is not readable where the write needs it.
var ErrFault = errors.New("bufcache: bad address in user buffer")

// UserBuf is a user-space buffer as the kernel sees it behind an iov_iter: bytes
// at a virtual address, in pages of PAGE_SIZE that the kernel must fault in
// before copying from them without sleeping. Part of it can be made
// unreadable (an unmapped range), which makes writes fail with ErrFault or stop
// short, as in the kernel.
//
// A UserBuf of nil data stands for a buffer whose contents do not matter (the
// metadata-only mode): pages are still touched and counted, nothing is copied.
type UserBuf struct {
	data     []byte
	size     uint64
	base     uint64 // virtual address of the first byte
	pageSize uint64
	badFrom  uint64 // unreadable range [badFrom, badTo) as offsets; empty when equal
	badTo    uint64
}

// NewUserBuf returns a user buffer holding data, at virtual address base (dd's
// buffer is page-aligned: base 0 is fine), with the machine's page size.
func NewUserBuf(data []byte, base uint64, pageSize uint32) *UserBuf {
	return &UserBuf{data: data, size: uint64(len(data)), base: base, pageSize: uint64(pageSize)}
}

// NewUserBufSize returns a metadata-only user buffer of size bytes: pages are
// faulted in and counted, no bytes are kept or copied.
func NewUserBufSize(size uint64, base uint64, pageSize uint32) *UserBuf {
	return &UserBuf{size: size, base: base, pageSize: uint64(pageSize)}
}

// SetUnreadable makes bytes [off, off+n) of the buffer unreadable (n = 0 makes
// everything readable again).
func (u *UserBuf) SetUnreadable(off, n uint64) { u.badFrom, u.badTo = off, off+n }

// Size returns the buffer's length in bytes.
func (u *UserBuf) Size() uint64 { return u.size }

// readable returns how many bytes from offset off onwards, at most n, can be
// read before the unreadable range.
func (u *UserBuf) readable(off, n uint64) uint64 {
	if u.badFrom < u.badTo && off+n > u.badFrom && off < u.badTo {
		if off >= u.badFrom {
			return 0
		}
		return u.badFrom - off
	}
	return n
}

// IovIter models a single-segment struct iov_iter over a UserBuf: the part of
// the buffer a write(2) still has to consume.
type IovIter struct {
	buf   *UserBuf
	off   uint64 // next byte of buf to consume
	count uint64 // bytes left
	sink  byte   // what the fault-in touches read (per iterator: a UserBuf may be shared)
}

// Iter returns a new iterator over bytes [off, off+n) of u (one
// allocation; IovIter.Reset reuses one instead). Errors: those of Reset.
func (u *UserBuf) Iter(off, n uint64) (*IovIter, error) {
	it := new(IovIter)
	if err := it.Reset(u, off, n); err != nil {
		return nil, err
	}
	return it, nil
}

// Reset makes it an iterator over bytes [off, off+n) of u, as Iter returns
// one, without allocating: a caller making many write(2) calls keeps one
// iterator. Errors: the buffer's page size is not a valid PAGE_SIZE
// (blocksize.ValidatePageSize), the buffer passes the top of the address
// space, or the range is not inside the buffer; it is then unchanged.
func (it *IovIter) Reset(u *UserBuf, off, n uint64) error {
	if err := blocksize.ValidatePageSize(uint32(u.pageSize)); err != nil {
		return fmt.Errorf("bufcache: user buffer: %w", err)
	}
	if u.base+u.size < u.base {
		return fmt.Errorf("bufcache: a user buffer of %d bytes at %#x passes the top of the address space", u.size, u.base)
	}
	if off > u.size || n > u.size-off {
		return fmt.Errorf("bufcache: iov_iter [%d, +%d) outside a %d-byte user buffer", off, n, u.size)
	}
	*it = IovIter{buf: u, off: off, count: n}
	return nil
}

// Count returns the bytes left (iov_iter_count); 0 for a nil iterator, which
// every write path takes as an empty write (0 bytes, no error).
func (it *IovIter) Count() uint64 {
	if it == nil {
		return 0
	}
	return it.count
}

// truncate limits the iterator to n bytes (iov_iter_truncate) and returns how
// many it cut off.
func (it *IovIter) truncate(n uint64) uint64 {
	if n >= it.count {
		return 0
	}
	cut := it.count - n
	it.count = n
	return cut
}

// faultInReadable models fault_in_iov_iter_readable: touch one byte of every
// user page that the next n bytes span, counting EvFaultInPage per page, and
// stop at the first unreadable page. It returns how many of the n bytes could
// not be faulted in (0 when all could).
func (it *IovIter) faultInReadable(cpu *CPU, n uint64) uint64 {
	n = min(n, it.count)
	if n == 0 {
		return 0
	}
	u := it.buf
	ok := u.readable(it.off, n)
	if ok == 0 {
		return n
	}
	first := (u.base + it.off) / u.pageSize
	last := (u.base + it.off + ok - 1) / u.pageSize
	cpu.countN(EvFaultInPage, int(last-first+1)) // one per page touched below
	if u.data != nil {
		// The touches: the first at the iterator's byte, then the first
		// byte of every later page.
		data, sink := u.data[it.off:it.off+ok], it.sink
		sink ^= data[0]
		for off := (first+1)*u.pageSize - u.base - it.off; off < ok; off += u.pageSize {
			sink ^= data[off]
		}
		it.sink = sink
	}
	return n - ok
}

// copyFrom models copy_page_from_iter_atomic: copy up to n of the next bytes
// into dst (nil dst on metadata-only devices copies nothing), stopping at an
// unreadable byte, and advance. It returns the bytes copied.
func (it *IovIter) copyFrom(cpu *CPU, dst []byte, n uint64) uint64 {
	n = it.buf.readable(it.off, min(n, it.count))
	if dst != nil && it.buf.data != nil {
		copy(dst[:n], it.buf.data[it.off:it.off+n])
	} else if dst != nil {
		clear(dst[:n]) // a buffer without contents reads as zeros, like /dev/zero's
	}
	cpu.countN(EvCopyByte, int(n))
	it.off += n
	it.count -= n
	return n
}

// revert gives back n consumed bytes (iov_iter_revert): the part of a copy that
// write_end did not accept.
func (it *IovIter) revert(n uint64) {
	it.off -= n
	it.count += n
}
