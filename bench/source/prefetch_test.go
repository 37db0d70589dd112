package source

import (
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// timeLimit and tick bound the wait for a Prefetcher's goroutine to close
// its reader.
const (
	timeLimit = 5 * time.Second
	tick      = time.Millisecond
)

// closingReader is a SliceReader that notes its Close.
type closingReader struct {
	SliceReader
	closed atomic.Bool
}

func (c *closingReader) Close() error { c.closed.Store(true); return nil }

// records returns n distinct records.
func records(n int) []IO {
	recs := make([]IO, n)
	for i := range recs {
		recs[i] = IO{Kind: IOWrite, Offset: uint64(i) * 4096, Length: 4096, CPU: i % 3, Line: i + 1}
	}
	return recs
}

// TestPrefetchIsItsReader: a Prefetcher returns its reader's records in
// order and then its error, again on every later call, whatever the count
// against the batch size, and closes the reader once done.
func TestPrefetchIsItsReader(t *testing.T) {
	bad := errors.New("line 9: bad record")
	for _, tc := range []struct {
		name string
		n    int
		err  error
	}{
		{"empty", 0, nil},
		{"one", 1, nil},
		{"a batch less one", prefetchBatch - 1, nil},
		{"a batch", prefetchBatch, nil},
		{"a batch and one", prefetchBatch + 1, nil},
		{"more batches than wait", prefetchBatch*(prefetchDepth+3) + 7, nil},
		{"an error at once", 0, bad},
		{"an error after a batch", prefetchBatch, bad},
		{"an error within a batch", 3*prefetchBatch + 5, bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := records(tc.n)
			r := &closingReader{SliceReader: SliceReader{Records: want, Err: tc.err}}
			p := Prefetch(r)
			defer p.Close()
			got := []IO{}
			var err error
			for {
				var rec IO
				if rec, err = p.Next(); err != nil {
					break
				}
				got = append(got, rec)
			}
			assert.Equal(t, len(want), len(got))
			assert.Equal(t, want, got, "the records, in order")
			wantErr := tc.err
			if wantErr == nil {
				wantErr = io.EOF
			}
			assert.ErrorIs(t, err, wantErr)
			_, again := p.Next()
			assert.ErrorIs(t, again, wantErr, "the error stays")
			require.Eventually(t, r.closed.Load, timeLimit, tick, "the reader is closed once read")
		})
	}
}

// TestPrefetchClose: closed before the end, a Prefetcher returns ErrClosed
// (not io.EOF: the trace did not end) and its goroutine closes the reader,
// having stopped inside its batch; Close twice is harmless.
func TestPrefetchClose(t *testing.T) {
	for _, read := range []int{0, 1, prefetchBatch + 3} {
		r := &closingReader{SliceReader: SliceReader{Records: records(20 * prefetchBatch)}}
		p := Prefetch(r)
		for i := range read {
			rec, err := p.Next()
			require.NoError(t, err)
			require.Equal(t, i+1, rec.Line)
		}
		require.NoError(t, p.Close())
		require.NoError(t, p.Close())
		_, err := p.Next()
		assert.ErrorIs(t, err, ErrClosed, "after %d records", read)
		assert.NotErrorIs(t, err, io.EOF)
		require.Eventually(t, r.closed.Load, timeLimit, tick, "the reader is closed after Close")
	}
}

// slowReader hands out records until its gate closes, each one only after
// the test lets it: a reader whose batch is in progress at Close.
type slowReader struct {
	closingReader
	gate  chan struct{}
	reads atomic.Int64
}

func (s *slowReader) Next() (IO, error) {
	<-s.gate
	s.reads.Add(1)
	return s.closingReader.Next()
}

// TestPrefetchCloseStopsABatch: Close stops the goroutine inside a batch
// in progress, after the record it is reading, not at the batch's end.
func TestPrefetchCloseStopsABatch(t *testing.T) {
	r := &slowReader{closingReader: closingReader{SliceReader: SliceReader{Records: records(4 * prefetchBatch)}}, gate: make(chan struct{})}
	p := Prefetch(r)
	for range 3 {
		r.gate <- struct{}{}
	}
	require.NoError(t, p.Close())
	close(r.gate) // every later read would go through at once
	require.Eventually(t, r.closed.Load, timeLimit, tick, "the reader is closed after Close")
	assert.LessOrEqual(t, r.reads.Load(), int64(4), "stopped within its batch of %d", prefetchBatch)
}

// FuzzPrefetch: for any record count and any point of Close, the records
// before it are the reader's, in order, and the end is io.EOF, or
// ErrClosed after a Close.
func FuzzPrefetch(f *testing.F) {
	f.Add(uint16(0), uint16(0))
	f.Add(uint16(prefetchBatch+1), uint16(prefetchBatch))
	f.Add(uint16(5000), uint16(6000))
	f.Fuzz(func(t *testing.T, n, closeAt uint16) {
		want := records(int(n))
		p := Prefetch(&SliceReader{Records: want})
		defer p.Close()
		for i := 0; ; i++ {
			if i == int(closeAt) {
				p.Close()
			}
			rec, err := p.Next()
			if err != nil {
				if i >= int(closeAt) {
					require.ErrorIs(t, err, ErrClosed)
				} else {
					require.ErrorIs(t, err, io.EOF)
					require.Equal(t, len(want), i, "only a Close ends it early")
				}
				return
			}
			require.Less(t, i, len(want))
			require.Equal(t, want[i], rec)
		}
	})
}
