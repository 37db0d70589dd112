package iomap

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
)

func TestMaxPagecacheOrder(t *testing.T) {
	for _, tc := range []struct {
		pageSize    uint32
		thp, xasCap bool
		want        uint8
	}{
		{4096, true, false, 9}, // HPAGE_PMD_ORDER: 2 MiB, x86-64 and arm64
		{4096, false, false, 8},
		{4096, true, true, 9},
		{16384, true, false, 11}, // 32 MiB PMD
		{16384, true, true, 11},
		{65536, true, false, 13}, // 512 MiB PMD
		{65536, true, true, 11},  // 099d90642a71
		{65536, false, true, 8},
		{8192, true, false, 10},
	} {
		t.Run(fmt.Sprintf("page=%d/thp=%v/cap=%v", tc.pageSize, tc.thp, tc.xasCap), func(t *testing.T) {
			got, err := MaxPagecacheOrder(tc.pageSize, tc.thp, tc.xasCap)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	for _, bad := range []uint32{0, 2048, 5000, 1 << 17} {
		_, err := MaxPagecacheOrder(bad, true, false)
		var se *blocksize.SizeError
		assert.ErrorAs(t, err, &se, "page size %d", bad)
	}
}

func TestChunk(t *testing.T) {
	for _, tc := range []struct {
		opts     Options
		pageSize uint32
		want     uint64
	}{
		{Options{}, 4096, 2 << 20}, // v6.6: PAGE_SIZE << 9
		{Options{NoTHP: true}, 4096, 1 << 20},
		{Options{Chunk: ChunkMappingMaxFolioSize}, 4096, 4096}, // the fix
		{Options{Chunk: ChunkMappingMaxFolioSize, NoTHP: true}, 4096, 4096},
		{Options{}, 65536, 512 << 20},
		{Options{XASCap: true}, 65536, 128 << 20},
		{Options{Chunk: ChunkMappingMaxFolioSize}, 65536, 65536},
		{Options{Path: PathBufferHead}, 16384, 32 << 20}, // the chunk of the path not taken
	} {
		t.Run(fmt.Sprintf("%+v/page=%d", tc.opts, tc.pageSize), func(t *testing.T) {
			got, err := tc.opts.ChunkSize(tc.pageSize)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := Options{Chunk: ChunkPolicy(9)}.ChunkSize(4096)
	assert.ErrorIs(t, err, ErrBadOption)
	_, err = ChunkMaxPagecacheOrder.Chunk(4096, 52)
	assert.ErrorIs(t, err, ErrBadOption, "overflows 64 bits")
	got, err := ChunkMaxPagecacheOrder.Chunk(4096, 51)
	require.NoError(t, err)
	assert.Equal(t, uint64(1)<<63, got)
	_, err = ChunkMappingMaxFolioSize.Chunk(1000, 0)
	assert.Error(t, err)
	assert.Equal(t, "max-pagecache-order", ChunkMaxPagecacheOrder.String())
	assert.Equal(t, "mapping-max-folio-size", ChunkMappingMaxFolioSize.String())
	assert.Equal(t, "chunk(9)", ChunkPolicy(9).String())
}
