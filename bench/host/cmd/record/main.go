// Command record runs scenarios on the host kernel and writes their results
// as golden JSON files, the recorded kernel results the model is compared
// with. It needs root, loop devices and tracefs (see package host):
//
//	go run ./bench/host/cmd/record -runs 3 -out testdata/kernel/6.18 testdata/scenarios/*.scn
//
// With -out it first measures the loop disk the scenarios run on
// (host.MeasureLoopDisk) and writes it beside them as disk/loop.json
// (scenario.LoopDiskFile), the model's disk when validate times the
// recording; the directory's *.json stay the results. With -print it writes one
// result to standard output instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bhsim/bhsim/bench/host"
	"github.com/bhsim/bhsim/bench/scenario"
)

func main() {
	runs := flag.Int("runs", 3, "runs per scenario; counters record min..max over them")
	out := flag.String("out", "", "directory for NAME.json files (created)")
	print := flag.Bool("print", false, "print each result to standard output instead of writing files")
	dump := flag.String("trace", "", "append each run's raw trace text to this file")
	diskRuns := flag.Int("disk-runs", host.LoopDiskRuns, "with -out, first measure the loop disk over this many fresh devices and write "+scenario.LoopDiskFile+" (0: do not)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: record [-runs N] (-out DIR | -print) SCENARIO.scn...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || (*out == "") == !*print {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Args(), *runs, *out, *print, *dump, *diskRuns); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

func run(files []string, runs int, out string, print bool, dump string, diskRuns int) error {
	if err := host.Check(); err != nil {
		return err
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
	}
	if out != "" && diskRuns > 0 {
		l, err := host.MeasureLoopDisk(context.Background(), diskRuns)
		if err != nil {
			return err
		}
		b, err := l.Encode()
		if err != nil {
			return err
		}
		dst := filepath.Join(out, filepath.FromSlash(scenario.LoopDiskFile))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s: %s\n", dst, l)
	}
	opts := host.Options{Runs: runs}
	if dump != "" {
		f, err := os.OpenFile(dump, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.TraceDump = f
	}
	for _, file := range files {
		s, err := scenario.ParseFile(file)
		if err != nil {
			return err
		}
		r, err := host.Run(context.Background(), s, opts)
		if err != nil {
			return err
		}
		b, err := r.Encode()
		if err != nil {
			return err
		}
		if print {
			os.Stdout.Write(b)
			continue
		}
		dst := filepath.Join(out, s.Name+".json")
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s: %d ops, %d counters, varied %v\n", dst, len(r.Ops), len(r.Total), r.Varied)
	}
	return nil
}
