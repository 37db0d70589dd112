package bufcache

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/internal/enum"
	"github.com/bhsim/bhsim/internal/pageindex"
	"github.com/bhsim/bhsim/lru"
)

// AllocVariant selects how alloc_page_buffers builds a page's buffer ring.
type AllocVariant uint8

const (
	// AllocLinear is mainline (every version from 2.6 to 6.15+): alloc_page_buffers
	// returns a NULL-terminated list and its callers (link_dev_buffers,
	// create_empty_buffers) walk it to the tail to close the ring, with a separate
	// pass to set b_state.
	AllocLinear AllocVariant = iota
	// AllocCircular is Sean Fu's unmerged June 2017 patch ("fs: buffer: Modify
	// alloc_page_buffers", the alloc_page_buffers thread): the ring is closed and b_state set while the
	// list is built, so callers skip the tail walk.
	AllocCircular
)

// allocNames names the variants for String and ParseAllocVariant.
var allocNames = enum.New[AllocVariant]("alloc", []string{AllocLinear: "linear", AllocCircular: "circular"}...).
	WithError(ErrUnknownAllocVariant)

// String returns "linear" or "circular" ("alloc(n)" for another value).
func (v AllocVariant) String() string { return allocNames.String(v) }

// ParseAllocVariant returns the variant whose String is s. Errors:
// ErrUnknownAllocVariant, wrapped with s and the valid names. O(1).
func ParseAllocVariant(s string) (AllocVariant, error) { return allocNames.Parse(s) }

// LRUMode selects the per-CPU buffer_head LRU variant in front of
// __find_get_block_slow.
type LRUMode uint8

const (
	// LRUOn is mainline: a per-CPU LRU of Config.LRUSize slots (BH_LRU_SIZE).
	LRUOn LRUMode = iota
	// LRURemoved is Marcelo Tosatti's June 2023 patch "fs/buffer.c: remove
	// per-CPU buffer_head lookup cache": __find_get_block is the slow path alone.
	LRURemoved
)

// lruModeNames names the LRU modes for String.
var lruModeNames = enum.New[LRUMode]("lru", []string{LRUOn: "on", LRURemoved: "removed"}...)

// String returns "on" or "removed" ("lru(n)" for another value).
func (m LRUMode) String() string { return lruModeNames.String(m) }

// Config is the simulated kernel and machine: the variants that differ between
// the kernels the threads compare, and the number of CPUs. The zero value is a
// one-CPU machine with 4 KiB pages running the kernel the threads' model was
// built for (mainline up to v6.14: order-0 folios, set_blocksize up to
// PAGE_SIZE, private_lock lookups; and, as up to v4.17, state bits written
// without a test); Linux618 selects the variants of 6.15–6.18.
//
// NewMachine refuses counts no kernel has (they would only exhaust memory):
// more than MaxCPUs CPUs or more than MaxLRUSize LRU slots per CPU.
type Config struct {
	// CPUs is the number of simulated CPUs (0 means 1).
	CPUs int
	// PageSize is PAGE_SIZE in bytes (0 means 4096); 16 KiB and 64 KiB model arm64.
	PageSize uint32
	// InitBlocksize is the set_init_blocksize policy applied when a device is opened.
	InitBlocksize blocksize.Policy
	// Alloc is the alloc_page_buffers variant.
	Alloc AllocVariant
	// Index is the page-cache index structure of every mapping
	// (IndexXArray, the zero value, or IndexBTree).
	Index IndexKind
	// LRU selects the per-CPU bh LRU variant.
	LRU LRUMode
	// LRUSize is the number of LRU slots per CPU, BH_LRU_SIZE (0 means
	// lru.DefaultSize, 16; 8 models kernels before v3.18).
	LRUSize int
	// DirtyLimit is the background threshold: the number of dirty folios a
	// device may hold before a writer starts background writeback (a
	// simplified balance_dirty_pages), which writes range-cyclic chunks of
	// writeback_chunk_size pages until the device is back at or under it; 0
	// means no limit: data stays dirty until SyncBlockdev. A Balancer
	// replaces it.
	DirtyLimit int
	// Balancer, if set, is balance_dirty_pages (see DirtyBalancer): the
	// write paths call it after each folio they dirty, and DirtyLimit is
	// not used.
	Balancer DirtyBalancer
	// SeparateFlusher makes background writeback run on CPU FlusherCPU (the
	// kernel's flusher thread) instead of the writer's CPU. A writer's goroutine
	// drives that CPU while it writes back, one writer at a time; no goroutine
	// may drive FlusherCPU for anything else.
	SeparateFlusher bool
	FlusherCPU      int
	// Kswapd makes reclaim run on CPU KswapdCPU (the node's kswapd thread,
	// which the allocator wakes below the low watermark) instead of the
	// allocating CPU (direct reclaim). The model's kswapd always keeps up: the
	// allocation that finds the page cache at PageCacheLimit drives that CPU
	// for the pass and then goes on, one allocating goroutine at a time; no
	// goroutine may drive KswapdCPU for anything else. KswapdCPU must be one
	// of the CPUs and not the flusher's; without a PageCacheLimit nothing is
	// reclaimed and Kswapd changes nothing. The folios and buffer heads a
	// pass frees are reused by the allocating CPU.
	Kswapd    bool
	KswapdCPU int
	// PageCacheLimit is the number of pages the page cache may hold (0: no
	// limit); creating a folio beyond it first reclaims clean, unused folios,
	// oldest first (on a 32-bit machine a block device's page cache lives in
	// low memory: about 640 MiB, 163 840 pages of 4 KiB, on the Helios4).
	PageCacheLimit int
	// ContiguousPages gives consecutively created folios consecutive page frame
	// numbers, so that the block layer can coalesce them into one segment; by
	// default every folio is its own segment.
	ContiguousPages bool
	// Folios selects the folios of the block device's mapping: order 0
	// (FoliosSmall, up to v6.14) or large folios (FoliosLarge, v6.15+).
	Folios FolioPolicy
	// SetBlocksize is set_blocksize's rule set: blocksize.RulesPageSize (up
	// to v6.14) or blocksize.RulesLarge (v6.15+, blocks up to 64 KiB; needs
	// FoliosLarge).
	SetBlocksize blocksize.Rules
	// Lookup selects the buffer lookups of getblk: LookupAtomic (up to
	// v6.15) or LookupNonatomic (v6.16+: __find_get_block_nonatomic).
	Lookup LookupVariant
	// BitOps selects which state-bit writes test the bit first: none
	// (BitOpsBlind, up to v4.17), set_buffer_* (BitOpsTestSet, v4.18–v5.11),
	// and __block_commit_write's clear_buffer_new too (BitOpsTested,
	// v5.12+): what EvBHBit counts.
	BitOps BitOps
	// WriteIter is the buffered write of blkdev_write_iter that File.Pwrite
	// uses: nil is generic_perform_write through buffer heads
	// (BlockDevice.Write, up to v6.5); package iomap's Writer gives
	// iomap_file_buffered_write (v6.6+).
	WriteIter WriteIterFunc
	// OneGoroutine declares that one goroutine at a time drives the machine:
	// every method of the machine, its CPUs and its devices (SetIsolated
	// and the LRU invalidations included) and every completion runs on the
	// driving goroutine (workload.DD's runs and workload's scenario and
	// workload runners do). The folios' and buffer heads' flags and reference
	// counts, the page-cache index's lock and stores, private_lock and the
	// reclaim list's lock then become plain memory operations (package
	// internal/conc's confinement): the same steps, results and counted
	// events, without their locked instructions. (The page-cache counters,
	// the frame numbers and the per-CPU LRU's lock stay atomic.) AddDisk and
	// Open confine each disk they add (blk.Confine), and the devices under
	// it, for good. Driving such a machine from two goroutines at once is a
	// data race, which go test -race reports.
	OneGoroutine bool
	// Check runs the invariant checker after the operations that change the page
	// cache's structure or dirty state (getblk's growth, set_blocksize,
	// try_to_free_buffers, sync_blockdev, mark_buffer_dirty) and panics on a
	// violation. Meant for single-goroutine tests and fuzzing: concurrent
	// operations can show the checker transient states.
	Check bool
}

// Machine is a simulated computer: CPUs, the kernel variants of its Config, the
// per-CPU buffer_head LRU, and the block devices opened on it.
type Machine struct {
	cfg       Config
	pageShift uint8
	cpus      []*CPU
	lru       *lru.Cache[lruKey, *BufferHead] // nil with LRURemoved

	mu      sync.Mutex
	devices []*BlockDevice
	tracer  tracerSlot
	pfns    atomic.Uint64 // page frame numbers handed out
	// flusherMu lets one writer at a time drive the flusher's CPU.
	flusherMu sync.Mutex
	// kswapdMu lets one allocating goroutine at a time drive kswapd's CPU.
	kswapdMu sync.Mutex
	cached   atomic.Int64 // folios in all page caches
	folios   folioLRU     // reclaim order
}

// allocPFN returns the first page frame number of a new folio of the given
// order, whose pages have consecutive frames: consecutive folios get
// consecutive frames only with Config.ContiguousPages (otherwise a gap as
// large as the folio precedes it).
func (m *Machine) allocPFN(order uint8) uint64 {
	pages := uint64(1) << order
	n := pages
	if !m.cfg.ContiguousPages {
		n *= 2
	}
	return m.pfns.Add(n) - pages + 1
}

// confineFolio confines the flags and reference count of a new folio of a
// machine with Config.OneGoroutine (they keep their mode through reuse).
func (m *Machine) confineFolio(f *Folio) {
	if m.cfg.OneGoroutine {
		f.flags.Confine()
		f.ref.Confine()
	}
}

// lruKey is what lookup_bh_lru compares: (b_bdev, b_blocknr, b_size).
type lruKey struct {
	dev   *BlockDevice
	block uint64
	size  uint32
}

// The largest counts NewMachine accepts.
const (
	// MaxCPUs is the largest CONFIG_NR_CPUS the kernel allows (x86-64 with
	// MAXSMP).
	MaxCPUs = 8192
	// MaxLRUSize bounds Config.LRUSize: BH_LRU_SIZE is 16 (8 before v3.18);
	// the LRU is searched linearly, so sizes far beyond that model nothing.
	MaxLRUSize = 1024
)

// NewMachine builds a machine from cfg. Errors: an invalid page size, an
// unknown variant (blocksize.ErrUnknownRules for SetBlocksize), the v6.15
// set_blocksize rules without large folios, a CPU count outside
// [0, MaxCPUs] or an LRU size outside [0, MaxLRUSize] (0 selects the
// default of each), a negative dirty or page-cache limit, a FlusherCPU
// (with SeparateFlusher) or KswapdCPU (with Kswapd) outside [0, CPUs), and
// a KswapdCPU that is the flusher's.
func NewMachine(cfg Config) (*Machine, error) {
	if cfg.CPUs < 0 || cfg.CPUs > MaxCPUs {
		return nil, fmt.Errorf("bufcache: %d CPUs (valid: 0, meaning 1, to %d)", cfg.CPUs, MaxCPUs)
	}
	if cfg.CPUs == 0 {
		cfg.CPUs = 1
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = blocksize.DefaultPageSize
	}
	if err := blocksize.ValidatePageSize(cfg.PageSize); err != nil {
		return nil, err
	}
	if _, err := blocksize.ParsePolicy(cfg.InitBlocksize.String()); err != nil {
		return nil, err
	}
	if _, err := ParseAllocVariant(cfg.Alloc.String()); err != nil {
		return nil, err
	}
	if _, err := pageindex.ParseKind(cfg.Index.String()); err != nil {
		return nil, err
	}
	if err := cfg.checkVariants(); err != nil {
		return nil, err
	}
	if cfg.SeparateFlusher && (cfg.FlusherCPU < 0 || cfg.FlusherCPU >= cfg.CPUs) {
		return nil, fmt.Errorf("bufcache: flusher CPU %d of %d", cfg.FlusherCPU, cfg.CPUs)
	}
	if cfg.Kswapd && (cfg.KswapdCPU < 0 || cfg.KswapdCPU >= cfg.CPUs || cfg.SeparateFlusher && cfg.KswapdCPU == cfg.FlusherCPU) {
		return nil, fmt.Errorf("bufcache: kswapd CPU %d of %d (flusher %d)", cfg.KswapdCPU, cfg.CPUs, cfg.FlusherCPU)
	}
	if cfg.PageCacheLimit < 0 {
		return nil, fmt.Errorf("bufcache: page cache limit %d", cfg.PageCacheLimit)
	}
	if cfg.DirtyLimit < 0 {
		return nil, fmt.Errorf("bufcache: dirty limit %d", cfg.DirtyLimit)
	}
	if cfg.LRUSize < 0 || cfg.LRUSize > MaxLRUSize {
		return nil, fmt.Errorf("bufcache: LRU size %d (valid: 0, meaning the default, to %d)", cfg.LRUSize, MaxLRUSize)
	}
	if cfg.LRUSize == 0 {
		cfg.LRUSize = lru.DefaultSize
	}
	m := &Machine{cfg: cfg, pageShift: uint8(blocksize.Log2(cfg.PageSize))}
	if cfg.OneGoroutine {
		m.folios.mu.Confine()
	}
	m.cpus = make([]*CPU, cfg.CPUs)
	for i := range m.cpus {
		m.cpus[i] = &CPU{id: i, m: m}
	}
	// The flusher's and kswapd's plugs are kernel threads', whose plug
	// events a count of the task's own leaves out.
	if cfg.SeparateFlusher {
		m.cpus[cfg.FlusherCPU].plug.SetKernelThread()
	}
	if cfg.Kswapd {
		m.cpus[cfg.KswapdCPU].plug.SetKernelThread()
	}
	switch cfg.LRU {
	case LRUOn:
		c, err := lru.New[lruKey](cfg.CPUs, cfg.LRUSize, lru.Hooks[*BufferHead]{
			Hold:    func(bh *BufferHead) { bh.count.Add(1) },
			Release: func(bh *BufferHead) { bh.count.Add(-1) },
		})
		if err != nil {
			return nil, err
		}
		m.lru = c
	case LRURemoved:
	default:
		return nil, fmt.Errorf("bufcache: unknown LRU mode %d (valid: %s)", cfg.LRU, lruModeNames.List())
	}
	return m, nil
}

// Config returns the machine's configuration with defaults filled in.
func (m *Machine) Config() Config { return m.cfg }

// PageSize returns PAGE_SIZE.
func (m *Machine) PageSize() uint32 { return m.cfg.PageSize }

// NumCPU returns the number of simulated CPUs.
func (m *Machine) NumCPU() int { return len(m.cpus) }

// CPU returns simulated CPU i, 0 ≤ i < NumCPU (it panics otherwise: a CPU number
// is the caller's own choice, not input).
func (m *Machine) CPU(i int) *CPU { return m.cpus[i] }

// Events returns the sum of every CPU's counters. Call it only while no
// goroutine drives a CPU.
func (m *Machine) Events() Counters {
	var c Counters
	for _, cpu := range m.cpus {
		c = c.Add(cpu.ev)
	}
	return c
}

// SetIsolated marks CPU i isolated (nohz_full/isolcpus). From v6.6 ("fs/buffer.c:
// disable per-CPU buffer_head cache for isolated CPUs") such a CPU neither
// installs into nor looks up its bh LRU. Isolating empties the CPU's LRU. It is
// a no-op with LRURemoved.
func (m *Machine) SetIsolated(i int, isolated bool) {
	if m.lru != nil {
		m.lru.SetIsolated(i, isolated)
	}
}

// InvalidateBhLRUs models invalidate_bh_lrus: every CPU whose LRU holds a buffer
// drops its entries. on_each_cpu_cond runs the handler directly on the calling
// CPU and interrupts the others, so the IPIs are the other CPUs that held
// entries; they are counted as EvLRUIPI on cpu (the sender) and returned.
func (m *Machine) InvalidateBhLRUs(cpu *CPU) int {
	if m.lru == nil {
		return 0
	}
	local := m.lru.Len(cpu.id) > 0 // cpu's own LRU changes only under our hand
	n, released := m.lru.InvalidateAll()
	if local {
		n--
	}
	cpu.countN(EvLRUIPI, n)
	cpu.countN(EvBHPut, released)
	return n
}

// Check runs the invariant checker on every device opened on m and on the LRU.
// Call it only at a quiescent point.
func (m *Machine) Check() error {
	var errs []string
	if m.lru != nil {
		if err := m.lru.Check(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	m.mu.Lock()
	devs := append([]*BlockDevice(nil), m.devices...)
	m.mu.Unlock()
	for _, d := range devs {
		if err := d.Check(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("bufcache: invariants broken:\n%s", strings.Join(errs, "\n"))
	}
	return nil
}
