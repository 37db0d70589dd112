package source

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readParts reads parts in turn as the whole trace would be read: their
// records until the first error, and that error. It checks that each
// part's Consumed comes to its own size, and that the sizes add up to
// the file's (size), and closes them.
func readParts(t *testing.T, parts []*Trace, size int64) ([]IO, error) {
	t.Helper()
	var recs []IO
	var first error
	var total int64
	for _, p := range parts {
		if first == nil {
			got, err := ReadAll(p)
			recs, first = append(recs, got...), err
			if err == nil {
				read, size := p.Consumed()
				assert.Equal(t, size, read, "a part read to its end has consumed its range")
			}
		}
		_, n := p.Consumed()
		total += n
		p.Close()
	}
	if len(parts) > 1 {
		assert.Equal(t, size, total, "the parts' sizes add up to the file's")
	}
	return recs, first
}

// checkParts opens the trace file at path as up to n parts of at least
// minPart bytes, and holds their records and first error to the whole trace's,
// and their summaries merged to its summary. It returns how many parts
// there were.
func checkParts(t *testing.T, path string, n int, minPart int64) int {
	t.Helper()
	whole, err := OpenTrace(path)
	if err != nil {
		_, perr := openTraceParts(path, TraceSelect{}, n, minPart)
		require.Error(t, perr)
		assert.Equal(t, err.Error(), perr.Error())
		return 0
	}
	wantRecs, wantErr := ReadAll(whole)
	_, size := whole.Consumed()
	whole.Close()
	parts, err := openTraceParts(path, TraceSelect{}, n, minPart)
	require.NoError(t, err)
	require.NotEmpty(t, parts)
	n = len(parts)
	gotRecs, gotErr := readParts(t, parts, size)
	require.Equal(t, len(wantRecs), len(gotRecs), "records")
	assert.Equal(t, wantRecs, gotRecs)
	if wantErr == nil {
		assert.NoError(t, gotErr)
	} else {
		require.Error(t, gotErr)
		assert.Equal(t, wantErr.Error(), gotErr.Error())
	}
	var want, merged, piece TraceSummary
	for i, rec := range gotRecs {
		want.Add(rec)
		piece.Add(rec)
		if i%7 == 3 || i == len(gotRecs)-1 { // merged in uneven pieces
			merged.Merge(piece)
			piece = TraceSummary{}
		}
	}
	merged.Merge(TraceSummary{})
	assert.Equal(t, want, merged, "merged summaries")
	return n
}

// csvLines is a CSV trace of n records after a header and a comment.
func csvLines(n int) string {
	var b strings.Builder
	b.WriteString("# a trace\nop,offset,length,cpu,time\n")
	for i := range n {
		op := []string{"write", "read", "fsync"}[i%3]
		if op == "fsync" {
			b.WriteString("fsync,0,0,1,\n")
			continue
		}
		fmt.Fprintf(&b, "%s,%s,4K,%d,%d\n", op, scenario.FormatDDSize(uint64(i)*4096), i%4, 1000*i)
	}
	return b.String()
}

// reorder puts the columns of every line of a CSV trace but its comments
// in the order given (indexes of the columns as they are).
func reorder(text string, order ...int) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if l == "" || l[0] == '#' {
			continue
		}
		f := strings.Split(strings.TrimSuffix(l, "\n"), ",")
		g := make([]string, len(order))
		for j, k := range order {
			g[j] = f[k]
		}
		lines[i] = strings.Join(g, ",") + "\n"
	}
	return strings.Join(lines, "")
}

func TestOpenTraceParts(t *testing.T) {
	dir := t.TempDir()
	body := csvLines(3000)
	badAt := func(lineText ...any) string { // line, text, line, text…
		ls := strings.SplitAfter(body, "\n")
		for i := 0; i < len(lineText); i += 2 {
			ls[lineText[i].(int)-1] = lineText[i+1].(string) + "\n"
		}
		return strings.Join(ls, "")
	}
	tests := []struct {
		name    string
		text    string
		n       int
		minPart int64
		parts   int // how many parts the trace is read in
	}{
		{"split in four", body, 4, 1 << 10, 4},
		{"split in two", body, 2, 1 << 10, 2},
		{"more CPUs than parts of minPart", body, 64, int64(len(body)) / 3, 3},
		{"too small to split", body, 4, int64(len(body)), 1},
		{"one CPU", body, 1, 1 << 10, 1},
		{"a reordered header", reorder(body, 4, 3, 2, 1, 0), 4, 1 << 10, 4},
		{"no header", body[strings.Index(body, "\nwrite")+1:], 4, 1 << 10, 4},
		{"CRLF lines", strings.ReplaceAll(body, "\n", "\r\n"), 3, 1 << 10, 3},
		{"no last newline", strings.TrimSuffix(body, "\n"), 3, 1 << 10, 3},
		{"an error in the last part", badAt(2900, "write,0,x"), 4, 1 << 10, 4},
		{"errors in the second and the last part", badAt(1200, "bad,0,1", 2900, "write,0,x"), 4, 1 << 10, 4},
		{"a header line later is a record", badAt(2000, "op,offset,length,cpu,time"), 4, 1 << 10, 4},
		{"the first record past the first part", strings.Repeat("# comment\n", 4000) + body, 4, 1 << 10, 1},
		{"a bad first record", badAt(3, "bad,0,1"), 4, 1 << 10, 1},
		{"a line too long across two starts", badAt(1500, "write,0,"+strings.Repeat("1", traceMaxLine+10)), 4, 1 << 10, 2},
		{"comments only", strings.Repeat("# comment\n", 3000), 4, 1 << 10, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".csv")
			require.NoError(t, os.WriteFile(path, []byte(tt.text), 0o644))
			assert.Equal(t, tt.parts, checkParts(t, path, tt.n, tt.minPart))
		})
	}
}

// TestOpenTracePartsWhole: traces other than a plain CSV file are read
// whole, and the default part size leaves a small file whole.
func TestOpenTracePartsWhole(t *testing.T) {
	dir := t.TempDir()
	body := csvLines(3000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write([]byte(body))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	blk, err := os.ReadFile(filepath.Join(tracesDir, "sample.blkparse"))
	require.NoError(t, err)
	tests := []struct {
		name    string
		data    []byte
		minPart int64 // 0: MinTracePart
	}{
		{"gz.csv.gz", gz.Bytes(), 1 << 10},
		{"sample.blkparse", bytes.Repeat(blk, 20), 1 << 10},
		{"small.csv", []byte(body), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			require.NoError(t, os.WriteFile(path, tt.data, 0o644))
			if tt.minPart == 0 {
				require.Less(t, len(tt.data), 2*MinTracePart)
				parts, err := OpenTraceParts(path, TraceSelect{}, 4)
				require.NoError(t, err)
				assert.Len(t, parts, 1)
				parts[0].Close()
				return
			}
			require.Greater(t, int64(len(tt.data)), 4*tt.minPart)
			assert.Equal(t, 1, checkParts(t, path, 4, tt.minPart))
		})
	}
	_, err = OpenTraceParts(filepath.Join(dir, "missing.csv"), TraceSelect{}, 4)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// FuzzTraceParts holds a CSV trace read in parts to the whole trace: the
// same records, line numbers and first error, whatever the text and
// wherever the parts start.
func FuzzTraceParts(f *testing.F) {
	f.Add(csvLines(40), uint8(4), uint16(64))
	f.Add("op,offset,length\nwrite,0,4K\n\nread,4K,4K\r\n# c\nfsync,,\nw,1,1", uint8(3), uint16(8))
	f.Add("time,length,offset,op\n1us,4K,8K,w\nop,offset,length\n2us,0,0,fsync\n", uint8(2), uint16(10))
	f.Add("write,0,1\n\"write\", 1 ,1,0,0\nwrite,0,0\n", uint8(8), uint16(1))
	f.Fuzz(func(t *testing.T, text string, n uint8, minPart uint16) {
		if len(text) > 1<<16 {
			return
		}
		path := filepath.Join(t.TempDir(), "t.csv")
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		checkParts(t, path, int(n%9), int64(minPart))
	})
}
