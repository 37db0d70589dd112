package main

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"

	"github.com/bhsim/bhsim/bench/threads"
	"github.com/bhsim/bhsim/bench/timing"
)

// The versions of the outputs other tools read (docs/output-schema.md).
const (
	reproduceSchema    = "bhsim-reproduce/1"
	reproduceCSVSchema = "bhsim-reproduce-csv/1"
	sweepSchema        = "bhsim-sweep/1"
	sweepCSVSchema     = "bhsim-sweep-csv/1"
)

// reproduceOut is `bhsim reproduce --format json`.
type reproduceOut struct {
	Schema  string      `json:"schema"`
	Tool    toolInfo    `json:"tool"`
	Threads []threadOut `json:"threads"`
}

// threadOut is one thread of reproduceOut.
type threadOut struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	// Profile is the calibrated profile's name; Costs what the calibration
	// started from ("built-in", "from FILE", with any --cost).
	Profile        string         `json:"profile"`
	Costs          string         `json:"costs"`
	FreeParameters []paramOut     `json:"free_parameters"`
	LabelCounts    map[string]int `json:"label_counts"`
	Tables         []tableOut     `json:"tables"`
	// CrossValidation is each fitted cell as a fit without it predicts it;
	// CrossValidationNote says why there is none.
	CrossValidation     []leftOut `json:"cross_validation,omitempty"`
	CrossValidationNote string    `json:"cross_validation_note,omitempty"`
	// Today is the thread's measurement on Linux 6.18, predicted.
	Today []todayOut `json:"today,omitempty"`
}

// todayOut is one figure of the same experiment on Linux 6.18.
type todayOut struct {
	What       string  `json:"what"`
	Kernel     string  `json:"kernel"`
	Unit       string  `json:"unit"`
	Simulated  float64 `json:"simulated"`
	Then       float64 `json:"then,omitempty"`
	ThenKernel string  `json:"then_kernel,omitempty"`
	Counted    string  `json:"counted"`
	Label      string  `json:"label"`
}

// paramOut is one fitted cost: its prior and fitted values in ns, whether
// it ended within timing.PriorFactor of the prior, and the thread's reason
// when it did not.
type paramOut struct {
	Param       string  `json:"param"`
	Prior       float64 `json:"prior_ns"`
	Fitted      float64 `json:"fitted_ns"`
	WithinPrior bool    `json:"within_prior"`
	Why         string  `json:"why,omitempty"`
}

// tableOut is one table: published beside simulated, in unit.
type tableOut struct {
	ID     string    `json:"id"`
	Title  string    `json:"title"`
	Source string    `json:"source"`
	Unit   string    `json:"unit"`
	Cells  []cellOut `json:"cells"`
}

// cellOut is one cell; ErrorPercent is 100 × (simulated − published) /
// published.
type cellOut struct {
	Row          string  `json:"row"`
	Column       string  `json:"column"`
	Published    float64 `json:"published"`
	Simulated    float64 `json:"simulated"`
	ErrorPercent float64 `json:"error_percent"`
	Label        string  `json:"label"`
}

// threadOf renders one reproduction for reproduceOut.
func threadOf(r *threads.Reproduction, subject, costs string) threadOut {
	t := threadOut{Name: r.Thread, Subject: subject, Profile: r.Profile.Name, Costs: costs, LabelCounts: map[string]int{}}
	for _, p := range r.Calibration.Params {
		t.FreeParameters = append(t.FreeParameters, paramOut{p.Param.String(), p.Before, p.After, p.WithinPrior(), p.Why})
	}
	for _, c := range r.Calibration.Cells {
		t.LabelCounts[string(c.Label)]++
	}
	for _, l := range r.CrossValidation {
		t.CrossValidation = append(t.CrossValidation, leftOut{cellOf(l.Cell), l.Why})
	}
	t.CrossValidationNote = r.CrossValidationNote
	for _, d := range r.Today {
		t.Today = append(t.Today, todayOut{What: d.What, Kernel: d.Kernel, Unit: d.Unit, Simulated: d.Value, Then: d.Then,
			ThenKernel: d.ThenKernel, Counted: d.Counted, Label: string(timing.LabelPredicted)})
	}
	for _, tb := range r.Tables() {
		out := tableOut{ID: tb.ID, Title: tb.Title, Source: tb.Source, Unit: tb.Unit}
		for _, c := range tb.Cells {
			out.Cells = append(out.Cells, cellOf(c))
		}
		t.Tables = append(t.Tables, out)
	}
	return t
}

// leftOut is one fitted cell as a fit without it predicts it (simulated),
// or why no such fit exists (simulated 0).
type leftOut struct {
	cellOut
	Why string `json:"why,omitempty"`
}

// cellOf renders one cell.
func cellOf(c timing.Cell) cellOut {
	return cellOut{Row: c.Row, Column: c.Column, Published: c.Published, Simulated: c.Simulated,
		ErrorPercent: 100 * c.RelError(), Label: string(c.Label)}
}

// writeJSON writes v indented, as every JSON output of bhsim is.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// num renders a number for CSV: the shortest form that reads back exactly.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// writeCSV writes header and rows, each prefixed with the schema column.
func writeCSV(w io.Writer, schema string, header []string, rows [][]string) error {
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

// reproduceCSV writes one row per cell of every thread's tables.
func reproduceCSV(w io.Writer, ts []threadOut) error {
	var rows [][]string
	for _, t := range ts {
		for _, tb := range t.Tables {
			for _, c := range tb.Cells {
				rows = append(rows, []string{t.Name, t.Profile, tb.ID, c.Row, c.Column, tb.Unit, num(c.Published),
					num(c.Simulated), num(c.ErrorPercent), c.Label})
			}
		}
		for _, d := range t.Today {
			rows = append(rows, []string{t.Name, t.Profile, t.Name + "-today", d.Kernel, d.What, d.Unit, "",
				num(d.Simulated), "", d.Label})
		}
	}
	return writeCSV(w, reproduceCSVSchema, []string{"thread", "profile", "table", "row", "column", "unit", "published",
		"simulated", "error_percent", "label"}, rows)
}
