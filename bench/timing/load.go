package timing

import (
	"fmt"
	"strings"
)

// Load is one resource's demand for a run: the quantity of each priced
// parameter it did (events, or block-layer and md counts), time the profile
// does not price (a disk's service times), and the number of servers that
// share the work (1 for one CPU or one disk, the CPU count for the all-CPU
// bound).
type Load struct {
	Name    string
	Q       Quantities
	FixedNS float64
	Servers float64
	// Kind says what the resource is: a CPU's time grows with the memory
	// bus's load when the profile has a memory-stall share (Contended).
	Kind LoadKind
}

// LoadKind is the kind of resource a Load is.
type LoadKind uint8

// The kinds of Load.
const (
	// LoadDevice is a resource whose time nothing else changes: a disk, or
	// a stage the model prices on its own.
	LoadDevice LoadKind = iota
	// LoadCPU is a CPU, or CPUs sharing work (CPULoad, AllCPUs).
	LoadCPU
	// LoadMemory is the machine's memory bus (MemoryLoad): at most one a run.
	LoadMemory
)

// BusyNS returns the load's demand under p divided by its servers: the time
// the resource needs for the run. O(parameters).
func (p *Profile) BusyNS(l *Load) float64 {
	t := l.FixedNS
	for i, n := range l.Q {
		t += n * p.NS[i]
	}
	if l.Servers > 1 {
		t /= l.Servers
	}
	return t
}

// Bottleneck returns the index of the load that sets the pace of a run
// under p and the run's time, or (-1, 0) when loads is empty: the busiest
// load, each CPU's time taken at the memory bus's load in that run
// (Contended; with no memory-stall share, its demand, BusyNS). Ties go to
// the first. O(loads · parameters).
func (p *Profile) Bottleneck(loads []Load) (int, float64) {
	c := p.Contended(loads)
	best, t := -1, 0.0
	for i := range loads {
		if b := c.BusyNS(p, &loads[i]); best < 0 || b > t {
			best, t = i, b
		}
	}
	return best, t
}

// DescribeLoads renders each load's demand under p in µs, marking the
// bottleneck: the view of a run that shows how close to the bound the other
// resources are.
func (p *Profile) DescribeLoads(loads []Load) string {
	b, _ := p.Bottleneck(loads)
	c := p.Contended(loads)
	var sb strings.Builder
	for i := range loads {
		mark := ""
		if i == b {
			mark = "  ← bottleneck"
		}
		l := &loads[i]
		fmt.Fprintf(&sb, "  %-22s %12.1f µs", l.Name, c.BusyNS(p, l)/1e3)
		if d := p.BusyNS(l); l.Kind == LoadCPU && c.BusyNS(p, l) > d*(1+1e-9) {
			fmt.Fprintf(&sb, " (%.1f with an idle memory bus)", d/1e3)
		}
		if l.Kind == LoadMemory && c.Utilisation > 0 {
			fmt.Fprintf(&sb, " (%.0f %% busy)", 100*c.Utilisation)
		}
		fmt.Fprintf(&sb, "%s\n", mark)
	}
	return sb.String()
}

// CPULoad returns a one-server load of q (per-operation quantities) named name.
func CPULoad(name string, q Quantities) Load {
	return Load{Name: name, Q: q, Servers: 1, Kind: LoadCPU}
}

// MemoryLoad returns the load of the machine's memory bus: q holds the bytes
// its passes over data moved (ParamMemByte).
func MemoryLoad(q Quantities) Load {
	return Load{Name: "memory", Q: q, Servers: 1, Kind: LoadMemory}
}

// AllCPUs returns the all-CPU bound of cpus: their quantities summed, shared by
// servers CPUs.
func AllCPUs(servers int, cpus ...Load) Load {
	l := Load{Name: fmt.Sprintf("all %d CPUs", servers), Servers: float64(servers), Kind: LoadCPU}
	for _, c := range cpus {
		for i, n := range c.Q {
			l.Q[i] += n
		}
		l.FixedNS += c.FixedNS
	}
	return l
}

// Scaled returns l with every quantity and its unpriced time multiplied by
// f: per page of a run, f is 1 / the run's pages.
func (l Load) Scaled(f float64) Load {
	for i := range l.Q {
		l.Q[i] *= f
	}
	l.FixedNS *= f
	return l
}
