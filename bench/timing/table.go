package timing

import (
	"fmt"
	"strings"
)

// Table is a published table beside the simulated one.
type Table struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Source string `json:"source"`
	Unit   string `json:"unit"`
	Cells  []Cell `json:"cells"`
	// Decimals is the number of decimal places Text shows (0 means 1).
	Decimals int `json:"-"`
}

// Cell is one published figure and its simulation, labelled by how the
// simulation relates to the published table (fitted, fitted (shared run),
// input or predicted).
type Cell struct {
	Row       string  `json:"row"`
	Column    string  `json:"column"`
	Published float64 `json:"published"`
	Simulated float64 `json:"simulated"`
	Label     Label   `json:"label"`
}

// RelError is (simulated − published) / published.
func (c Cell) RelError() float64 { return (c.Simulated - c.Published) / c.Published }

// Text renders the table, one cell a line.
func (t *Table) Text() string {
	rw, cw := len("row"), len("column")
	for _, c := range t.Cells {
		rw, cw = max(rw, len(c.Row)), max(cw, len(c.Column))
	}
	d := t.Decimals
	if d == 0 {
		d = 1
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (%s)\nsource: %s\n", t.Title, t.Unit, t.Source)
	fmt.Fprintf(&sb, "  %-*s  %-*s %10s %10s %8s\n", rw, "row", cw, "column", "published", "simulated", "error")
	for _, c := range t.Cells {
		fmt.Fprintf(&sb, "  %-*s  %-*s %10.*f %10.*f %+7.1f%%  %s\n", rw, c.Row, cw, c.Column, d, c.Published, d, c.Simulated, 100*c.RelError(), c.Label)
	}
	return sb.String()
}

// Cell returns t's cell at row and column.
func (t *Table) Cell(row, column string) (Cell, bool) {
	for _, c := range t.Cells {
		if c.Row == row && c.Column == column {
			return c, true
		}
	}
	return Cell{}, false
}
