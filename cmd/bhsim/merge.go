package main

import (
	"context"
	"io"

	"github.com/bhsim/bhsim/bench/report"
)

// mergeSynopsis is `bhsim merge`'s help text.
const mergeSynopsis = `FILE...

Joins the outputs of a run split over machines with --shard K/N (sweep, or
run over a list of traces): the N shards' files, all JSON or all CSV, in any
order. It prints what the run unsplit prints, byte for byte, and refuses
files that are not the N shards of one run (docs/at-scale.md).`

// merge implements `bhsim merge`.
func merge(_ context.Context, args []string, stdout, _ io.Writer) error {
	pos, err := parseArgs(newFlags("merge"), mergeSynopsis, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("name the shards' files (each the JSON or CSV of one --shard K/N)")
	}
	return asUsage(report.MergeFiles(stdout, pos...))
}
