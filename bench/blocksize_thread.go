package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
)

// helios4Row is one kernel row of seed 000's table: MB/s per layout.
type helios4Row struct {
	preset      string
	read, write [numLayouts]float64
}

// helios4Published is Maxim Mikityanskiy's table (seed 000; reference 9.1):
// dd bs=1M count=2000 on a Helios4, MB/s.
var helios4Published = []helios4Row{
	{"9011495c9466", [numLayouts]float64{256, 313, 276, 313, 323}, [numLayouts]float64{254, 253, 195, 204, 117}},
	{"5ff9f19231a0", [numLayouts]float64{257, 398, 312, 344, 391}, [numLayouts]float64{154, 122, 67.7, 66.6, 67.2}},
	{"5.10.10", [numLayouts]float64{256, 401, 312, 356, 375}, [numLayouts]float64{149, 123, 64, 64.1, 61.5}},
	{"5.10.10+revert", [numLayouts]float64{255, 396, 312, 340, 393}, [numLayouts]float64{247, 274, 220, 225, 121}},
}

// BlocksizeFit names what ReproduceBlocksize calibrates: the costs it fits
// and the published cells it fits them to, as "row/column" ("5.10.10/RAID0
// W"). Every other cell is a prediction.
type BlocksizeFit struct {
	Params []Param
	Cells  []string
}

// DefaultBlocksizeFit fits seven costs to eleven cells. The costs are the
// ones the Helios4 profile can only estimate: a bio through the block layer
// (submit and completion), the per-folio work of writeback, md's per-bio
// pass, a member bio, the redundant levels' per-bio write bookkeeping, one
// RAID6 stripe in raid5d, and the per-folio work of readahead. The cells are
// the write cells of the two 5.10.10 rows, the unpatched kernel and the
// revert, which differ only in the block-size policy, and one read, RAID0 of
// 5.10.10. The older rows (the parent of the faulty commit and the faulty
// commit itself) and the other reads are predictions.
func DefaultBlocksizeFit() BlocksizeFit {
	f := BlocksizeFit{
		Params: []Param{Param(bufcache.EvBioSubmit), Param(bufcache.EvWritepage), ParamMDBio, ParamMemberBio,
			ParamMDWriteBio, ParamStripe, Param(bufcache.EvReadaheadPage)},
		Cells: []string{"5.10.10/RAID0 R"},
	}
	for _, row := range []string{"5.10.10", "5.10.10+revert"} {
		for _, l := range Layouts() {
			f.Cells = append(f.Cells, row+"/"+l.Column()+" W")
		}
	}
	return f
}

// BlocksizeThread is the reproduction of the set_init_blocksize revert thread
// (seeds 000 and 001): the Helios4 table, simulated.
type BlocksizeThread struct {
	Profile     *Profile // calibrated
	Table       Table
	Calibration *Calibration
	// Runs holds the simulated dd runs by policy, layout and direction; rows
	// with the same policy share them (nothing else differs in the model).
	Runs map[DDKey]*DDResult
}

// DDKey names one simulated dd run of the table.
type DDKey struct {
	Policy blocksize.Policy
	Layout Layout
	Read   bool
}

// ReproduceBlocksize runs dd for both block-size policies on every layout,
// writes and reads, with count blocks of 1 MiB each (2000 in the thread),
// calibrates fit's costs of p to the fitted cells and returns the table with
// every cell fitted or predicted. Errors: a run or the calibration failed.
func ReproduceBlocksize(p *Profile, fit BlocksizeFit, count uint64) (*BlocksizeThread, error) {
	var runs []DD
	for _, pol := range []blocksize.Policy{blocksize.PolicyLogical, blocksize.PolicyGrow} {
		for _, read := range []bool{false, true} {
			for _, l := range Layouts() {
				dd := Helios4DD(l, Preset{Name: pol.String(), Blocksize: pol}, read)
				dd.Count = count
				runs = append(runs, dd)
			}
		}
	}
	results, err := RunAll(runs)
	if err != nil {
		return nil, err
	}
	byKey := map[DDKey]*DDResult{}
	for i, dd := range runs {
		byKey[DDKey{dd.Preset.Blocksize, dd.Layout, dd.Read}] = results[i]
	}
	return calibrateBlocksize(p, fit, byKey, count)
}

// calibrateBlocksize builds the table's observations from runs and calibrates.
func calibrateBlocksize(p *Profile, fit BlocksizeFit, runs map[DDKey]*DDResult, count uint64) (*BlocksizeThread, error) {
	t := &BlocksizeThread{Runs: runs}
	var obs []Observation
	for _, row := range helios4Published {
		preset, err := PresetByName(row.preset)
		if err != nil {
			return nil, err
		}
		for _, read := range []bool{false, true} {
			for _, l := range Layouts() {
				r := t.Runs[DDKey{preset.Blocksize, l, read}]
				pub, dir := row.write[l], "W"
				if read {
					pub, dir = row.read[l], "R"
				}
				o := r.Obs(row.preset, pub, false)
				o.Column += " " + dir
				o.Fit = slices.Contains(fit.Cells, o.Row+"/"+o.Column)
				obs = append(obs, o)
			}
		}
	}
	fittedP, cal, err := Calibrate(p, fit.Params, obs)
	if err != nil {
		return nil, err
	}
	t.Profile, t.Calibration = fittedP, cal
	t.Table = Table{
		ID:     "blocksize-helios4",
		Title:  fmt.Sprintf("dd bs=1M count=%d on a Helios4: write (W) and read (R)", count),
		Source: "Maxim Mikityanskiy, \"[PATCH] Revert \\\"block: simplify set_init_blocksize\\\" to regain lost performance\", LKML 2021-01-26 (seed 000)",
		Unit:   "MB/s",
		Cells:  cal.Cells,
	}
	return t, nil
}

// Ratio returns the simulated write ratio of the revert over the simplified
// policy for layout l under the calibrated profile, and the published 5.10.10
// one.
func (t *BlocksizeThread) Ratio(l Layout) (simulated, published float64) {
	grow := t.Runs[DDKey{blocksize.PolicyGrow, l, false}]
	logical := t.Runs[DDKey{blocksize.PolicyLogical, l, false}]
	return grow.MBps(t.Profile) / logical.MBps(t.Profile), helios4Published[3].write[l] / helios4Published[2].write[l]
}

// Text renders the table, the calibration, the ratios and, for each layout,
// what one page cost each resource under both policies.
func (t *BlocksizeThread) Text() string {
	var sb strings.Builder
	sb.WriteString(t.Table.Text())
	sb.WriteString("\n")
	sb.WriteString(t.Calibration.Report())
	sb.WriteString("\nwrite speed-up of the revert (grow policy) over 5.10.10 (logical block size):\n")
	for _, l := range Layouts() {
		s, p := t.Ratio(l)
		fmt.Fprintf(&sb, "  %-10s simulated %.2f×  published %.2f×  error %+.1f%%\n", l.Column(), s, p, 100*(s/p-1))
	}
	sb.WriteString("\nwhere the time goes (µs per 4 KiB page written, by resource; the busiest sets the pace):\n")
	for _, l := range Layouts() {
		for _, pol := range []blocksize.Policy{blocksize.PolicyLogical, blocksize.PolicyGrow} {
			r := t.Runs[DDKey{pol, l, false}]
			fmt.Fprintf(&sb, "  %s, block size %d: %.2f bios/page, %.1f requests/MiB, %.1f MB/s\n", l.Column(), r.BlockSize,
				float64(r.CPU[0][bufcache.EvBioSubmit]+r.CPU[1][bufcache.EvBioSubmit])/r.Pages(), float64(r.Requests())/(float64(r.Bytes)/(1<<20)), r.MBps(t.Profile))
			loads := r.Loads()
			for i := range loads {
				loads[i] = perPage(loads[i], r.Pages())
			}
			sb.WriteString(indent(t.Profile.DescribeLoads(loads), "  "))
		}
	}
	return sb.String()
}

// perPage scales a load to one page of the run.
func perPage(l Load, pages float64) Load {
	for i := range l.Q {
		l.Q[i] /= pages
	}
	l.FixedNS /= pages
	return l
}

func indent(s, by string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "")
}
