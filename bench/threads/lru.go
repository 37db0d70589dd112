package threads

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
)

// The per-CPU bh LRU thread. Marcelo Tosatti, "[PATCH] fs/buffer.c: remove
// per-CPU buffer_head lookup cache", LKML 2023-06-26: a test module timed
// 200 000 calls each of __find_get_block(bdev, 1, 512) and
// __find_get_block_slow(bdev, 1) on /dev/loop0, ns per call.
const (
	lruFindNS = 114
	lruSlowNS = 68
)

// lruRow is the table's one row.
const lruRow = "/dev/loop0 1G, block 1 (read once), size 512"

// LRUFit fits one parameter, the harness cost of a timed call (the module's
// ktime_get), to the __find_get_block_slow cell; the __find_get_block cell is
// then a prediction from the documented costs.
func LRUFit() timing.Fit {
	return timing.Fit{Params: []timing.Param{timing.ParamTimer}, Cells: []string{lruRow + "/__find_get_block_slow"}}
}

// lruResults are the runs of the thread beyond the table's.
type lruResults struct {
	posted  *workload.LookupResult   // the module as written: block 1, size 512
	block4G []*workload.LookupResult // Willy's rerun: on the same device, and on one large enough
	heights []workload.HeightRow
	cycles  []workload.CycleRow
}

// runLRU is the thread's Run.
func runLRU(p *timing.Profile, _ Options) (*Reproduction, error) {
	r, _, err := reproduceLRU(p)
	return r, err
}

// reproduceLRU runs Tosatti's module on the model, fits the harness cost to
// the __find_get_block_slow figure and predicts the __find_get_block one,
// then answers Willy's block-4G question and sweeps the index height and the
// number of distinct blocks.
func reproduceLRU(p *timing.Profile) (*Reproduction, *lruResults, error) {
	posted, err := workload.PostedLookupModule().Run()
	if err != nil {
		return nil, nil, err
	}
	obs := []timing.Observation{
		posted.Slow.Obs(lruRow, "__find_get_block_slow", lruSlowNS),
		posted.Find.Obs(lruRow, "__find_get_block", lruFindNS),
	}
	rep, err := calibrated(p, LRUFit(), obs, timing.Table{
		ID:     "lru-tosatti",
		Title:  "__find_get_block vs __find_get_block_slow, 200 000 calls each",
		Source: "Marcelo Tosatti, \"[PATCH] fs/buffer.c: remove per-CPU buffer_head lookup cache\", LKML 2023-06-26",
		Unit:   "ns per call",
	})
	if err != nil {
		return nil, nil, err
	}
	fitted := rep.Profile
	res := &lruResults{posted: posted}
	for _, size := range []uint64{1 << 30, 32 << 40} {
		s := workload.PostedLookupModule()
		s.DeviceBytes, s.Block = size, 4<<30
		r, err := s.Run()
		if err != nil {
			return nil, nil, err
		}
		res.block4G = append(res.block4G, r)
	}
	if res.heights, err = workload.HeightSweep(2000); err != nil {
		return nil, nil, err
	}
	if res.cycles, err = workload.CycleSweep(20, 100); err != nil {
		return nil, nil, err
	}
	rep.Notes = res.notes(fitted)
	rep.Figures = []Figure{res.figure(rep.Table, fitted)}
	return rep, res, nil
}

// notes renders what each call did, the block-4G answer and the sweeps.
func (res *lruResults) notes(p *timing.Profile) string {
	var sb strings.Builder
	find, slow := res.posted.Find, res.posted.Slow
	fmt.Fprintf(&sb, "the fitted timer cancels out of the difference: __find_get_block − __find_get_block_slow is\n"+
		"predicted %.1f ns from documented costs alone (LRU lookup, slot compares, install), published %.0f ns\n",
		find.SimNS(p)-slow.SimNS(p), float64(lruFindNS-lruSlowNS))
	sb.WriteString("\nwhat each call did (model events per call):\n")
	sb.WriteString(res.posted.Explain(p))
	sb.WriteString("\nWilly's question, block 4UL*1024*1024*1024 (sim-ns per timed call, harness included):\n")
	for _, r := range res.block4G {
		sb.WriteString(r.Explain(p))
	}
	sb.WriteString("\n")
	sb.WriteString(workload.HeightText(res.heights, p))
	sb.WriteString("\n")
	sb.WriteString(workload.CycleText(res.cycles, p))
	return sb.String()
}

// figure draws the table's two cells, the LRU against the slow path by
// distinct blocks cycled and by index height, under p without harness.
func (res *lruResults) figure(t timing.Table, p *timing.Profile) Figure {
	cells := Panel{Title: "Tosatti's module, 200 000 calls each", XLabel: "call", YLabel: t.Unit}
	pub, sim := Series{Name: "ns per call", Published: true}, Series{Name: "ns per call"}
	for _, c := range t.Cells {
		cells.Categories = append(cells.Categories, c.Column)
		pub.Y, sim.Y = append(pub.Y, c.Published), append(sim.Y, c.Simulated)
	}
	cells.Series = []Series{pub, sim}
	cyc := Panel{Title: "blocks cycled round-robin, 16-slot LRU", XLabel: "distinct blocks", YLabel: "sim-ns per call"}
	hit, slow := Series{Name: "__find_get_block (LRU first)"}, Series{Name: "__find_get_block_slow"}
	for _, r := range res.cycles {
		x := float64(r.N)
		hit.X, hit.Y = append(hit.X, x), append(hit.Y, r.Hit.SimNS(p))
		slow.X, slow.Y = append(slow.X, x), append(slow.Y, r.Slow.SimNS(p))
	}
	cyc.Series = []Series{hit, slow}
	height := Panel{Title: "one cached block at each index height", XLabel: "xarray height", YLabel: "sim-ns per call"}
	hHit, hMiss, hSlow := Series{Name: "LRU hit (size 4096)"}, Series{Name: "LRU miss (size 512, as Tosatti)"}, Series{Name: "__find_get_block_slow"}
	for _, r := range res.heights {
		x := float64(r.Height)
		hHit.X, hHit.Y = append(hHit.X, x), append(hHit.Y, r.Hit.SimNS(p))
		hMiss.X, hMiss.Y = append(hMiss.X, x), append(hMiss.Y, r.Miss.SimNS(p))
		hSlow.X, hSlow.Y = append(hSlow.X, x), append(hSlow.Y, r.Slow.SimNS(p))
	}
	height.Series = []Series{hHit, hMiss, hSlow}
	return Figure{ID: t.ID, Panels: []Panel{cells, cyc, height}}
}
