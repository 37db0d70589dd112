package source

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCSVSample(t *testing.T) {
	f, err := os.Open(filepath.Join(tracesDir, "sample.csv"))
	require.NoError(t, err)
	defer f.Close()
	got, err := ReadAll(NewCSVReader(f))
	require.NoError(t, err)
	assert.Equal(t, []IO{
		{Kind: IOWrite, Offset: 0, Length: 4096, Line: 4},
		{Kind: IOWrite, Offset: 5000, Length: 100, At: 10000, Line: 5},
		{Kind: IORead, Offset: 8192, Length: 2048, CPU: 1, At: 15000, Line: 6},
		{Kind: IOWrite, Offset: 4096, Length: 1024, CPU: 1, At: 20000, Line: 7},
		{Kind: IOFsync, At: 1000000, Line: 8},
		{Kind: IOWrite, Offset: 63 << 10, Length: 1024, At: 1500000, Line: 9},
		{Kind: IOFdatasync, At: 2000000, Line: 10},
	}, got)
	// The class problem's answer at 1 KiB blocks: the write of 100 bytes at
	// 5000 is the only one that covers a block in part (block 4, from byte
	// 904 to 1003), so it alone needs a read-modify-write.
	var partial []BlockPiece
	for _, rec := range got {
		if rec.Kind != IOWrite {
			continue
		}
		for p := range rec.Pieces(1024) {
			if p.Partial {
				partial = append(partial, p)
			}
		}
	}
	assert.Equal(t, []BlockPiece{{Block: 4, Off: 904, Len: 100, Partial: true}}, partial)
}

func TestCSVLines(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []IO
		err  string
	}{
		{"no header", "write,0,4096\n", []IO{{Kind: IOWrite, Length: 4096, Line: 1}}, ""},
		{"short header", "op,offset,length\nread,1K,1K\n", []IO{{Kind: IORead, Offset: 1024, Length: 1024, Line: 2}}, ""},
		{"header any case", "OP,Offset,LENGTH,Cpu\nread,0,1,3\n", []IO{{Kind: IORead, Length: 1, CPU: 3, Line: 2}}, ""},
		{"blanks and quotes", ` "write" , 1M , "4K" , 2 , "5us"` + "\n", []IO{{Kind: IOWrite, Offset: 1 << 20, Length: 4096, CPU: 2, At: 5000, Line: 1}}, ""},
		{"crlf", "write,0,1\r\nfsync,0,0\r\n", []IO{{Kind: IOWrite, Length: 1, Line: 1}, {Kind: IOFsync, Line: 2}}, ""},
		{"ops", "READ,0,1\nWrite,0,1\nflush,,\ndiscard,0,1G\ntrim,1G,1G\nfdatasync,0,0\n", []IO{
			{Kind: IORead, Length: 1, Line: 1}, {Kind: IOWrite, Length: 1, Line: 2}, {Kind: IOFlush, Line: 3},
			{Kind: IODiscard, Length: 1 << 30, Line: 4}, {Kind: IODiscard, Offset: 1 << 30, Length: 1 << 30, Line: 5},
			{Kind: IOFdatasync, Line: 6}}, ""},
		{"r and w", "r,0,1\nW,1,1\n", []IO{{Kind: IORead, Length: 1, Line: 1}, {Kind: IOWrite, Offset: 1, Length: 1, Line: 2}}, ""},
		{"reordered header, all columns", "cpu,time,op,offset,length\n2,3ms,read,1M,64K\n", []IO{
			{Kind: IORead, Offset: 1 << 20, Length: 64 << 10, CPU: 2, At: 3e6, Line: 2}}, ""},
		{"empty cpu and time", "write,0,1,,\n", []IO{{Kind: IOWrite, Length: 1, Line: 1}}, ""},
		{"times", "write,0,1,0,2s\nwrite,0,1,0,1.5ms\nwrite,0,1,0,1h\nwrite,0,1,0,7\n", []IO{
			{Kind: IOWrite, Length: 1, At: 2e9, Line: 1}, {Kind: IOWrite, Length: 1, At: 1.5e6, Line: 2},
			{Kind: IOWrite, Length: 1, At: 3600e9, Line: 3}, {Kind: IOWrite, Length: 1, At: 7, Line: 4}}, ""},
		{"comments", "# a\n  # b\n\nwrite,0,1\n", []IO{{Kind: IOWrite, Length: 1, Line: 4}}, ""},

		{"unknown op", "wirte,0,1\n", nil, `line 1: csv: unknown op "wirte"`},
		{"header later", "write,0,1\nop,offset,length\n", nil, `line 2: csv: unknown op "op"`},
		{"header in another order", "time,length,offset,op\n1us,4K,8K,w\n2us,0,0,fsync\n", []IO{
			{Kind: IOWrite, Offset: 8192, Length: 4096, At: 1000, Line: 2}, {Kind: IOFsync, At: 2000, Line: 3}}, ""},
		{"its columns, its order", "time,length,offset,op\n2us,512,0,fsync\n", nil, `line 2: csv: fsync takes no offset and length (0 or empty), got "0" and "512"`},
		{"header without op", "offset,length\n", nil, `line 1: csv: header "offset,length": want op, offset and length among its columns`},
		{"header unknown column", "op,offset,size\n", nil, `line 1: csv: header column 3 is "size", not one of op,offset,length,cpu,time`},
		{"header twice a column", "op,offset,length,op\n", nil, "line 1: csv: header column 4: op is named twice"},
		{"fewer columns than the header", "length,offset,op,cpu\n4K,0,r\n", nil, "line 2: csv: want the header's 4 columns, got 3"},
		{"header too short", "op,offset\n", nil, "line 1: csv: header"},
		{"header too long", "op,offset,length,cpu,time,pid\n", nil, "line 1: csv: header"},
		{"two fields", "write,0\n", nil, "line 1: csv: want op,offset,length[,cpu[,time]], got 2 fields"},
		{"six fields", "write,0,1,0,0,0\n", nil, "got more than 5 fields"},
		{"bad offset", "write,-1,1\n", nil, `offset "-1" is not a byte count`},
		{"fraction", "write,0,1.5K\n", nil, `length "1.5K" is not a positive byte count`},
		{"zero length", "read,0,0\n", nil, `length "0"`},
		{"fsync with length", "fsync,0,512\n", nil, `fsync takes no offset and length (0 or empty), got "0" and "512"`},
		{"overflow", "write,18446744073709551615,2\n", nil, "end past 2^64"},
		{"bad cpu", "write,0,1,x\n", nil, `cpu "x"`},
		{"cpu too large", "write,0,1,5000\n", nil, `cpu "5000"`},
		{"negative time", "write,0,1,0,-1s\n", nil, `time "-1s"`},
		{"bad time", "write,0,1,0,soon\n", nil, `time "soon"`},
		{"time without unit fraction", "write,0,1,0,1.5\n", nil, `time "1.5"`},
		{"long line", strings.Repeat("w", traceMaxLine+10), nil, "line 1: csv: line longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadAll(NewCSVReader(strings.NewReader(tt.text)))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Positive(t, traceErrLine(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestWriteCSV(t *testing.T) {
	recs := []IO{
		{Kind: IOWrite, Offset: 0, Length: 4096, CPU: 1, At: 5},
		{Kind: IORead, Offset: 5000, Length: 100},
		{Kind: IOFsync, At: 1000},
		{Kind: IODiscard, Offset: 1 << 30, Length: 3 << 20},
	}
	var b bytes.Buffer
	n, err := WriteCSV(&b, &SliceReader{Records: append([]IO(nil), recs...)}, "gen seq:dev=1G\nsecond line", "")
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	want := "# gen seq:dev=1G\n# second line\n#\n" + CSVHeader + "\n" +
		"write,0,4K,1,5\nread,5000,100,0,0\nfsync,0,0,0,1000\ndiscard,1G,3M,0,0\n"
	assert.Equal(t, want, b.String())
	assert.Equal(t, "write,0,4K,1,5", recs[0].String())

	// It reads back to the same records (with their lines).
	back, err := ReadAll(NewCSVReader(strings.NewReader(b.String())))
	require.NoError(t, err)
	for i := range back {
		back[i].Line = 0
	}
	assert.Equal(t, recs, back)

	// Errors of the reader and of the writer.
	boom := errors.New("boom")
	_, err = WriteCSV(&bytes.Buffer{}, &SliceReader{Err: boom})
	assert.ErrorIs(t, err, boom)
	_, err = WriteCSV(failingWriter{}, &SliceReader{Records: recs})
	assert.ErrorContains(t, err, "writing CSV")
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// BenchmarkCSVReader parses a CSV trace of 100,000 random 4 KiB records,
// as WriteCSV writes them, from memory: the reader's cost per record
// without the file's reading.
func BenchmarkCSVReader(b *testing.B) {
	g, err := ParseGenerator("random:dev=1G,n=100000,size=4K,reads=0.3,cpus=4,seed=7")
	require.NoError(b, err)
	gen, err := NewGenerator(g)
	require.NoError(b, err)
	var buf bytes.Buffer
	_, err = WriteCSV(&buf, gen)
	require.NoError(b, err)
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewCSVReader(bytes.NewReader(data))
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				require.ErrorIs(b, err, io.EOF)
				break
			}
			n++
		}
		require.Equal(b, 100000, n)
	}
}
