package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/threads"
	"github.com/bhsim/bhsim/bench/timing"
)

// costFlags are the flags that choose the costs a command prices with: a
// built-in profile or a profile file, its built-in or its fitted costs, and
// single costs set on the command line.
type costFlags struct {
	profile, costs *string
	set            listFlag
}

// profileNames returns the built-in profiles' names.
func profileNames() string {
	var names []string
	for _, p := range timing.Profiles() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// addCostFlags adds --profile, --cost and, when withCosts, --costs to fs.
// what says which profile is the default.
func addCostFlags(fs *flag.FlagSet, what string, withCosts bool) *costFlags {
	c := &costFlags{profile: fs.String("profile", "", "hardware profile: a built-in `NAME` ("+profileNames()+") or a profile FILE as `bhsim profile show` writes it (default: "+what+")")}
	if withCosts {
		c.costs = fs.String("costs", "fitted", "a built-in profile's `costs`: fitted (as the thread measured on that machine calibrates them) or built-in (the profile's documented estimates)")
	}
	fs.Var(&c.set, "cost", "set one cost: `PARAM=NS` (nanoseconds; repeatable; bhsim profile show lists the parameters)")
	return c
}

// isFile reports whether a --profile value names a file rather than a
// built-in profile.
func isFile(v string) bool { return strings.ContainsRune(v, '/') || strings.HasSuffix(v, ".json") }

// resolve returns the profile the flags choose, def when --profile is not
// given, and what its costs are, for an output header: "fitted", "built-in",
// "from FILE", with ", N set by --cost" when any is. Errors (usage): an
// unknown profile or costs value, a file that does not load, a bad --cost.
func (c *costFlags) resolve(def string) (*timing.Profile, string, error) {
	name := *c.profile
	if name == "" {
		name = def
	}
	costs := "built-in"
	if c.costs != nil {
		costs = *c.costs
	}
	var p *timing.Profile
	var err error
	switch {
	case isFile(name):
		p, err = timing.LoadProfile(name)
		costs = "from " + name
	case costs == "fitted":
		if _, err = timing.ProfileByName(name); err == nil {
			p, err = threads.Fitted(name)
		}
	case costs == "built-in":
		p, err = timing.ProfileByName(name)
	default:
		err = fmt.Errorf("unknown costs %q (valid: fitted, built-in)", costs)
	}
	if err != nil {
		return nil, "", asUsage(err)
	}
	for _, kv := range c.set {
		k, v, ok := strings.Cut(kv, "=")
		ns, perr := strconv.ParseFloat(v, 64)
		if !ok || perr != nil {
			return nil, "", usagef("--cost %q: want PARAM=NS, e.g. bios=1500", kv)
		}
		if err := p.SetCost(k, ns, "set by --cost"); err != nil {
			return nil, "", usagef("--cost %q: %v", kv, err)
		}
	}
	if len(c.set) > 0 {
		costs += fmt.Sprintf(", %d set by --cost", len(c.set))
	}
	return p, costs, nil
}
