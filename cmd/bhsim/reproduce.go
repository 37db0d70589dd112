package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/bhsim/bhsim/bench"
)

// threadResult is what a reproduced thread gives the command: its text, its
// tables, the profile as its calibration fitted it, and the charts it draws
// itself (a table without one gets the default chart for its id).
type threadResult struct {
	text    string
	tables  []bench.Table
	profile *bench.Profile
	figures []figure
}

// thread is one reproducible LKML thread, with the hardware profile of the
// machine it was measured on.
type thread struct {
	profile string
	run     func(p *bench.Profile) (*threadResult, error)
}

// threads are the reproductions available, by name.
var threads = map[string]thread{
	"lru": {profile: "x86-server", run: func(p *bench.Profile) (*threadResult, error) {
		t, err := bench.ReproduceLRU(p)
		if err != nil {
			return nil, err
		}
		fig, err := lruFigure(t)
		if err != nil {
			return nil, err
		}
		return &threadResult{text: t.Text(), tables: []bench.Table{t.Table}, profile: t.Profile, figures: []figure{fig}}, nil
	}},
	"alloc": {profile: "x86-2017", run: func(p *bench.Profile) (*threadResult, error) {
		t, err := bench.ReproduceAlloc(p, bench.DefaultAllocFit(), 1)
		if err != nil {
			return nil, err
		}
		return &threadResult{text: t.Text(), tables: []bench.Table{t.Table}, profile: t.Profile}, nil
	}},
	"iomap": {profile: "xu-yang-board", run: func(p *bench.Profile) (*threadResult, error) {
		t, err := bench.ReproduceIomap(p, bench.DefaultIomapFit(), 1)
		if err != nil {
			return nil, err
		}
		return &threadResult{text: t.Text(), tables: []bench.Table{t.Table}, profile: t.Profile}, nil
	}},
	"blocksize": {profile: "helios4", run: func(p *bench.Profile) (*threadResult, error) {
		t, err := bench.ReproduceBlocksize(p, bench.DefaultBlocksizeFit(), 2000)
		if err != nil {
			return nil, err
		}
		return &threadResult{text: t.Text(), tables: []bench.Table{t.Table}, profile: t.Profile}, nil
	}},
}

// threadNames returns the threads' names, sorted.
func threadNames() []string {
	names := make([]string, 0, len(threads))
	for n := range threads {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// runThreads runs the named threads at once, each under the profile called
// profile or, when that is empty, its own, and returns their results in
// names' order (each thread has its own machines and profile copy, so the
// results do not depend on the parallelism). Errors: the first failed thread
// in names' order, prefixed with its name.
func runThreads(names []string, profile string) ([]*threadResult, error) {
	results := make([]*threadResult, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := profile
			if name == "" {
				name = threads[n].profile
			}
			p, err := bench.ProfileByName(name)
			if err == nil {
				results[i], err = threads[n].run(p)
			}
			if err == nil {
				results[i].text = fmt.Sprintf("== %s (profile %s)\n%s", n, p.Name, results[i].text)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", names[i], err)
		}
	}
	return results, nil
}

// fittedProfile returns the built-in profile called name, calibrated by the
// thread measured on that machine when fit is set. Errors: an unknown
// profile (usage), or a failed thread, or fit asked of a profile no thread
// calibrates.
func fittedProfile(name string, fit bool) (p *bench.Profile, usage bool, err error) {
	if p, err = bench.ProfileByName(name); err != nil || !fit {
		return p, err != nil, err
	}
	var owners []string
	for _, n := range threadNames() {
		if threads[n].profile == name {
			owners = append(owners, n)
		}
	}
	if len(owners) == 0 {
		return nil, true, fmt.Errorf("no thread calibrates profile %q", name)
	}
	res, err := runThreads(owners[:1], name)
	if err != nil {
		return nil, false, err
	}
	return res[0].profile, false, nil
}

// reproduce implements `bhsim reproduce`.
func reproduce(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("reproduce")
	synopsis := "[--format text|csv|json] [--profile NAME] [--plot DIR] [thread ...]\n\n" +
		"Reproduces the named LKML threads (" + strings.Join(threadNames(), ", ") + "; all by default): each published\n" +
		"table beside the simulated one, every cell fitted or predicted, with its error."
	format := fs.String("format", "text", "output `format`: text, csv or json")
	profile := fs.String("profile", "", "hardware profile `NAME` for every thread (default: each thread's own)")
	plotDir := fs.String("plot", "", "write one SVG and one PNG chart per table into `DIR` (created if missing)")
	pos, status, ok := parseArgs(fs, synopsis, args, stdout, stderr)
	if !ok {
		return status
	}
	if err := checkFormat(*format); err != nil {
		return fail(stderr, "reproduce", err)
	}
	if *profile != "" {
		if _, err := bench.ProfileByName(*profile); err != nil {
			return fail(stderr, "reproduce", err)
		}
	}
	var names []string
	for _, n := range pos {
		if _, ok := threads[n]; !ok {
			return fail(stderr, "reproduce", fmt.Errorf("unknown thread %q (valid: %s)", n, strings.Join(threadNames(), ", ")))
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		names = threadNames()
	}
	if *plotDir != "" { // before the long runs: a bad directory fails at once
		if err := os.MkdirAll(*plotDir, 0o755); err != nil {
			fmt.Fprintf(stderr, "bhsim reproduce: %v\n", err)
			return 1
		}
	}
	results, err := runThreads(names, *profile)
	if err != nil {
		fmt.Fprintf(stderr, "bhsim reproduce %v\n", err)
		return 1
	}
	var tables []bench.Table
	var texts []string
	for _, r := range results {
		tables = append(tables, r.tables...)
		texts = append(texts, r.text)
	}
	if *plotDir != "" {
		if err := writeFigures(*plotDir, results); err != nil {
			fmt.Fprintf(stderr, "bhsim reproduce: %v\n", err)
			return 1
		}
	}
	switch *format {
	case "json":
		err = writeJSON(stdout, struct {
			Tables []bench.Table `json:"tables"`
		}{tables})
	case "csv":
		err = writeTablesCSV(stdout, tables)
	default:
		_, err = fmt.Fprint(stdout, strings.Join(texts, "\n"))
	}
	if err != nil {
		fmt.Fprintf(stderr, "bhsim reproduce: %v\n", err)
		return 1
	}
	return 0
}

// writeJSON writes v indented, as every JSON output of bhsim is.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// csvFloat renders a number for CSV: the shortest form that reads back
// exactly.
func csvFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// writeTablesCSV writes one row per cell of tables, after the header.
func writeTablesCSV(w io.Writer, tables []bench.Table) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"table", "row", "column", "published", "simulated", "error", "fitted"}); err != nil {
		return err
	}
	for _, t := range tables {
		for _, c := range t.Cells {
			if err := cw.Write([]string{t.ID, c.Row, c.Column, csvFloat(c.Published), csvFloat(c.Simulated),
				csvFloat(c.RelError()), strconv.FormatBool(c.Fitted)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
