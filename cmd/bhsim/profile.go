package main

import (
	"fmt"
	"io"

	"github.com/bhsim/bhsim/bench/timing"
)

// profileSynopsis is the first lines of `bhsim profile --help`.
const profileSynopsis = `list | show NAME [--costs built-in|fitted]

list prints the built-in profiles; show prints one as JSON (every cost in
nanoseconds with its source; a fitted cost's source gives its prior), the
form --profile FILE reads back.`

// profileCmd implements `bhsim profile`.
func profileCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("profile")
	costs := fs.String("costs", "built-in", "show the profile's `costs`: built-in (its documented estimates) or fitted (as its thread calibrates them)")
	pos, err := parseArgs(fs, profileSynopsis, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 1 && pos[0] == "list":
		for _, p := range timing.Profiles() {
			if _, err := fmt.Fprintf(stdout, "%-14s %s\n", p.Name, p.Description); err != nil {
				return err
			}
		}
		return nil
	case len(pos) == 2 && pos[0] == "show":
		c := costFlags{profile: &pos[1], costs: costs}
		if isFile(pos[1]) {
			return usagef("show takes a built-in profile's name (valid: %s)", profileNames())
		}
		p, _, err := c.resolve("")
		if err != nil {
			return err
		}
		return writeJSON(stdout, p)
	}
	return usagef("want list or show NAME (profiles: %s)", profileNames())
}
