package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/iomap"
)

// WritePreset is a kernel of Xu Yang's table (seed 002): which buffered
// write a block device gets.
type WritePreset struct {
	// Name is the preset's name in benchmarks and on the command line.
	Name string
	// Column is the column's label in the thread's table.
	Column      string
	Description string
	Options     iomap.Options
}

// WritePresets returns the three kernels of the iomap thread.
func WritePresets() []WritePreset {
	return []WritePreset{
		{Name: "6.6", Column: "6.6+ (iomap)", Options: iomap.Options{},
			Description: "v6.6 and later until the fix: block-device writes through iomap (487c607df790) with a PAGE_SIZE << MAX_PAGECACHE_ORDER chunk (2 MiB with THP on 4 KiB pages, 5d8edfb900d5)"},
		{Name: "6.6-revert", Column: "487c607df790 reverted", Options: iomap.Options{Path: iomap.PathBufferHead},
			Description: "v6.6 with \"block: use iomap for writes to block devices\" reverted: generic_perform_write through buffer heads"},
		{Name: "6.6-fix", Column: "with 4e527d5841e2", Options: iomap.Options{Chunk: iomap.ChunkMappingMaxFolioSize},
			Description: "v6.6 with \"iomap: fault in smaller chunks for non-large folio mappings\" (4e527d5841e2): chunk = mapping_max_folio_size, PAGE_SIZE here"},
	}
}

// WritePresetByName returns the preset called name; the error names the
// valid ones.
func WritePresetByName(name string) (WritePreset, error) {
	var names []string
	for _, p := range WritePresets() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return WritePreset{}, fmt.Errorf("bench: unknown kernel preset %q (valid: %s)", name, strings.Join(names, ", "))
}

// xuYangRow is one dd bs of seed 002's table: MB/s per kernel, in
// WritePresets order.
type xuYangRow struct {
	kib   uint64
	count uint64
	mbps  [3]float64
}

// xuYangPublished is Xu Yang's table (seed 002; reference 9.2): dd
// if=/dev/zero of=/dev/sda bs=X count=N, about 4 GiB each, MB/s.
var xuYangPublished = []xuYangRow{
	{400, 10485, [3]float64{334, 339, 339}},
	{800, 5242, [3]float64{278, 330, 330}},
	{1600, 2621, [3]float64{204, 332, 332}},
	{2200, 1906, [3]float64{170, 333, 333}},
	{3000, 1398, [3]float64{150, 333, 333}},
	{4500, 932, [3]float64{139, 333, 333}},
}

// XuYangBS returns the dd block sizes of the table, in bytes.
func XuYangBS() []uint64 {
	var bs []uint64
	for _, r := range xuYangPublished {
		bs = append(bs, r.kib<<10)
	}
	return bs
}

// XuYangSSD is the disk of Xu Yang's board: the thread says only that the
// reverted kernel writes at about 333 MB/s, so the model is an SSD of
// 340 MB/s with a 20 µs command latency (an assumption that makes 512 KiB
// requests stream at 335 MB/s).
func XuYangSSD() blk.SSD { return blk.SSD{MBps: 340, LatencyNS: 20e3} }

// XuYangDD returns Xu Yang's run for one kernel and dd bs: `dd if=/dev/zero
// of=/dev/sda bs=X count=N` writing about 4 GiB (count scales it: 1 is the
// thread's size) on his board as the XuYangBoard profile assumes it — four
// CPUs, 2 GiB of RAM (1.5 GiB of page cache, background writeback at 10 %), a
// 64 GB SSD with 512-byte logical blocks, which set_init_blocksize grows to
// 4096 (6.6 has the revert of the Helios4 thread).
func XuYangDD(k WritePreset, bs uint64, scale float64) DD {
	count := uint64(float64(4<<30)/float64(bs)*scale + 0.5)
	return DD{Layout: LayoutDirect, Preset: Preset{Name: k.Name, Blocksize: blocksize.PolicyGrow},
		BS: bs, Count: max(count, 1), CPUs: 4, Disk: XuYangSSD(), DiskBytes: 64e9 / 4096 * 4096,
		PageCacheLimit: 1536 << 20 >> 12, DirtyLimit: (2 << 30 / 10) >> 12, Write: k.Options}
}

// IomapFit names the costs ReproduceIomap fits and the cells, as
// "kernel/bs" ("6.6/800K").
type IomapFit struct {
	Params []Param
	Cells  []string
}

// DefaultIomapFit fits two costs — a user page touched by the pre-fault and
// a byte copied into the page cache (which carries the rest of the writer's
// per-page work the profile does not price well) — to two cells of the 6.6
// curve, 800K and 4500K. The other four 6.6 cells and both flat columns are
// predictions.
func DefaultIomapFit() IomapFit {
	return IomapFit{
		Params: []Param{Param(bufcache.EvFaultInPage), Param(bufcache.EvCopyByte)},
		Cells:  []string{"6.6/800K", "6.6/4500K"},
	}
}

// IomapThread is the reproduction of Xu Yang's regression (seed 002).
type IomapThread struct {
	Profile     *Profile // calibrated
	Table       Table
	Calibration *Calibration
	// Runs are the dd runs by kernel and bs (in bytes).
	Runs map[IomapKey]*DDResult
}

// IomapKey names one run of the iomap thread.
type IomapKey struct {
	Kernel string
	BS     uint64
}

// ReproduceIomap runs Xu Yang's dd for the three kernels and six block
// sizes, each writing scale × 4 GiB, calibrates fit's costs of p and returns
// the table with every cell fitted or predicted. Errors: a run or the
// calibration failed.
func ReproduceIomap(p *Profile, fit IomapFit, scale float64) (*IomapThread, error) {
	var runs []DD
	var keys []IomapKey
	for _, k := range WritePresets() {
		for _, bs := range XuYangBS() {
			runs = append(runs, XuYangDD(k, bs, scale))
			keys = append(keys, IomapKey{k.Name, bs})
		}
	}
	results, err := RunAll(runs)
	if err != nil {
		return nil, err
	}
	t := &IomapThread{Runs: map[IomapKey]*DDResult{}}
	for i, k := range keys {
		t.Runs[k] = results[i]
	}
	var obs []Observation
	for _, row := range xuYangPublished {
		for i, k := range WritePresets() {
			r := t.Runs[IomapKey{k.Name, row.kib << 10}]
			o := r.Obs(fmt.Sprintf("bs=%dK", row.kib), row.mbps[i], false)
			o.Column = k.Column
			o.Fit = slices.Contains(fit.Cells, fmt.Sprintf("%s/%dK", k.Name, row.kib))
			obs = append(obs, o)
		}
	}
	fitted, cal, err := Calibrate(p, fit.Params, obs)
	if err != nil {
		return nil, err
	}
	t.Profile, t.Calibration = fitted, cal
	t.Table = Table{
		ID:     "iomap-xu-yang",
		Title:  fmt.Sprintf("dd if=/dev/zero of=/dev/sda, %.3g GiB per run, by dd bs", 4*scale),
		Source: "Xu Yang, \"[PATCH] iomap: fault in smaller chunks for non-large folio mappings\", LKML 2024 (seed 002)",
		Unit:   "MB/s",
		Cells:  cal.Cells,
	}
	return t, nil
}

// FaultInPerPage returns the user pages the run's pre-faults touched per
// page it wrote.
func (r *DDResult) FaultInPerPage() float64 {
	return float64(r.CPU[0][bufcache.EvFaultInPage]) / float64(r.CPU[0][bufcache.EvWriteIter])
}

// Text renders the table, the calibration and, per bs, what the model
// counted: pre-faulted user pages per page written and the writer's time per
// page, the root cause step by step.
func (t *IomapThread) Text() string {
	var sb strings.Builder
	sb.WriteString(t.Table.Text())
	sb.WriteString("\n")
	sb.WriteString(t.Calibration.Report())
	sb.WriteString("\nwhat the model counted per 4 KiB page written (faultin = user pages pre-faulted):\n")
	fmt.Fprintf(&sb, "  %-8s", "bs")
	for _, k := range WritePresets() {
		fmt.Fprintf(&sb, " %28s", k.Name+": faultin, µs, MB/s")
	}
	sb.WriteString("\n")
	for _, bs := range XuYangBS() {
		fmt.Fprintf(&sb, "  %-8s", fmt.Sprintf("%dK", bs>>10))
		for _, k := range WritePresets() {
			r := t.Runs[IomapKey{k.Name, bs}]
			_, ns := t.Profile.Bottleneck(r.Loads())
			fmt.Fprintf(&sb, " %28s", fmt.Sprintf("%.1f, %.2f, %.0f", r.FaultInPerPage(), ns/r.Pages()/1e3, r.MBps(t.Profile)))
		}
		sb.WriteString("\n")
	}
	return sb.String()
}
