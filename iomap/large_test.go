package iomap

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
)

// TestLinux618Write pins iomap's write on a 6.18 mapping with large folios:
// one folio sized by the write (the host's order 8 for 1 MiB, 4 for 64 KiB,
// 0 for 4 KiB), one write_begin/copy/write_end round per folio, one user
// page faulted in per page (no 2 MiB pre-fault per page: the chunk is
// mapping_max_folio_size and the folio takes the whole chunk).
func TestLinux618Write(t *testing.T) {
	for _, tc := range []struct {
		bs, n        uint64
		order        uint8
		iters, pages uint64 // write iterations and user pages faulted, per bs-sized write
	}{
		{4 << 10, 1 << 20, 0, 1, 1},
		{64 << 10, 1 << 20, 4, 1, 16},
		{1 << 20, 1 << 20, 8, 1, 256},
		{4 << 20, 4 << 20, 9, 2, 1024}, // two 2 MiB folios: chunk and MAX_PAGECACHE_ORDER
	} {
		t.Run(fmt.Sprintf("bs=%d", tc.bs), func(t *testing.T) {
			m, d, _ := newDev(t, bufcache.Linux618(bufcache.Config{}), 8<<20)
			cpu := m.CPU(0)
			data := pattern(int(tc.bs), 0x42)
			before := cpu.Events()
			for pos := uint64(0); pos < tc.n; pos += tc.bs {
				n, err := BlkdevWrite(cpu, d, pos, userIter(t, data), Linux618)
				require.NoError(t, err)
				require.Equal(t, tc.bs, n)
			}
			ev := cpu.Events().Sub(before)
			writes := tc.n / tc.bs
			assert.Equal(t, writes*tc.iters, ev[bufcache.EvWriteIter])
			assert.Equal(t, writes*tc.pages, ev[bufcache.EvFaultInPage])
			assert.Equal(t, int(tc.n>>12), d.NrPages())
			assert.Equal(t, int(tc.n>>12)>>tc.order, d.NrFolios(), "folios of order %d", tc.order)
			assert.Equal(t, tc.n>>12, ev[bufcache.EvMarkDirty], "one buffer per page dirtied")
		})
	}
	chunk, err := Linux618.ChunkSize(4096)
	require.NoError(t, err)
	assert.Equal(t, uint64(4096), chunk, "the policy's chunk without the mapping: a page")
}

// FuzzBlkdevWrite618 is FuzzBlkdevWrite on the 6.15–6.18 variants: a
// mapping with large folios, block sizes 512 to 64 KiB (the minimum folio
// order with them), the 6.18 write path and the older ones over it, against
// the same oracle.
func FuzzBlkdevWrite618(f *testing.F) {
	const size = 512 << 10
	f.Add(uint32(0), uint32(1<<20), uint8(0), uint32(0), uint16(0))
	f.Add(uint32(4096), uint32(70000), uint8(0x17), uint32(50000), uint16(9))
	f.Add(uint32(size-100), uint32(300), uint8(0x26), uint32(0), uint16(0))
	f.Add(uint32(12345), uint32(200000), uint8(0x3c), uint32(0), uint16(0))
	f.Fuzz(func(t *testing.T, pos, n uint32, sel uint8, badOff uint32, badLen uint16) {
		bsize := uint32(512) << (sel % 8)
		drop := sel>>3&1 == 1
		all := []Options{Linux618, {}, {Path: PathBufferHead}}
		opts := all[int(sel>>4)%len(all)]
		cfg := bufcache.Linux618(bufcache.Config{DirtyLimit: 4})
		checkBlkdevWrite(t, cfg, size, bsize, drop, opts, fmt.Sprintf("options %+v", opts), pos, n, badOff, badLen)
	})
}
