package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/iomap"
)

func TestKernels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy blocksize.Policy
		path   iomap.WritePath
		chunk  iomap.ChunkPolicy
		lru    bufcache.LRUMode
		alloc  bufcache.AllocVariant
		folios bufcache.FolioPolicy
		block  blk.Version
	}{
		{"9011495c9466", blocksize.PolicyGrow, iomap.PathBufferHead, 0, bufcache.LRUOn, bufcache.AllocLinear, bufcache.FoliosSmall, blk.Version510},
		{"5ff9f19231a0", blocksize.PolicyLogical, iomap.PathBufferHead, 0, bufcache.LRUOn, bufcache.AllocLinear, bufcache.FoliosSmall, blk.Version510},
		{"5.10.10", blocksize.PolicyLogical, iomap.PathBufferHead, 0, bufcache.LRUOn, bufcache.AllocLinear, bufcache.FoliosSmall, blk.Version510},
		{"5.10.10+revert", blocksize.PolicyGrow, iomap.PathBufferHead, 0, bufcache.LRUOn, bufcache.AllocLinear, bufcache.FoliosSmall, blk.Version510},
		{"6.6", blocksize.PolicyGrow, iomap.PathIomap, iomap.ChunkMaxPagecacheOrder, bufcache.LRUOn, bufcache.AllocLinear, bufcache.FoliosSmall, blk.Version510},
		{"6.6-revert", blocksize.PolicyGrow, iomap.PathBufferHead, 0, bufcache.LRUOn, bufcache.AllocLinear, bufcache.FoliosSmall, blk.Version510},
		{"6.6-fix", blocksize.PolicyGrow, iomap.PathIomap, iomap.ChunkMappingMaxFolioSize, bufcache.LRUOn, bufcache.AllocLinear, bufcache.FoliosSmall, blk.Version510},
		{"6.4", blocksize.PolicyGrow, iomap.PathBufferHead, 0, bufcache.LRUOn, bufcache.AllocLinear, bufcache.FoliosSmall, blk.Version510},
		{"6.4-nolru", blocksize.PolicyGrow, iomap.PathBufferHead, 0, bufcache.LRURemoved, bufcache.AllocLinear, bufcache.FoliosSmall, blk.Version510},
		{"4.12", blocksize.PolicyGrow, iomap.PathBufferHead, 0, bufcache.LRUOn, bufcache.AllocLinear, bufcache.FoliosSmall, blk.Version510},
		{"4.12-circular", blocksize.PolicyGrow, iomap.PathBufferHead, 0, bufcache.LRUOn, bufcache.AllocCircular, bufcache.FoliosSmall, blk.Version510},
		{"6.18", blocksize.PolicyGrow, iomap.PathIomap, iomap.ChunkMappingMaxFolioSize, bufcache.LRUOn, bufcache.AllocLinear, bufcache.FoliosLarge, blk.Version618},
		{"6.18-nothp", blocksize.PolicyGrow, iomap.PathIomap, iomap.ChunkMappingMaxFolioSize, bufcache.LRUOn, bufcache.AllocLinear, bufcache.FoliosSmall, blk.Version618},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := KernelByName(tc.name)
			require.NoError(t, err)
			assert.Equal(t, tc.policy, k.InitBlocksize)
			assert.Equal(t, tc.path, k.Write.Path)
			assert.Equal(t, tc.chunk, k.Write.Chunk)
			assert.NotEmpty(t, k.Description)
			cfg := k.Configure(bufcache.Config{CPUs: 2, LRU: bufcache.LRURemoved, Alloc: bufcache.AllocCircular})
			assert.Equal(t, tc.policy, cfg.InitBlocksize)
			assert.Equal(t, tc.lru, cfg.LRU, "the kernel decides, not the caller's config")
			assert.Equal(t, tc.alloc, cfg.Alloc)
			assert.Equal(t, 2, cfg.CPUs, "the machine's settings stay")
			assert.Equal(t, tc.folios, cfg.Folios)
			assert.Equal(t, tc.block, k.Block)
			_, err = bufcache.NewMachine(cfg)
			assert.NoError(t, err, "the preset's variants make a valid machine")
		})
	}
	assert.Len(t, Kernels(), 13)
	_, err := KernelByName("6.5")
	assert.ErrorContains(t, err, "5.10.10+revert")
	assert.ErrorContains(t, err, "6.6-fix")
	assert.Panics(t, func() { MustKernel("6.5") })
}

// TestKernelNames checks that every listed name resolves to the preset of
// that name, and that no preset is listed twice.
func TestKernelNames(t *testing.T) {
	names := KernelNames()
	require.Len(t, names, len(Kernels()))
	seen := map[string]bool{}
	for _, n := range names {
		assert.False(t, seen[n], "%s listed twice", n)
		seen[n] = true
		k, err := KernelByName(n)
		require.NoError(t, err)
		assert.Equal(t, n, k.Name)
	}
}
