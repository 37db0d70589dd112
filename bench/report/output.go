package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/bhsim/bhsim/bench/scenario"
)

// The versions of the outputs other tools read (docs/output-schema.md). A
// version changes when a field is renamed, removed or changes meaning.
const (
	// ReproduceSchema names the JSON of a set of reproductions (Reproduce).
	ReproduceSchema = "bhsim-reproduce/1"
	// ReproduceCSVSchema names the CSV of Reproduce.WriteCSV.
	ReproduceCSVSchema = "bhsim-reproduce-csv/1"
	// SweepSchema names the JSON of a dd sweep (Sweep).
	SweepSchema = "bhsim-sweep/2"
	// SweepCSVSchema names the CSV of Sweep.WriteCSV.
	SweepCSVSchema = "bhsim-sweep-csv/2"
	// ValidateSchema names the JSON of the model set beside the kernel
	// (Validation).
	ValidateSchema = "bhsim-validate/1"
	// ResultCSVSchema names the CSV of a scenario's result (WriteResultCSV).
	ResultCSVSchema = "bhsim-result-csv/1"
	// RunCSVSchema names the CSV of a workload's distributions
	// (WriteRunCSV).
	RunCSVSchema = "bhsim-run-dist-csv/1"
)

// Tool is the identity of the binary that wrote an output, as every
// versioned JSON output carries it ("tool"); the scenario package's type,
// so that a scenario result carries the same block.
type Tool = scenario.Tool

// Version and Revision, when set at link time, name the binary's version
// and VCS revision where the build information has none: a binary built
// from a checkout with -buildvcs=false (or outside a repository) has
// version "(devel)" and no revision. Set them with
//
//	go build -ldflags "-X github.com/bhsim/bhsim/bench/report.Version=v0.1.0 -X github.com/bhsim/bhsim/bench/report.Revision=$(git rev-parse HEAD)" ./cmd/bhsim
var (
	Version  string
	Revision string
)

// CurrentTool returns the running binary's identity: named bhsim, with
// Version if set at link time, else the main module's version from the
// build information (runtime/debug.ReadBuildInfo: "v1.2.0" for `go install
// …@v1.2.0`, "(devel)" for a checkout), and the VCS revision the go command
// stamped, else Revision. O(build settings).
func CurrentTool() Tool {
	bi, ok := debug.ReadBuildInfo()
	return toolOf(bi, ok, Version, Revision)
}

// toolOf is CurrentTool from given build information and link-time values.
func toolOf(bi *debug.BuildInfo, ok bool, version, revision string) Tool {
	t := Tool{Name: "bhsim", Version: "(unknown)", Go: runtime.Version()}
	if ok {
		t.Version = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				t.Revision = s.Value
			case "vcs.modified":
				t.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		t.Version = version
	}
	if t.Revision == "" {
		t.Revision = revision
	}
	return t
}

// WriteJSON writes v as JSON indented by two spaces, with a final newline,
// as every JSON output of bhsim is. Errors: v does not encode, or w fails.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteJSONFile writes v as WriteJSON does to the file called name,
// created or truncated (a profile in the form timing.LoadProfile reads).
// Errors: the file cannot be written, v does not encode.
func WriteJSONFile(name string, v any) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	err = WriteJSON(f, v)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Num renders a number as every CSV output of bhsim does: the shortest
// decimal that reads back exactly ("0.1", "1e+21").
func Num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// WriteCSV writes a CSV of header and rows, each with a first column
// "schema" that holds schema on every row, as every CSV output of bhsim is
// (RFC 4180, quoted where needed). Errors: w fails.
func WriteCSV(w io.Writer, schema string, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{"schema"}, header...)); err != nil {
		return err
	}
	for _, r := range rows {
		if err := cw.Write(append([]string{schema}, r...)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// errWriter keeps the first write error, so that a long print checks once.
type errWriter struct {
	w   io.Writer
	err error
}

// printf writes unless an earlier write failed.
func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
