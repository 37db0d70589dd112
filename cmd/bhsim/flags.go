package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// newFlags returns a quiet flag set for command name: parseArgs reports its
// errors and prints its help.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseArgs parses args with fs, flags before or after the positional
// arguments, and returns the positional ones. A bad flag is reported on
// stderr as one line; --help prints "usage: bhsim NAME synopsis" and the
// flags on stdout. Either way ok is false and status is the command's exit
// status.
func parseArgs(fs *flag.FlagSet, synopsis string, args []string, stdout, stderr io.Writer) (pos []string, status int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(stdout, "usage: bhsim %s %s\n\nflags:\n", fs.Name(), synopsis)
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return nil, 0, false
			}
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
			fmt.Fprintf(stderr, "bhsim %s: %v (flags: %s; --help explains them)\n", fs.Name(), err, strings.Join(names, ", "))
			return nil, 2, false
		}
		if fs.NArg() == 0 {
			return pos, 0, true
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// fail reports err as one line from command name and returns status 2.
func fail(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "bhsim %s: %s\n", name, strings.TrimPrefix(err.Error(), "bench: "))
	return 2
}

// checkFormat returns an error naming the valid formats unless f is one.
func checkFormat(f string) error {
	switch f {
	case "text", "csv", "json":
		return nil
	}
	return fmt.Errorf("unknown format %q (valid: text, csv, json)", f)
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
