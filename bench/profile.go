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

// Parameters beyond the bufcache events. Values below ParamTimer are bufcache
// events; the block-layer and md parameters price the counters of the layers
// beneath the buffer cache (blk.QueueStats, md.Stats), which have no simulated
// CPU of their own: a timing model charges them to a resource (see Load).
const (
	// ParamTimer is the cost the measuring harness adds to every timed call: in
	// Tosatti's module, the ktime_get() that closes one interval and the loop
	// around it.
	ParamTimer = Param(bufcache.NumEvents) + iota
	// ParamRequest is one request through blk-mq and the disk driver:
	// allocation, dispatch, the completion interrupt and blk_mq_end_request
	// (blk.OpStats.Requests).
	ParamRequest
	// ParamMDBio is one pass of a bio through md_submit_bio and the
	// personality's mapping (md.Stats.BiosIn + Splits).
	ParamMDBio
	// ParamMemberBio is one bio md sends to a member: clone or remap,
	// submit_bio_noacct, and its completion (md.Stats.MemberBios).
	ParamMemberBio
	// ParamMDWriteBio is a redundant level's per-bio write bookkeeping:
	// md_write_start/end, the write-intent bitmap's start/end, raid10's r10bio
	// and barrier (md.Stats.WriteBios).
	ParamMDWriteBio
	// ParamStripeAttach is add_stripe_bio: one bio attached to one RAID6
	// stripe_head (md.Stats.StripeAttach).
	ParamStripeAttach
	// ParamStripe is one handle_stripe in raid5d: state analysis, biodrain,
	// ops_run_io and the stripe's release (md.Stats.Stripes).
	ParamStripe
	// ParamParityByte is one byte of RAID6 P or Q computed (md.Stats.ParityBytes).
	ParamParityByte
	// paramEnd ends the list.
	paramEnd
)

// numParams is the number of Params.
const numParams = int(paramEnd)

var extraParamNames = [...]string{"timer", "requests", "md-bios", "member-bios", "md-write-bios",
	"stripe-attaches", "stripes", "parity-bytes"}

// String returns the event's name or the extra parameter's ("timer",
// "requests", "md-bios", ...).
func (p Param) String() string {
	if p >= ParamTimer && int(p) < numParams {
		return extraParamNames[p-ParamTimer]
	}
	return bufcache.Event(p).String()
}

// ParseParam returns the Param whose String is s.
func ParseParam(s string) (Param, error) {
	for i, n := range extraParamNames {
		if n == s {
			return ParamTimer + Param(i), nil
		}
	}
	e, err := bufcache.ParseEvent(s)
	if err != nil {
		return 0, fmt.Errorf("bench: unknown parameter %q (an event name or one of %s)", s, strings.Join(extraParamNames[:], ", "))
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

// Set prices q at ns nanoseconds, with the source of the figure.
func (p *Profile) Set(q Param, ns float64, source string) { p.NS[q], p.Source[q] = ns, source }

// Scaled returns a new profile called name whose every cost is factor times
// p's, each source saying so; why explains the factor. Callers then Set the
// costs that differ in kind rather than in speed.
func (p *Profile) Scaled(name, description string, factor float64, why string) *Profile {
	s := &Profile{Name: name, Description: description}
	for i := range numParams {
		s.NS[i] = p.NS[i] * factor
		s.Source[i] = fmt.Sprintf("%s × %.3g (%s): %s", p.Name, factor, why, p.Source[i])
	}
	return s
}

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
func Profiles() []*Profile {
	return []*Profile{X86Server(), Helios4(), XuYangBoard(), X86Desktop2017()}
}

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
