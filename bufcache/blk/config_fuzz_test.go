package blk

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cfgSector decodes a bio's start sector for a device of sectors sectors:
// raw, small, around the end, near 2^64 or around 2^55 (where sector << 9
// overflows).
func cfgSector(mode byte, raw, sectors uint64) uint64 {
	switch mode % 5 {
	case 0:
		return raw
	case 1:
		return raw % 64
	case 2:
		return sectors - 16 + raw%32
	case 3:
		return math.MaxUint64 - raw%64
	default:
		return 1<<55 - 8 + raw%16
	}
}

// FuzzDeviceConfig builds devices, queues and bios from arbitrary numbers —
// sizes near 2^64, logical and physical block sizes, queue limits, page sizes
// and segment accounting of any value, start sectors near the end and near
// 2^64, vector lengths and offsets up to 2^32 − 1, unknown operations — and
// checks that every constructor answers by its documented rules (NewMemDisk
// and NewNullDisk: a power-of-two logical block size in [512, 65536] and a
// positive multiple of it; NewQueue: Limits.Validate and a matching logical
// block size), that a bio either fails as CheckBio says or completes without
// error, exactly once, plugged or not, and that ReadAt refuses ranges past
// the end. Nothing may panic.
//
// vecs is cut into 8-byte records, one vector each: length (4 bytes), page
// offset (2 bytes), and whether it carries data (small vectors only) or
// continues the previous one's page frame.
func FuzzDeviceConfig(f *testing.F) {
	lim := DefaultLimits(512, 4096)
	vec := func(n uint32, off uint16, flags uint16) []byte {
		b := binary.LittleEndian.AppendUint32(nil, n)
		b = binary.LittleEndian.AppendUint16(b, off)
		return binary.LittleEndian.AppendUint16(b, flags)
	}
	f.Add(uint64(1<<20), uint32(512), lim.PhysicalBlockSize, lim.MaxSectors, lim.MaxSegments, lim.MaxSegmentSize, lim.PageSize, uint8(0),
		uint8(1), uint8(1), uint64(8), vec(4096, 0, 1))
	f.Add(uint64(1<<40), uint32(4096), uint32(4096), uint32(8), uint32(1), uint32(4096), uint32(4096), uint8(1),
		uint8(0x11), uint8(2), uint64(3), append(vec(8192, 0, 0), vec(4096, 0, 2)...))
	f.Add(uint64(math.MaxUint64&^511), uint32(512), uint32(512), uint32(2560), uint32(128), uint32(65536), uint32(4096), uint8(0),
		uint8(0x21), uint8(3), uint64(5), vec(math.MaxUint32, 0, 0))
	f.Add(uint64(0), uint32(1000), uint32(0), uint32(0), uint32(0), uint32(0), uint32(3), uint8(9),
		uint8(2), uint8(4), uint64(0), vec(512, 4095, 0))
	f.Add(uint64(1<<30), uint32(512), uint32(512), uint32(2560), uint32(4), uint32(4096), uint32(4096), uint8(1),
		uint8(0x31), uint8(0), uint64(1<<21-1), append(vec(3<<30, 0, 0), vec(3<<30, 0, 0)...))
	f.Fuzz(func(t *testing.T, size uint64, logical, physical, maxSectors, maxSegments, maxSegSize, pageSize uint32, acct uint8,
		op, mode uint8, rawSector uint64, vecs []byte) {
		badDisk := logical < 512 || logical > 65536 || logical&(logical-1) != 0 || size == 0 || size%uint64(logical) != 0
		nd, err := NewNullDisk("null", size, logical)
		if badDisk {
			require.Error(t, err)
			require.Nil(t, nd)
		} else {
			require.NoError(t, err)
			require.Equal(t, size>>SectorShift, nd.Sectors())
		}
		disk, err := NewMemDisk("mem", size, logical)
		if badDisk {
			require.Error(t, err)
			require.Nil(t, disk)
			return
		}
		require.NoError(t, err)
		require.Equal(t, size>>SectorShift, disk.Sectors())
		require.Equal(t, logical, disk.LogicalBlockSize())

		lim := Limits{MaxSectors: maxSectors, MaxSegments: maxSegments, MaxSegmentSize: maxSegSize,
			LogicalBlockSize: logical, PhysicalBlockSize: physical, PageSize: pageSize,
			SegmentAccounting: SegmentAccounting(acct)}
		if op&0x10 != 0 { // also try limits that are valid
			lim = DefaultLimits(logical, max(logical, physical&(physical-1)^physical))
			lim.SegmentAccounting = SegmentAccounting(acct & 1)
			lim.MaxSegments = 1 + maxSegments%200
		}
		q, qerr := NewQueue("q", disk, Null{}, lim)
		if verr := lim.Validate(); verr != nil {
			require.ErrorIs(t, qerr, ErrInvalidConfig)
			require.ErrorIs(t, verr, ErrInvalidConfig)
		} else {
			require.NoError(t, qerr)
		}

		b := &Bio{}
		b.Reset(Op(op%3), cfgSector(mode, rawSector, disk.Sectors()))
		var bytes uint64
		pfn := uint64(100)
		for i := 0; i+8 <= len(vecs) && i < 8*16; i += 8 {
			n := binary.LittleEndian.Uint32(vecs[i:])
			off := uint32(binary.LittleEndian.Uint16(vecs[i+4:]))
			flags := binary.LittleEndian.Uint16(vecs[i+6:])
			if bytes+uint64(n) > math.MaxUint32 {
				break // a bio holds at most 4 GiB (bi_size is 32 bits): bio_add_page refuses more
			}
			bytes += uint64(n)
			var data []byte
			if flags&1 != 0 && n <= 1<<16 {
				data = make([]byte, n)
			}
			if flags&2 == 0 {
				pfn += 2
			}
			b.AddPage(data, n, pfn, off)
		}
		require.Equal(t, uint32(bytes), b.Size())

		done := 0
		b.EndIO = func(b *Bio) { done++ }
		var dev Device = disk
		if q != nil && op&0x20 != 0 {
			dev = q
		}
		want := CheckBio(dev, b)
		var p Plug
		if mode&0x40 != 0 {
			p.Start()
		}
		SubmitBio(&p, dev, b)
		if p.Active() {
			require.NoError(t, p.Finish())
		}
		require.Equal(t, 1, done, "bio completions")
		switch {
		case want != nil:
			assert.Equal(t, want.Error(), b.Err.Error())
		case dev == disk:
			assert.NoError(t, b.Err)
		case b.Err != nil: // a queue may find the memory cannot be cut within its limits
			assert.ErrorIs(t, b.Err, ErrMisaligned)
		}
		require.ErrorIs(t, p.Finish(), ErrPlugNotStarted)

		off := int64(rawSector)
		buf := make([]byte, int(maxSegments%8192))
		_, err = disk.ReadAt(buf, off)
		if off < 0 || uint64(off)+uint64(len(buf)) > disk.Sectors()<<SectorShift {
			assert.True(t, errors.Is(err, ErrBeyondEnd), "ReadAt(%d bytes at %d): %v", len(buf), off, err)
		} else {
			assert.NoError(t, err)
		}
	})
}

// TestBioSizeLimit: a bio holds at most 4 GiB − 1 bytes (bi_size is 32
// bits), and bio_add_page refuses a page that would take it past that (it
// returns 0): the refused vector is not added and the size does not wrap.
func TestBioSizeLimit(t *testing.T) {
	var b Bio
	b.Reset(OpWrite, 0)
	require.True(t, b.AddVec(nil, 3<<30))
	assert.False(t, b.AddVec(nil, 3<<30), "a vector taking the bio past 4 GiB was added")
	assert.Equal(t, uint32(3<<30), b.Size(), "the size wrapped")
	assert.Len(t, b.Vecs(), 1)
	assert.True(t, b.AddPage(nil, math.MaxUint32-3<<30, 7, 0), "the bio can be filled to 4 GiB - 1")
	assert.False(t, b.AddPage(nil, 1, 8, 0))
	assert.Equal(t, uint32(math.MaxUint32), b.Size())
}
