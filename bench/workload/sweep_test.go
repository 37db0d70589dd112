package workload

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
)

func TestSweepMachines(t *testing.T) {
	for _, m := range DDMachines() {
		got, err := DDMachineByName(m.Name)
		require.NoError(t, err)
		assert.Equal(t, m.Name, got.Name)
		_, err = timing.ProfileByName(m.Profile)
		assert.NoError(t, err, m.Name)
		for _, l := range Layouts() { // every layout can start on every machine
			d := m.Base
			d.Layout = l
			r, err := d.Start()
			require.NoError(t, err, "%s %s", m.Name, l)
			assert.NotNil(t, r.Device())
		}
	}
	_, err := DDMachineByName("pdp11")
	assert.ErrorContains(t, err, "valid: helios4, xu-yang")
}

func TestSweepBlockSizeChoice(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want BlockSizeChoice
		err  bool
	}{
		{"grow", BlockSizeChoice{Policy: blocksize.PolicyGrow}, false},
		{"logical", BlockSizeChoice{Policy: blocksize.PolicyLogical}, false},
		{"512", BlockSizeChoice{Size: 512}, false},
		{"2048", BlockSizeChoice{Size: 2048}, false},
		{"4096", BlockSizeChoice{Size: 4096}, false},
		{"1000", BlockSizeChoice{}, true},
		{"256", BlockSizeChoice{}, true},
		{"8192", BlockSizeChoice{Size: 8192}, false},
		{"65536", BlockSizeChoice{Size: 65536}, false},
		{"131072", BlockSizeChoice{}, true},
		{"0", BlockSizeChoice{}, true},
		{"big", BlockSizeChoice{}, true},
		{"", BlockSizeChoice{}, true},
	} {
		got, err := ParseBlockSizeChoice(tc.in)
		if tc.err {
			assert.ErrorContains(t, err, "valid: grow, logical, 512, 1024, 2048, 4096", tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, tc.in, got.String())
	}
}

func TestSweepDDSize(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   uint64
		format string
	}{
		{"1M", 1 << 20, "1M"},
		{"4500K", 4500 << 10, "4500K"},
		{"4500k", 4500 << 10, "4500K"},
		{"2G", 2 << 30, "2G"},
		{"1024K", 1 << 20, "1M"},
		{"1000", 1000, "1000"},
		{"4096", 4096, "4K"},
		{"32768G", 32 << 40, "32T"},
		{"1P", 1 << 50, "1P"},
	} {
		got, err := scenario.ParseDDSize(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, tc.format, scenario.FormatDDSize(got), tc.in)
	}
	for _, bad := range []string{"", "K", "0", "0M", "-1M", "1.5M", "1E", "99999999999G", "16384P"} {
		_, err := scenario.ParseDDSize(bad)
		assert.ErrorContains(t, err, "4500K", bad)
	}
}

// testGridBase is a short Helios4 dd: 16 blocks of 64 KiB.
func testGridBase(t *testing.T) DD {
	m, err := DDMachineByName("helios4")
	require.NoError(t, err)
	d := m.Base
	d.BS, d.Count = 64<<10, 16
	return d
}

func TestSweepGridCells(t *testing.T) {
	base := testGridBase(t)
	k510, err := engine.KernelByName("5.10.10")
	require.NoError(t, err)
	k66, err := engine.KernelByName("6.6")
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		grid  DDGrid
		check func(t *testing.T, cells []DDCell)
	}{
		{"no axes: the base", DDGrid{}, func(t *testing.T, cells []DDCell) {
			require.Len(t, cells, 1)
			assert.Equal(t, base, cells[0].DD)
			assert.Equal(t, BlockSizeChoice{Policy: base.Kernel.InitBlocksize}, cells[0].BlockSizeChoice)
		}},
		{"cross product, kernel slowest, direction fastest", DDGrid{Kernels: []engine.Kernel{k510, k66},
			Layouts: []Layout{LayoutRaid0, LayoutRaid6}, Reads: []bool{false, true}}, func(t *testing.T, cells []DDCell) {
			require.Len(t, cells, 8)
			assert.Equal(t, "5.10.10", cells[0].DD.Kernel.Name)
			assert.Equal(t, "6.6", cells[4].DD.Kernel.Name)
			assert.Equal(t, k66.Write, cells[4].DD.Kernel.Write)
			assert.Equal(t, blocksize.PolicyGrow, cells[4].DD.Kernel.InitBlocksize)
			assert.Equal(t, LayoutRaid6, cells[2].DD.Layout)
			assert.False(t, cells[2].DD.Read)
			assert.True(t, cells[3].DD.Read)
		}},
		{"block size overrides the kernel's policy", DDGrid{Kernels: []engine.Kernel{k510},
			BlockSizes: []BlockSizeChoice{{Policy: blocksize.PolicyGrow}, {Size: 2048}}}, func(t *testing.T, cells []DDCell) {
			require.Len(t, cells, 2)
			assert.Equal(t, blocksize.PolicyGrow, cells[0].DD.Kernel.InitBlocksize)
			assert.Equal(t, blocksize.PolicyLogical, cells[1].DD.Kernel.InitBlocksize)
			assert.Equal(t, uint32(2048), cells[1].DD.Logical)
			assert.Equal(t, "2048", cells[1].BlockSizeChoice.String())
		}},
		{"sizes round the count up per bs", DDGrid{BS: []uint64{1 << 20, 3 << 20}, Sizes: []uint64{10 << 20}}, func(t *testing.T, cells []DDCell) {
			require.Len(t, cells, 2)
			assert.Equal(t, uint64(10), cells[0].DD.Count)
			assert.Equal(t, uint64(4), cells[1].DD.Count)
		}},
		{"counts and CPUs", DDGrid{CPUs: []int{2, 4}, Counts: []uint64{1, 7}}, func(t *testing.T, cells []DDCell) {
			require.Len(t, cells, 4)
			assert.Equal(t, []int{2, 2, 4, 4}, []int{cells[0].DD.CPUs, cells[1].DD.CPUs, cells[2].DD.CPUs, cells[3].DD.CPUs})
			assert.Equal(t, uint64(7), cells[3].DD.Count)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.grid.Base = base
			cells, err := tc.grid.Cells()
			require.NoError(t, err)
			tc.check(t, cells)
		})
	}
}

func TestSweepGridCellsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		grid DDGrid
		want string
	}{
		{"counts and sizes", DDGrid{Counts: []uint64{1}, Sizes: []uint64{1 << 20}}, "not both"},
		{"one CPU", DDGrid{CPUs: []int{1}}, "at least 2 CPUs"},
		{"zero bs", DDGrid{BS: []uint64{0}}, "positive bs"},
		{"zero count", DDGrid{Counts: []uint64{0}}, "positive bs and count"},
		{"zero size", DDGrid{Sizes: []uint64{0}}, "must be positive"},
		{"unknown layout", DDGrid{Layouts: []Layout{numLayouts}}, "unknown layout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.grid.Base = testGridBase(t)
			_, err := tc.grid.Cells()
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestSweepDD runs a small grid with one worker and with several and checks
// that the rows are the same, that each cell's result is what running its
// dd alone gives (the oracle), and the derived figures.
func TestSweepDD(t *testing.T) {
	g := DDGrid{Base: testGridBase(t), BlockSizes: []BlockSizeChoice{{Size: 512}, {Policy: blocksize.PolicyGrow}},
		Layouts: []Layout{LayoutDirect, LayoutRaid6}, Reads: []bool{false, true}}
	p := timing.Helios4()
	var calls []int
	serial, err := SweepDD(g, p, SweepOptions{Workers: 1, Progress: func(done, total int) {
		assert.Equal(t, 8, total, "eight cells of 1 MiB each")
		calls = append(calls, done)
	}})
	require.NoError(t, err)
	// Each 16-block dd reports at its end (the clock reports every quarter
	// second of wall time, and a 16-block dd is done sooner).
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8}, calls)
	var last int
	wide, err := SweepDD(g, p, SweepOptions{Workers: 5, Progress: func(done, total int) {
		assert.GreaterOrEqual(t, done, last, "the MiB moved never fall")
		last = done
	}})
	require.NoError(t, err)
	assert.Equal(t, 8, last, "the last report is the total")
	require.Len(t, serial, 8)
	assert.Equal(t, serial, wide)

	cells, err := g.Cells()
	require.NoError(t, err)
	for i, row := range serial {
		alone, err := cells[i].DD.OnClock(context.Background(), p, nil)
		require.NoError(t, err)
		assert.Equal(t, alone, row.Result, "cell %d", i)
		assert.InDelta(t, alone.MBps, row.MBps, 1e-9)
		assert.NotEmpty(t, row.Bottleneck)
	}
	// 512-byte buffers: eight bios a page written; the grow policy: one.
	assert.Equal(t, uint32(512), serial[0].Result.BlockSize)
	assert.InDelta(t, 8, serial[0].BiosPerPage, 1e-9)
	assert.Equal(t, uint32(4096), serial[4].Result.BlockSize)
	assert.InDelta(t, 1, serial[4].BiosPerPage, 1e-9)
	// 1 MiB of data; the disk saw at least one request, and far fewer than bios.
	assert.Positive(t, serial[0].RequestsPerMiB)
	assert.Less(t, serial[0].RequestsPerMiB, serial[0].BiosPerPage*256)

	// A shard is the cells i with i mod Shards == Shard, in order.
	for _, sh := range []struct{ shard, shards int }{{0, 3}, {1, 3}, {2, 3}, {5, 8}, {7, 8}} {
		part, err := SweepDD(g, p, SweepOptions{Shard: sh.shard, Shards: sh.shards})
		require.NoError(t, err)
		var want []DDRow
		for i := sh.shard; i < len(serial); i += sh.shards {
			want = append(want, serial[i])
		}
		assert.Equal(t, want, part, "shard %d/%d", sh.shard, sh.shards)
	}
}

// TestSweepKernelByName: a base or axis kernel named alone is its preset
// before the block-size axis changes its policy, so the row's label is what
// ran (5.10.10 alone: logical, 512-byte blocks; with a grow axis: 4096).
func TestSweepKernelByName(t *testing.T) {
	base := testGridBase(t)
	base.Kernel = engine.Kernel{Name: "5.10.10"}
	for _, tc := range []struct {
		name  string
		g     DDGrid
		label string
		block uint32
	}{
		{"the base alone", DDGrid{Base: base}, "logical", 512},
		{"a grow axis", DDGrid{Base: base, BlockSizes: []BlockSizeChoice{{Policy: blocksize.PolicyGrow}}}, "grow", 4096},
		{"a kernels axis", DDGrid{Base: testGridBase(t), Kernels: []engine.Kernel{{Name: "5.10.10"}}}, "logical", 512},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := SweepDD(tc.g, timing.Helios4(), SweepOptions{})
			require.NoError(t, err)
			require.Len(t, rows, 1)
			assert.Equal(t, tc.label, rows[0].BlockSizeChoice.String())
			assert.Equal(t, tc.block, rows[0].Result.BlockSize)
		})
	}
	_, err := DDGrid{Base: DD{Kernel: engine.Kernel{Name: "4.19"}}}.Cells()
	assert.ErrorContains(t, err, `unknown kernel "4.19"`)
}

// TestSweepProgressInMiB: a cell's progress counts its whole MiB moved, a
// cell of less than a MiB counts one at its end, and the cells add up.
func TestSweepProgressInMiB(t *testing.T) {
	cells := []DDCell{{DD: DD{BS: 1 << 20, Count: 200}}, {DD: DD{BS: 512, Count: 3}}, {DD: DD{BS: 3 << 19, Count: 3}}}
	var got [][2]int
	sp := newSweepProgress(cells, func(done, total int) { got = append(got, [2]int{done, total}) })
	sp.cell(0)(64, 200)
	sp.cell(2)(0, 3)
	sp.cell(1)(3, 3)
	sp.cell(2)(3, 3) // 4.5 MiB: five at its end
	sp.cell(0)(200, 200)
	assert.Equal(t, [][2]int{{64, 206}, {64, 206}, {65, 206}, {70, 206}, {206, 206}}, got)
	assert.Nil(t, newSweepProgress(cells, nil).cell(0), "no callback without a Progress")
}

// TestSweepDDContext: a cancelled sweep stops its running dds within
// progressEvery blocks and returns the context's error.
func TestSweepDDContext(t *testing.T) {
	base := testGridBase(t)
	base.BS, base.Count = 4096, 100_000 // 400 MiB a cell: seconds, were it not stopped
	g := DDGrid{Base: base, Layouts: []Layout{LayoutDirect, LayoutRaid0}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var most, at int
	_, err := SweepDDContext(ctx, g, timing.Helios4(), SweepOptions{Workers: 1, Progress: func(done, total int) {
		most = max(most, done)
		if done > 0 && at == 0 {
			at = done
			cancel()
		}
	}})
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, at, most, "the running dd stopped at the cancel: it reported no more")
	assert.Less(t, at, 400, "it was cancelled before its end, the 400th MiB")

	_, err = SweepDDContext(ctx, g, timing.Helios4(), SweepOptions{})
	assert.ErrorIs(t, err, context.Canceled, "a done context runs nothing")
}

func TestSweepDDErrors(t *testing.T) {
	base := testGridBase(t)
	_, err := SweepDD(DDGrid{Base: base, CPUs: []int{1}}, timing.Helios4(), SweepOptions{})
	assert.ErrorContains(t, err, "at least 2 CPUs")
	bad := base
	bad.Disk = nil
	_, err = SweepDD(DDGrid{Base: bad, Layouts: []Layout{LayoutDirect, LayoutRaid0}}, timing.Helios4(), SweepOptions{})
	assert.ErrorContains(t, err, "sweep: dd 5.10.10 logical direct")
}

// TestSweepRow checks a row's figures against the run's own counts, on
// Run's count of the same dd (without a clock) as the oracle: the bios every CPU
// submitted per page, the requests per MiB (one disk: those it served),
// and the MB/s and bound the clock's result gives.
func TestSweepRow(t *testing.T) {
	d := testGridBase(t)
	counted, err := d.Run()
	require.NoError(t, err)
	r, err := d.OnClock(context.Background(), timing.Helios4(), nil)
	require.NoError(t, err)
	row := rowOf(DDCell{DD: d}, r)
	bios := counted.CPU[0][bufcache.EvBioSubmit] + counted.CPU[1][bufcache.EvBioSubmit]
	assert.InDelta(t, float64(bios)/counted.Pages(), row.BiosPerPage, 1e-12)
	assert.InDelta(t, counted.RequestsPerMiB(), row.RequestsPerMiB, 1e-12)
	assert.Equal(t, r.Bound.Resource, row.Bottleneck)
	assert.Equal(t, r.MBps, row.MBps)
}

// FuzzSweepDDSize checks that every size ParseDDSize accepts formats back to
// a string that parses to the same size, and that ParseBlockSizeChoice's
// choices round-trip.
func FuzzSweepDDSize(f *testing.F) {
	for _, s := range []string{"1M", "4500K", "3g", "0", "", "18446744073709551615", "grow", "512", "K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := scenario.ParseDDSize(s); err == nil {
			require.Positive(t, n)
			back, err := scenario.ParseDDSize(scenario.FormatDDSize(n))
			require.NoError(t, err, s)
			require.Equal(t, n, back, s)
		}
		if c, err := ParseBlockSizeChoice(s); err == nil {
			back, err := ParseBlockSizeChoice(c.String())
			require.NoError(t, err, s)
			require.Equal(t, c, back, s)
		}
	})
}

func TestSweepSetAxis(t *testing.T) {
	for _, tc := range []struct {
		axis   string
		values []string
		want   string // error text, or "" for valid
	}{
		{"kernel", []string{"5.10.10", "6.6"}, ""},
		{"kernel", []string{"4.19"}, "DDGrid.Kernels: engine: unknown kernel \"4.19\" (valid: 9011495c9466"},
		{"layout", []string{"raid5"}, "valid: direct, raid0, raid10f2, raid10n2, raid6"},
		{"blocksize", []string{"3000"}, "valid: grow, logical, 512"},
		{"bs", []string{"1Q"}, "DDGrid.BS: scenario: invalid size \"1Q\""},
		{"bs", []string{"8G"}, "above the largest the model simulates (64M)"},
		{"size", []string{"0"}, "DDGrid.Sizes: scenario: invalid size"},
		{"cpus", []string{"1"}, "2 to 64"},
		{"count", []string{"-3"}, "invalid count"},
		{"count", []string{"0"}, "invalid count"},
		{"op", []string{"trim"}, "unknown op \"trim\" (valid: write, read)"},
		{"warp", []string{"9"}, "unknown axis"},
	} {
		var g DDGrid
		err := g.SetAxis(tc.axis, tc.values)
		if tc.want == "" {
			assert.NoError(t, err, tc.axis)
			continue
		}
		assert.ErrorContains(t, err, tc.want, tc.axis)
	}
	var g DDGrid
	require.NoError(t, g.SetAxis("count", []string{"1"}))
	assert.EqualError(t, g.SetAxis("size", []string{"1M"}), "workload: DDGrid: both Counts and Sizes are set (a run's length is given by one or the other)")
	names := []string{}
	for _, a := range GridAxes() {
		names = append(names, a.Name)
		assert.Contains(t, a.Usage, "`LIST`", a.Name)
	}
	assert.Equal(t, []string{"kernel", "blocksize", "layout", "bs", "cpus", "count", "size", "op"}, names)
}
