package bench

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bufcache"
)

// Published figures of seed 004, ns per call on /dev/loop0, 200 000 calls.
const (
	tosattiFindNS = 114
	tosattiSlowNS = 68
)

// LRUThread is the reproduction of the per-CPU bh LRU thread (seed 004).
type LRUThread struct {
	Profile     *Profile // calibrated
	Table       Table
	Calibration *Calibration
	Seed        *TosattiResult   // the module as written: block 1, size 512
	Block4G     []*TosattiResult // Willy's rerun: on the same device, and on one large enough
	Heights     []HeightRow
	Cycles      []CycleRow
}

// ReproduceLRU runs Tosatti's module on the model, fits the harness cost
// (ParamTimer, one parameter) to the __find_get_block_slow figure and predicts
// the __find_get_block one from the profile's documented costs, then answers
// Willy's block-4G question and sweeps the index height and the number of
// distinct blocks.
func ReproduceLRU(p *Profile) (*LRUThread, error) {
	seed, err := TosattiSeed().Run()
	if err != nil {
		return nil, err
	}
	const row = "/dev/loop0 1 GiB, block 1 (read once), size 512"
	obs := []Observation{
		seed.Slow.Obs(row, "__find_get_block_slow", tosattiSlowNS, true),
		seed.Find.Obs(row, "__find_get_block", tosattiFindNS, false),
	}
	fitted, cal, err := Calibrate(p, []Param{ParamTimer}, obs)
	if err != nil {
		return nil, err
	}
	t := &LRUThread{Profile: fitted, Calibration: cal, Seed: seed}
	t.Table = Table{
		ID:     "lru-tosatti",
		Title:  "__find_get_block vs __find_get_block_slow, 200 000 calls each",
		Source: "Marcelo Tosatti, \"[PATCH] fs/buffer.c: remove per-CPU buffer_head lookup cache\", LKML 2023-06-26 (seed 004)",
		Unit:   "ns per call",
		Cells:  cal.Cells,
	}
	for _, size := range []uint64{1 << 30, 32 << 40} {
		s := TosattiSeed()
		s.DeviceBytes, s.Block = size, 4<<30
		r, err := s.Run()
		if err != nil {
			return nil, err
		}
		t.Block4G = append(t.Block4G, r)
	}
	if t.Heights, err = HeightSweep(2000); err != nil {
		return nil, err
	}
	if t.Cycles, err = CycleSweep(20, 100); err != nil {
		return nil, err
	}
	return t, nil
}

// Text renders the whole reproduction: table, calibration, what each call did,
// the block-4G answer and the sweeps.
func (t *LRUThread) Text() string {
	var sb strings.Builder
	sb.WriteString(t.Table.Text())
	sb.WriteString("\n")
	sb.WriteString(t.Calibration.Report())
	find, slow := t.Seed.Find, t.Seed.Slow
	diff := t.Profile.SimNS(find.Events, 0)/float64(find.Calls) - t.Profile.SimNS(slow.Events, 0)/float64(slow.Calls)
	fmt.Fprintf(&sb, "  the fitted timer cancels out of the difference: __find_get_block − __find_get_block_slow is\n"+
		"  predicted %.1f ns from documented costs alone (LRU lookup, slot compares, install), published %.0f ns\n",
		diff, float64(tosattiFindNS-tosattiSlowNS))
	sb.WriteString("\nwhat each call did (model events per call):\n")
	sb.WriteString(t.Seed.Explain(t.Profile))
	sb.WriteString("\nWilly's question, block 4UL*1024*1024*1024 (sim-ns per timed call, harness included):\n")
	for _, r := range t.Block4G {
		sb.WriteString(r.Explain(t.Profile))
	}
	sb.WriteString("\n")
	sb.WriteString(heightText(t.Heights, t.Profile))
	sb.WriteString("\n")
	sb.WriteString(cycleText(t.Cycles, t.Profile))
	return sb.String()
}

// Explain says, from the model's counts, what the module's two loops did and
// what they cost under p (harness included).
func (r *TosattiResult) Explain(p *Profile) string {
	var sb strings.Builder
	s := r.Setup
	fmt.Fprintf(&sb, "  device %s, block size %d after open (%s policy); block %d is page %d",
		byteSize(s.DeviceBytes), r.BlockSize, s.Policy, s.Block, r.Page)
	if !r.Cached {
		sb.WriteString(", past the end of the device: nothing reads it, its page is never cached")
	}
	fmt.Fprintf(&sb, "; index height %d\n", r.IndexHeight)
	for _, c := range []struct {
		name  string
		calls Calls
	}{{fmt.Sprintf("__find_get_block(bdev, %d, %d)", s.Block, s.Size), r.Find}, {fmt.Sprintf("__find_get_block_slow(bdev, %d)", s.Block), r.Slow}} {
		cl := c.calls
		fmt.Fprintf(&sb, "    %-42s found %d/%d", c.name, cl.Found, cl.Calls)
		if cl.Found > 0 {
			fmt.Fprintf(&sb, " (b_size %d)", cl.FoundSize)
		}
		fmt.Fprintf(&sb, ", LRU hits %.0f, %.1f sim-ns/call\n", float64(cl.Events[bufcache.EvLRUHit]), p.SimNS(cl.Events, float64(cl.Calls))/float64(cl.Calls))
		for _, l := range p.Ledger(cl.Events, float64(cl.Calls)) {
			fmt.Fprintf(&sb, "      %-18s %6.2f × %6.2f ns = %6.2f ns\n", l.Param, l.Count/float64(cl.Calls), l.NS, l.Total()/float64(cl.Calls))
		}
	}
	return sb.String()
}

// byteSize renders a power-of-two-ish size as "1 GiB", "32 TiB".
func byteSize(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for n >= 1024 && n%1024 == 0 && i < len(units)-1 {
		n /= 1024
		i++
	}
	return fmt.Sprintf("%d %s", n, units[i])
}
