package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
)

func TestExplainOps(t *testing.T) {
	var names []string
	for _, op := range ExplainOps() {
		got, err := ExplainOpByName(op.Name)
		require.NoError(t, err)
		assert.Equal(t, op.Name, got.Name)
		assert.NotEmpty(t, op.Summary)
		_, err = ProfileByName(op.Profile)
		assert.NoError(t, err, op.Name)
		names = append(names, op.Name)
	}
	_, err := ExplainOpByName("getblk")
	assert.ErrorContains(t, err, "valid: "+strings.Join(names, ", "))
}

func TestExplainValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		args OpArgs
		want string // "" for valid
	}{
		{"hit, defaults", OpArgs{Op: "find-get-block-hit"}, ""},
		{"slow at block 4G", OpArgs{Op: "find-get-block-slow", Block: 1 << 32}, ""},
		{"block past 32 TiB", OpArgs{Op: "find-get-block-miss", Block: 1 << 33}, "past the end"},
		{"unknown op", OpArgs{Op: "bread"}, "valid: find-get-block-hit"},
		{"write-page 2048", OpArgs{Op: "write-page", BlockSize: 2048, Layout: LayoutRaid10N2}, ""},
		{"write-page 8192", OpArgs{Op: "write-page", BlockSize: 8192}, "valid: 512, 1024, 2048, 4096"},
		{"write-page 100", OpArgs{Op: "write-page", BlockSize: 100}, "valid: 512, 1024, 2048, 4096"},
		{"write-page bad layout", OpArgs{Op: "write-page", Layout: numLayouts}, "valid: direct, raid0"},
		{"iomap 6.6-fix", OpArgs{Op: "iomap-write-page", Kernel: "6.6-fix"}, ""},
		{"iomap bad kernel", OpArgs{Op: "iomap-write-page", Kernel: "5.10.10"}, "valid: 6.6, 6.6-revert, 6.6-fix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.args.Validate()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
			_, err = BuildOp(tc.args)
			assert.ErrorContains(t, err, tc.want, "BuildOp validates")
		})
	}
}

// stepEvents returns the events of all of o's steps, per operation.
func stepEvents(o *Operation, e bufcache.Event) float64 {
	var n uint64
	for _, s := range o.Steps {
		n += s.Events[e]
	}
	return float64(n) / o.Per
}

// checkLedger checks that each step's ledger is sorted, most expensive
// first, and adds up, with the unpriced time, to the step's SimNS, and that
// Text shows every resource.
func checkLedger(t *testing.T, o *Operation, p *Profile) {
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
	p := X86Server()
	for _, tc := range []struct {
		args                          OpArgs
		hits, slots, levels, installs uint64
		height                        string
	}{
		{OpArgs{Op: "find-get-block-hit", Block: 1}, 1, 1, 0, 0, "index height 1"},
		{OpArgs{Op: "find-get-block-miss", Block: 1}, 0, 16, 1, 1, "index height 1"},
		{OpArgs{Op: "find-get-block-slow", Block: 1}, 0, 0, 1, 0, "index height 1"},
		{OpArgs{Op: "find-get-block-slow"}, 0, 0, 0, 0, "index height 0; block 0 is page 0"},
		{OpArgs{Op: "find-get-block-slow", Block: 1 << 32}, 0, 0, 6, 0, "index height 6"},
		{OpArgs{Op: "find-get-block-hit", Block: 1 << 32}, 1, 1, 0, 0, "index height 6"},
	} {
		t.Run(tc.args.Op, func(t *testing.T) {
			o, err := BuildOp(tc.args)
			require.NoError(t, err)
			assert.Equal(t, "call", o.Unit)
			require.Len(t, o.Steps, 1)
			ev := o.Steps[0].Events
			assert.Equal(t, tc.hits, ev[bufcache.EvLRUHit])
			assert.Equal(t, tc.slots, ev[bufcache.EvLRUSlot])
			assert.Equal(t, tc.levels, ev[bufcache.EvIndexLevel])
			assert.Equal(t, tc.installs, ev[bufcache.EvLRUInstall])
			assert.InDelta(t, p.SimNS(ev, 0)/o.Per, o.SimNS(&o.Steps[0], p), 1e-9)
			assert.Contains(t, strings.Join(o.Facts, "\n"), tc.height)
			assert.Contains(t, strings.Join(o.Facts, "\n"), "returns the buffer")
			assert.Empty(t, o.Loads, "a single call has no bottleneck")
			checkLedger(t, o, p)
		})
	}
}

func TestExplainWritePage(t *testing.T) {
	p := Helios4()
	for _, tc := range []struct {
		bsize     uint32
		layout    Layout
		bios, bhs float64
		extraStep string
	}{
		{512, LayoutDirect, 8, 8, ""},
		{1024, LayoutDirect, 4, 4, ""},
		{4096, LayoutDirect, 1, 1, ""},
		{0, LayoutRaid6, 8, 8, "md0_raid6"}, // default block size 512
		{4096, LayoutRaid0, 1, 1, "sdd"},
	} {
		t.Run(tc.layout.String(), func(t *testing.T) {
			o, err := BuildOp(OpArgs{Op: "write-page", BlockSize: tc.bsize, Layout: tc.layout, Count: 8})
			require.NoError(t, err)
			assert.Equal(t, "page", o.Unit)
			assert.Equal(t, 8.0*256, o.Per, "8 MiB of 4 KiB pages")
			assert.InDelta(t, tc.bios, stepEvents(o, bufcache.EvBioSubmit), 1e-9)
			assert.InDelta(t, tc.bhs, stepEvents(o, bufcache.EvBHAlloc), 1e-9)
			assert.InDelta(t, 4096, stepEvents(o, bufcache.EvCopyByte), 1e-9)
			var names []string
			for _, s := range o.Steps {
				names = append(names, s.Load.Name)
			}
			assert.Contains(t, names, "cpu0 (dd)")
			if tc.extraStep != "" {
				assert.Contains(t, names, tc.extraStep)
			}
			assert.NotContains(t, strings.Join(names, ","), "all 2 CPUs", "the all-CPU bound is not a step")
			checkLedger(t, o, p)
			assert.Contains(t, o.Text(p), "sets the pace")
		})
	}
}

func TestExplainIomapWritePage(t *testing.T) {
	p := XuYangBoard()
	faultins := map[string]float64{}
	for _, k := range []string{"6.6", "6.6-revert", "6.6-fix"} {
		o, err := BuildOp(OpArgs{Op: "iomap-write-page", Kernel: k, BS: 4500 << 10, Count: 4})
		require.NoError(t, err)
		assert.Equal(t, 4*4500/4.0, o.Per)
		faultins[k] = stepEvents(o, bufcache.EvFaultInPage)
		checkLedger(t, o, p)
		assert.Contains(t, o.Title, "bs=4500K count=4")
	}
	// The root cause of seed 002: the 2 MiB chunk pre-faults hundreds of
	// user pages per page written; the buffer-head path and the fix, one.
	assert.Greater(t, faultins["6.6"], 100.0)
	assert.InDelta(t, 1, faultins["6.6-revert"], 0.01)
	assert.InDelta(t, 1, faultins["6.6-fix"], 0.01)
}
