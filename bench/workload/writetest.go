package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// ext3Direct is EXT3_NDIR_BLOCKS: the block pointers an ext2/ext3 inode holds
// itself; i_block[12], [13] and [14] point at the single, double and triple
// indirect blocks.
const ext3Direct = 12

// mebibyte is 2^20 bytes, writetest's block.
const mebibyte = 1 << 20

// PostedWriteTestMiB is the file writetest writes in the alloc_page_buffers
// thread: -b 800, 800 MiB.
const PostedWriteTestMiB = 800

// WriteTest is LTP's writetest (testcases/kernel/io/writetest) as Sean Fu ran
// it in the alloc_page_buffers thread: `writetest -b 800 -o FILE` on ext3 made with `mkfs.ext3 -b
// 1024`. The program write(2)s Bytes in IOSize pieces (writetest's 1 MiB
// BLOCKSIZE, filled from a seeded rand()), closes the file without fsync,
// then reopens it and reads it back in IOSize read(2)s, comparing every byte
// with the regenerated stream.
//
// The model has a block device's page cache, not ext3. The file is the
// device's first Bytes (file block i is device block i), written through the
// buffer_head write path (BlockDevice.Write: generic_perform_write,
// block_write_begin → create_empty_buffers → alloc_page_buffers, one ring of
// PAGE_SIZE/BlockSize buffers per page) on a device whose block size was set
// to BlockSize as mounting does (sb_set_blocksize). Of ext3's own metadata
// only the indirect-block tree is modelled: a writer allocates its blocks
// through sb_getblk (getblk → grow_dev_page, another ring per block) and a
// cold reader reads them through sb_bread, in a region of the device after the
// file, one per page, as ext3's allocator leaves them (an indirect block
// sits just before the data blocks it maps, so each lands in its own page of
// the device's cache). Not modelled: the journal (jbd2 handles, journal_heads,
// the commits), block allocation (bitmaps, reservation windows, group
// descriptors), the inode update, and the file's own address_space (ext3's
// data pages belong to the file's mapping; here they are pages of the device's
// mapping, which take the same buffer_head path).
type WriteTest struct {
	// Kernel is the kernel the test runs on; its Alloc is the
	// alloc_page_buffers variant: mainline's linear list (4.12) or Sean Fu's
	// patch (4.12-circular).
	Kernel engine.Kernel
	// BlockSize is ext3's block size, one of 1024, 2048 and 4096 (mkfs.ext3
	// -b); the alloc_page_buffers thread uses 1024, four buffers a page.
	BlockSize uint32
	// Bytes is the size of the file (writetest -b N writes N MiB).
	Bytes uint64
	// IOSize is the size of each write(2) and read(2): 1 MiB.
	IOSize uint64
	// Seed seeds the stream writetest writes and verifies (buf_init's srand).
	Seed uint64
	// Data makes the run carry real bytes: the stream goes to an in-memory
	// disk and every read is compared with it, as writetest's verify does.
	// Otherwise the run is metadata-only: the same events, no bytes.
	Data bool
	// PageCacheLimit and DirtyLimit are in folios (see bufcache.Config): 0
	// and 0 for a machine whose memory holds the file and writes it back
	// only when synced.
	PageCacheLimit, DirtyLimit int
}

// PostedWriteTest returns the thread's run on kernel k, writing scale ×
// 800 MiB (rounded to whole MiB, at least one): 1 KiB blocks, 1 MiB write(2)s
// and read(2)s, metadata-only, on a machine whose page cache holds the file.
// The seed (the date of Sean Fu's reply) matters only to runs with Data.
func PostedWriteTest(k engine.Kernel, scale float64) WriteTest {
	mib := max(uint64(PostedWriteTestMiB*scale+0.5), 1)
	return WriteTest{Kernel: k, BlockSize: 1024, Bytes: mib * mebibyte, IOSize: mebibyte, Seed: 20170621}
}

// WriteTestResult is what the process's CPU did in each phase of a run.
type WriteTestResult struct {
	Setup WriteTest
	// Write is writetest's write phase.
	Write Phase
	// ReadCached is its verify phase as the program runs it: the file was
	// just written and is still in the page cache.
	ReadCached Phase
	// ReadCold is the same read after a remount emptied the page cache: data
	// by readahead (ext4_mpage_readpages: no buffer heads), the indirect
	// blocks by sb_bread.
	ReadCold Phase
	// TreeBlocks is the number of indirect blocks the file needs.
	TreeBlocks uint64
}

// Phase is one phase of a WriteTest: the bytes it moved and the events of the
// CPU the process ran on — its system time, once priced.
type Phase struct {
	Bytes  uint64
	Events bufcache.Counters
	// BuffersPerPage is PAGE_SIZE / BlockSize: the length of every ring.
	BuffersPerPage int
}

// Pages returns the 4 KiB pages the phase moved.
func (p Phase) Pages() float64 { return float64(p.Bytes) / blocksize.DefaultPageSize }

// Rings returns the buffer rings the phase built (alloc_page_buffers calls):
// every buffer head allocated belongs to one ring of BuffersPerPage.
func (p Phase) Rings() float64 {
	return float64(p.Events[bufcache.EvBHAlloc]) / float64(p.BuffersPerPage)
}

// PerPage returns the phase's count of e per page moved.
func (p Phase) PerPage(e bufcache.Event) float64 { return float64(p.Events[e]) / p.Pages() }

// validate checks w. Errors: a block size ext3 does not have, a file
// that is empty or larger than ext3 allows with that block size, no I/O size,
// an unknown variant.
func (w WriteTest) validate() error {
	switch {
	case w.BlockSize != 1024 && w.BlockSize != 2048 && w.BlockSize != 4096:
		return fmt.Errorf("workload: writetest: ext3 block size %d (valid: 1024, 2048, 4096)", w.BlockSize)
	case w.Bytes == 0 || w.IOSize == 0:
		return fmt.Errorf("workload: writetest: %d bytes in %d-byte I/Os", w.Bytes, w.IOSize)
	case w.Bytes > maxExt3File(w.BlockSize):
		return fmt.Errorf("workload: writetest: %d bytes exceed ext3's largest file with %d-byte blocks (%d)", w.Bytes, w.BlockSize, maxExt3File(w.BlockSize))
	}
	_, err := bufcache.ParseAllocVariant(w.Kernel.Alloc.String())
	return err
}

// maxExt3File is the largest file the block map of an ext2/ext3 inode can
// address with blocks of bs bytes (ignoring i_blocks' own limit).
func maxExt3File(bs uint32) uint64 {
	p := uint64(bs / 4)
	return (ext3Direct + p + p*p + p*p*p) * uint64(bs)
}

// Run runs writetest: the write phase (then the data is synced by the
// flusher, off the process's clock), the verify phase on the cached file,
// and the same read after a remount. Errors: an invalid WriteTest, an I/O
// error, or (with Data) a byte that reads back different from what was
// written. Time and memory O(Bytes): the page cache of the whole file (about
// 100 MiB of Go heap for 800 MiB metadata-only).
func (w WriteTest) Run() (*WriteTestResult, error) {
	r, err := w.Start()
	if err != nil {
		return nil, err
	}
	res := &WriteTestResult{Setup: w, TreeBlocks: r.treeBlocks}
	phase := func(f func() error) (Phase, error) {
		before := r.Events()
		err := f()
		return Phase{Bytes: w.Bytes, Events: r.Events().Sub(before), BuffersPerPage: int(blocksize.DefaultPageSize / w.BlockSize)}, err
	}
	if res.Write, err = phase(func() error { return r.Write(w.Bytes) }); err != nil {
		return nil, err
	}
	if err := r.Sync(); err != nil {
		return nil, err
	}
	r.Rewind()
	if res.ReadCached, err = phase(func() error { return r.Read(w.Bytes, false) }); err != nil {
		return nil, err
	}
	if err := r.Remount(); err != nil {
		return nil, err
	}
	if res.ReadCold, err = phase(func() error { return r.Read(w.Bytes, true) }); err != nil {
		return nil, err
	}
	return res, nil
}

// WriteTestRun is a WriteTest in progress: a machine with the device
// mounted, the program's buffer and its position in the file. CPU 0 runs the
// program; CPU 1 is the flusher (background writeback and the sync).
type WriteTestRun struct {
	w        WriteTest
	disk     blk.Device
	m        *bufcache.Machine
	dev      *bufcache.BlockDevice
	user     *bufcache.UserBuf
	src, dst []byte
	rng      *rand.PCG
	tree     indirectTree
	pos      uint64 // file position
	stepped  uint64 // file blocks the tree walk has seen
	metaBase uint64 // device block of the first indirect block
	// treeBlocks is the number of indirect blocks the whole file needs.
	treeBlocks uint64
}

// Start builds the machine, the disk (an in-memory one with Data, a null
// device otherwise: the device's speed does not enter system time) and mounts
// it. Errors: an invalid WriteTest.
func (w WriteTest) Start() (*WriteTestRun, error) {
	if err := w.validate(); err != nil {
		return nil, err
	}
	const page = blocksize.DefaultPageSize
	perPage := uint64(page / w.BlockSize)
	dataBlocks := blocksize.DivRoundUp(w.Bytes, page) * perPage
	tree := indirectBlocks(blocksize.DivRoundUp(w.Bytes, uint64(w.BlockSize)), uint64(w.BlockSize/4))
	size := (dataBlocks + tree*perPage) * uint64(w.BlockSize)
	r := &WriteTestRun{w: w, metaBase: dataBlocks, treeBlocks: tree, tree: indirectTree{perBlock: uint64(w.BlockSize / 4)},
		dst: make([]byte, w.IOSize)}
	var err error
	if w.Data {
		r.disk, err = blk.NewMemDisk("sdb1", size, 512)
		r.src = make([]byte, w.IOSize)
		r.user = bufcache.NewUserBuf(r.src, 0, page)
		r.rng = rand.NewPCG(w.Seed, 0)
	} else {
		r.disk, err = blk.NewNullDisk("sdb1", size, 512)
		r.user = bufcache.NewUserBufSize(w.IOSize, 0, page)
	}
	if err != nil {
		return nil, err
	}
	return r, r.Remount()
}

// Remount models umount and mount: a new machine over the same disk (the
// page cache is empty), the device opened and its block size set to ext3's
// (sb_set_blocksize); the file position goes back to its start. Errors: the
// machine or the block size cannot be set up.
func (r *WriteTestRun) Remount() error {
	m, err := engine.Build(engine.MachineSpec{Kernel: &r.w.Kernel, Config: bufcache.Config{CPUs: 2, SeparateFlusher: true, FlusherCPU: 1,
		PageCacheLimit: r.w.PageCacheLimit, DirtyLimit: r.w.DirtyLimit, OneGoroutine: true},
		Disk: engine.DiskSpec{Device: r.disk, MetadataOnly: !r.w.Data}})
	if err != nil {
		return err
	}
	dev := m.Dev
	if err := dev.SetBlocksize(m.CPU(0), r.w.BlockSize); err != nil {
		return err
	}
	r.m, r.dev = m.Machine, dev
	r.Rewind()
	return nil
}

// Rewind goes back to the start of the file, as writetest's reopen does, and
// re-seeds the stream (buf_init).
func (r *WriteTestRun) Rewind() {
	r.pos, r.stepped = 0, 0
	r.tree.reset()
	if r.rng != nil {
		r.rng.Seed(r.w.Seed, 0)
	}
}

// Pos returns the file position.
func (r *WriteTestRun) Pos() uint64 { return r.pos }

// Events returns the counters of the program's CPU.
func (r *WriteTestRun) Events() bufcache.Counters { return r.m.CPU(0).Events() }

// Sync writes back everything dirty on the flusher's CPU: what the flusher,
// jbd2's commits and the script's sync do after writetest closed the file,
// none of it in the program's system time. Errors: a write error.
func (r *WriteTestRun) Sync() error { return r.dev.SyncBlockdev(r.m.CPU(1)) }

// Write writes n bytes at the file position in write(2)s of at most IOSize,
// allocating the indirect blocks the new file blocks need. Errors: writing
// past the file's size, and the device's. O(n).
func (r *WriteTestRun) Write(n uint64) error {
	if n > r.w.Bytes-min(r.pos, r.w.Bytes) {
		return fmt.Errorf("workload: writetest: write of %d bytes at %d past the %d-byte file", n, r.pos, r.w.Bytes)
	}
	cpu := r.m.CPU(0)
	for n > 0 {
		chunk := min(n, r.w.IOSize)
		if r.src != nil {
			fillStream(r.rng, r.src[:chunk])
		}
		if err := r.mapBlocks(r.pos+chunk, true); err != nil {
			return err
		}
		it, err := r.user.Iter(0, chunk)
		if err != nil {
			return err
		}
		done, err := r.dev.Write(cpu, r.pos, it)
		if err != nil {
			return err
		}
		if done != chunk {
			return fmt.Errorf("workload: writetest: short write of %d bytes of %d at %d", done, chunk, r.pos)
		}
		r.pos += chunk
		n -= chunk
	}
	return nil
}

// Read reads n bytes at the file position in read(2)s of at most IOSize.
// With cold set the pages are not cached, and the indirect blocks that map
// them are read first, as ext4_mpage_readpages' ext4_map_blocks does;
// otherwise the read is a page-cache hit that maps nothing. With Data each
// byte is compared with the stream written. Errors: reading past the file,
// the device's, or a byte that differs. O(n).
func (r *WriteTestRun) Read(n uint64, cold bool) error {
	if n > r.w.Bytes-min(r.pos, r.w.Bytes) {
		return fmt.Errorf("workload: writetest: read of %d bytes at %d past the %d-byte file", n, r.pos, r.w.Bytes)
	}
	cpu := r.m.CPU(0)
	for n > 0 {
		chunk := min(n, r.w.IOSize)
		if cold {
			if err := r.mapBlocks(r.pos+chunk, false); err != nil {
				return err
			}
		}
		got, err := r.dev.Read(cpu, r.pos, r.dst[:chunk])
		if err != nil {
			return err
		}
		if got != chunk {
			return fmt.Errorf("workload: writetest: short read of %d bytes of %d at %d", got, chunk, r.pos)
		}
		if r.src != nil {
			fillStream(r.rng, r.src[:chunk])
			for i := range chunk {
				if r.src[i] != r.dst[i] {
					return fmt.Errorf("%w: byte %d reads %#02x, written %#02x", errVerify, r.pos+i, r.dst[i], r.src[i])
				}
			}
		}
		r.pos += chunk
		n -= chunk
	}
	return nil
}

// errVerify is writetest's "Verify: Failure".
var errVerify = errors.New("workload: writetest: verify failed")

// fillStream is buf_fill: the next len(b) bytes of the seeded stream.
func fillStream(rng *rand.PCG, b []byte) {
	for i := 0; i < len(b); i += 8 {
		v := rng.Uint64()
		for k := i; k < min(i+8, len(b)); k++ {
			b[k] = byte(v)
			v >>= 8
		}
	}
}

// mapBlocks walks the indirect tree over the file blocks up to byte end that
// it has not seen. Where a block starts a new indirect block, a writer
// allocates the new tree blocks (ext4_alloc_branch: sb_getblk, lock, clear,
// set uptodate, unlock, dirty) and reads the existing ones above them
// (ext4_get_branch: sb_bread, cached), then dirties the block that receives
// the new pointer (ext4_splice_branch); a reader reads the whole chain with
// sb_bread. Errors: the device's.
func (r *WriteTestRun) mapBlocks(end uint64, write bool) error {
	bs := uint64(r.w.BlockSize)
	last := blocksize.DivRoundUp(end, bs)
	cpu := r.m.CPU(0)
	var held [3]*bufcache.BufferHead
	for ; r.stepped < last; r.stepped++ {
		depth, fresh := r.tree.step(r.stepped)
		for k := range depth {
			block := r.metaBase + r.tree.chain[k]*(blocksize.DefaultPageSize/bs)
			var err error
			if write && k >= depth-fresh {
				held[k], err = r.allocTreeBlock(cpu, block)
			} else {
				held[k], err = r.dev.Bread(cpu, block, r.w.BlockSize)
			}
			if err != nil {
				return err
			}
		}
		if write && fresh > 0 && fresh < depth {
			bufcache.MarkBufferDirty(cpu, held[depth-fresh-1])
		}
		for k := range depth {
			bufcache.Brelse(cpu, held[k])
			held[k] = nil
		}
	}
	return nil
}

// allocTreeBlock is one new indirect block of ext4_alloc_branch: sb_getblk,
// then under the buffer lock zeroed and made uptodate, then dirtied (by the
// journal, which is not modelled). It returns the held buffer.
func (r *WriteTestRun) allocTreeBlock(cpu *bufcache.CPU, block uint64) (*bufcache.BufferHead, error) {
	bh, err := r.dev.Getblk(cpu, block, r.w.BlockSize)
	if err != nil {
		return nil, err
	}
	bufcache.LockBuffer(cpu, bh)
	clear(bh.Data())
	bh.SetUptodate(cpu)
	bufcache.UnlockBuffer(cpu, bh)
	bufcache.MarkBufferDirty(cpu, bh)
	return bh, nil
}

// indirectTree follows the block map of an ext2/ext3 inode (the layout
// ext4_ind_map_blocks walks, fs/ext4/indirect.c, v4.12) as a file is mapped
// from its first block on: twelve direct pointers in the inode, then a single
// indirect block of perBlock pointers, a double and a triple indirect block.
// It numbers tree blocks in the order a sequential writer allocates them, top
// level first, so a reader walking the same file from its start finds the
// same numbers.
type indirectTree struct {
	perBlock uint64
	chain    [3]uint64 // the current path's tree blocks, top first
	next     uint64    // tree blocks numbered so far
}

// reset forgets the path and the numbering: the start of the file.
func (t *indirectTree) reset() { t.chain, t.next = [3]uint64{}, 0 }

// step is called for file blocks 0, 1, 2, … in order. For a block that
// starts a new indirect block's range it returns the depth of its path
// (1–3; the path is chain[:depth]) and how many of the path's blocks, counted
// from the bottom, are new: 1 for a new indirect block, 2 when a double
// indirect block starts too, 3 at the first block behind the triple indirect
// block. For any other block (a direct one, or one whose indirect block is
// already on the path) it returns 0, 0. Blocks past the triple indirect
// range are not valid (WriteTest.validate refuses such files). O(depth).
func (t *indirectTree) step(i uint64) (depth, fresh int) {
	p := t.perBlock
	if i < ext3Direct {
		return 0, 0
	}
	i -= ext3Direct
	switch {
	case i < p:
		if i != 0 {
			return 0, 0
		}
		depth, fresh = 1, 1
	case i-p < p*p:
		i -= p
		if i%p != 0 {
			return 0, 0
		}
		depth, fresh = 2, 1
		if i == 0 {
			fresh = 2
		}
	default:
		i -= p + p*p
		if i%p != 0 {
			return 0, 0
		}
		depth, fresh = 3, 1
		if i%(p*p) == 0 {
			fresh = 2
		}
		if i == 0 {
			fresh = 3
		}
	}
	for k := depth - fresh; k < depth; k++ {
		t.chain[k] = t.next
		t.next++
	}
	return depth, fresh
}

// indirectBlocks returns the number of indirect blocks (single, double and
// triple) that map a file of n blocks with p pointers per block. O(1).
func indirectBlocks(n, p uint64) uint64 {
	if n <= ext3Direct {
		return 0
	}
	r := n - ext3Direct
	total := uint64(1) // the single indirect block
	if r <= p {
		return total
	}
	r -= p
	total += 1 + blocksize.DivRoundUp(min(r, p*p), p) // the double indirect block and its children
	if r <= p*p {
		return total
	}
	r -= p * p
	return total + 1 + blocksize.DivRoundUp(r, p*p) + blocksize.DivRoundUp(r, p)
}
