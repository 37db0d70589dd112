package main

import (
	"fmt"
	"io"

	"github.com/bhsim/bhsim/bench/host"
)

// cleanSynopsis is `bhsim clean`'s help text.
const cleanSynopsis = `

Removes what host runs (run --on host, validate --on host, calibrate
--host) left behind when their process was killed with SIGKILL, which no
handler sees: their loop devices, tracing instances, mounts and private
directories, each named for the process that made it. Only those of
processes that no longer run are removed; nothing else is touched. Needs
root, loop devices and tracefs, as the runs do; without them it says what
is missing and does nothing. Prints what it removed.`

// clean implements `bhsim clean`.
func clean(args []string, stdout, _ io.Writer) error {
	fs := newFlags("clean")
	pos, err := parseArgs(fs, cleanSynopsis, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("clean takes no arguments, got %d", len(pos))
	}
	if err := host.Check(); err != nil {
		_, err := fmt.Fprintf(stdout, "clean: skipped: %v\n", err)
		return err
	}
	removed, err := host.CleanStale()
	for _, r := range removed {
		if _, werr := fmt.Fprintf(stdout, "removed %s\n", r); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if len(removed) == 0 {
		_, err = fmt.Fprintln(stdout, "clean: nothing left behind by a dead run")
	}
	return err
}
