package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
)

// explain implements `bhsim explain OP`: the operation comes first, so that
// its own flags can be parsed.
func explain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	names := namesOf(workload.ExplainOps(), func(o workload.ExplainOp) string { return o.Name })
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprintf(stdout, "usage: bhsim explain %s\n", report.ExplainHelp())
			return errHelp
		}
		return usagef("name one operation first (valid: %s)", strings.Join(names, ", "))
	}
	op, err := workload.ExplainOpByName(args[0])
	if err != nil {
		return asUsage(err)
	}
	fs := newFlags("explain " + op.Name)
	values := map[string]*string{}
	for _, a := range op.Args {
		values[a.Name] = fs.String(a.Name, a.Default, a.Usage)
	}
	var costs *report.Costs
	if op.Profile != "" {
		costs = addCostFlags(fs, op.Profile, true, nil)
	}
	pos, err := parseArgs(fs, report.ExplainHelp(), args[1:], stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("name one operation (valid: %s); %q is another", strings.Join(names, ", "), pos[0])
	}
	given := map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		if _, ok := values[f.Name]; ok {
			given[f.Name] = f.Value.String()
		}
	})
	opArgs, err := op.Parse(given)
	if err != nil {
		return asUsage(err)
	}
	prof, costDesc := (*timing.Profile)(nil), ""
	if costs != nil {
		if prof, costDesc, err = resolveCosts(costs, op.Profile); err != nil {
			return err
		}
	}
	less := "a smaller --count"
	if c := given["count"]; values["bs"] != nil && (c == "" || c == "auto") {
		less += " or a larger --bs" // with count=auto, a larger bs moves the same bytes in fewer blocks
	}
	var e workload.Explanation
	err = budgeted(ctx, stderr, "explain "+op.Name, "dd blocks", less, func(ctx context.Context, progress func(done, total int)) (err error) {
		e, err = op.Build(ctx, opArgs, prof, progress)
		return err
	})
	if err != nil {
		return err
	}
	return report.WriteExplanation(stdout, e, prof, costDesc)
}
