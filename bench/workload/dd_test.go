package workload

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

func TestLayouts(t *testing.T) {
	for _, l := range Layouts() {
		got, err := ParseLayout(l.String())
		require.NoError(t, err)
		assert.Equal(t, l, got)
		assert.NotEmpty(t, l.Column())
	}
	_, err := ParseLayout("raid5")
	assert.ErrorContains(t, err, "raid10f2")
	assert.Equal(t, "layout(9)", Layout(9).String())
}

func TestDDStartErrors(t *testing.T) {
	preset := engine.MustKernel("5.10.10")
	for _, tc := range []struct {
		name    string
		mod     func(*DD)
		invalid bool // a mistake in the DD itself: ErrInvalidDD
	}{
		{"one CPU", func(d *DD) { d.CPUs = 1 }, true},
		{"zero bs", func(d *DD) { d.BS = 0 }, true},
		{"bs above MaxBS", func(d *DD) { d.BS = MaxBS + 1 }, true},
		{"past the device's end", func(d *DD) { d.Count = d.DiskBytes/d.BS + 1 }, true},
		{"offset overflow", func(d *DD) { d.Count = 1 << 62 }, true},
		{"unknown layout", func(d *DD) { d.Layout = numLayouts }, true},
		{"zero count", func(d *DD) { d.Count = 0 }, true},
		{"too few members for raid6", func(d *DD) { d.Layout, d.Members = LayoutRaid6, 3 }, true},
		{"an array of no members", func(d *DD) { d.Layout, d.Members = LayoutRaid0, 0 }, true},
		{"raid10 of no members", func(d *DD) { d.Layout, d.Members = LayoutRaid10F2, 0 }, true},
		{"too many members", func(d *DD) { d.Layout, d.Members = LayoutRaid0, MaxMembers+1 }, true},
		{"unknown kernel name", func(d *DD) { d.Kernel = engine.Kernel{Name: "4.19"} }, true},
		{"invalid disk model", func(d *DD) { d.Disk = blk.HDD{} }, true},
		{"no disk model", func(d *DD) { d.Disk = nil }, true},
		{"no disk capacity", func(d *DD) { d.DiskBytes = 0 }, true},
		{"logical blocks above a page", func(d *DD) { d.Logical = 8192 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dd := Helios4DD(LayoutDirect, preset, false)
			tc.mod(&dd)
			_, err := dd.Start()
			assert.Error(t, err)
			assert.Equal(t, tc.invalid, errors.Is(err, ErrInvalidDD), "%v", err)
		})
	}
}

// TestDDKernelByName: a Kernel that holds only a name runs as the preset
// of that name, not as the zero variants under its label.
func TestDDKernelByName(t *testing.T) {
	for _, name := range []string{"5.10.10", "5.10.10+revert", "6.18"} {
		t.Run(name, func(t *testing.T) {
			preset := Helios4DD(LayoutDirect, engine.MustKernel(name), false)
			preset.Count = 4
			named := preset
			named.Kernel = engine.Kernel{Name: name}
			want, err := preset.Run()
			require.NoError(t, err)
			got, err := named.Run()
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

// TestDDManyMembers: an array past 26 members names its disks as the
// kernel does (sdaa after sdz) and runs.
func TestDDManyMembers(t *testing.T) {
	dd := Helios4DD(LayoutRaid0, engine.MustKernel("5.10.10+revert"), false)
	dd.Members, dd.Count = MaxMembers, 2
	r, err := dd.Run()
	require.NoError(t, err)
	require.Len(t, r.Disks, MaxMembers)
	assert.Equal(t, "sdz", r.Disks[25].Name)
	assert.Equal(t, "sdaa", r.Disks[26].Name)
}

// TestDDWriteCounts runs a short dd write (16 MiB, below the dirty limit, so
// dd's closing sync writes it all back) on every layout with both policies
// and checks the counts the thread turns on: bios per page follow the block
// size, md sees every bio, and the disks see the same data either way.
func TestDDWriteCounts(t *testing.T) {
	const count = 16
	for _, l := range Layouts() {
		byPolicy := map[blocksize.Policy]*DDResult{}
		for _, name := range []string{"5.10.10", "5.10.10+revert"} {
			preset := engine.MustKernel(name)
			dd := Helios4DD(l, preset, false)
			dd.Count = count
			r, err := dd.Run()
			require.NoError(t, err, "%s %s", l, name)
			byPolicy[preset.InitBlocksize] = r
			bsize := map[blocksize.Policy]uint32{blocksize.PolicyLogical: 512, blocksize.PolicyGrow: 4096}[preset.InitBlocksize]
			assert.Equal(t, bsize, r.BlockSize, "%s %s", l, name)
			assert.Equal(t, uint64(count<<20), r.Bytes)
			bios := r.CPU[0][bufcache.EvBioSubmit] + r.CPU[1][bufcache.EvBioSubmit]
			assert.Equal(t, uint64(count<<20)/uint64(bsize), bios, "one bio per buffer (%s %s)", l, name)
			if l != LayoutDirect {
				assert.Equal(t, bios, r.MD.BiosIn, "md sees every bio unmerged")
			}
			var written uint64
			for _, d := range r.Disks {
				written += d.Stats.Write.Sectors << 9
			}
			want := map[Layout]uint64{LayoutDirect: 1, LayoutRaid0: 1, LayoutRaid10F2: 2, LayoutRaid10N2: 2}[l] * r.Bytes
			if l == LayoutRaid6 {
				want = 2 * r.Bytes // two data members of four: P and Q double the bytes
				assert.Zero(t, r.MD.MemberReads, "sequential writes are full-stripe writes")
			}
			assert.Equal(t, want, written, "%s %s: bytes on the disks", l, name)
		}
		logical, grow := byPolicy[blocksize.PolicyLogical], byPolicy[blocksize.PolicyGrow]
		if l == LayoutRaid6 {
			assert.Equal(t, logical.Requests(), grow.Requests(), "raid5d sends the same 4 KiB member bios either way")
		} else {
			assert.Greater(t, logical.Requests(), grow.Requests(), "%s: 512-byte bios fill requests at 168 segments of 512 bytes", l)
		}
		if l == LayoutDirect {
			st := logical.Disks[0].Stats.Write
			full := uint64(blk.AHCIMaxSegments) // AHCI's 168 segments: 84 KiB requests of 512-byte bios
			assert.Equal(t, (st.Sectors+full-1)/full, st.Requests, "every request but the last is full")
		}
	}
}

// TestDDRead reads with both policies: readahead builds the same bios
// whatever the block size, so the runs count the same work.
func TestDDRead(t *testing.T) {
	var runs []DD
	for _, name := range []string{"5.10.10", "5.10.10+revert"} {
		preset := engine.MustKernel(name)
		dd := Helios4DD(LayoutRaid0, preset, true)
		dd.Count = 8
		runs = append(runs, dd)
	}
	res, err := RunAll(runs, nil)
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, res[0].CPU, res[1].CPU, "the same events")
	assert.Equal(t, res[0].MD, res[1].MD)
	assert.Zero(t, res[0].CPU[0][bufcache.EvBHAlloc], "no buffer heads on the readahead path")
	assert.Equal(t, uint64(8<<20), res[0].Bytes)
}

// TestDDDataMode runs a short write carrying real bytes, as the oracle tests
// of the layers beneath do, to check the scenario works in data mode too.
func TestDDDataMode(t *testing.T) {
	preset := engine.MustKernel("5.10.10")
	dd := Helios4DD(LayoutRaid6, preset, false)
	dd.Count, dd.Data = 2, true
	r, err := dd.Run()
	require.NoError(t, err)
	assert.Equal(t, uint64(2<<20), r.Bytes)
	assert.Equal(t, uint64(2<<20), r.CPU[0][bufcache.EvCopyByte]+r.CPU[1][bufcache.EvCopyByte])
}

// TestIMX8BoardFaultIn checks the root cause on a short run of each bs: 6.6
// pre-faults many user pages per page written, more as bs grows; the revert
// and the fix touch each user page once.
func TestIMX8BoardFaultIn(t *testing.T) {
	prev := 0.0
	for _, bs := range []uint64{400 << 10, 800 << 10, 1600 << 10, 2200 << 10, 3000 << 10, 4500 << 10} {
		for _, name := range []string{"6.6", "6.6-revert", "6.6-fix"} {
			k := engine.MustKernel(name)
			dd := IMX8BoardDD(k, bs, 1)
			dd.Count = 8
			r, err := dd.Run()
			require.NoError(t, err)
			per := r.FaultInPerPage()
			if k.Name == "6.6" {
				assert.Greater(t, per, prev, "bs %d", bs)
				assert.Greater(t, per, 10.0)
				prev = per
			} else {
				assert.InDelta(t, 1, per, 1e-9, "%s bs %d", k.Name, bs)
			}
		}
	}
}

// TestDD618 checks what 6.18 changes in the two dd threads' runs: on Xu
// Yang's board (arm64, transparent huge pages) the mapping takes large
// folios and the pre-fault, still sized by a 2 MiB chunk, touches a few
// user pages per page written instead of 6.6's hundreds; without THP (the
// Helios4) the folios stay one page and the pre-fault one touch per page.
func TestDD618(t *testing.T) {
	for _, tc := range []struct {
		kernel               string
		maxFolios, maxFault  float64
		minFolios, minFaults float64
	}{
		{"6.18", 64, 4, 0, 1},
		{"6.18-nothp", 256, 1, 256, 1},
		{"6.6", 256, 1e9, 256, 100},
	} {
		t.Run(tc.kernel, func(t *testing.T) {
			dd := IMX8BoardDD(engine.MustKernel(tc.kernel), 4500<<10, 1)
			dd.Count = 8
			r, err := dd.Run()
			require.NoError(t, err)
			assert.LessOrEqual(t, r.FoliosPerMiB(), tc.maxFolios)
			assert.GreaterOrEqual(t, r.FoliosPerMiB(), tc.minFolios)
			assert.LessOrEqual(t, r.FaultInPerPage(), tc.maxFault)
			assert.GreaterOrEqual(t, r.FaultInPerPage(), tc.minFaults)
			assert.InDelta(t, 1, r.BiosPerPage(), 1e-9, "one bio per 4 KiB buffer, whatever the folio")
		})
	}
}

// TestDDSetBlocksize checks blocks above a page: set_blocksize after the
// open gives 6.18 blocks up to 64 KiB, one bio per block (a page's share of
// a bio falls with the block), and a kernel of page-sized blocks refuses
// them as an invalid dd.
func TestDDSetBlocksize(t *testing.T) {
	for _, tc := range []struct {
		kernel string
		size   uint32
		bios   float64 // bios per page; 0: refused
	}{
		{"6.18", 8192, 0.5},
		{"6.18", 65536, 1.0 / 16},
		{"6.18-nothp", 8192, 0},
		{"5.10.10", 65536, 0},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.kernel, tc.size), func(t *testing.T) {
			dd := BlockSizeChoice{Size: tc.size}.apply(Helios4DD(LayoutDirect, engine.MustKernel(tc.kernel), false))
			dd.Count = 4
			r, err := dd.Run()
			if tc.bios == 0 {
				require.ErrorIs(t, err, ErrInvalidDD)
				assert.ErrorContains(t, err, "set_blocksize")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.size, r.BlockSize)
			assert.InDelta(t, tc.bios, r.BiosPerPage(), 1e-9)
		})
	}
}

// TestDDMemoryBytes checks the memory bus's count on short runs of every
// layout: per byte dd moves, a write passes it through DRAM four times on
// one copy (the /dev/zero clear, the copy's load and store, the disk's DMA),
// once more per extra copy on disk (raid10's mirror), and RAID6 adds
// raid5d's biodrain (load and store), the syndrome's load of the data and
// store of P and Q, and their DMA; a read three times (DMA, the copy's load
// and store). A read's readahead also brings in what lies past dd's last
// block — the window in flight and the one its mark starts, at most two
// windows (dd's 1 MiB read on a disk; two stripes on an array) — whose DMA
// the bus carries too, once.
func TestDDMemoryBytes(t *testing.T) {
	for _, tc := range []struct {
		layout Layout
		read   bool
		want   float64
		window uint64 // the readahead window, for a read
	}{
		{LayoutDirect, false, 4, 0}, {LayoutRaid0, false, 4, 0}, {LayoutRaid10F2, false, 5, 0}, {LayoutRaid10N2, false, 5, 0},
		{LayoutRaid6, false, 9, 0}, {LayoutDirect, true, 3, 1 << 20}, {LayoutRaid0, true, 3, 4 << 20}, {LayoutRaid6, true, 3, 2 << 20},
	} {
		dd := Helios4DD(tc.layout, engine.MustKernel("5.10.10+revert"), tc.read)
		dd.Count = 8
		r, err := dd.OnClock(context.Background(), timing.Helios4(), nil)
		require.NoError(t, err)
		var mem *timing.Load
		for i := range r.Loads {
			if r.Loads[i].Name == "memory" {
				mem = &r.Loads[i]
			}
		}
		require.NotNil(t, mem, "%s: a memory load", tc.layout)
		var ahead float64 // bytes read from the disks past dd's last block
		if tc.read {
			disk := 4096 * r.Count(timing.Ev(bufcache.EvReadaheadPage)) // each page readahead brought in, read from the disks
			require.GreaterOrEqual(t, disk, float64(r.Bytes), "%s: the disks delivered what dd read", tc.layout)
			ahead = disk - float64(r.Bytes)
			assert.LessOrEqual(t, ahead, float64(2*tc.window), "%s: readahead runs at most two windows past dd", tc.layout)
		}
		assert.InEpsilon(t, tc.want, (mem.Q[timing.ParamMemByte]-ahead)/float64(r.Bytes), 0.01, "%s read=%v", tc.layout, tc.read)
		assert.Equal(t, uint64(8), r.Ops)
	}
}

// TestDDFreesEveryPageOnce: the Helios4's block-device page cache holds
// 640 MiB of low memory, so a dd of 800 MiB has kswapd reclaim what passes
// the limit while dd goes and dd's last close (kill_bdev) drop the rest:
// every folio leaves the cache once, the flusher frees none, and dd's CPU
// frees only what the close truncates — about the cache's worth, the
// reclaim batch's slack aside.
func TestDDFreesEveryPageOnce(t *testing.T) {
	// Counts only: nothing here reads the heap or GOMAXPROCS.
	t.Parallel()
	const count = 800 // MiB
	for _, read := range []bool{false, true} {
		t.Run(fmt.Sprintf("read=%v", read), func(t *testing.T) {
			dd := Helios4DD(LayoutDirect, engine.MustKernel("5.10.10"), read)
			dd.Count = count
			r, err := dd.Run()
			require.NoError(t, err)
			require.Len(t, r.CPU, dd.CPUs+1, "dd's, the flusher's and kswapd's")
			ddCPU, kswapd := r.CPU[0], r.CPU[dd.CPUs]
			var inserts, deletes uint64
			for _, ev := range r.CPU {
				inserts += ev[bufcache.EvIndexInsert]
				deletes += ev[bufcache.EvIndexDelete]
			}
			pages := uint64(count << 20 >> 12)
			require.GreaterOrEqual(t, inserts, pages)
			assert.Equal(t, inserts, deletes, "every folio left the page cache once")
			cache := uint64(dd.PageCacheLimit)
			assert.InDelta(t, float64(inserts-cache), float64(kswapd[bufcache.EvIndexDelete]), 64, "kswapd reclaimed what passed the limit")
			assert.InDelta(t, float64(cache), float64(ddCPU[bufcache.EvIndexDelete]), 64, "the close truncated the rest")
		})
	}
}

func TestDecimalBytes(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{{0, "0 bytes"}, {512, "512 bytes"}, {4096, "4.096 kB"}, {1 << 20, "1.049 MB"}, {8001563222016, "8.002 TB"}, {1 << 63, "9.223 EB"}} {
		assert.Equal(t, tc.want, decimalBytes(tc.n), "%d", tc.n)
	}
}

// TestDDProgressLargeBlocks: with blocks of more than a MiB, progress (and
// the context's check) come every progressBytes, not only every
// progressEvery blocks.
func TestDDProgressLargeBlocks(t *testing.T) {
	dd := Helios4DD(LayoutDirect, engine.MustKernel("5.10.10+revert"), false)
	dd.BS, dd.Count = 32<<20, 5
	var calls []int
	_, err := dd.RunContext(context.Background(), func(done, total int) {
		assert.Equal(t, 5, total)
		calls = append(calls, done)
	})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 4, 5}, calls, "every 64 MiB of 32 MiB blocks, then the end")
}
