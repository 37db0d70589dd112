package blocksize

import "math"

// Geometry is the page/block arithmetic of one block device's page cache:
// the page shift (PAGE_SHIFT) and the block-device inode's i_blkbits. Block
// numbers are in units of the block size, relative to the (partition) device,
// as b_blocknr is.
//
// Build it with NewGeometry, or with Rules.Geometry for block sizes above
// PAGE_SIZE (v6.15+, RulesLarge). Blocks of up to PAGE_SIZE are cut from
// pages; a larger block spans 1 << (BlkBits − PageShift) pages of one large
// folio (MinOrder), and PageIndex, FirstBlock and EndBlock follow the byte
// arithmetic the kernel uses then ((loff_t)block << i_blkbits) / PAGE_SIZE,
// folio_pos / size). Methods are O(1) and allocate nothing; on a hand-built
// Geometry with a shift above 63 they return meaningless numbers (they never
// panic).
type Geometry struct {
	PageShift uint8 // log2(PAGE_SIZE)
	BlkBits   uint8 // i_blkbits: log2 of the block size
}

// NewGeometry returns the geometry of a device mapping with the given page
// and block sizes. pageSize is checked by ValidatePageSize, blockSize by
// ValidateBlocksize with a 512-byte logical block size (so any block size
// set_blocksize could set on some device is accepted).
//
// Errors: the *SizeError of ValidatePageSize or ValidateBlocksize. O(1).
func NewGeometry(pageSize, blockSize uint32) (Geometry, error) {
	if err := ValidatePageSize(pageSize); err != nil {
		return Geometry{}, err
	}
	if err := ValidateBlocksize(blockSize, SectorSize, pageSize); err != nil {
		return Geometry{}, err
	}
	return Geometry{PageShift: uint8(Log2(pageSize)), BlkBits: uint8(Log2(blockSize))}, nil
}

// Geometry returns the geometry of a device mapping with the given page and
// block sizes under rule set r: pageSize is checked by ValidatePageSize,
// blockSize by r.Validate with a 512-byte logical block size. With
// RulesLarge a block may be larger than a page (BlkBits > PageShift).
//
// Errors: the *SizeError of ValidatePageSize or r.Validate, or
// ErrUnknownRules (wrapped). O(1).
func (r Rules) Geometry(pageSize, blockSize uint32) (Geometry, error) {
	if err := ValidatePageSize(pageSize); err != nil {
		return Geometry{}, err
	}
	if err := r.Validate(blockSize, SectorSize, pageSize); err != nil {
		return Geometry{}, err
	}
	return Geometry{PageShift: uint8(Log2(pageSize)), BlkBits: uint8(Log2(blockSize))}, nil
}

// PageSize returns PAGE_SIZE, 1 << PageShift.
func (g Geometry) PageSize() uint32 { return 1 << g.PageShift }

// BlockSize returns the block size, 1 << i_blkbits: the b_size of every
// buffer_head the device's page cache creates, and the only size getblk may
// be called with (a mismatch makes __getblk_slow loop for ever: see the
// package documentation).
func (g Geometry) BlockSize() uint32 { return 1 << g.BlkBits }

// blocksPerPageShift is PAGE_SHIFT - i_blkbits, the shift between block
// numbers and page indices that __find_get_block_slow and grow_buffers use;
// 0 for blocks larger than a page.
func (g Geometry) blocksPerPageShift() uint8 {
	if g.BlkBits >= g.PageShift {
		return 0
	}
	return g.PageShift - g.BlkBits
}

// pagesPerBlockShift is i_blkbits - PAGE_SHIFT for blocks larger than a page
// (v6.15+), else 0.
func (g Geometry) pagesPerBlockShift() uint8 {
	if g.BlkBits <= g.PageShift {
		return 0
	}
	return g.BlkBits - g.PageShift
}

// BlocksPerPage returns the number of buffer_heads in one page's ring,
// PAGE_SIZE >> i_blkbits: 8 for 512-byte blocks on 4 KiB pages (that is
// MAX_BUF_PER_PAGE), 1 for 4 KiB blocks, and 1 for blocks larger than a page
// (one buffer spans the pages of a large folio; see BlocksPerFolio).
func (g Geometry) BlocksPerPage() uint32 { return 1 << g.blocksPerPageShift() }

// MinOrder returns the smallest folio order that holds a block: get_order of
// the block size, the mapping's minimum folio order from v6.15 (0 for blocks
// of up to PAGE_SIZE).
func (g Geometry) MinOrder() uint8 { return g.pagesPerBlockShift() }

// BlocksPerFolio returns the number of buffer_heads in the ring of a folio of
// the given order, folio_size >> i_blkbits (folio_create_buffers, v6.x): 1
// for an order-4 folio with 64 KiB blocks, 2048 for an order-8 folio with
// 512-byte blocks. A folio smaller than a block holds none (0); the page
// cache never creates one (MinOrder).
func (g Geometry) BlocksPerFolio(order uint8) uint64 {
	shift := int(g.PageShift) + int(order) - int(g.BlkBits)
	if shift < 0 {
		return 0
	}
	return 1 << uint(shift)
}

// PageIndex returns the page-cache index of the page holding block: block >>
// (PAGE_SHIFT - i_blkbits), as computed by __find_get_block_slow and
// grow_buffers (fs/buffer.c, v5.10); for blocks larger than a page, the
// first page of the block, ((loff_t)block << i_blkbits) / PAGE_SIZE
// (v6.15+). For those it wraps for block numbers whose byte offset does not
// fit in 64 bits, as the kernel's shift does (see BlockInRange).
func (g Geometry) PageIndex(block Block) PageIndex {
	if g.BlkBits <= g.PageShift {
		return PageIndex(block >> (g.PageShift - g.BlkBits))
	}
	return PageIndex(block << (g.BlkBits - g.PageShift))
}

// FirstBlock returns the number of the first block of page index, index <<
// (PAGE_SHIFT - i_blkbits), as init_page_buffers numbers a fresh ring
// (fs/buffer.c, v5.10); for blocks larger than a page, the block that page
// index lies in, folio_pos / size (folio_init_buffers, v6.15+). It wraps for
// indices whose first block does not fit in 64 bits; such pages cannot exist
// (see BlockInRange).
func (g Geometry) FirstBlock(index PageIndex) Block {
	if g.BlkBits <= g.PageShift {
		return Block(index << (g.PageShift - g.BlkBits))
	}
	return Block(index >> (g.BlkBits - g.PageShift))
}

// BlockInPage returns the position k (0-based, from the ring's head) of the
// buffer_head for block in its page's ring: the buffer at position k of page
// p maps block p*BlocksPerPage + k (0 for blocks larger than a page).
func (g Geometry) BlockInPage(block Block) uint32 {
	return uint32(block) & (g.BlocksPerPage() - 1)
}

// OffsetInPage returns the byte offset of block's data inside its page
// (where b_data points): BlockInPage(block) * BlockSize().
func (g Geometry) OffsetInPage(block Block) uint32 { return g.BlockInPage(block) << g.BlkBits }

// EndBlock models blkdev_max_block() (fs/buffer.c, v5.10): the number of
// whole blocks on a device of deviceBytes bytes, deviceBytes >> i_blkbits.
// Blocks at or past it stay unmapped and getblk on them fails. A partial
// trailing block does not count. When deviceBytes is 0 the kernel takes the
// size as unknown and returns all ones (math.MaxUint64), so that no block is
// past the end.
func (g Geometry) EndBlock(deviceBytes uint64) Block {
	if deviceBytes == 0 {
		return math.MaxUint64
	}
	return Block(deviceBytes >> g.BlkBits)
}

// BlockInRange models grow_buffers()'s "requested out-of-range block" check
// in its v6.7+ form (fs/buffer.c): block is in range if its byte offset,
// block * BlockSize(), neither overflows nor exceeds MAX_LFS_FILESIZE
// (MaxLFSFileSize, math.MaxInt64 on 64-bit kernels). The older form only
// checked that the page index round-trips through pgoff_t; with the 64-bit
// pgoff_t modelled here that check never fails, so it is not modelled.
// getblk on a block out of range fails (-EIO / false → NULL).
func (g Geometry) BlockInRange(block Block) bool {
	return block <= MaxLFSFileSize>>g.BlkBits
}
