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

// failingReader gives n records, then err, and err again if asked again.
type failingReader struct {
	n, next int
	err     error
}

func (r *failingReader) Next() (source.IO, error) {
	if r.next == r.n {
		return source.IO{}, r.err
	}
	r.next++
	return source.IO{Kind: source.IOWrite, Offset: uint64(r.next%256) << 12, Length: 4096, Line: r.next}, nil
}

// TestReadAheadKeepsRecordsAndErrors: a readAhead hands out its reader's
// records in their order, then its reader's error (the end, or a failure)
// and the same error again, for inputs shorter than, equal to and longer
// than a batch.
func TestReadAheadKeepsRecordsAndErrors(t *testing.T) {
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
		{"a batch", readAheadBatch, io.EOF},
		{"a batch and one", readAheadBatch + 1, io.EOF},
		{"an error after a batch and one", readAheadBatch + 1, broken},
		{"an error after several batches", 3*readAheadBatch + 5, broken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ra := &readAhead{rd: &failingReader{n: tc.n, err: tc.err}, dev: dev}
			for i := 1; i <= tc.n; i++ {
				rec, err := ra.Next()
				require.NoError(t, err, "record %d", i)
				assert.Equal(t, i, rec.Line)
			}
			for range 2 {
				_, err := ra.Next()
				assert.ErrorIs(t, err, tc.err)
			}
		})
	}
}
