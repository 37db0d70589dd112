package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
)

func TestIndirectTreeStep(t *testing.T) {
	const p = 256
	for _, tc := range []struct {
		block        uint64
		depth, fresh int
	}{
		{0, 0, 0}, {11, 0, 0}, // direct
		{12, 1, 1}, {13, 0, 0}, {267, 0, 0}, // the single indirect block
		{268, 2, 2}, {269, 0, 0}, {524, 2, 1}, // the double indirect block and its children
		{268 + p*p - p, 2, 1},
		{268 + p*p, 3, 3}, {268 + p*p + p, 3, 1}, {268 + 2*p*p, 3, 2}, {268 + 2*p*p + 1, 0, 0},
	} {
		tr := indirectTree{perBlock: p}
		depth, fresh := tr.step(tc.block)
		assert.Equal(t, tc.depth, depth, "block %d", tc.block)
		assert.Equal(t, tc.fresh, fresh, "block %d", tc.block)
	}

	// Numbering in allocation order, top level first.
	tr := indirectTree{perBlock: p}
	for _, tc := range []struct {
		block uint64
		chain []uint64
	}{
		{12, []uint64{0}}, {268, []uint64{1, 2}}, {524, []uint64{1, 3}}, {268 + p*p, []uint64{4, 5, 6}}, {268 + p*p + p, []uint64{4, 5, 7}},
	} {
		depth, _ := tr.step(tc.block)
		assert.Equal(t, tc.chain, tr.chain[:depth], "block %d", tc.block)
	}
}

// TestIndirectBlocksCount checks the closed form against the walk's own
// count: a tree of 4 pointers a block (small enough to reach the triple
// indirect range) for every file size, and ext3's 256 for sizes around the
// range boundaries.
func TestIndirectBlocksCount(t *testing.T) {
	for _, tc := range []struct {
		p    uint64
		upTo uint64
	}{{4, 12 + 4 + 16 + 64}, {256, 12 + 256 + 65536 + 3*65536 + 300}} {
		tr := indirectTree{perBlock: tc.p}
		var counted uint64
		n := uint64(0)
		for ; n <= tc.upTo && counted == indirectBlocks(n, tc.p); n++ {
			_, fresh := tr.step(n)
			counted += uint64(fresh)
		}
		assert.Equal(t, tc.upTo+1, n, "p=%d: the walk counted %d blocks for a file of %d, the closed form %d",
			tc.p, counted, n, indirectBlocks(n, tc.p))
	}
	assert.Equal(t, uint64(3214), indirectBlocks(800<<10, 256), "800 MiB of 1 KiB blocks: 1 + (1+256) + (1+12+2943)")
}

// TestWriteTestRingEvents runs writetest with both variants and checks what
// the patch changes: per ring built, exactly PAGE_SIZE/block-size ring-walk
// steps (the mainline caller's tail walk) and nothing else; one ring for each
// page written and each indirect block, one for each indirect block of a cold
// read, none for a cached read.
func TestWriteTestRingEvents(t *testing.T) {
	for _, tc := range []struct {
		name        string
		blockSize   uint32
		bytes, io   uint64
		wantWalksPR uint64 // ring-walk steps saved per ring
	}{
		{"1K blocks, 2 MiB", 1024, 2 << 20, 1 << 20, 4},
		{"1K blocks, odd sizes", 1024, 3<<20 + 1000, 100 << 10, 4},
		{"2K blocks", 2048, 1 << 20, 64 << 10, 2},
		{"4K blocks", 4096, 1 << 20, 1 << 20, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res [2]*WriteTestResult
			for i, k := range []string{"4.12", "4.12-circular"} {
				w := PostedWriteTest(engine.MustKernel(k), 1)
				w.BlockSize, w.Bytes, w.IOSize = tc.blockSize, tc.bytes, tc.io
				r, err := w.Run()
				require.NoError(t, err)
				res[i] = r
			}
			lin, circ := res[0], res[1]
			perPage := uint64(blocksize.DefaultPageSize / tc.blockSize)
			pages := blocksize.DivRoundUp(tc.bytes, blocksize.DefaultPageSize)
			tree := lin.TreeBlocks
			assert.Equal(t, indirectBlocks(blocksize.DivRoundUp(tc.bytes, uint64(tc.blockSize)), uint64(tc.blockSize/4)), tree)
			for _, ph := range []struct {
				name      string
				l, c      Phase
				wantRings uint64
			}{
				{"write", lin.Write, circ.Write, pages + tree},
				{"cold read", lin.ReadCold, circ.ReadCold, tree},
				{"cached read", lin.ReadCached, circ.ReadCached, 0},
			} {
				assert.Equal(t, ph.wantRings*perPage, ph.l.Events[bufcache.EvBHAlloc], "%s: buffers allocated", ph.name)
				assert.Equal(t, ph.wantRings*tc.wantWalksPR, ph.l.Events[bufcache.EvRingWalk]-ph.c.Events[bufcache.EvRingWalk],
					"%s: ring-walk steps saved", ph.name)
				for e := range bufcache.NumEvents {
					if e != bufcache.EvRingWalk {
						assert.Equal(t, ph.l.Events[e], ph.c.Events[e], "%s: %s", ph.name, e)
					}
				}
			}
			assert.Zero(t, lin.Write.Events[bufcache.EvWritepage], "writeback is the flusher's, not the program's")
			assert.Zero(t, lin.Write.Events[bufcache.EvWarning]+lin.ReadCold.Events[bufcache.EvWarning])
		})
	}
}

// TestWriteTestVerifies checks the data against writetest's own oracle,
// the regenerated stream: a run with data passes in both variants, and a
// read that regenerates a different stream fails.
func TestWriteTestVerifies(t *testing.T) {
	for _, k := range []string{"4.12", "4.12-circular"} {
		w := PostedWriteTest(engine.MustKernel(k), 1)
		w.Bytes, w.IOSize, w.Data = 1<<20+3000, 200<<10+7, true
		_, err := w.Run()
		require.NoError(t, err, "%s", k)

		r, err := w.Start()
		require.NoError(t, err)
		require.NoError(t, r.Write(w.Bytes))
		require.NoError(t, r.Sync())
		require.NoError(t, r.Remount())
		r.w.Seed++
		r.Rewind()
		assert.ErrorIs(t, r.Read(w.Bytes, true), errVerify, "%s: another stream must not verify", k)
	}
}

func TestWriteTestErrors(t *testing.T) {
	ok := PostedWriteTest(engine.MustKernel("4.12"), 1)
	ok.Bytes = 1 << 20
	for _, tc := range []struct {
		name string
		edit func(*WriteTest)
	}{
		{"512-byte blocks", func(w *WriteTest) { w.BlockSize = 512 }},
		{"8K blocks", func(w *WriteTest) { w.BlockSize = 8192 }},
		{"empty file", func(w *WriteTest) { w.Bytes = 0 }},
		{"no I/O size", func(w *WriteTest) { w.IOSize = 0 }},
		{"past ext3's largest file", func(w *WriteTest) { w.Bytes = maxExt3File(1024) + 1 }},
		{"unknown variant", func(w *WriteTest) { w.Kernel.Alloc = bufcache.AllocVariant(7) }},
		{"negative page cache", func(w *WriteTest) { w.PageCacheLimit = -1 }},
	} {
		w := ok
		tc.edit(&w)
		_, err := w.Run()
		assert.Error(t, err, tc.name)
	}
	r, err := ok.Start()
	require.NoError(t, err)
	assert.Error(t, r.Write(ok.Bytes+1), "write past the file")
	assert.Error(t, r.Read(ok.Bytes+1, true), "read past the file")
	require.NoError(t, r.Write(ok.Bytes))
	assert.Error(t, r.Write(1), "the file is full")
	assert.Equal(t, ok.Bytes, r.Pos())
}

// FuzzWriteTest runs writetest with data for arbitrary file and I/O sizes
// and block sizes: every byte verifies, and the variants differ only by the
// tail walk, PAGE_SIZE/block-size steps a ring.
func FuzzWriteTest(f *testing.F) {
	f.Add(uint32(1<<20), uint32(1<<20-1), uint8(0))
	f.Add(uint32(300_001), uint32(4095), uint8(1))
	f.Add(uint32(1), uint32(0), uint8(2))
	f.Fuzz(func(t *testing.T, bytes, io uint32, bs uint8) {
		ioSize := 1 + uint64(io)%(1<<20)
		fileSize := 1 + uint64(bytes)%min(2<<20, 512*ioSize) // at most 512 I/Os a phase
		var res [2]*WriteTestResult
		for i, k := range []string{"4.12", "4.12-circular"} {
			w := PostedWriteTest(engine.MustKernel(k), 1)
			w.BlockSize = []uint32{1024, 2048, 4096}[bs%3]
			w.Bytes, w.IOSize, w.Data = fileSize, ioSize, true
			r, err := w.Run()
			require.NoError(t, err)
			res[i] = r
		}
		walks := uint64(blocksize.DefaultPageSize / res[0].Setup.BlockSize)
		for _, ph := range [][2]Phase{{res[0].Write, res[1].Write}, {res[0].ReadCold, res[1].ReadCold}} {
			rings := ph[0].Events[bufcache.EvBHAlloc] / walks
			assert.Equal(t, rings*walks, ph[0].Events[bufcache.EvRingWalk]-ph[1].Events[bufcache.EvRingWalk])
		}
	})
}
