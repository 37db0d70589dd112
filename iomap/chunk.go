package iomap

import (
	"fmt"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/internal/enum"
)

// Orders of MAX_PAGECACHE_ORDER's derivation (include/linux/pagemap.h).
const (
	// NoTHPMaxPagecacheOrder is MAX_PAGECACHE_ORDER without
	// CONFIG_TRANSPARENT_HUGEPAGE: 8 ("that's 1MB if you're using 4kB pages").
	NoTHPMaxPagecacheOrder = 8
	// MaxXasOrder is MAX_XAS_ORDER = XA_CHUNK_SHIFT·2 − 1 = 11, the largest
	// order xas_split_alloc can split, which caps MAX_PAGECACHE_ORDER from
	// 099d90642a71 (July 2024).
	MaxXasOrder = 11
)

// MaxPagecacheOrder models MAX_PAGECACHE_ORDER for a kernel with PAGE_SIZE
// pageSize:
//
//   - with CONFIG_TRANSPARENT_HUGEPAGE (thp) it is HPAGE_PMD_ORDER = PMD_SHIFT
//     − PAGE_SHIFT; with 8-byte page-table entries a table page holds
//     PAGE_SIZE/8 entries, so PMD_SHIFT = 2·PAGE_SHIFT − 3 and the order is
//     PAGE_SHIFT − 3: 9 on 4 KiB pages (2 MiB, x86-64 and arm64), 11 on 16 KiB,
//     13 on 64 KiB (512 MiB);
//   - without THP it is 8;
//   - xasCap applies 099d90642a71 ("mm/filemap: make MAX_PAGECACHE_ORDER
//     acceptable to xarray", v6.10, July 2024, stable from v5.18): the order
//     is at most MaxXasOrder, 11, which only changes 64 KiB pages.
//
// v6.6 as released has no cap. Errors: the *blocksize.SizeError of an invalid
// page size. O(1).
func MaxPagecacheOrder(pageSize uint32, thp, xasCap bool) (uint8, error) {
	if err := blocksize.ValidatePageSize(pageSize); err != nil {
		return 0, err
	}
	order := uint8(NoTHPMaxPagecacheOrder)
	if thp {
		order = uint8(blocksize.Log2(pageSize)) - 3
	}
	if xasCap {
		order = min(order, MaxXasOrder)
	}
	return order, nil
}

// ChunkPolicy selects the chunk iomap_write_iter starts with: the most it
// pre-faults and tries to copy per iteration.
type ChunkPolicy uint8

const (
	// ChunkMaxPagecacheOrder is 5d8edfb900d5 ("iomap: Copy larger chunks from
	// userspace", v6.6, until the fix): chunk = PAGE_SIZE <<
	// MAX_PAGECACHE_ORDER, whether or not the mapping has large folios.
	ChunkMaxPagecacheOrder ChunkPolicy = iota
	// ChunkMappingMaxFolioSize is the fix, 4e527d5841e2 ("iomap: fault in
	// smaller chunks for non-large folio mappings", June 2024, stable) with
	// 79c137454815's helper: chunk = mapping_max_folio_size(mapping), which
	// is PAGE_SIZE for a mapping without large folios such as the block
	// device's before v6.15.
	ChunkMappingMaxFolioSize
)

// chunkNames names the policies for String.
var chunkNames = enum.New[ChunkPolicy]("chunk", []string{ChunkMaxPagecacheOrder: "max-pagecache-order",
	ChunkMappingMaxFolioSize: "mapping-max-folio-size"}...)

// String returns "max-pagecache-order" or "mapping-max-folio-size"
// ("chunk(n)" for another value).
func (p ChunkPolicy) String() string { return chunkNames.String(p) }

// Chunk returns the policy's initial chunk in bytes for a block device's
// mapping without large folios, on a kernel with PAGE_SIZE pageSize and
// MAX_PAGECACHE_ORDER maxOrder (MaxPagecacheOrder); BlkdevWrite scales
// ChunkMappingMaxFolioSize's by the mapping's maximum folio order
// (bufcache.BlockDevice.MaxFolioOrder) on one with large folios (v6.15+). Errors: the
// *blocksize.SizeError of an invalid page size; ErrBadOption for an unknown
// policy or an order that overflows. O(1).
func (p ChunkPolicy) Chunk(pageSize uint32, maxOrder uint8) (uint64, error) {
	if err := blocksize.ValidatePageSize(pageSize); err != nil {
		return 0, err
	}
	switch p {
	case ChunkMaxPagecacheOrder:
		if maxOrder > 63-uint8(blocksize.Log2(pageSize)) {
			return 0, fmt.Errorf("%w: PAGE_SIZE %d << order %d overflows", ErrBadOption, pageSize, maxOrder)
		}
		return uint64(pageSize) << maxOrder, nil
	case ChunkMappingMaxFolioSize:
		return uint64(pageSize), nil
	}
	return 0, fmt.Errorf("%w: chunk policy %v", ErrBadOption, p)
}
