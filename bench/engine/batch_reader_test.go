package engine

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// failingReader gives n records, then err; it fails t if asked again after
// its error, as an IOReader's caller need not ask.
type failingReader struct {
	t       *testing.T
	n, next int
	err     error
	failed  bool
}

func (r *failingReader) Next() (source.IO, error) {
	if r.failed {
		r.t.Errorf("Next called again after the reader's error")
	}
	if r.next == r.n {
		r.failed = true
		return source.IO{}, r.err
	}
	r.next++
	return source.IO{Kind: source.IOWrite, Offset: uint64(r.next%256) << 12, Length: 4096, Line: r.next}, nil
}

// TestBatchReaderKeepsRecordsAndErrors: a batchReader hands out its
// reader's records in their order, then its reader's error (the end, or a
// failure) and the same error again without asking the reader again, for
// inputs shorter than, equal to and longer than a batch.
func TestBatchReaderKeepsRecordsAndErrors(t *testing.T) {
	m, err := bufcache.NewMachine(bufcache.Config{CPUs: 1})
	require.NoError(t, err)
	disk, err := blk.NewMemDisk("sda", 1<<20, 512)
	require.NoError(t, err)
	dev, err := m.Open(disk, bufcache.DeviceOptions{MetadataOnly: true})
	require.NoError(t, err)
	broken := errors.New("line 18: broken")
	for _, tc := range []struct {
		name string
		n    int
		err  error
	}{
		{"empty", 0, io.EOF},
		{"one", 1, io.EOF},
		{"a batch", readBatch, io.EOF},
		{"a batch and one", readBatch + 1, io.EOF},
		{"an error after a batch and one", readBatch + 1, broken},
		{"an error after several batches", 3*readBatch + 5, broken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			br := &batchReader{rd: &failingReader{t: t, n: tc.n, err: tc.err}, dev: dev}
			for i := 1; i <= tc.n; i++ {
				rec, err := br.next()
				require.NoError(t, err, "record %d", i)
				assert.Equal(t, i, rec.Line)
			}
			for range 2 {
				_, err := br.next()
				assert.Equal(t, tc.err, err, "the reader's own error, unwrapped (the engine compares with io.EOF)")
			}
		})
	}
}
