package main

import (
	"context"
	"flag"
	"io"
	"strings"

	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/timing"
)

// profileSynopsis is the first lines of `bhsim profile --help`.
const profileSynopsis = `list | show NAME [--costs built-in|fitted]

list prints the built-in profiles; show prints one as JSON (every cost in
nanoseconds with its source; a fitted cost's source gives its prior), the
form --profile FILE reads back.`

// profileCmd implements `bhsim profile`.
func profileCmd(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("profile")
	costs := fs.String("costs", "built-in", "show the profile's `costs`: built-in (its documented estimates) or fitted (as its thread calibrates them)")
	pos, err := parseArgs(fs, profileSynopsis, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 1 && pos[0] == "list":
		return report.WriteProfiles(stdout, timing.Profiles())
	case len(pos) == 2 && pos[0] == "show":
		if report.IsProfileFile(pos[1]) {
			return usagef("show takes a built-in profile's name (valid: %s)", profileNames())
		}
		p, _, err := resolveCosts(&report.Costs{Profile: pos[1], Costs: *costs, SetBy: "--cost"}, "")
		if err != nil {
			return err
		}
		return report.WriteJSON(stdout, p)
	}
	return usagef("want list or show NAME (profiles: %s)", profileNames())
}

// profileNames returns the built-in profiles' names.
func profileNames() string {
	return strings.Join(namesOf(timing.Profiles(), func(p *timing.Profile) string { return p.Name }), ", ")
}

// addCostFlags adds the flags that choose the costs a command prices with
// to fs: --profile (a built-in profile or a profile file), --cost (single
// costs) and, when withCosts, --costs (a built-in profile's built-in or
// fitted costs). They set c (a new one when nil), which it returns; what
// says which profile is the default.
func addCostFlags(fs *flag.FlagSet, what string, withCosts bool, c *report.Costs) *report.Costs {
	if c == nil {
		c = new(report.Costs)
	}
	*c = report.Costs{Costs: "built-in", SetBy: "--cost"}
	fs.StringVar(&c.Profile, "profile", "", "hardware profile: a built-in `NAME` ("+profileNames()+") or a profile FILE as `bhsim profile show` writes it (default: "+what+")")
	if withCosts {
		fs.StringVar(&c.Costs, "costs", "fitted", "a built-in profile's `costs`: fitted (as the thread measured on that machine calibrates them) or built-in (the profile's documented estimates)")
	}
	fs.Var((*listFlag)(&c.Set), "cost", "set one cost: `PARAM=NS` (nanoseconds; repeatable; bhsim profile show lists the parameters)")
	return c
}

// resolveCosts returns the profile the cost flags c choose, def when
// --profile is not given, and what its costs are, for an output header
// (report.Costs.Resolve). Errors (usage): an unknown profile or costs value
// (--costs "" too, which report.Costs would take for built-in), a file that
// does not load, a bad --cost.
func resolveCosts(c *report.Costs, def string) (*timing.Profile, string, error) {
	if c.Costs == "" {
		return nil, "", usagef("unknown costs \"\" (valid: fitted, built-in)")
	}
	p, desc, err := c.Resolve(def)
	return p, desc, flagError(err)
}
