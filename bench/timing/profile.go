package timing

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/internal/enum"
)

// Profile is a hardware profile of primitive CPU costs: what one occurrence of
// each bufcache event costs in nanoseconds on a given machine, with the source
// of each figure. Simulated time is the dot product of an operation's event
// counts with these costs, so it is the same on every machine that runs the
// model.
type Profile struct {
	Name        string
	Description string
	// NS is the cost of each Param in nanoseconds.
	NS [NumParams]float64
	// Source says where each cost comes from: a documented figure or a
	// measurement, or "fitted: ..." once Calibrate has set it.
	Source [NumParams]string
}

// SimNS returns the simulated CPU nanoseconds of the work that recorded ev,
// plus timed calls of harness overhead (timed ≥ 0: a count of calls): the
// events priced, and nothing else. A disk's service time (blk.Model, summed
// by blk.Queue.BusyNS) and any wait for it are not in it: for a call on one
// CPU that waits for its I/O, such as a synchronous fsync, the total is the
// two added (bufcache's Example_writeSyncPrice); a run of several CPUs and
// a disk overlaps them (engine.Run, Bottleneck). O(events).
func (p *Profile) SimNS(ev bufcache.Counters, timed float64) float64 {
	t := timed * p.NS[ParamTimer]
	for e, n := range ev {
		t += float64(n) * p.NS[e]
	}
	return t
}

// Ledger lists, for work that recorded ev, each priced event with its count,
// unit cost and total, most expensive first: the "explain" view of one
// operation.
func (p *Profile) Ledger(ev bufcache.Counters, timed float64) []LedgerLine {
	var lines []LedgerLine
	for e, n := range ev {
		if n != 0 {
			lines = append(lines, LedgerLine{Param(e), float64(n), p.NS[e]})
		}
	}
	if timed != 0 {
		lines = append(lines, LedgerLine{ParamTimer, timed, p.NS[ParamTimer]})
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].Total() > lines[j].Total() })
	return lines
}

// LedgerLine is one line of a Ledger.
type LedgerLine struct {
	Param Param
	Count float64
	NS    float64 // per occurrence
}

// Total is Count × NS.
func (l LedgerLine) Total() float64 { return l.Count * l.NS }

// Set prices q at ns nanoseconds, with the source of the figure: for a
// cost known to be good (a constant, a checked measurement). It panics on
// a cost SetCost would refuse (negative, NaN, above 1e15 ns; a memory-stall
// share outside [0, 1)), which would make every figure of the profile
// meaningless; SetCost returns that as an error.
func (p *Profile) Set(q Param, ns float64, source string) {
	if err := checkCost(q, ns); err != nil {
		panic(fmt.Sprintf("timing: Profile.Set(%s): %v", q, err))
	}
	p.NS[q], p.Source[q] = ns, source
}

// Scaled returns a new profile called name whose every cost is factor times
// p's, each source saying so (the memory-stall share, not a cost, is p's);
// why explains the factor. Callers then Set the
// costs that differ in kind rather than in speed. It panics unless factor
// is positive and finite and every scaled cost one Set takes.
func (p *Profile) Scaled(name, description string, factor float64, why string) *Profile {
	if !(factor > 0) || math.IsInf(factor, 1) {
		panic(fmt.Sprintf("timing: Profile.Scaled by %v: want a positive, finite factor", factor))
	}
	s := &Profile{Name: name, Description: description}
	for i := range NumParams {
		if err := checkCost(Param(i), p.NS[i]*factor); err != nil && Param(i) != ParamMemStall {
			panic(fmt.Sprintf("timing: Profile.Scaled by %v: %s: %v", factor, Param(i), err))
		}
		s.NS[i] = p.NS[i] * factor
		s.Source[i] = fmt.Sprintf("%s × %.3g (%s): %s", p.Name, factor, why, p.Source[i])
	}
	s.NS[ParamMemStall], s.Source[ParamMemStall] = p.NS[ParamMemStall], p.Source[ParamMemStall] // a share, not a cost: the callers set their own
	return s
}

// Describe renders the profile's priced parameters with their sources.
func (p *Profile) Describe() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "profile %s: %s\n", p.Name, p.Description)
	for i := range NumParams {
		if p.NS[i] == 0 && p.Source[i] == "" {
			continue
		}
		fmt.Fprintf(&sb, "  %-18s %7.2f %s  %s\n", Param(i), p.NS[i], Param(i).Unit(), p.Source[i])
	}
	return sb.String()
}

// Profiles returns the built-in profiles, freshly built (callers may modify them).
func Profiles() []*Profile {
	return []*Profile{X86Server(), Helios4(), IMX8Board(), X86Desktop2017()}
}

// ProfileByName returns the built-in profile called name.
func ProfileByName(name string) (*Profile, error) {
	return enum.Find("timing", "profile", Profiles(), func(p *Profile) string { return p.Name }, name)
}
