package threads

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
	"github.com/bhsim/bhsim/bufcache"
)

// Today is one figure of "the same experiment on Linux 6.18": the thread's
// measurement run on the model's 6.18 kernel preset (workload's "6.18":
// large folios in the block device's mapping, set_blocksize up to 64 KiB,
// the v6.16 lookups, on-demand readahead, iomap writes with the fixed
// chunk, the 6.18 plug — each checked against the host's Linux 6.18 on the
// scenario corpus) and priced under the thread's calibrated profile. Nobody
// published these numbers, so no input of their simulation is a published
// cell of them: each is predicted. (The profile's fitted costs came from the
// thread's other cells, as for any predicted cell.)
type Today struct {
	// What is the measurement ("dd bs=1M count=2000 write, raid0").
	What string
	// Kernel is the preset it ran on: "6.18", or "6.18-nothp" for a machine
	// whose kernel cannot have transparent huge pages.
	Kernel string
	// Unit is Value's and Then's unit.
	Unit string
	// Then is the same measurement simulated on the thread's kernel
	// (ThenKernel), as its table shows it.
	Then       float64
	ThenKernel string
	// Value is the measurement simulated on 6.18.
	Value float64
	// Counted says what the model counted on 6.18 that explains Value
	// ("order-8 folios, 1.00 bios/page").
	Counted string
}

// todayKernel is the preset of today's kernel, and todayNoTHP the same
// kernel built without transparent huge pages, as the Helios4's 32-bit
// Cortex-A9 (no LPAE) has to be: one-page folios.
const (
	todayKernel = "6.18"
	todayNoTHP  = "6.18-nothp"
)

// todayOf returns thread name's 6.18 figures for reproduction r, run at
// opts' scale (nil for a thread without any).
func todayOf(name string, r *Reproduction, opts Options) ([]Today, error) {
	switch name {
	case "blocksize":
		return todayBlocksize(r, opts)
	case "iomap":
		return todayIomap(r, opts)
	case "lru":
		return todayLRU(r)
	case "alloc":
		return todayAlloc(r, opts)
	}
	return nil, nil
}

// todayBlocksize runs Maxim's dd writes on the clock on 6.18 as his
// Helios4 can run it: without transparent huge pages (todayNoTHP), every
// layout.
func todayBlocksize(r *Reproduction, opts Options) ([]Today, error) {
	count := max(uint64(2000*opts.scale()+0.5), 1)
	clock := newClockRuns()
	var names []string
	for _, l := range workload.Layouts() {
		dd := workload.Helios4DD(l, engine.MustKernel(todayNoTHP), false)
		dd.Count = count
		clock.add(l.String(), dd)
		names = append(names, l.String())
	}
	results, err := clock.all(r.Profile, names, nil)
	if err != nil {
		return nil, err
	}
	var out []Today
	for i, l := range workload.Layouts() {
		then, _ := r.Table.Cell("5.10.10+revert", l.Column()+" W")
		res := results[i]
		out = append(out, Today{What: fmt.Sprintf("dd bs=1M count=%d write, %s", count, l.Column()), Kernel: todayNoTHP, Unit: r.Table.Unit,
			Then: then.Simulated, ThenKernel: "5.10.10+revert", Value: res.MBps,
			Counted: fmt.Sprintf("a Cortex-A9 has no THP; block size %d, %.2f bios/page, %.1f requests/MiB, %.2f folios/MiB", res.BlockSize,
				res.PerPage(timing.Ev(bufcache.EvBioSubmit)), 256*res.PerPage(timing.ParamRequest),
				256*res.PerPage(timing.Ev(bufcache.EvFolioAlloc)))})
	}
	return out, nil
}

// todayIomap runs Xu Yang's dd on the clock on 6.18 at every bs of his
// table.
func todayIomap(r *Reproduction, opts Options) ([]Today, error) {
	clock := newClockRuns()
	var names []string
	for _, bs := range IomapBS() {
		name := fmt.Sprint(bs)
		clock.add(name, workload.IMX8BoardDD(engine.MustKernel(todayKernel), bs, opts.scale()))
		names = append(names, name)
	}
	results, err := clock.all(r.Profile, names, nil)
	if err != nil {
		return nil, err
	}
	var out []Today
	for i, bs := range IomapBS() {
		then, _ := r.Table.Cell(iomapRowName(bs>>10), iomapKernels[2].column)
		res := results[i]
		out = append(out, Today{What: "dd bs=" + scenario.FormatDDSize(bs), Kernel: todayKernel, Unit: r.Table.Unit,
			Then: then.Simulated, ThenKernel: iomapKernels[2].name, Value: res.MBps,
			Counted: fmt.Sprintf("%.1f user pages pre-faulted per page, %.2f folios/MiB", res.PerPage(timing.Ev(bufcache.EvFaultInPage)),
				256*res.PerPage(timing.Ev(bufcache.EvFolioAlloc)))})
	}
	return out, nil
}

// todayLRU runs Tosatti's module on 6.18 at block 1 of his 1 GiB loop
// device and at block 4UL<<30 of one large enough to hold it.
func todayLRU(r *Reproduction) ([]Today, error) {
	var out []Today
	for _, at := range []struct {
		block, device uint64
		name, size    string
	}{{1, 1 << 30, "1", "1 GiB"}, {4 << 30, 32 << 40, "4UL<<30", "32 TiB"}} {
		s := workload.PostedLookupModule()
		s.Kernel, s.Block, s.DeviceBytes = engine.MustKernel(todayKernel), at.block, at.device
		res, err := s.Run()
		if err != nil {
			return nil, err
		}
		for _, call := range []struct {
			name  string
			calls workload.Calls
		}{{"__find_get_block", res.Find}, {"__find_get_block_slow", res.Slow}} {
			then, _ := r.Table.Cell(lruRow, call.name)
			t := Today{What: fmt.Sprintf("%s(bdev, %s, %d) on a %s device", call.name, at.name, s.Size, at.size), Kernel: todayKernel, Unit: r.Table.Unit,
				Value: r.Profile.Simulate(call.calls.Obs("", "", 0)),
				Counted: fmt.Sprintf("block size %d, index height %d, %.2f LRU hits/call", res.BlockSize, res.IndexHeight,
					call.calls.PerCall(bufcache.EvLRUHit))}
			if at.block == 1 {
				t.Then, t.ThenKernel = then.Simulated, "6.4"
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// todayAlloc runs Sean Fu's writetest on 6.18 with one-page folios: the
// model's large folios are the block device's mapping's (v6.15), and the
// large folios ext4 gives regular files from v6.16 are not modelled for
// writetest's file, so the figure answers the thread's question — what
// building a ring costs on 6.18, where folio_alloc_buffers still links a
// list its callers close — and nothing more.
func todayAlloc(r *Reproduction, opts Options) ([]Today, error) {
	res, err := workload.PostedWriteTest(engine.MustKernel(todayNoTHP), opts.scale()).Run()
	if err != nil {
		return nil, err
	}
	var out []Today
	for _, ph := range []struct {
		row   string
		phase workload.Phase
	}{{"write", res.Write}, {"read", res.ReadCold}} {
		then, _ := r.Table.Cell(ph.row, allocCells[0].column)
		out = append(out, Today{What: "writetest -b 800, " + ph.row, Kernel: todayNoTHP, Unit: r.Table.Unit,
			Then: then.Simulated, ThenKernel: "4.12",
			Value:   r.Profile.Simulate(timing.Observation{Q: sysMSQuantities(ph.phase, ph.row == "write")}),
			Counted: fmt.Sprintf("ext4's large folios for files (v6.16) not modelled; %.2f ring steps and %.2f buffer heads allocated per page", ph.phase.PerPage(bufcache.EvRingWalk), ph.phase.PerPage(bufcache.EvBHAlloc))})
	}
	return out, nil
}

// TodayText renders r's 6.18 figures beside the thread kernel's.
func (r *Reproduction) TodayText() string {
	if len(r.Today) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "the same experiment on Linux %s (predicted: no published value; costs as calibrated above;\n%s is 6.18 with one-page folios, as a kernel without transparent huge pages has them):\n", todayKernel, todayNoTHP)
	for _, t := range r.Today {
		then := ""
		if t.ThenKernel != "" {
			then = fmt.Sprintf(" (%s: %.1f)", t.ThenKernel, t.Then)
		}
		fmt.Fprintf(&sb, "  %s\n      %s: %.1f %s%s; %s\n", t.What, t.Kernel, t.Value, t.Unit, then, t.Counted)
	}
	return sb.String()
}
