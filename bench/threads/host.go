package threads

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/bhsim/bhsim"
	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// The set_init_blocksize experiment on this machine's kernel: the
// Helios4 thread asked how much a block device's 512-byte buffers cost
// against 4096-byte ones. Here the same dd — 4 KiB writes then fsync, and
// cold 4 KiB reads — runs at block sizes 512 to 4096 on a loop device of
// known speed: a blk-throttle rule counting bios (iops), under which each
// buffer's bio costs time, and one counting bytes (bps), under which the
// block size should not matter. The kernel's side is the timed corpus
// (bhsim.TimedCorpus, recorded on Linux 6.18 with five runs each); the
// model's is its clock over the same rules. No figure of the corpus went
// into the model: every cell is predicted.

// hostTimedDir is the timed corpus's directory in bhsim.TimedCorpus.
const hostTimedDir = "testdata/timed"

// hostBlockSizes are the table's rows: the block sizes, as the corpus
// names its scenarios.
var hostBlockSizes = []struct{ row, name string }{{"512", "512"}, {"1K", "1k"}, {"2K", "2k"}, {"4K", "4k"}}

// hostColumns are the table's columns: the direction and the rule, and the
// scenario prefix that runs it.
var hostColumns = []struct {
	column, prefix string
	write          bool
}{
	{"W wiops=2000", "dd-wiops-bs", true},
	{"W wbps=8M", "dd-wbps-bs", true},
	{"R riops=200", "read-riops-bs", false},
	{"R rbps=8M", "read-rbps-bs", false},
}

// hostSource cites the kernel's side.
const hostSource = "this machine's kernel (Linux 6.18, x86-64 VM), recorded in testdata/timed with five runs each: a private loop device on tmpfs, the rule in cgroup v1's blkio root group, time from a pass without tracepoints"

// runHost is the host thread's Run: each cell's scenario on the model's
// clock priced by p, beside the recording's elapsed time.
func runHost(p *timing.Profile, opts Options) (*Reproduction, error) {
	t := timing.Table{ID: "blocksize-6.18-host",
		Title:  "dd write+fsync (W: 1 MiB under wiops, 4 MiB under wbps) and cold reads (R: 2 MiB under riops, 4 MiB under rbps) in 4 KiB calls, by block size, on a loop device of known speed",
		Source: hostSource, Unit: "MB/s", Decimals: 2}
	disk, err := hostDisk()
	if err != nil {
		return nil, err
	}
	total, done := len(hostBlockSizes)*len(hostColumns), 0
	for _, bs := range hostBlockSizes {
		for _, col := range hostColumns {
			name := col.prefix + bs.name
			c, err := hostCell(name, col.write, p, disk)
			if err != nil {
				return nil, err
			}
			c.Row, c.Column = bs.row, col.column
			t.Cells = append(t.Cells, c)
			if done++; opts.Progress != nil {
				opts.Progress(done, total)
			}
		}
	}
	cal := &timing.Calibration{Profile: p.Name, Cells: t.Cells}
	return &Reproduction{Profile: p, Table: t, Calibration: cal,
		CrossValidationNote: "nothing is fitted: every cell is predicted from the rule, the loop disk measured unthrottled and the profile's costs",
		Notes:               hostNotes(t)}, nil
}

// hostDisk is the model's loop device: the one measured with the corpus's
// recording (scenario.LoopDiskFile), or nil (engine.LoopDisk) when the
// recording has none.
func hostDisk() (blk.Model, error) {
	name := path.Join(hostTimedDir, "kernel", "6.18", scenario.LoopDiskFile)
	b, err := fs.ReadFile(bhsim.TimedCorpus, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l, err := scenario.DecodeLoopDiskFile(name, b)
	if err != nil {
		return nil, err
	}
	return engine.LoopDiskModel(l), nil
}

// hostCell runs the corpus scenario called name on the model over disk
// (nil: engine.LoopDisk) and returns the cell of its speed, published the
// kernel's: the bytes its pwrites (write) or preads move over the time of
// those calls and, for a write, its fsync — the kernel's as the middle of
// its runs' range.
func hostCell(name string, write bool, p *timing.Profile, disk blk.Model) (timing.Cell, error) {
	s, err := hostScenario(name)
	if err != nil {
		return timing.Cell{}, err
	}
	rec, err := fs.ReadFile(bhsim.TimedCorpus, path.Join(hostTimedDir, "kernel", "6.18", name+".json"))
	if err != nil {
		return timing.Cell{}, err
	}
	kernel, err := scenario.DecodeResult(rec)
	if err != nil {
		return timing.Cell{}, fmt.Errorf("%s: %w", name, err)
	}
	model, err := engine.RunModel(context.Background(), s, engine.ModelOptions{Profile: p, Disk: disk})
	if err != nil {
		return timing.Cell{}, err
	}
	var bytes int64
	var kns, mns float64
	for i, op := range s.Ops {
		var counted bool
		var n int64
		switch o := op.(type) {
		case scenario.Write:
			counted, n = write, o.Len*int64(o.Calls())
		case scenario.Read:
			counted, n = !write, o.Len*int64(o.Calls())
		case scenario.Fsync:
			counted = write
		}
		if !counted {
			continue
		}
		bytes += n
		k, m := kernel.Ops[i].Wall, model.Ops[i].Wall
		if k == nil || m == nil {
			return timing.Cell{}, fmt.Errorf("%s: op %d (%s) has no time", name, i+1, op)
		}
		kns += float64(k.MinNs+k.MaxNs) / 2
		mns += float64(m.MaxNs)
	}
	mbps := func(ns float64) float64 { return float64(bytes) / ns * 1e3 }
	return timing.Cell{Published: mbps(kns), Simulated: mbps(mns), Label: timing.LabelPredicted}, nil
}

// hostScenario reads the corpus scenario called name.
func hostScenario(name string) (*scenario.Scenario, error) {
	b, err := fs.ReadFile(bhsim.TimedCorpus, path.Join(hostTimedDir, name+".scn"))
	if err != nil {
		return nil, err
	}
	return scenario.Parse(name+".scn", string(b))
}

// hostNotes says what the table shows: under the iops rule each halving of
// the block size halves the write speed (a bio per buffer), under the bps
// rule it does not, and reads, whose bios are readahead's windows, do not
// care.
func hostNotes(t timing.Table) string {
	cell := func(row, col string) float64 {
		c, _ := t.Cell(row, col)
		return c.Published
	}
	return fmt.Sprintf("On the kernel, 4096-byte buffers write %.1f× as fast as 512-byte ones under the iops rule "+
		"(a bio per buffer, each counted) and %.2f× under the bps rule (the same bytes); cold reads go %.2f× and %.2f× "+
		"(readahead's bios are windows, not buffers). The model's cells beside them are its clock's.\n",
		cell("4K", "W wiops=2000")/cell("512", "W wiops=2000"), cell("4K", "W wbps=8M")/cell("512", "W wbps=8M"),
		cell("4K", "R riops=200")/cell("512", "R riops=200"), cell("4K", "R rbps=8M")/cell("512", "R rbps=8M"))
}
