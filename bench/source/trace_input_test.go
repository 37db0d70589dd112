package source

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenTraceCompressed opens gzip, bzip2 and zstd copies of a sample
// under names that say nothing (the magic number tells), and a gzip file
// of two members, and checks each reads as the plain sample does.
func TestOpenTraceCompressed(t *testing.T) {
	plain := filepath.Join(tracesDir, "sample.csv")
	want, err := openAll(t, plain)
	require.NoError(t, err)
	dir := t.TempDir()
	for _, tt := range []struct {
		file string
		comp Compression
	}{{"sample.csv.gz", CompressGzip}, {"sample.csv.bz2", CompressBzip2}, {"sample.csv.zst", CompressZstd}} {
		b, err := os.ReadFile(filepath.Join(tracesDir, tt.file))
		require.NoError(t, err)
		p := filepath.Join(dir, "trace-"+string(tt.comp))
		require.NoError(t, os.WriteFile(p, b, 0o644))
		tr, err := OpenTrace(p)
		require.NoError(t, err, tt.file)
		assert.Equal(t, tt.comp, tr.Compression)
		assert.Equal(t, TraceCSV, tr.Format, "told from the decompressed content")
		assert.True(t, tr.Reopenable)
		got, err := ReadAll(tr)
		require.NoError(t, err)
		assert.Equal(t, want, got, tt.file)
		assert.NoError(t, tr.Close())
	}
	// Two gzip members (cat a.gz b.gz) are one stream.
	var two bytes.Buffer
	for _, part := range []string{"write,0,4K\n", "read,4K,4K\n"} {
		z := gzip.NewWriter(&two)
		_, err = z.Write([]byte(part))
		require.NoError(t, err)
		require.NoError(t, z.Close())
	}
	p := filepath.Join(dir, "two.gz")
	require.NoError(t, os.WriteFile(p, two.Bytes(), 0o644))
	got, err := openAll(t, p)
	require.NoError(t, err)
	assert.Equal(t, []IO{{Kind: IOWrite, Length: 4096, Line: 1}, {Kind: IORead, Offset: 4096, Length: 4096, Line: 2}}, got)
	// A file that claims gzip but is not.
	p = filepath.Join(dir, "bad.csv.gz")
	require.NoError(t, os.WriteFile(p, []byte{0x1f, 0x8b, 0, 0}, 0o644))
	_, err = OpenTrace(p)
	assert.ErrorContains(t, err, "bad.csv.gz: reading its gzip header")
}

// openAll opens path and reads all its records.
func openAll(t *testing.T, path string) ([]IO, error) {
	t.Helper()
	tr, err := OpenTrace(path)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	return ReadAll(tr)
}

func TestDetectCompression(t *testing.T) {
	for _, tt := range []struct {
		head []byte
		want Compression
	}{
		{[]byte{0x1f, 0x8b, 8, 0}, CompressGzip}, {[]byte("BZh9"), CompressBzip2}, {[]byte("BZh0"), CompressNone},
		{[]byte{0x28, 0xb5, 0x2f, 0xfd}, CompressZstd}, {[]byte{0x28, 0xb5, 0x2f}, CompressNone},
		{[]byte("writ"), CompressNone}, {nil, CompressNone},
	} {
		assert.Equal(t, tt.want, DetectCompression(tt.head), "%x", tt.head)
	}
}

// TestOpenTraceStdin reads "-" from standard input (a pipe here), zstd
// compressed, in one pass.
func TestOpenTraceStdin(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(tracesDir, "sample.csv.zst"))
	require.NoError(t, err)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = saved; r.Close() }()
	go func() { w.Write(b); w.Close() }()
	tr, err := OpenTrace(StdinName)
	require.NoError(t, err)
	assert.False(t, tr.Reopenable, "standard input is read once")
	assert.Equal(t, CompressZstd, tr.Compression)
	got, err := ReadAll(tr)
	require.NoError(t, err)
	assert.Len(t, got, 7)
	read, size := tr.Consumed()
	assert.Zero(t, read, "a stream's size is not known")
	assert.Zero(t, size)
	assert.NoError(t, tr.Close())
}

// TestTraceConsumed: a trace file's Consumed counts the bytes read from the
// file as stored, compressed or not, up to its size at the end, and a
// Prefetcher's Progress gives it with the records read.
func TestTraceConsumed(t *testing.T) {
	for _, name := range []string{"sample.csv", "sample.csv.zst", "sample.blkparse"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(tracesDir, name)
			st, err := os.Stat(path)
			require.NoError(t, err)
			tr, err := OpenTrace(path)
			require.NoError(t, err)
			read, size := tr.Consumed()
			assert.Equal(t, st.Size(), size)
			assert.Positive(t, read, "telling the format reads the head")
			assert.LessOrEqual(t, read, size)
			p := Prefetch(tr)
			defer p.Close()
			recs, err := ReadAll(p)
			require.NoError(t, err)
			n, read, size := p.Progress()
			assert.Equal(t, uint64(len(recs)), n, "every record read")
			assert.Equal(t, st.Size(), read, "the whole file, as stored")
			assert.Equal(t, st.Size(), size)
		})
	}
	p := Prefetch(&SliceReader{Records: make([]IO, 3)})
	defer p.Close()
	_, err := ReadAll(p)
	require.NoError(t, err)
	n, read, size := p.Progress()
	assert.Equal(t, uint64(3), n)
	assert.Zero(t, read+size, "a reader without Consumed")
}

// TestOpenTraceFIFO reads a named pipe: opened once, not reopenable.
func TestOpenTraceFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trace.fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("no mkfifo:", err)
	}
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		for i := range 1000 {
			io.WriteString(f, "write,"+strconv.Itoa(i*4096)+",4K\n")
		}
		f.Close()
	}()
	tr, err := OpenTrace(p)
	require.NoError(t, err)
	defer tr.Close()
	assert.False(t, tr.Reopenable)
	assert.Equal(t, TraceCSV, tr.Format)
	got, err := ReadAll(tr)
	require.NoError(t, err)
	assert.Len(t, got, 1000)
}
