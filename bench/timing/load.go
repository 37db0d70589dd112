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
}

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

// Bottleneck returns the index of the busiest of loads under p and its time,
// or (-1, 0) when loads is empty. Ties go to the first. O(loads · parameters).
func (p *Profile) Bottleneck(loads []Load) (int, float64) {
	best, t := -1, 0.0
	for i := range loads {
		if b := p.BusyNS(&loads[i]); best < 0 || b > t {
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
	var sb strings.Builder
	for i := range loads {
		mark := ""
		if i == b {
			mark = "  ← bottleneck"
		}
		fmt.Fprintf(&sb, "  %-22s %12.1f µs%s\n", loads[i].Name, p.BusyNS(&loads[i])/1e3, mark)
	}
	return sb.String()
}

// CPULoad returns a one-server load of q (per-operation quantities) named name.
func CPULoad(name string, q Quantities) Load {
	return Load{Name: name, Q: q, Servers: 1}
}

// AllCPUs returns the all-CPU bound of cpus: their quantities summed, shared by
// servers CPUs.
func AllCPUs(servers int, cpus ...Load) Load {
	l := Load{Name: fmt.Sprintf("all %d CPUs", servers), Servers: float64(servers)}
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
