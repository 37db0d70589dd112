// Command bhsim runs bhsim's reproductions of the LKML threads on the model,
// sweeps a scenario over a parameter grid and explains what one operation
// costs.
//
// Usage:
//
//	bhsim reproduce [--format text|csv|json] [--profile NAME] [--plot DIR] [thread ...]
//	bhsim sweep [--scenario dd] [--machine NAME] [--profile NAME] [--fitted] [axis flags] [--format text|csv|json]
//	bhsim explain OP [--profile NAME] [--fitted] [op flags]
//
// Each command's --help lists its flags. Errors in the command line (an
// unknown thread, kernel preset, profile, format, operation, layout or flag)
// print one line naming the valid choices and exit with status 2; a failed
// run exits with status 1.
//
// # reproduce
//
// Runs each named thread (all by default: alloc, blocksize, iomap, lru), in
// parallel, each on the profile of the machine it was measured on unless
// --profile names another; the output does not depend on the parallelism.
// Text shows each published table beside the simulated one, every cell's
// error and whether the calibration fitted it or it is a prediction, then the
// calibration and the thread's own account of what the model counted.
//
// --format csv prints one row per cell, with the header
//
//	table,row,column,published,simulated,error,fitted
//
// where table is the table id, error is (simulated − published) / published
// and fitted is true or false.
//
// --format json prints the following shape, which other tools read and which
// stays stable (fields may be added, none removed or renamed):
//
//	{"tables": [{"id": "blocksize-helios4" | "iomap-xu-yang" | "alloc-sean-fu" | "lru-tosatti",
//	             "title": string, "source": string, "unit": string,
//	             "cells": [{"row": string, "column": string, "published": number,
//	                        "simulated": number, "fitted": bool}]}]}
//
// --plot DIR writes one chart per table, DIR/<id>.svg and DIR/<id>.png
// (DIR is created if missing): the Helios4 table as bars per column and
// kernel, published beside simulated; Xu Yang's MB/s against dd's bs, one
// line per kernel, published dashed and simulated solid; the bh LRU against
// the slow path by distinct blocks and by index height, beside the two
// published cells; any other table as bars of published against simulated.
//
// # sweep
//
// Runs a scenario on every cell of a parameter grid, in parallel on all
// cores (results do not depend on it), and prints one row per cell; a
// progress line goes to stderr when the sweep takes over a second and stderr
// is a terminal. The dd scenario's axes are the kernel preset, the block
// size (a set_init_blocksize policy or a fixed size), the device layout,
// dd's bs, the CPUs, the run's length (count or size) and the direction; each
// row gives the simulated MB/s, bios per page, requests per MiB and the
// bottleneck resource. --format json prints
//
//	{"scenario": "dd", "machine": string, "profile": string,
//	 "rows": [{"kernel": string, "blocksize": string, "layout": string, "bs": number,
//	           "cpus": number, "count": number, "op": "write" | "read",
//	           "block_size": number, "mbps": number, "bios_per_page": number,
//	           "requests_per_mib": number, "bottleneck": string}]}
//
// # explain
//
// Runs one operation on the model and prints its event ledger under a
// profile: per resource, each event's count per operation × its cost =
// simulated nanoseconds, and for a streaming operation the bottleneck and the
// throughput it allows. Operations: find-get-block-hit, find-get-block-miss,
// find-get-block-slow, write-page, iomap-write-page.
//
// --fitted, for sweep and explain, first calibrates the profile as the
// thread measured on that machine does (seconds: it runs the reproduction).
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usage is the one-line synopsis printed for a missing or unknown command.
const usage = "usage: bhsim reproduce|sweep|explain [flags] (bhsim COMMAND --help for its flags)"

// run executes the command line args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	switch args[0] {
	case "reproduce":
		return reproduce(args[1:], stdout, stderr)
	case "sweep":
		return sweep(args[1:], stdout, stderr)
	case "explain":
		return explain(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "bhsim: unknown command %q (valid: reproduce, sweep, explain)\n", args[0])
		return 2
	}
}
