package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/bhsim/bhsim/bench"
)

// thread is one reproducible LKML thread, with the hardware profile of the
// machine it was measured on.
type thread struct {
	profile string
	run     func(p *bench.Profile) (text string, tables []bench.Table, err error)
}

// threads are the reproductions available, by name.
var threads = map[string]thread{
	"lru": {profile: "x86-server", run: func(p *bench.Profile) (string, []bench.Table, error) {
		t, err := bench.ReproduceLRU(p)
		if err != nil {
			return "", nil, err
		}
		return t.Text(), []bench.Table{t.Table}, nil
	}},
	"iomap": {profile: "xu-yang-board", run: func(p *bench.Profile) (string, []bench.Table, error) {
		t, err := bench.ReproduceIomap(p, bench.DefaultIomapFit(), 1)
		if err != nil {
			return "", nil, err
		}
		return t.Text(), []bench.Table{t.Table}, nil
	}},
	"blocksize": {profile: "helios4", run: func(p *bench.Profile) (string, []bench.Table, error) {
		t, err := bench.ReproduceBlocksize(p, bench.DefaultBlocksizeFit(), 2000)
		if err != nil {
			return "", nil, err
		}
		return t.Text(), []bench.Table{t.Table}, nil
	}},
}

func threadNames() []string {
	names := make([]string, 0, len(threads))
	for n := range threads {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// reproduce implements `bhsim reproduce`.
func reproduce(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.String("format", "text", "output format: text or json")
	profile := fs.String("profile", "", "hardware profile (default: each thread's own)")
	var names []string
	for { // flags may come before or after thread names
		if err := fs.Parse(args); err != nil {
			fmt.Fprintf(stderr, "bhsim reproduce: %v (flags: --format text|json, --profile NAME)\n", err)
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		if n := fs.Arg(0); !slices.Contains(names, n) {
			names = append(names, n)
		}
		args = fs.Args()[1:]
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "bhsim reproduce: unknown format %q (valid: text, json)\n", *format)
		return 2
	}
	if *profile != "" {
		if _, err := bench.ProfileByName(*profile); err != nil {
			fmt.Fprintf(stderr, "bhsim reproduce: %v\n", err)
			return 2
		}
	}
	if len(names) == 0 {
		names = threadNames()
	}
	for _, n := range names {
		if _, ok := threads[n]; !ok {
			fmt.Fprintf(stderr, "bhsim reproduce: unknown thread %q (valid: %s)\n", n, strings.Join(threadNames(), ", "))
			return 2
		}
	}
	var texts []string
	var tables []bench.Table
	for _, n := range names {
		name := *profile
		if name == "" {
			name = threads[n].profile
		}
		p, err := bench.ProfileByName(name)
		if err != nil {
			fmt.Fprintf(stderr, "bhsim reproduce %s: %v\n", n, err)
			return 1
		}
		text, tt, err := threads[n].run(p)
		if err != nil {
			fmt.Fprintf(stderr, "bhsim reproduce %s: %v\n", n, err)
			return 1
		}
		texts = append(texts, fmt.Sprintf("== %s (profile %s)\n%s", n, p.Name, text))
		tables = append(tables, tt...)
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Tables []bench.Table `json:"tables"`
		}{tables}); err != nil {
			fmt.Fprintf(stderr, "bhsim reproduce: %v\n", err)
			return 1
		}
		return 0
	}
	fmt.Fprint(stdout, strings.Join(texts, "\n"))
	return 0
}
