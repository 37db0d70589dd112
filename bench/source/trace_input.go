package source

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// StdinName is the path that names standard input to OpenTrace and
// OpenTraceSelect, as to most Unix tools.
const StdinName = "-"

// Compression names how a trace's bytes are compressed.
type Compression string

// The compressions OpenTrace undoes, told from the first bytes (their
// magic numbers), whatever the file's name.
const (
	CompressNone  Compression = ""
	CompressGzip  Compression = "gzip"  // 1f 8b (RFC 1952), compress/gzip; several members are read as one stream
	CompressBzip2 Compression = "bzip2" // "BZh" and a block size digit, compress/bzip2
	CompressZstd  Compression = "zstd"  // 28 b5 2f fd (RFC 8878), github.com/klauspost/compress/zstd
)

// DetectCompression tells the compression of a stream from its first four
// bytes (fewer when the stream is shorter): CompressNone when they are no
// magic number it knows. O(1).
func DetectCompression(head []byte) Compression {
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return CompressGzip
	case len(head) >= 4 && bytes.Equal(head[:3], []byte("BZh")) && head[3] >= '1' && head[3] <= '9':
		return CompressBzip2
	case len(head) >= 4 && bytes.Equal(head[:4], []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return CompressZstd
	}
	return CompressNone
}

// traceZstdWindow bounds the window a zstd frame may ask for (zstd's own
// default limit is 8 MiB for a decoder's allocations per window; "zstd
// --long" writes windows up to 128 MiB, which this takes).
const traceZstdWindow = 128 << 20

// decompress returns a reader of what r's bytes decompress to (r itself
// when they are not compressed), the compression, and a closer for what
// the decoder holds (nil for none).
func decompress(r *bufio.Reader) (io.Reader, Compression, func(), error) {
	head, err := r.Peek(4)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, "", nil, err
	}
	c := DetectCompression(head)
	switch c {
	case CompressGzip:
		z, err := gzip.NewReader(r)
		if err != nil {
			return nil, c, nil, err
		}
		return z, c, func() { z.Close() }, nil
	case CompressBzip2:
		return bzip2.NewReader(r), c, nil, nil
	case CompressZstd:
		z, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(traceZstdWindow))
		if err != nil {
			return nil, c, nil, err
		}
		return z, c, z.Close, nil
	}
	return r, c, nil, nil
}

// traceInput is an opened trace input: its decompressed bytes, whether it
// can be opened again (a regular file; not standard input, a pipe or a
// FIFO), and what closes it.
type traceInput struct {
	r          io.Reader
	comp       Compression
	reopenable bool
	closeFn    func() error
	// file counts the bytes read from a regular file, whose size is
	// size; nil for a stream.
	file *countingReader
	size int64
}

// countingReader counts the bytes read through it, for a reader on
// another goroutine (Trace.Consumed).
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

// Read implements io.Reader.
func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// openInput opens path (StdinName for standard input) and undoes its
// compression. A FIFO or a pipe is opened as it is and read once.
func openInput(path string) (*traceInput, error) {
	in := &traceInput{}
	var f *os.File
	if path == StdinName {
		f = os.Stdin
		in.closeFn = func() error { return nil } // standard input stays open
	} else {
		var err error
		if f, err = os.Open(path); err != nil {
			return nil, err
		}
		in.closeFn = f.Close
	}
	var src io.Reader = f
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && path != StdinName {
		in.reopenable = true
		in.file, in.size = &countingReader{r: f}, st.Size()
		src = in.file
	}
	br := bufio.NewReaderSize(src, 64<<10)
	r, comp, closeDec, err := decompress(br)
	if err != nil {
		in.closeFn()
		return nil, &TraceError{File: path, Msg: fmt.Sprintf("reading its %s header: %v", orNone(comp), err), Err: err}
	}
	in.r, in.comp = r, comp
	if closeDec != nil {
		closeFile := in.closeFn
		in.closeFn = func() error { closeDec(); return closeFile() }
	}
	return in, nil
}

// orNone names a compression, "compression" for none.
func orNone(c Compression) string {
	if c == CompressNone {
		return "compression"
	}
	return string(c)
}
