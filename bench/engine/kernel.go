package engine

import (
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/internal/enum"
	"github.com/bhsim/bhsim/iomap"
)

// Kernel is a kernel version as the model sees it: every variant of the model
// that differs between the kernels the threads compare, and the variants of
// the kernels people run today (6.15–6.18), bundled under the name the
// thread's table gives that kernel. The zero value's variants are those of
// the v6.6 era (grow policy, iomap writes with v6.6's chunk, a 16-slot LRU,
// the linear alloc_page_buffers, one-page folios, the v5.10 block layer),
// with no name.
type Kernel struct {
	// Name is the row's or column's label in the thread ("5.10.10+revert").
	Name string
	// Description says which kernel it is and what is and is not modelled of
	// what differs.
	Description string
	// InitBlocksize is the set_init_blocksize policy (the Helios4 thread).
	InitBlocksize blocksize.Policy
	// Write selects the write(2) path of a block device (iomap.BlkdevWrite):
	// generic_perform_write through buffer heads before v6.6, iomap with
	// v6.6's 2 MiB chunk or with the fix's (Xu Yang's thread).
	Write iomap.Options
	// LRU and LRUSize are the per-CPU bh LRU variant and its slots, 0 for
	// lru.DefaultSize (Tosatti's thread).
	LRU     bufcache.LRUMode
	LRUSize int
	// Alloc is the alloc_page_buffers variant (Sean Fu's thread).
	Alloc bufcache.AllocVariant
	// Folios, SetBlocksize and Lookup are the page cache's variants that
	// v6.15–v6.18 changed (bufcache.Linux618 names them: large folios,
	// blocks up to 64 KiB, the v6.16 sleeping lookups); the zero values
	// are the threads' kernels'.
	Folios       bufcache.FolioPolicy
	SetBlocksize blocksize.Rules
	Lookup       bufcache.LookupVariant
	// BitOps is which of fs/buffer.c's state-bit writes test the bit
	// first: none (the zero value, up to v4.17), set_buffer_*
	// (bufcache.BitOpsTestSet, v4.18–v5.11), and the commit's
	// clear_buffer_new too (bufcache.BitOpsTested, v5.12+).
	BitOps bufcache.BitOps
	// Block is the block layer's version: how a plug merges and when
	// submit_bio plugs (blk.Version618 from 6.18's rules).
	Block blk.Version
}

// Configure sets k's page-cache variants in cfg and returns it. (The write
// path, Write, is the caller's to pass to iomap.BlkdevWrite or
// iomap.Writer; Block to the queue's Limits.)
func (k Kernel) Configure(cfg bufcache.Config) bufcache.Config {
	cfg.InitBlocksize, cfg.LRU, cfg.LRUSize, cfg.Alloc = k.InitBlocksize, k.LRU, k.LRUSize, k.Alloc
	cfg.Folios, cfg.SetBlocksize, cfg.Lookup, cfg.BitOps = k.Folios, k.SetBlocksize, k.Lookup, k.BitOps
	return cfg
}

// linux618NoTHP is 6.18 built without CONFIG_TRANSPARENT_HUGEPAGE, as on
// 32-bit ARM without LPAE (the Helios4's Cortex-A9):
// mapping_set_folio_order_range returns before it sets any order, so the
// block device's mapping keeps one-page folios, and blocks above PAGE_SIZE
// cannot be had; everything else is 6.18's.
func linux618NoTHP() Kernel {
	k := linux618()
	k.Name, k.Folios, k.SetBlocksize = "6.18-nothp", bufcache.FoliosSmall, blocksize.RulesPageSize
	k.Description = "Linux 6.18 without transparent huge pages (32-bit ARM without LPAE, such as the Helios4's Cortex-A9): " +
		"mapping_set_folio_order_range does nothing, so one-page folios and blocks of at most PAGE_SIZE; " +
		"the v6.16 lookups, on-demand readahead, iomap writes with the fixed chunk and the 6.18 plug as in 6.18"
	return k
}

// linux618 is the 6.18 preset: bufcache.Linux618's page cache, iomap's
// 6.18 write and blk's 6.18 block layer, with 6.18's grow policy, 16-slot
// LRU and linear alloc_page_buffers (the zero values).
func linux618() Kernel {
	c := bufcache.Linux618(bufcache.Config{})
	return Kernel{Name: "6.18", Write: iomap.Linux618, Block: blk.Version618,
		Folios: c.Folios, SetBlocksize: c.SetBlocksize, Lookup: c.Lookup, BitOps: c.BitOps,
		Description: "Linux 6.18 as the host kernel's recordings pin it: large folios in the block device's mapping " +
			"(v6.15), set_blocksize up to 64 KiB (v6.15), __find_get_block_nonatomic for sleeping lookups (v6.16), " +
			"on-demand readahead with growing folio orders, iomap writes with the fixed chunk, the 6.18 plug"}
}

// notModelled is what differs between the Helios4 thread's kernels besides the
// block-size policy and is not part of the model.
const notModelled = "Other changes between these kernels (block-layer and md " +
	"optimisations Maxim credits for the higher RAID and read figures of 5.10.10, " +
	"scheduler and driver changes) are not modelled."

// bufferHeadWrites is the write path of every kernel before v6.6.
var bufferHeadWrites = iomap.Options{Path: iomap.PathBufferHead}

// Kernels returns every kernel preset: the rows of the set_init_blocksize
// revert thread's Helios4 table, the three kernels of Xu Yang's iomap
// thread, the two of Tosatti's bh-LRU thread and the two of Sean Fu's
// alloc_page_buffers thread — and 6.18, the kernel of today, with and
// without transparent huge pages.
func Kernels() []Kernel {
	return []Kernel{
		{Name: "9011495c9466", InitBlocksize: blocksize.PolicyGrow, BitOps: bufcache.BitOpsTestSet, Write: bufferHeadWrites,
			Description: "the parent of the faulty commit (v5.9 merge window): set_init_blocksize grows the block size. " + notModelled},
		{Name: "5ff9f19231a0", InitBlocksize: blocksize.PolicyLogical, BitOps: bufcache.BitOpsTestSet, Write: bufferHeadWrites,
			Description: "\"block: simplify set_init_blocksize\" (Christoph Hellwig, v5.9): block size = logical block size. " + notModelled},
		{Name: "5.10.10", InitBlocksize: blocksize.PolicyLogical, BitOps: bufcache.BitOpsTestSet, Write: bufferHeadWrites,
			Description: "5.10.10, still with the simplified policy. " + notModelled},
		{Name: "5.10.10+revert", InitBlocksize: blocksize.PolicyGrow, BitOps: bufcache.BitOpsTestSet, Write: bufferHeadWrites,
			Description: "5.10.10 with Maxim Mikityanskiy's revert (mainline 8dc932d3e8af, v5.11-rc6; stable 5.10.13). " + notModelled},
		{Name: "6.6", BitOps: bufcache.BitOpsTested, Write: iomap.Options{},
			Description: "v6.6 and later until the fix: block-device writes through iomap (487c607df790) with a PAGE_SIZE << MAX_PAGECACHE_ORDER chunk (2 MiB with THP on 4 KiB pages, 5d8edfb900d5)"},
		{Name: "6.6-revert", BitOps: bufcache.BitOpsTested, Write: bufferHeadWrites,
			Description: "v6.6 with \"block: use iomap for writes to block devices\" reverted: generic_perform_write through buffer heads"},
		{Name: "6.6-fix", BitOps: bufcache.BitOpsTested, Write: iomap.Options{Chunk: iomap.ChunkMappingMaxFolioSize},
			Description: "v6.6 with \"iomap: fault in smaller chunks for non-large folio mappings\" (4e527d5841e2): chunk = mapping_max_folio_size, PAGE_SIZE here"},
		{Name: "6.4", BitOps: bufcache.BitOpsTested, Write: bufferHeadWrites,
			Description: "v6.4, the kernel of Tosatti's test: __find_get_block searches a 16-slot per-CPU bh LRU before __find_get_block_slow"},
		{Name: "6.4-nolru", BitOps: bufcache.BitOpsTested, Write: bufferHeadWrites, LRU: bufcache.LRURemoved,
			Description: "v6.4 with Marcelo Tosatti's \"fs/buffer.c: remove per-CPU buffer_head lookup cache\" (June 2023, not merged): __find_get_block is __find_get_block_slow"},
		{Name: "4.12", Write: bufferHeadWrites, Alloc: bufcache.AllocLinear,
			Description: "v4.12, the kernel of Sean Fu's test: alloc_page_buffers builds a linear list that its callers close into a ring"},
		{Name: "4.12-circular", Write: bufferHeadWrites, Alloc: bufcache.AllocCircular,
			Description: "v4.12 with Sean Fu's \"fs: buffer: Modify alloc_page_buffers\" (June 2017, not merged): the ring is built circular in one pass"},
		linux618(),
		linux618NoTHP(),
	}
}

// KernelNames lists the names of Kernels, in their order.
func KernelNames() []string {
	var names []string
	for _, k := range Kernels() {
		names = append(names, k.Name)
	}
	return names
}

// KernelByName returns the preset called name; the error names the valid
// ones.
func KernelByName(name string) (Kernel, error) {
	return enum.Find("engine", "kernel", Kernels(), func(k Kernel) string { return k.Name }, name)
}

// Resolved returns k, or the preset called k.Name when k holds nothing but a
// name (Kernel{Name: "5.10.10"}), so that a kernel named alone runs as its
// name says. Errors: such a name that names no preset (KernelByName's).
func (k Kernel) Resolved() (Kernel, error) {
	if k.Name == "" || k != (Kernel{Name: k.Name}) {
		return k, nil
	}
	return KernelByName(k.Name)
}

// MustKernel returns the built-in preset called name and panics if there is
// none: for the package's own scenarios, whose names are constants.
func MustKernel(name string) Kernel {
	k, err := KernelByName(name)
	if err != nil {
		panic(err)
	}
	return k
}
