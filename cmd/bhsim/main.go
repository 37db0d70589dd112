// Command bhsim runs bhsim's reproductions of the LKML threads on the model.
//
// Usage:
//
//	bhsim reproduce [--format text|json] [--profile NAME] [thread ...]
//
// Threads reproduced so far: lru (the per-CPU buffer_head LRU, seed 004). With
// no thread named, every reproduced thread runs. Errors in the command line
// print one line naming the valid choices and exit with status 2.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: bhsim reproduce [--format text|json] [--profile NAME] [thread ...]")
		return 2
	}
	switch args[0] {
	case "reproduce":
		return reproduce(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "bhsim: unknown command %q (valid: reproduce)\n", args[0])
		return 2
	}
}
