package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
)

// WriteProfiles lists profiles as `bhsim profile list` does: one line each,
// its name and description. Errors: w fails. O(profiles).
func WriteProfiles(w io.Writer, profiles []*timing.Profile) error {
	for _, p := range profiles {
		if _, err := fmt.Fprintf(w, "%-14s %s\n", p.Name, p.Description); err != nil {
			return err
		}
	}
	return nil
}

// WriteExplanation prints an explained operation as `bhsim explain` does:
// when p prices it, a first line "costs: COSTS (profile NAME)" (costs as
// Costs.Resolve describes them), then its ledger under p (e.Text). Errors:
// w fails.
func WriteExplanation(w io.Writer, e workload.Explanation, p *timing.Profile, costs string) error {
	text := e.Text(p)
	if p != nil {
		text = fmt.Sprintf("costs: %s (profile %s)\n", costs, p.Name) + text
	}
	_, err := fmt.Fprint(w, text)
	return err
}

// WriteExplainOps lists the operations bhsim explain builds, as its help
// does: each operation's name and summary, then each of its arguments as
// the flag that sets it, with its default and meaning, and the profile
// that prices it. Errors: w fails. O(operations · arguments).
func WriteExplainOps(w io.Writer, ops []workload.ExplainOp) error {
	for _, op := range ops {
		if _, err := fmt.Fprintf(w, "  %s: %s\n", op.Name, op.Summary); err != nil {
			return err
		}
		for _, a := range op.Args {
			fmt.Fprintf(w, "      --%s (default %s): %s\n", a.Name, a.Default, strings.ReplaceAll(a.Usage, "`", ""))
		}
		if op.Profile != "" {
			fmt.Fprintf(w, "      profile %s\n", op.Profile)
		}
	}
	return nil
}
