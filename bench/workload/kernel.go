package workload

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/iomap"
)

// Kernel is a kernel version as the model sees it: every variant of the model
// that differs between the kernels the threads compare, bundled under the
// name the thread's table gives that kernel. The zero value's variants are
// mainline's (grow policy, iomap writes with v6.6's chunk, a 16-slot LRU, the
// linear alloc_page_buffers), with no name.
type Kernel struct {
	// Name is the row's or column's label in the thread ("5.10.10+revert").
	Name string
	// Description says which kernel it is and what is and is not modelled of
	// what differs.
	Description string
	// Blocksize is the set_init_blocksize policy (the Helios4 thread).
	Blocksize blocksize.Policy
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
}

// Configure sets k's variants in cfg and returns it.
func (k Kernel) Configure(cfg bufcache.Config) bufcache.Config {
	cfg.Blocksize, cfg.LRU, cfg.LRUSize, cfg.Alloc = k.Blocksize, k.LRU, k.LRUSize, k.Alloc
	return cfg
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
// alloc_page_buffers thread.
func Kernels() []Kernel {
	return []Kernel{
		{Name: "9011495c9466", Blocksize: blocksize.PolicyGrow, Write: bufferHeadWrites,
			Description: "the parent of the faulty commit (v5.9 merge window): set_init_blocksize grows the block size. " + notModelled},
		{Name: "5ff9f19231a0", Blocksize: blocksize.PolicyLogical, Write: bufferHeadWrites,
			Description: "\"block: simplify set_init_blocksize\" (Christoph Hellwig, v5.9): block size = logical block size. " + notModelled},
		{Name: "5.10.10", Blocksize: blocksize.PolicyLogical, Write: bufferHeadWrites,
			Description: "5.10.10, still with the simplified policy. " + notModelled},
		{Name: "5.10.10+revert", Blocksize: blocksize.PolicyGrow, Write: bufferHeadWrites,
			Description: "5.10.10 with Maxim Mikityanskiy's revert (mainline 8dc932d3e8af, v5.11-rc6; stable 5.10.13). " + notModelled},
		{Name: "6.6", Write: iomap.Options{},
			Description: "v6.6 and later until the fix: block-device writes through iomap (487c607df790) with a PAGE_SIZE << MAX_PAGECACHE_ORDER chunk (2 MiB with THP on 4 KiB pages, 5d8edfb900d5)"},
		{Name: "6.6-revert", Write: bufferHeadWrites,
			Description: "v6.6 with \"block: use iomap for writes to block devices\" reverted: generic_perform_write through buffer heads"},
		{Name: "6.6-fix", Write: iomap.Options{Chunk: iomap.ChunkMappingMaxFolioSize},
			Description: "v6.6 with \"iomap: fault in smaller chunks for non-large folio mappings\" (4e527d5841e2): chunk = mapping_max_folio_size, PAGE_SIZE here"},
		{Name: "6.4", Write: bufferHeadWrites,
			Description: "v6.4, the kernel of Tosatti's test: __find_get_block searches a 16-slot per-CPU bh LRU before __find_get_block_slow"},
		{Name: "6.4-nolru", Write: bufferHeadWrites, LRU: bufcache.LRURemoved,
			Description: "v6.4 with Marcelo Tosatti's \"fs/buffer.c: remove per-CPU buffer_head lookup cache\" (June 2023, not merged): __find_get_block is __find_get_block_slow"},
		{Name: "4.12", Write: bufferHeadWrites, Alloc: bufcache.AllocLinear,
			Description: "v4.12, the kernel of Sean Fu's test: alloc_page_buffers builds a linear list that its callers close into a ring"},
		{Name: "4.12-circular", Write: bufferHeadWrites, Alloc: bufcache.AllocCircular,
			Description: "v4.12 with Sean Fu's \"fs: buffer: Modify alloc_page_buffers\" (June 2017, not merged): the ring is built circular in one pass"},
	}
}

// KernelByName returns the preset called name; the error names the valid
// ones.
func KernelByName(name string) (Kernel, error) {
	var names []string
	for _, k := range Kernels() {
		if k.Name == name {
			return k, nil
		}
		names = append(names, k.Name)
	}
	return Kernel{}, fmt.Errorf("workload: unknown kernel %q (valid: %s)", name, strings.Join(names, ", "))
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
