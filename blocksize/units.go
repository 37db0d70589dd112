package blocksize

// Block is a block number on a device: a byte offset divided by the
// device's block size (a buffer head's b_blocknr, sector_t in the kernel,
// but counted in blocks, not in 512-byte sectors). It is neither a sector
// nor a page-cache index; Geometry converts between the units.
type Block uint64

// PageIndex is an index in a block device's page cache: a byte offset
// divided by the page size (a folio's index, pgoff_t). Geometry.PageIndex
// gives the index of the page that holds a Block, Geometry.FirstBlock the
// first Block of a page.
type PageIndex uint64
