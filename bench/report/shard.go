package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
)

// MaxShards bounds a Shard's Count.
const MaxShards = 1 << 20

// Shard is one part of a run split over machines (docs/at-scale.md): of a
// sweep's cells in the grid's order, or of a list of trace files, the ones
// i with i mod Count == Index. A shard's JSON names it ("shard"), its CSV
// ends each row with ShardCSVColumns; MergeFiles joins all Count parts
// into the output of the whole. The zero Shard is the whole.
type Shard struct {
	// Index and Count are K and N of "K/N": 0 <= Index < Count.
	Index int `json:"index"`
	Count int `json:"count"`
	// Cells is the number of cells (or files) of the whole.
	Cells int `json:"cells"`
}

// ShardCSVColumns end each row of a shard's CSV: the row's cell (its index
// in the whole, from 0) and the whole's number of cells.
var ShardCSVColumns = []string{"cell", "cells"}

// ParseShard reads "K/N" (0 <= K < N <= MaxShards), as a batch system's
// array index and size give it; "" is the whole (the zero Shard). Errors: a
// *FieldError for Shard. O(len(s)).
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	k, n, ok := strings.Cut(s, "/")
	ki, kerr := strconv.Atoi(k)
	ni, nerr := strconv.Atoi(n)
	if !ok || kerr != nil || nerr != nil || ni < 1 || ni > MaxShards || ki < 0 || ki >= ni {
		return Shard{}, &FieldError{"Shard", s, fmt.Errorf("want K/N: shard K (from 0) of N, 0 <= K < N <= %d", MaxShards)}
	}
	return Shard{Index: ki, Count: ni}, nil
}

// Of returns the shard of a whole of cells cells (Cells set), or nil for
// the whole. O(1).
func (s Shard) Of(cells int) *Shard {
	if s.Count == 0 {
		return nil
	}
	s.Cells = cells
	return &s
}

// Has reports whether cell i is in s (every cell of the whole). O(1).
func (s Shard) Has(i int) bool { return s.Count == 0 || i%s.Count == s.Index }

// size is the number of cells of the whole that s holds.
func (s Shard) size() int {
	if s.Index >= s.Cells {
		return 0
	}
	return (s.Cells - s.Index + s.Count - 1) / s.Count
}

// csv adds ShardCSVColumns to header and to the rows of the shard's cells,
// rowsOf(j) of them for its j-th cell, in order.
func (s *Shard) csv(header []string, rows [][]string, rowsOf func(j int) int) ([]string, [][]string) {
	header = append(slices.Clone(header), ShardCSVColumns...)
	cells := strconv.Itoa(s.Cells)
	r := 0
	for j := 0; r < len(rows); j++ {
		cell := strconv.Itoa(s.Index + j*s.Count)
		for range rowsOf(j) {
			rows[r] = append(slices.Clone(rows[r]), cell, cells)
			r++
		}
	}
	return header, rows
}

// RunListSchema names the JSON of a run over a list of trace files
// (RunList).
const RunListSchema = "bhsim-run-list/1"

// RunList is the JSON of `bhsim run` over a list of trace files,
// bhsim-run-list/1: each file's bhsim-run-dist/1 (without its own tool),
// in the list's order.
type RunList struct {
	// Schema is RunListSchema; Tool the binary that wrote it.
	Schema string `json:"schema"`
	Tool   Tool   `json:"tool"`
	// Shard is the part of the list the runs are, nil for the whole.
	Shard *Shard              `json:"shard,omitempty"`
	Runs  []*engine.RunResult `json:"runs"`
}

// RunFiles runs each trace file of files that shard holds (every one for
// the zero Shard) as spec describes it (spec.File set to each) with
// options o, one after another, and lists their results, written by tool;
// progress, if not nil, is told the files done of the shard's after each.
// Errors: the first file's that fails, naming it; ctx's. O(records).
func RunFiles(ctx context.Context, spec WorkloadSpec, o engine.RunOptions, files []string, shard Shard, tool Tool, progress func(done, total int)) (RunList, error) {
	out := RunList{Schema: RunListSchema, Tool: tool, Shard: shard.Of(len(files))}
	var mine []string
	for i, f := range files {
		if shard.Has(i) {
			mine = append(mine, f)
		}
	}
	for i, f := range mine {
		spec.File = f
		w, err := spec.Workload()
		if err != nil {
			return out, err
		}
		r, err := engine.Run(ctx, w, o)
		if err != nil {
			return out, err
		}
		out.Runs = append(out.Runs, r)
		if progress != nil {
			progress(i+1, len(mine))
		}
	}
	return out, nil
}

// WriteCSV writes l as bhsim-run-dist-csv/1: every run's rows, in order,
// under one header; a shard's rows end with ShardCSVColumns. Errors: w
// fails. O(rows).
func (l RunList) WriteCSV(w io.Writer) error {
	var rows [][]string
	var per []int
	for _, r := range l.Runs {
		rs := runCSVRows(r)
		rows, per = append(rows, rs...), append(per, len(rs))
	}
	header := runCSVHeader
	if l.Shard != nil {
		header, rows = l.Shard.csv(header, rows, func(j int) int { return per[j] })
	}
	return WriteCSV(w, RunCSVSchema, header, rows)
}

// WriteText prints every run as `bhsim run TRACE` does, a blank line
// between. Errors: w fails. O(rows).
func (l RunList) WriteText(w io.Writer) error {
	for i, r := range l.Runs {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := WriteRunText(w, r); err != nil {
			return err
		}
	}
	return nil
}

// MergeFiles reads the files the shards of one split run wrote — all JSON
// (bhsim-sweep/1 or bhsim-run-list/1) or all CSV (bhsim-sweep-csv/1 or
// bhsim-run-dist-csv/1 with ShardCSVColumns), in any order — and writes to
// w what the run unsplit writes, byte for byte. Errors, each naming the
// file or the format: a file that does not read or is of another schema;
// shards of different runs (another header, tool, N or number of cells);
// a shard missing or given twice; a shard with the wrong number of cells.
// O(bytes).
func MergeFiles(w io.Writer, names ...string) error {
	if len(names) == 0 {
		return errors.New("no files to merge")
	}
	data := make([][]byte, len(names))
	for i, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return err
		}
		data[i] = b
	}
	if t := bytes.TrimLeft(data[0], " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return mergeJSON(w, names, data)
	}
	return mergeCSV(w, names, data)
}

// shardSet checks that shards, one per file, are the N shards of one whole
// and returns the file of each index.
func shardSet(names []string, shards []*Shard) ([]int, error) {
	for i, s := range shards {
		if s != nil && (s.Count < 1 || s.Count > MaxShards || s.Index < 0 || s.Index >= s.Count || s.Cells < 0) {
			return nil, fmt.Errorf("%s: shard %d/%d of %d cells: want 0 <= K < N <= %d and cells >= 0", names[i], s.Index, s.Count, s.Cells, MaxShards)
		}
	}
	first := shards[0]
	if first == nil {
		return nil, fmt.Errorf("%s is not a shard (no shard: it was written without --shard K/N)", names[0])
	}
	byIndex := make([]int, first.Count)
	for i := range byIndex {
		byIndex[i] = -1
	}
	for i, s := range shards {
		switch {
		case s == nil:
			return nil, fmt.Errorf("%s is not a shard (no shard: it was written without --shard K/N)", names[i])
		case s.Count != first.Count || s.Cells != first.Cells:
			return nil, fmt.Errorf("%s is shard %d/%d of %d cells, %s %d/%d of %d: not parts of one run", names[i], s.Index, s.Count, s.Cells,
				names[0], first.Index, first.Count, first.Cells)
		case byIndex[s.Index] >= 0:
			return nil, fmt.Errorf("%s and %s are both shard %d/%d", names[byIndex[s.Index]], names[i], s.Index, s.Count)
		}
		byIndex[s.Index] = i
	}
	if i := slices.Index(byIndex, -1); i >= 0 {
		return nil, fmt.Errorf("shard %d/%d is missing (give all %d)", i, first.Count, first.Count)
	}
	return byIndex, nil
}

// mergeJSON merges JSON shards: sweeps or run lists.
func mergeJSON(w io.Writer, names []string, data [][]byte) error {
	var probe struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data[0], &probe); err != nil {
		return fmt.Errorf("%s: %w", names[0], err)
	}
	switch probe.Schema {
	case SweepSchema:
		return mergeParts(w, names, data, func(s *Sweep) (**Shard, *[]SweepRow) { return &s.Shard, &s.Rows })
	case RunListSchema:
		return mergeParts(w, names, data, func(l *RunList) (**Shard, *[]*engine.RunResult) { return &l.Shard, &l.Runs })
	}
	return fmt.Errorf("%s: schema %q: want the JSON of a sweep (%s) or of a run over trace files (%s) written with --shard",
		names[0], probe.Schema, SweepSchema, RunListSchema)
}

// mergeParts merges the JSON shards data of documents D, whose shard and
// cells (items T, one a cell) get returns: every file's document but its
// shard and cells must be the same, and the merged one is the first's
// with every shard's cells in the whole's order and no shard.
func mergeParts[D, T any](w io.Writer, names []string, data [][]byte, get func(*D) (**Shard, *[]T)) error {
	docs := make([]*D, len(data))
	shards := make([]*Shard, len(data))
	var header []byte
	for i, b := range data {
		d := new(D)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(d); err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
		sh, items := get(d)
		shards[i], docs[i] = *sh, d
		kept := *items
		*sh, *items = nil, nil
		h, err := json.Marshal(d)
		if err != nil {
			return err
		}
		*items = kept
		if i == 0 {
			header = h
		} else if !bytes.Equal(h, header) {
			return fmt.Errorf("%s and %s differ beyond their shards (the tool, the machine, the profile or the options): not parts of one run", names[0], names[i])
		}
	}
	order, err := shardSet(names, shards)
	if err != nil {
		return err
	}
	for i, sh := range shards {
		if _, items := get(docs[i]); len(*items) != sh.size() {
			return fmt.Errorf("%s holds %d cells, shard %d/%d of %d cells has %d", names[i], len(*items), sh.Index, sh.Count, sh.Cells, sh.size())
		}
	}
	n, cells := len(order), shards[0].Cells
	merged := make([]T, 0, cells)
	for c := range cells {
		_, items := get(docs[order[c%n]])
		merged = append(merged, (*items)[c/n])
	}
	out := docs[order[0]]
	sh, items := get(out)
	*sh, *items = nil, merged
	return WriteJSON(w, out)
}

// mergeCSV merges CSV shards: each file's header is the schema's columns
// and ShardCSVColumns, each row names its cell; the merged CSV has the
// cells' rows in order, without those columns.
func mergeCSV(w io.Writer, names []string, data [][]byte) error {
	var header []string
	cells := -1
	byCell := map[int][][]string{}
	from := map[int]int{} // cell → file
	for i, b := range data {
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
		if len(recs) == 0 {
			return fmt.Errorf("%s: empty: want a CSV written with --shard", names[i])
		}
		h := recs[0]
		switch {
		case len(h) < 3 || h[0] != "schema" || !slices.Equal(h[len(h)-2:], ShardCSVColumns):
			return fmt.Errorf("%s: want the CSV of a sweep (%s) or of a run over trace files (%s) written with --shard: a header from schema to %s",
				names[i], SweepCSVSchema, RunCSVSchema, strings.Join(ShardCSVColumns, ","))
		case header == nil:
			header = h
		case !slices.Equal(h, header):
			return fmt.Errorf("%s and %s have different headers: not parts of one run", names[0], names[i])
		}
		for line, r := range recs[1:] {
			c, cerr := strconv.Atoi(r[len(r)-2])
			n, nerr := strconv.Atoi(r[len(r)-1])
			switch {
			case r[0] != SweepCSVSchema && r[0] != RunCSVSchema:
				return fmt.Errorf("%s:%d: schema %q: want %s or %s", names[i], line+2, r[0], SweepCSVSchema, RunCSVSchema)
			case cerr != nil || nerr != nil || c < 0 || c >= n:
				return fmt.Errorf("%s:%d: cell %q of %q: want a cell from 0 below the cells", names[i], line+2, r[len(r)-2], r[len(r)-1])
			case cells >= 0 && n != cells:
				return fmt.Errorf("%s:%d: a whole of %d cells, another file's has %d: not parts of one run", names[i], line+2, n, cells)
			}
			cells = n
			if f, ok := from[c]; ok && f != i {
				return fmt.Errorf("cell %d is in %s and in %s: a shard given twice", c, names[f], names[i])
			}
			from[c] = i
			byCell[c] = append(byCell[c], r[:len(r)-2])
		}
	}
	for c := range cells {
		if byCell[c] == nil {
			return fmt.Errorf("cell %d of %d is in none of the files: a shard is missing", c, cells)
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header[:len(header)-2]); err != nil {
		return err
	}
	for c := range cells {
		if err := cw.WriteAll(byCell[c]); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
