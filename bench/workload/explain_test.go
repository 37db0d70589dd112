package workload

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
)

func TestExplainOps(t *testing.T) {
	var names []string
	for _, op := range ExplainOps() {
		got, err := ExplainOpByName(op.Name)
		require.NoError(t, err)
		assert.Equal(t, op.Name, got.Name)
		assert.NotEmpty(t, op.Summary)
		if op.Profile != "" {
			_, err = timing.ProfileByName(op.Profile)
			assert.NoError(t, err, op.Name)
		}
		_, err = op.Parse(nil)
		assert.NoError(t, err, "%s: its defaults parse", op.Name)
		names = append(names, op.Name)
	}
	_, err := ExplainOpByName("getblk")
	assert.ErrorContains(t, err, "valid: "+strings.Join(names, ", "))
}

// explain parses values for the operation called name and builds it.
func explain(t *testing.T, name string, values map[string]string) *Operation {
	t.Helper()
	op, err := ExplainOpByName(name)
	require.NoError(t, err)
	args, err := op.Parse(values)
	require.NoError(t, err)
	e, err := op.Build(context.Background(), args, nil, nil)
	require.NoError(t, err)
	o, ok := e.(*Operation)
	require.True(t, ok, "%s explains an Operation", name)
	return o
}

func TestExplainParse(t *testing.T) {
	for _, tc := range []struct {
		name, op string
		values   map[string]string
		want     string // "" for valid
	}{
		{"hit, defaults", "find-get-block-hit", nil, ""},
		{"slow at block 4G", "find-get-block-slow", map[string]string{"block": "4294967296"}, ""},
		{"block past 32 TiB", "find-get-block-miss", map[string]string{"block": "8589934592"}, "past the end"},
		{"block not a number", "find-get-block-miss", map[string]string{"block": "x"}, "invalid block"},
		{"write-page 2048", "write-page", map[string]string{"bsize": "2048", "layout": "raid10n2"}, ""},
		{"write-page 8192", "write-page", map[string]string{"bsize": "8192"}, "valid: 512, 1024, 2048, 4096"},
		{"write-page 0", "write-page", map[string]string{"bsize": "0"}, "valid: 512, 1024, 2048, 4096"},
		{"write-page grow", "write-page", map[string]string{"bsize": "grow"}, "valid: 512, 1024, 2048, 4096"},
		{"write-page bad layout", "write-page", map[string]string{"layout": "raid5"}, "valid: direct, raid0"},
		{"write-page count 0", "write-page", map[string]string{"count": "0"}, "a positive number, or auto"},
		{"write-page stray flag", "write-page", map[string]string{"bs": "1M"}, "its arguments: bsize, layout, count"},
		{"iomap 6.6-fix", "iomap-write-page", map[string]string{"kernel": "6.6-fix"}, ""},
		{"iomap bad kernel", "iomap-write-page", map[string]string{"kernel": "5.10.10"}, "valid: 6.6, 6.6-revert, 6.6-fix"},
		{"iomap bs 100G", "iomap-write-page", map[string]string{"bs": "100G"}, "largest the model simulates (64M)"},
		{"iomap bs 0", "iomap-write-page", map[string]string{"bs": "0"}, "invalid size"},
		{"crash-loss count 0", "crash-loss", map[string]string{"count": "0"}, "a positive number"},
		{"crash-loss auto", "crash-loss", map[string]string{"count": "auto"}, "a positive number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, err := ExplainOpByName(tc.op)
			require.NoError(t, err)
			_, err = op.Parse(tc.values)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// stepEvents returns the events of all of o's steps, per operation.
func stepEvents(o *Operation, e bufcache.Event) float64 {
	n := 0.0
	for _, s := range o.Steps {
		n += s.Load.Q[timing.Ev(e)]
	}
	return n / o.Per
}

// checkLedger checks that each step's ledger is sorted, most expensive
// first, and adds up, with the unpriced time, to the step's SimNS, and that
// Text shows every resource.
func checkLedger(t *testing.T, o *Operation, p *timing.Profile) {
	t.Helper()
	text := o.Text(p)
	for i := range o.Steps {
		s := &o.Steps[i]
		lines := o.Ledger(s, p)
		sum := s.Load.FixedNS / o.Per
		for j, l := range lines {
			sum += l.Total()
			if j > 0 {
				assert.GreaterOrEqual(t, lines[j-1].Total(), l.Total(), "%s: sorted", s.Load.Name)
			}
		}
		assert.InDelta(t, o.SimNS(s, p), sum, 1e-6*sum+1e-9, s.Load.Name)
		assert.Contains(t, text, s.Load.Name+":")
	}
}

func TestExplainLookup(t *testing.T) {
	p := timing.X86Server()
	for _, tc := range []struct {
		op, block                     string
		hits, slots, levels, installs uint64
		height                        string
	}{
		{"find-get-block-hit", "1", 1, 1, 0, 0, "index height 1"},
		{"find-get-block-miss", "1", 0, 16, 1, 1, "index height 1"},
		{"find-get-block-slow", "1", 0, 0, 1, 0, "index height 1"},
		{"find-get-block-slow", "0", 0, 0, 0, 0, "index height 0; block 0 is page 0"},
		{"find-get-block-slow", "4294967296", 0, 0, 6, 0, "index height 6"},
		{"find-get-block-hit", "4294967296", 1, 1, 0, 0, "index height 6"},
	} {
		t.Run(tc.op+"/"+tc.block, func(t *testing.T) {
			o := explain(t, tc.op, map[string]string{"block": tc.block})
			assert.Equal(t, "call", o.Unit)
			require.Len(t, o.Steps, 1)
			assert.Equal(t, float64(tc.hits), stepEvents(o, bufcache.EvLRUHit))
			assert.Equal(t, float64(tc.slots), stepEvents(o, bufcache.EvLRUSlot))
			assert.Equal(t, float64(tc.levels), stepEvents(o, bufcache.EvIndexLevel))
			assert.Equal(t, float64(tc.installs), stepEvents(o, bufcache.EvLRUInstall))
			assert.Contains(t, strings.Join(o.Facts, "\n"), tc.height)
			assert.Contains(t, strings.Join(o.Facts, "\n"), "returns the buffer")
			assert.Empty(t, o.Loads, "a single call has no bottleneck")
			checkLedger(t, o, p)
		})
	}
}

func TestExplainWritePage(t *testing.T) {
	p := timing.Helios4()
	for _, tc := range []struct {
		values    map[string]string
		bios, bhs float64
		extraStep string
	}{
		{map[string]string{"bsize": "512"}, 8, 8, ""},
		{map[string]string{"bsize": "1024"}, 4, 4, ""},
		{map[string]string{"bsize": "4096"}, 1, 1, ""},
		{map[string]string{"layout": "raid6"}, 8, 8, "md0_raid6"}, // default block size 512
		{map[string]string{"bsize": "4096", "layout": "raid0"}, 1, 1, "sdd (hdd)"},
	} {
		t.Run(fmt.Sprint(tc.values), func(t *testing.T) {
			tc.values["count"] = "8"
			o := explain(t, "write-page", tc.values)
			assert.Equal(t, "page", o.Unit)
			assert.Equal(t, 8.0*256, o.Per, "8 MiB of 4 KiB pages")
			assert.InDelta(t, tc.bios, stepEvents(o, bufcache.EvBioSubmit), 1e-9)
			assert.InDelta(t, tc.bhs, stepEvents(o, bufcache.EvBHAlloc), 1e-9)
			assert.InDelta(t, 4096, stepEvents(o, bufcache.EvCopyByte), 1e-9)
			var names []string
			for _, s := range o.Steps {
				names = append(names, s.Load.Name)
			}
			assert.Contains(t, names, "cpu0")
			if tc.extraStep != "" {
				assert.Contains(t, names, tc.extraStep)
			}
			assert.NotContains(t, strings.Join(names, ","), "all 2 CPUs", "the all-CPU bound is not a step")
			checkLedger(t, o, p)
			assert.Contains(t, o.Text(p), "sets the pace")
			b, t0 := p.Bottleneck(o.Loads)
			assert.GreaterOrEqual(t, o.NS, t0, "%s: the run on the clock takes at least its bound", o.Loads[b].Name)
		})
	}
}

// TestExplainReadPage: a read of 8 MiB builds no buffer heads and copies
// each byte once, whatever the block size (the table's unchanged read
// column); its facts name the readahead window md gives each array (two
// stripes of 512 KiB chunks) and a disk's 128 KiB, and its requests are
// the arrays' 512 KiB chunks.
func TestExplainReadPage(t *testing.T) {
	p := timing.Helios4()
	perSize := map[string]timing.Quantities{}
	for _, tc := range []struct {
		values   map[string]string
		window   string
		chunkReq bool
	}{
		{map[string]string{"bsize": "512"}, "read_ahead_kb 128", false},
		{map[string]string{"bsize": "4096"}, "read_ahead_kb 128", false},
		{map[string]string{"layout": "raid0"}, "read_ahead_kb 4096", true},
		{map[string]string{"layout": "raid10f2"}, "read_ahead_kb 4096", true},
		{map[string]string{"layout": "raid10n2"}, "read_ahead_kb 2048", true},
		{map[string]string{"layout": "raid6"}, "read_ahead_kb 2048", true},
	} {
		t.Run(fmt.Sprint(tc.values), func(t *testing.T) {
			tc.values["count"] = "8"
			o := explain(t, "read-page", tc.values)
			assert.Equal(t, 8.0*256, o.Per, "8 MiB of 4 KiB pages")
			assert.Zero(t, stepEvents(o, bufcache.EvBHAlloc), "readahead builds no buffer heads")
			assert.InDelta(t, 4096, stepEvents(o, bufcache.EvCopyByte), 1e-9)
			assert.GreaterOrEqual(t, stepEvents(o, bufcache.EvReadaheadPage), 1.0, "every page read dd copies came in by readahead")
			text := o.Text(p)
			assert.Contains(t, text, tc.window)
			assert.Contains(t, text, "readahead builds no buffer_heads")
			if tc.chunkReq {
				assert.Contains(t, text, "512 KiB each", "md splits readahead at its chunks")
			}
			checkLedger(t, o, p)
			if _, ok := tc.values["layout"]; !ok {
				perSize[tc.values["bsize"]] = o.Steps[0].Load.Q
			}
		})
	}
	assert.Equal(t, perSize["512"], perSize["4096"], "the block size changes nothing a read does")
}

func TestExplainIomapWritePage(t *testing.T) {
	p := timing.IMX8Board()
	faultins := map[string]float64{}
	for _, k := range []string{"6.6", "6.6-revert", "6.6-fix"} {
		o := explain(t, "iomap-write-page", map[string]string{"kernel": k, "bs": "4500K", "count": "4"})
		assert.Equal(t, 4*4500/4.0, o.Per)
		faultins[k] = stepEvents(o, bufcache.EvFaultInPage)
		checkLedger(t, o, p)
		assert.Contains(t, o.Title, "bs=4500K count=4")
	}
	// The root cause of the iomap thread: the 2 MiB chunk pre-faults hundreds of
	// user pages per page written; the buffer-head path and the fix, one.
	assert.Greater(t, faultins["6.6"], 100.0)
	assert.InDelta(t, 1, faultins["6.6-revert"], 0.01)
	assert.InDelta(t, 1, faultins["6.6-fix"], 0.01)
}

func TestExplainCrashLoss(t *testing.T) {
	op, err := ExplainOpByName("crash-loss")
	require.NoError(t, err)
	args, err := op.Parse(map[string]string{"count": "40"})
	require.NoError(t, err)
	e, err := op.Build(context.Background(), args, nil, nil)
	require.NoError(t, err)
	r, ok := e.(*CrashReport)
	require.True(t, ok)
	assert.Len(t, r.Points, 41, "one point per block and one after the close")
	text := r.Text(nil)
	assert.Contains(t, text, "bs=1M count=40")
	assert.Contains(t, text, "after dd's close")
}
