package iomap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

func TestBlkdevIomapBegin(t *testing.T) {
	const (
		mib = 1 << 20
		odd = 10*4096 + 512 // a loop device of 41472 bytes with 4 KiB logical blocks
	)
	mapped := func(off, isize uint64) IOMap {
		return IOMap{Offset: off, Length: isize - off, Addr: off, Type: Mapped, Flags: FBufferHead}
	}
	for _, tc := range []struct {
		name               string
		isize              uint64
		logical            uint32
		offset             uint64
		aligned, raw       IOMap // zero: -EIO
		alignedEIO, rawEIO bool
	}{
		{name: "start of the device", isize: mib, logical: 512, offset: 0,
			aligned: mapped(0, mib), raw: mapped(0, mib)},
		{name: "unaligned offset is aligned down", isize: mib, logical: 512, offset: 1000,
			aligned: mapped(512, mib), raw: mapped(512, mib)},
		{name: "4Kn: offset inside the last block", isize: mib, logical: 4096, offset: mib - 100,
			aligned: mapped(mib-4096, mib), raw: mapped(mib-4096, mib)},
		{name: "last byte", isize: mib, logical: 512, offset: mib - 1,
			aligned: mapped(mib-512, mib), raw: mapped(mib-512, mib)},
		{name: "at the end", isize: mib, logical: 512, offset: mib, alignedEIO: true, rawEIO: true},
		{name: "past the end", isize: mib, logical: 4096, offset: mib + 4096, alignedEIO: true, rawEIO: true},
		{name: "odd size: inside the last, partial logical block", isize: odd, logical: 4096, offset: odd - 12,
			aligned: mapped(40960, odd), raw: mapped(40960, odd)},
		{name: "odd size: at i_size, inside the last logical block", isize: odd, logical: 4096, offset: odd,
			aligned: mapped(40960, odd), rawEIO: true},
		{name: "odd size: past i_size, inside the last logical block", isize: odd, logical: 4096, offset: odd + 100,
			aligned: mapped(40960, odd), rawEIO: true},
		{name: "odd size: the next logical block", isize: odd, logical: 4096, offset: 45056, alignedEIO: true, rawEIO: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []struct {
				check EOFCheck
				want  IOMap
				eio   bool
			}{{EOFAligned, tc.aligned, tc.alignedEIO}, {EOFRaw, tc.raw, tc.rawEIO}} {
				got, err := BlkdevIomapBegin(v.check, tc.isize, tc.logical, tc.offset)
				if v.eio {
					assert.ErrorIs(t, err, ErrPastEnd, v.check.String())
					assert.ErrorIs(t, err, bufcache.ErrIO, "-EIO")
					continue
				}
				require.NoError(t, err, v.check.String())
				assert.Equal(t, v.want, got, v.check.String())
			}
		})
	}
}

func TestBlkdevIomapBeginBadArguments(t *testing.T) {
	_, err := BlkdevIomapBegin(EOFAligned, 1<<20, 0, 0)
	assert.ErrorIs(t, err, ErrBadOption)
	_, err = BlkdevIomapBegin(EOFAligned, 1<<20, 1000, 0)
	assert.ErrorIs(t, err, ErrBadOption)
	_, err = BlkdevIomapBegin(EOFCheck(7), 1<<20, 512, 0)
	assert.ErrorIs(t, err, ErrBadOption)
	assert.Equal(t, "eof(7)", EOFCheck(7).String())
}

// lbsDisk is a MemDisk that claims a larger logical block size than its
// size is a multiple of, as a loop device given 4 KiB blocks over an odd-sized
// file: the case behind 0c12028aec83.
type lbsDisk struct {
	*blk.MemDisk
	lbs uint32
}

func (d lbsDisk) LogicalBlockSize() uint32 { return d.lbs }

// TestEOFVariantsOnOddDevice writes near the end of a device whose size is
// not a multiple of its logical block size. With the original check a write
// position at or just past i_size still gets a mapping, one that ends at or
// before the position: iomap_iter WARNs, and the write either fails with
// -EFAULT (a zero-length write_iter: fault-in of 0 bytes) or hits the
// mapping-range BUG_ON of iomap_write_begin. The fix returns -EIO.
func TestEOFVariantsOnOddDevice(t *testing.T) {
	const odd = 10*4096 + 512
	for _, tc := range []struct {
		name               string
		pos, n             uint64
		alignedN, rawN     uint64
		alignedErr, rawErr error
		alignedWarn        uint64
	}{
		{name: "inside the last logical block, crossing i_size", pos: odd - 472, n: 1000,
			alignedN: 472, rawN: 472, alignedWarn: 1},
		{name: "at i_size", pos: odd, n: 100,
			alignedErr: bufcache.ErrFault, rawErr: ErrPastEnd, alignedWarn: 1},
		{name: "past i_size in the last logical block", pos: odd + 100, n: 100,
			alignedErr: ErrInvalidMapping, rawErr: ErrPastEnd, alignedWarn: 1},
		{name: "in the next logical block", pos: odd + 4000, n: 100,
			alignedErr: ErrPastEnd, rawErr: ErrPastEnd},
	} {
		for _, check := range []EOFCheck{EOFAligned, EOFRaw} {
			t.Run(tc.name+"/"+check.String(), func(t *testing.T) {
				m, err := bufcache.NewMachine(bufcache.Config{Check: true})
				require.NoError(t, err)
				mem, err := blk.NewMemDisk("loop0", odd, 512)
				require.NoError(t, err)
				d, err := m.Open(lbsDisk{mem, 4096}, bufcache.DeviceOptions{})
				require.NoError(t, err)
				require.Equal(t, uint32(4096), d.BlockSize())
				cpu := m.CPU(0)
				n, err := FileBufferedWrite(cpu, d, tc.pos, userIter(t, pattern(int(tc.n), 3)), BlkdevOps(check), 4096)
				wantN, wantErr, warn := tc.rawN, tc.rawErr, uint64(0)
				if check == EOFAligned {
					wantN, wantErr, warn = tc.alignedN, tc.alignedErr, tc.alignedWarn
				}
				assert.Equal(t, wantN, n)
				if wantErr != nil {
					assert.ErrorIs(t, err, wantErr)
				} else {
					assert.NoError(t, err)
				}
				assert.Equal(t, warn, cpu.Events()[bufcache.EvWarning], "iomap_iter_done WARNs")
				require.NoError(t, d.SyncBlockdev(cpu))
				require.NoError(t, m.Check())
				if wantN > 0 {
					got := make([]byte, wantN)
					_, err := mem.ReadAt(got, int64(tc.pos))
					require.NoError(t, err)
					assert.Equal(t, pattern(int(tc.n), 3)[:wantN], got)
				}
			})
		}
	}
}

func TestBlkdevOpsOnDevice(t *testing.T) {
	_, d, _ := newDev(t, bufcache.Config{InitBlocksize: blocksize.PolicyLogical}, 1<<20)
	m, err := BlkdevOps(EOFRaw).Begin(nil, d, 5000, 1, IterWrite)
	require.NoError(t, err)
	assert.Equal(t, IOMap{Offset: 4608, Length: 1<<20 - 4608, Addr: 4608, Type: Mapped, Flags: FBufferHead}, m)
	assert.NoError(t, BlkdevOps(EOFRaw).End(nil, d, 5000, 1, 1, IterWrite, m))
	_, err = BlkdevOps(EOFAligned).Begin(nil, d, 1<<20, 1, IterWrite)
	assert.ErrorIs(t, err, ErrPastEnd)
}
