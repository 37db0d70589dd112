package bench

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bhsim/bhsim/bufcache"
)

// Param names one primitive cost of a Profile: an event's price, or the
// measuring harness's own cost per timed call (ParamTimer).
type Param int

// ParamTimer is the cost the measuring harness adds to every timed call: in
// Tosatti's module, the ktime_get() that closes one interval and the loop around
// it. Values below it are bufcache events.
const ParamTimer = Param(bufcache.NumEvents)

// numParams is the number of Params.
const numParams = int(ParamTimer) + 1

// String returns the event's name or "timer".
func (p Param) String() string {
	if p == ParamTimer {
		return "timer"
	}
	return bufcache.Event(p).String()
}

// ParseParam returns the Param whose String is s.
func ParseParam(s string) (Param, error) {
	if s == "timer" {
		return ParamTimer, nil
	}
	e, err := bufcache.ParseEvent(s)
	if err != nil {
		return 0, fmt.Errorf("bench: unknown parameter %q (an event name or \"timer\")", s)
	}
	return Param(e), nil
}

// Profile is a hardware profile of primitive CPU costs: what one occurrence of
// each bufcache event costs in nanoseconds on a given machine, with the source
// of each figure. Simulated time is the dot product of an operation's event
// counts with these costs, so it is the same on every machine that runs the
// model.
type Profile struct {
	Name        string
	Description string
	// NS is the cost of each Param in nanoseconds.
	NS [numParams]float64
	// Source says where each cost comes from: a documented figure or a
	// measurement, or "fitted: ..." once Calibrate has set it.
	Source [numParams]string
}

// SimNS returns the simulated nanoseconds of work that recorded ev, plus timed
// calls of harness overhead.
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

// Describe renders the profile's priced parameters with their sources.
func (p *Profile) Describe() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "profile %s: %s\n", p.Name, p.Description)
	for i := range numParams {
		if p.NS[i] == 0 && p.Source[i] == "" {
			continue
		}
		fmt.Fprintf(&sb, "  %-18s %7.2f ns  %s\n", Param(i), p.NS[i], p.Source[i])
	}
	return sb.String()
}

// Profiles returns the built-in profiles, freshly built (callers may modify them).
func Profiles() []*Profile { return []*Profile{X86Server()} }

// ProfileByName returns the built-in profile called name.
func ProfileByName(name string) (*Profile, error) {
	var names []string
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("bench: unknown profile %q (valid: %s)", name, strings.Join(names, ", "))
}
