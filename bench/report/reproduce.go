package report

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/bhsim/bhsim/bench/threads"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/internal/fanout"
)

// ThreadsNamed returns the threads called names (threads.ByName), each
// once, in the order first named; every thread (threads.All) when names is
// empty. Errors: an unknown name (naming the valid ones).
func ThreadsNamed(names ...string) ([]threads.Thread, error) {
	var ths []threads.Thread
	for _, n := range names {
		t, err := threads.ByName(n)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(ths, func(x threads.Thread) bool { return x.Name == n }) {
			ths = append(ths, t)
		}
	}
	if len(ths) == 0 {
		ths = threads.All()
	}
	return ths, nil
}

// RunThreads runs every thread of ths at once, thread i on profiles[i] (nil:
// its own, with its built-in costs) with progress, if not nil, reporting
// its runs as task i: their dd runs share GOMAXPROCS slots
// (workload.RunAll), so no more dd page caches are in memory at a time than
// one thread alone holds (alloc's writetest and lru's lookups, which are
// small, run beside them), and no processor waits while one thread's last
// long run finishes and the next thread's could start. The results are in
// the order of ths and do not depend on the parallelism. Errors: the first
// thread's, in order, that failed; ctx's cause as soon as ctx is done (a
// thread's runs do not watch a context: they go on in the background until
// they end, for a process about to exit). crossValidate is
// threads.Options.CrossValidate. Preconditions: len(profiles) ==
// len(ths).
func RunThreads(ctx context.Context, ths []threads.Thread, profiles []*timing.Profile, crossValidate bool, progress *Progress) ([]*threads.Reproduction, error) {
	results := make([]*threads.Reproduction, len(ths))
	done := make(chan error, 1)
	go func() {
		done <- fanout.Run(context.Background(), len(ths), len(ths), func(_ context.Context, i int) error {
			var err error
			results[i], err = ths[i].Run(profiles[i], threads.Options{Progress: progress.Task(i), CrossValidate: crossValidate})
			return err
		}, nil)
	}()
	select {
	case err := <-done:
		return results, err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// ReproduceOf renders the reproductions rs of ths (rs[i] is of ths[i],
// whose calibration started from costs[i]) as written by tool.
// Preconditions: the three are of one length. O(cells).
func ReproduceOf(tool Tool, ths []threads.Thread, rs []*threads.Reproduction, costs []string) Reproduce {
	out := Reproduce{Schema: ReproduceSchema, Tool: tool}
	for i, r := range rs {
		out.Threads = append(out.Threads, ThreadOf(r, ths[i].Subject, costs[i]))
	}
	return out
}

// WriteReproduceText prints the reproductions rs as `bhsim reproduce` does:
// each one's text (threads.Reproduction.Text), a blank line between, and,
// when crossValidate is set, each fitted cell's leave-one-out error after
// it. Errors: w fails. O(cells).
func WriteReproduceText(w io.Writer, rs []*threads.Reproduction, crossValidate bool) error {
	for i, r := range rs {
		text := r.Text()
		if i > 0 {
			text = "\n" + text
		}
		if crossValidate {
			text += "\n" + r.CrossValidationText()
		}
		if _, err := fmt.Fprint(w, text); err != nil {
			return err
		}
	}
	return nil
}

// Reproduce is the JSON of a set of thread reproductions,
// bhsim-reproduce/1 (`bhsim reproduce --format json`).
type Reproduce struct {
	// Schema is ReproduceSchema.
	Schema string `json:"schema"`
	// Tool is the binary that wrote it.
	Tool Tool `json:"tool"`
	// Threads are the reproductions, in the order run.
	Threads []Thread `json:"threads"`
}

// Thread is one thread's reproduction in Reproduce: its calibration, its
// tables published beside simulated, its leave-one-out errors and its
// experiment on Linux 6.18.
type Thread struct {
	// Name is the thread's short name ("blocksize"), Subject what it is
	// about.
	Name    string `json:"name"`
	Subject string `json:"subject"`
	// Profile is the calibrated profile's name; Costs what the calibration
	// started from ("built-in", "from FILE", with any costs set one by one).
	Profile        string         `json:"profile"`
	Costs          string         `json:"costs"`
	FreeParameters []Param        `json:"free_parameters"`
	LabelCounts    map[string]int `json:"label_counts"`
	Tables         []Table        `json:"tables"`
	// CrossValidation is each fitted cell as a fit without it predicts it;
	// CrossValidationNote says why there is none.
	CrossValidation     []LeftOut `json:"cross_validation,omitempty"`
	CrossValidationNote string    `json:"cross_validation_note,omitempty"`
	// Today is the thread's measurement on Linux 6.18, predicted.
	Today []Today `json:"today,omitempty"`
}

// Today is one figure of a thread's experiment on Linux 6.18: nobody
// published it, so it is labelled predicted.
type Today struct {
	What   string `json:"what"`
	Kernel string `json:"kernel"`
	Unit   string `json:"unit"`
	// Simulated is the figure; Then the same measurement on ThenKernel,
	// the thread's kernel, as its table has it (0 and "" when it has none).
	Simulated  float64 `json:"simulated"`
	Then       float64 `json:"then,omitempty"`
	ThenKernel string  `json:"then_kernel,omitempty"`
	// Counted is what the model counted that explains it.
	Counted string `json:"counted"`
	Label   string `json:"label"`
}

// Param is one fitted cost: its prior and fitted values in ns, whether it
// ended within timing.PriorFactor of the prior, and the thread's reason
// when it did not.
type Param struct {
	Param       string  `json:"param"`
	Prior       float64 `json:"prior_ns"`
	Fitted      float64 `json:"fitted_ns"`
	WithinPrior bool    `json:"within_prior"`
	Why         string  `json:"why,omitempty"`
}

// Table is one table of a thread: published beside simulated, in Unit.
type Table struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Source string `json:"source"`
	Unit   string `json:"unit"`
	Cells  []Cell `json:"cells"`
}

// Cell is one cell of a Table; ErrorPercent is 100 × (simulated −
// published) / published, Label one of timing's cell labels ("fitted",
// "fitted (shared run)", "input", "predicted").
type Cell struct {
	Row          string  `json:"row"`
	Column       string  `json:"column"`
	Published    float64 `json:"published"`
	Simulated    float64 `json:"simulated"`
	ErrorPercent float64 `json:"error_percent"`
	Label        string  `json:"label"`
}

// LeftOut is one fitted cell as a fit without it predicts it (Simulated),
// or why no such fit exists (Simulated 0 and Why).
type LeftOut struct {
	Cell
	Why string `json:"why,omitempty"`
}

// ThreadOf renders the reproduction r of a thread about subject, whose
// calibration started from costs ("built-in", "from FILE"). O(cells).
func ThreadOf(r *threads.Reproduction, subject, costs string) Thread {
	t := Thread{Name: r.Thread, Subject: subject, Profile: r.Profile.Name, Costs: costs, LabelCounts: map[string]int{}}
	for _, p := range r.Calibration.Params {
		t.FreeParameters = append(t.FreeParameters, Param{p.Param.String(), p.Before, p.After, p.WithinPrior(), p.Why})
	}
	for _, c := range r.Calibration.Cells {
		t.LabelCounts[string(c.Label)]++
	}
	for _, l := range r.CrossValidation {
		t.CrossValidation = append(t.CrossValidation, LeftOut{CellOf(l.Cell), l.Why})
	}
	t.CrossValidationNote = r.CrossValidationNote
	for _, d := range r.Today {
		t.Today = append(t.Today, Today{What: d.What, Kernel: d.Kernel, Unit: d.Unit, Simulated: d.Value, Then: d.Then,
			ThenKernel: d.ThenKernel, Counted: d.Counted, Label: string(timing.LabelPredicted)})
	}
	for _, tb := range r.Tables() {
		out := Table{ID: tb.ID, Title: tb.Title, Source: tb.Source, Unit: tb.Unit}
		for _, c := range tb.Cells {
			out.Cells = append(out.Cells, CellOf(c))
		}
		t.Tables = append(t.Tables, out)
	}
	return t
}

// CellOf renders one cell of a timing table.
func CellOf(c timing.Cell) Cell {
	return Cell{Row: c.Row, Column: c.Column, Published: c.Published, Simulated: c.Simulated,
		ErrorPercent: 100 * c.RelError(), Label: string(c.Label)}
}

// WriteCSV writes r as bhsim-reproduce-csv/1: one row per cell of every
// thread's tables, then each thread's 6.18 figures as rows of table
// "THREAD-today" (row: the kernel, column: the measurement, published and
// error_percent empty). Errors: w fails. O(cells).
func (r Reproduce) WriteCSV(w io.Writer) error {
	var rows [][]string
	for _, t := range r.Threads {
		for _, tb := range t.Tables {
			for _, c := range tb.Cells {
				rows = append(rows, []string{t.Name, t.Profile, tb.ID, c.Row, c.Column, tb.Unit, Num(c.Published),
					Num(c.Simulated), Num(c.ErrorPercent), c.Label})
			}
		}
		for _, d := range t.Today {
			rows = append(rows, []string{t.Name, t.Profile, t.Name + "-today", d.Kernel, d.What, d.Unit, "",
				Num(d.Simulated), "", d.Label})
		}
	}
	return WriteCSV(w, ReproduceCSVSchema, []string{"thread", "profile", "table", "row", "column", "unit", "published",
		"simulated", "error_percent", "label"}, rows)
}
