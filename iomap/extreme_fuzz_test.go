package iomap

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// extremeMaxWork bounds the bytes one write of the fuzz targets below really
// writes, so that huge counts stay quick.
const extremeMaxWork = 256 << 10

// extremePos decodes a byte position relative to a device of size bytes:
// raw, small, around the end, near 2^64 or around 4 GiB.
func extremePos(mode byte, raw, size uint64) uint64 {
	switch mode % 5 {
	case 0:
		return raw
	case 1:
		return raw % 8192
	case 2:
		return size - 8192 + raw%16384 // wraps for a tiny size on purpose
	case 3:
		return math.MaxUint64 - raw%8192
	default:
		return 1<<32 - 4096 + raw%8192
	}
}

// FuzzBlkdevWriteExtreme calls BlkdevWrite with positions near 0, near the
// end, around 4 GiB and near 2^64, counts up to 2^64 − 1 (a metadata-only
// user buffer; what is really written stays bounded), user addresses near
// the top of the address space (a buffer passing it is refused, as
// vfs_write's access_ok refuses it), and arbitrary option values — unknown paths, chunk policies and EOF
// checks included — on metadata-only devices of 16 TiB and of
// MAX_LFS_FILESIZE bytes (rounded down to a sector, the largest Open admits),
// with 4, 16 or 64 KiB pages. It must answer ErrBadOption for an unknown
// variant, else as blkdev_write_iter: -EPERM, -ENOSPC, the write shortened to
// the end, the iterator keeping the rest; never panic, and leave the
// invariants intact.
func FuzzBlkdevWriteExtreme(f *testing.F) {
	f.Add(uint64(0), uint64(4096), uint8(0), uint8(0), uint8(0))
	f.Add(uint64(100), uint64(math.MaxUint64), uint8(2), uint8(0x01), uint8(0x10))
	f.Add(uint64(5), uint64(1<<20), uint8(3), uint8(0x23), uint8(0x07))
	f.Add(uint64(77), uint64(9000), uint8(4), uint8(0x45), uint8(0x29))
	f.Add(uint64(8191), uint64(2), uint8(2), uint8(0x80), uint8(0x3f))
	f.Fuzz(func(t *testing.T, rawPos, rawCount uint64, mode, sel, optBits uint8) {
		pageSize := uint32(4096) << (2 * (sel & 3 % 3))
		size := uint64(16 << 40)
		if sel&4 != 0 {
			size = blocksize.MaxLFSFileSize &^ 511 // the largest device Open admits
		}
		opts := Options{
			Path:   WritePath(optBits & 3),
			Chunk:  ChunkPolicy(optBits >> 2 & 3),
			EOF:    EOFCheck(optBits >> 4 & 3),
			NoTHP:  optBits&0x40 != 0,
			XASCap: optBits&0x80 != 0,
		}
		m, err := bufcache.NewMachine(bufcache.Config{PageSize: pageSize, Check: true, DirtyLimit: 16})
		require.NoError(t, err)
		disk, err := blk.NewMemDisk("sdx", size, 512)
		require.NoError(t, err)
		d, err := m.Open(disk, bufcache.DeviceOptions{MetadataOnly: true})
		require.NoError(t, err)
		cpu := m.CPU(0)
		if sel&8 != 0 {
			d.SetReadOnly(true)
		}

		pos := extremePos(mode, rawPos, size)
		count := rawCount
		if pos < size && size-pos > extremeMaxWork {
			count %= extremeMaxWork
		}
		base := uint64(0)
		if sel&0x10 != 0 {
			base = math.MaxUint64 - rawPos%(1<<20) // near the top of the address space
		}
		it, err := bufcache.NewUserBufSize(count, base, pageSize).Iter(0, count)
		if base+count < base { // the buffer passes the top: refused, as vfs_write's access_ok does
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		n, err := BlkdevWrite(cpu, d, pos, it, opts)

		var wantErr error
		var want uint64
		switch {
		case opts.Path > PathBufferHead:
			wantErr = ErrBadOption
		case opts.Path == PathIomap && (opts.EOF > EOFRaw || opts.Chunk > ChunkMappingMaxFolioSize):
			wantErr = ErrBadOption
		case d.ReadOnly():
			wantErr = bufcache.ErrReadOnly
		case count == 0:
		case pos >= size:
			wantErr = bufcache.ErrNoSpace
		default:
			want = min(count, size-pos)
		}
		if wantErr != nil {
			require.ErrorIs(t, err, wantErr, "write(%d, %d) with %+v", pos, count, opts)
		} else {
			require.NoError(t, err, "write(%d, %d) with %+v", pos, count, opts)
		}
		require.Equal(t, want, n, "write(%d, %d) with %+v", pos, count, opts)
		require.Equal(t, count-n, it.Count(), "the iterator keeps what was not written")
		require.NoError(t, m.Check())
		d.SetReadOnly(false)
		require.NoError(t, d.SyncBlockdev(cpu))
		require.NoError(t, m.Check())
	})
}

// errOps is the error fuzzOps' Begin and End return when told to.
var errOps = errors.New("fuzz ops: refused")

// fuzzOps is an iomap_ops whose mappings come from the fuzzer: each call to
// Begin takes the next 8-byte record and builds a mapping around pos from it
// — where it starts relative to pos, how long it is, whether it is identity
// mapped, its type and flags — or fails; End fails when told to.
type fuzzOps struct {
	recs []byte
	i    int
	// gaveNew records that a mapping with FNew was handed out: its blocks
	// count as just allocated, so the parts of them a write does not cover
	// may be zeroed instead of read.
	gaveNew bool
}

func (o *fuzzOps) next() []byte {
	if len(o.recs) < 8 {
		return make([]byte, 8)
	}
	r := o.recs[o.i%(len(o.recs)/8)*8:][:8]
	o.i++
	return r
}

func (o *fuzzOps) Begin(_ *bufcache.CPU, d *bufcache.BlockDevice, pos, _ uint64, _ IterFlags) (IOMap, error) {
	r := o.next()
	if r[0]&0x80 != 0 {
		return IOMap{}, errOps
	}
	back := uint64(r[1]) << (r[2] % 16) // how far before pos it starts (wraps when > pos)
	m := IOMap{Offset: pos - back, Addr: pos - back, Type: Type(r[3] % 6), Flags: Flags(r[4])}
	switch r[5] % 4 {
	case 0:
		m.Length = d.Size() - m.Offset // to the end, as blkdev_iomap_begin maps
	case 1:
		m.Length = uint64(r[6]) << (r[7] % 20)
	case 2:
		m.Length = math.MaxUint64 // Offset + Length wraps
	default:
		m.Length = back + 1 + uint64(r[6]) // ends just after pos
	}
	if r[0]&0x40 != 0 {
		m.Addr += uint64(r[7]) << 9 // not the identity
	}
	o.gaveNew = o.gaveNew || m.Flags&FNew != 0
	return m, nil
}

func (o *fuzzOps) End(_ *bufcache.CPU, _ *bufcache.BlockDevice, _, _, _ uint64, _ IterFlags, _ IOMap) error {
	if o.next()[0]&0x20 != 0 {
		return errOps
	}
	return nil
}

// FuzzFileBufferedWrite runs iomap_file_buffered_write on a 64 KiB device
// with data, with an arbitrary chunk and an iomap_ops whose mappings come
// from the fuzzer: misplaced, empty, wrapping, not identity mapped, of any
// type and flags, or refused. The caller's entry checks hold (the write lies
// inside the device). Whatever the mappings, it must return an error of the
// documented kinds or the bytes written, which are exactly the first n bytes
// of the user buffer, at pos: after a sync the disk equals the old contents
// with those bytes replaced — and, where a mapping said FNew, the rest of the
// pages the write touched either kept or zeroed (folio_zero_new_buffers). It
// must never panic and leave the invariants intact.
func FuzzFileBufferedWrite(f *testing.F) {
	const size = 64 << 10
	ident := []byte{0, 0, 0, 2, byte(FBufferHead), 0, 0, 0}
	f.Add(uint32(100), uint32(9000), uint64(1<<21), uint8(0), ident)
	f.Add(uint32(4096), uint32(5000), uint64(4096), uint8(1), append(ident, 0x80, 0, 0, 0, 0, 0, 0, 0))
	f.Add(uint32(7), uint32(20000), uint64(3<<12), uint8(2), []byte{0x40, 3, 2, 2, byte(FBufferHead), 3, 9, 1})
	f.Add(uint32(60000), uint32(5536), uint64(8192), uint8(3), []byte{0, 200, 15, 2, byte(FBufferHead | FNew), 1, 0, 0})
	f.Add(uint32(0), uint32(65536), uint64(1<<63), uint8(4), []byte{0x20, 0, 0, 0, 0, 2, 0, 0, 0, 1, 1, 4, 0xff, 3, 1, 1})
	f.Fuzz(func(t *testing.T, rawPos, rawCount uint32, chunk uint64, sel uint8, recs []byte) {
		pos := uint64(rawPos) % size
		count := uint64(rawCount) % (size - pos + 1)
		m, d, disk := newDev(t, bufcache.Config{InitBlocksize: blocksize.PolicyLogical, DirtyLimit: 4}, size)
		cpu := m.CPU(0)
		require.NoError(t, d.SetBlocksize(cpu, uint32(512)<<(sel%4)))
		old := pattern(size, 0x6b)
		_, err := d.Write(cpu, 0, userIter(t, old))
		require.NoError(t, err)
		require.NoError(t, d.SyncBlockdev(cpu))
		if sel&4 != 0 {
			dropCache(t, cpu, d)
		}

		data := pattern(int(count), 0x1d)
		it := userIter(t, data)
		ops := &fuzzOps{recs: recs}
		n, err := FileBufferedWrite(cpu, d, pos, it, ops, chunk)
		if err != nil {
			// ErrFault too: a mapping that ends at or before pos leaves 0
			// bytes to write, and fault_in_iov_iter_readable of 0 bytes
			// "fails", as iomap_write_iter finds in the kernel.
			require.Zero(t, n)
			require.Truef(t, errors.Is(err, ErrBadOption) || errors.Is(err, ErrInvalidMapping) ||
				errors.Is(err, ErrNotModelled) || errors.Is(err, errOps) || errors.Is(err, bufcache.ErrIO) ||
				errors.Is(err, bufcache.ErrFault), "unexpected error %v", err)
		}
		require.LessOrEqual(t, n, count)
		require.Equal(t, count-n, it.Count(), "the iterator keeps what was not written")
		got := onDisk(t, cpu, d, disk)
		zeroFrom, zeroTo := pos&^4095, min(blocksize.AlignUp(pos+count, 4096), size)
		for i, b := range got {
			want, p := old[i], uint64(i)
			switch {
			case p >= pos && p < pos+n:
				want = data[p-pos]
			case ops.gaveNew && p >= zeroFrom && p < zeroTo && b == 0:
				want = 0
			}
			if b != want {
				t.Fatalf("byte %d is %#x, want %#x: %d of %d bytes written at %d", p, b, want, n, count, pos)
			}
		}
		assert.NoError(t, m.Check())
	})
}
