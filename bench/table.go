package bench

import (
	"fmt"
	"strings"
)

// Table is a published table beside the simulated one. Its JSON form is what
// `bhsim reproduce --format json` prints (keep it stable).
type Table struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Source string `json:"source"`
	Unit   string `json:"unit"`
	Cells  []Cell `json:"cells"`
}

// Cell is one published figure and its simulation; Fitted says whether the
// calibration used it (otherwise it is a prediction).
type Cell struct {
	Row       string  `json:"row"`
	Column    string  `json:"column"`
	Published float64 `json:"published"`
	Simulated float64 `json:"simulated"`
	Fitted    bool    `json:"fitted"`
}

// RelError is (simulated − published) / published.
func (c Cell) RelError() float64 { return (c.Simulated - c.Published) / c.Published }

// Text renders the table, one cell a line.
func (t *Table) Text() string {
	rw, cw := len("row"), len("column")
	for _, c := range t.Cells {
		rw, cw = max(rw, len(c.Row)), max(cw, len(c.Column))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (%s)\nsource: %s\n", t.Title, t.Unit, t.Source)
	fmt.Fprintf(&sb, "  %-*s  %-*s %10s %10s %8s\n", rw, "row", cw, "column", "published", "simulated", "error")
	for _, c := range t.Cells {
		kind := "predicted"
		if c.Fitted {
			kind = "fitted"
		}
		fmt.Fprintf(&sb, "  %-*s  %-*s %10.1f %10.1f %+7.1f%%  %s\n", rw, c.Row, cw, c.Column, c.Published, c.Simulated, 100*c.RelError(), kind)
	}
	return sb.String()
}
