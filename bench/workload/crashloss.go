package workload

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/timing"
)

// CrashPoint is what a power cut at one moment of a dd write would lose: dd
// has written Written bytes (its write(2) calls returned), the disks hold
// Durable of them (write requests completed), and the rest, dirty in the page
// cache or not yet written back, is gone with the page cache.
type CrashPoint struct {
	Written, Durable uint64
}

// Lost returns the bytes dd believed written that the cut would lose.
func (c CrashPoint) Lost() uint64 { return c.Written - c.Durable }

// CrashLoss runs d (a write to one disk) and records, after every block dd
// writes and after its closing sync, what a power cut at that moment would
// lose. A cut between two requests keeps exactly the completed ones (see
// blk.PowerLog for the byte-exact version with the surviving disk); here only
// the amounts matter. Errors: a read, an array layout (whose durable bytes
// count copies and parity), or a failed run.
func CrashLoss(d DD) ([]CrashPoint, error) {
	if d.Read || d.Layout != LayoutDirect {
		return nil, fmt.Errorf("workload: crash loss needs a write to one disk (layout %s, read %v)", d.Layout, d.Read)
	}
	r, err := d.Start()
	if err != nil {
		return nil, err
	}
	var points []CrashPoint
	for range d.Count {
		if err := r.Block(); err != nil {
			return nil, err
		}
		points = append(points, CrashPoint{Written: r.pos, Durable: r.diskWriteBytes()})
	}
	if _, err := r.Close(); err != nil {
		return nil, err
	}
	return append(points, CrashPoint{Written: r.pos, Durable: r.diskWriteBytes()}), nil
}

// diskWriteBytes returns the bytes the run's disks have written so far.
func (r *DDRun) diskWriteBytes() uint64 {
	var n uint64
	for _, q := range r.disks {
		n += q.Stats().Write.Sectors << 9
	}
	return n
}

// CrashReport is the explanation of a crash-loss run: the dd that ran and
// what a power cut would have lost after each of its blocks.
type CrashReport struct {
	DD     DD
	Points []CrashPoint
}

// Text renders the report as a teacher's table: about twenty points of the
// run, the moment that would lose most and the state after dd's closing
// sync, in MiB. It prices nothing, so p is ignored.
func (c *CrashReport) Text(_ *timing.Profile) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "crash-loss: dd if=/dev/zero of=/dev/sda bs=%s count=%d on a Helios4 (%s); "+
		"a power cut keeps only what the disk has written, the page cache is gone. "+
		"Background writeback starts at %d dirty MiB.\n", scenario.FormatDDSize(c.DD.BS), c.DD.Count, c.DD.Kernel.Name, c.DD.DirtyLimit>>8)
	sb.WriteString(CrashLossText(c.Points, max(len(c.Points)/20, 1)))
	return sb.String()
}

// CrashLossText renders points as a teacher's table: every step-th point and
// the last (dd's closing sync), in MiB, with the largest loss marked.
func CrashLossText(points []CrashPoint, step int) string {
	var sb strings.Builder
	worst := 0
	for i, p := range points {
		if p.Lost() > points[worst].Lost() {
			worst = i
		}
	}
	const mib = 1 << 20
	fmt.Fprintf(&sb, "  %12s %12s %12s\n", "written MiB", "on disk MiB", "lost MiB")
	for i, p := range points {
		if i%max(step, 1) != 0 && i != len(points)-1 && i != worst {
			continue
		}
		mark := ""
		switch {
		case i == worst:
			mark = "  ← most lost"
		case i == len(points)-1:
			mark = "  ← after dd's close (sync)"
		}
		fmt.Fprintf(&sb, "  %12.0f %12.0f %12.0f%s\n", float64(p.Written)/mib, float64(p.Durable)/mib, float64(p.Lost())/mib, mark)
	}
	return sb.String()
}
