package bufcache

import (
	"fmt"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/internal/enum"
)

// FolioPolicy selects the folios the block device's mapping may hold.
type FolioPolicy uint8

const (
	// FoliosSmall is every kernel up to v6.14: the block device's mapping
	// has no large folio support, every folio is one page, and a block is
	// at most a page.
	FoliosSmall FolioPolicy = iota
	// FoliosLarge is v6.15 and later: set_init_blocksize and set_blocksize
	// call mapping_set_folio_min_order, which gives the mapping large folio
	// support with the block size's order as minimum and
	// MAX_PAGECACHE_ORDER as maximum. Writes through iomap ask for folios
	// sized by the write (fgf_set_order), readahead for growing ones
	// (page_cache_ra_order), getblk for the minimum; a ring has
	// folio_size/blocksize buffers (folio_create_buffers).
	FoliosLarge
)

// folioPolicyNames names the policies for String.
var folioPolicyNames = enum.New[FolioPolicy]("folios", []string{FoliosSmall: "small", FoliosLarge: "large"}...)

// String returns "small" or "large" ("folios(n)" for another value).
func (p FolioPolicy) String() string { return folioPolicyNames.String(p) }

// LookupVariant selects how the buffer lookups that may sleep serialise with
// try_to_free_buffers.
type LookupVariant uint8

const (
	// LookupAtomic is every kernel up to v6.15: every __find_get_block_slow
	// walks the ring under private_lock (i_private_lock from 6.8).
	LookupAtomic LookupVariant = iota
	// LookupNonatomic is v6.16 and later (Davidlohr Bueso's "fs/buffer:
	// split pagecache lookups into atomic or blocking", 2025):
	// __find_get_block_nonatomic walks the ring under the folio lock instead,
	// and the callers that may sleep use it — bdev_getblk with a blocking
	// gfp (Getblk, Bread) and __getblk_slow's lookups after growing. The
	// atomic __find_get_block (FindGetBlock) keeps private_lock.
	LookupNonatomic
)

// lookupNames names the lookup variants for String.
var lookupNames = enum.New[LookupVariant]("lookup", []string{LookupAtomic: "atomic", LookupNonatomic: "nonatomic"}...)

// String returns "atomic" or "nonatomic" ("lookup(n)" for another value).
func (v LookupVariant) String() string { return lookupNames.String(v) }

// BitOps selects which of a buffer's state-bit writes test the bit first,
// and so skip the atomic when it is already as wanted (what EvBHBit
// counts). clear_buffer_* never tests.
type BitOps uint8

const (
	// BitOpsBlind is every kernel up to v4.17: set_buffer_* is a plain
	// atomic set_bit, and __block_commit_write clears BH_New of every buffer
	// it walks, new or not.
	BitOpsBlind BitOps = iota
	// BitOpsTestSet is v4.18 to v5.11: set_buffer_* tests the bit first
	// (60f91826ca62 "buffer: Avoid setting buffer bits that are already
	// set"); __block_commit_write still clears BH_New untested.
	BitOpsTestSet
	// BitOpsTested is v5.12 and later: __block_commit_write, too, clears
	// BH_New only where it is set (Yang Guo's "fs/buffer.c: add checking
	// buffer head stat before clear").
	BitOpsTested
)

// bitOpsNames names the variants for String.
var bitOpsNames = enum.New[BitOps]("bitops", []string{BitOpsBlind: "blind", BitOpsTestSet: "test-set", BitOpsTested: "tested"}...)

// String returns "blind", "test-set" or "tested" ("bitops(n)" for another
// value).
func (b BitOps) String() string { return bitOpsNames.String(b) }

// setWrites reports whether a set_buffer_* of a bit that was (wasSet) or
// was not already set does its atomic: always up to v4.17, only on a change
// from v4.18.
func (b BitOps) setWrites(wasSet bool) bool { return !wasSet || b == BitOpsBlind }

// commitClearsNew reports whether __block_commit_write's clear_buffer_new
// does its atomic on a buffer that is (isNew) or is not new: always up to
// v5.11, only on a new one from v5.12.
func (b BitOps) commitClearsNew(isNew bool) bool { return isNew || b != BitOpsTested }

// Linux618 returns c with the variants of Linux 6.15–6.18 that the host
// kernel's recordings (testdata/kernel/6.18) pin: large folios in the block
// device's mapping (FoliosLarge), set_blocksize's v6.15 rules
// (blocksize.RulesLarge), the v6.16 sleeping lookups (LookupNonatomic)
// and the tested bit writes of v5.12+ (BitOpsTested). (Readahead, on demand with folio orders that grow where the mapping has
// large folios, is every kernel's.) The set_init_blocksize
// policy, the LRU and alloc variants are left as c has them (6.18's are the
// zero values: PolicyGrow, a 16-slot LRU, AllocLinear). Block-device writes
// of 6.18 go through iomap with a mapping_max_folio_size chunk, which is not
// a page-cache variant: set c.WriteIter to iomap.Writer(iomap.Linux618) for
// File.Pwrite to make large folios as 6.18 does (without it, a pwrite takes
// one page at a time, as generic_perform_write does).
func Linux618(c Config) Config {
	c.Folios = FoliosLarge
	c.SetBlocksize = blocksize.RulesLarge
	c.Lookup = LookupNonatomic
	c.BitOps = BitOpsTested
	return c
}

// maxFolioOrder bounds the folio orders the model allocates: MAX_XAS_ORDER,
// the cap of MAX_PAGECACHE_ORDER (099d90642a71, v6.10).
const maxFolioOrder = 11

// maxPagecacheOrder models MAX_PAGECACHE_ORDER on a kernel with transparent
// huge pages and 8-byte page-table entries: HPAGE_PMD_ORDER = PAGE_SHIFT − 3
// (9 on 4 KiB pages: 2 MiB folios), capped at MAX_XAS_ORDER (11, which only
// binds on 64 KiB pages).
func maxPagecacheOrder(pageShift uint8) uint8 { return min(pageShift-3, maxFolioOrder) }

// checkVariants refuses variants that are not constants, and the v6.15
// set_blocksize rules without large folios (blocks above a page need them).
func (c *Config) checkVariants() error {
	if _, err := blocksize.ParseRules(c.SetBlocksize.String()); err != nil {
		return err
	}
	switch {
	case c.Folios != FoliosSmall && c.Folios != FoliosLarge:
		return fmt.Errorf("bufcache: unknown folio policy %d (valid: %s)", c.Folios, folioPolicyNames.List())
	case c.BitOps > BitOpsTested:
		return fmt.Errorf("bufcache: unknown bit operations %d (valid: %s)", c.BitOps, bitOpsNames.List())
	case c.Lookup != LookupAtomic && c.Lookup != LookupNonatomic:
		return fmt.Errorf("bufcache: unknown lookup variant %d (valid: %s)", c.Lookup, lookupNames.List())
	case c.SetBlocksize == blocksize.RulesLarge && c.Folios != FoliosLarge:
		return fmt.Errorf("bufcache: set_blocksize rules %v need large folios (Folios: FoliosLarge)", c.SetBlocksize)
	}
	return nil
}
