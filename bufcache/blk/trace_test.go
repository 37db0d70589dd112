package blk

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenTrace runs a small fixed sequence on an HDD queue and returns it.
func goldenTrace(t *testing.T, traceLen int) *Queue {
	t.Helper()
	q := newQueue(t, "sda", 64<<20, WD8003FFBX(), DefaultLimits(512, 4096))
	q.EnableTrace(traceLen)
	c := newCompletions()
	var p Plug
	p.Start()
	for i := range 16 { // 64 KiB sequential at 2048: one request
		SubmitBio(&p, q, c.pageBio(i, OpWrite, 2048+uint64(8*i), 4096, uint64(2*i), 0))
	}
	SubmitBio(&p, q, c.pageBio(16, OpRead, 0, 4096, 100, 0))        // a read elsewhere
	SubmitBio(&p, q, c.pageBio(17, OpWrite, 2048+128, 512, 200, 0)) // continues the write
	SubmitBio(&p, q, c.pageBio(18, OpWrite, 2048+129, 512, 200, 512))
	require.NoError(t, p.Finish())
	big := c.bio(19, OpWrite, 2048+130)
	big.AddPage(nil, 3<<20, 5000, 1024) // split at 1280 KiB, physical-block aligned
	q.Submit(big)
	require.Len(t, c.order, 20)
	return q
}

func TestWriteTraceGolden(t *testing.T) {
	q := goldenTrace(t, 16)
	var buf bytes.Buffer
	require.NoError(t, q.WriteTrace(&buf))
	path := filepath.Join("testdata", "trace.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String())
}

func TestTraceBounded(t *testing.T) {
	all := goldenTrace(t, 16).Trace()
	require.Len(t, all, 5)
	for i, e := range all {
		assert.Equal(t, uint64(i+1), e.Seq)
	}
	tests := []struct {
		n    int
		want []TraceEntry
	}{
		{0, nil},
		{-1, nil},
		{1, all[4:]},
		{4, all[1:]},
		{5, all},
		{100, all},
	}
	for _, tc := range tests {
		got := goldenTrace(t, tc.n).Trace()
		if tc.want == nil {
			assert.Empty(t, got, "n %d", tc.n)
			continue
		}
		assert.Equal(t, tc.want, got, "n %d", tc.n)
	}
}

func TestEnableTraceRestarts(t *testing.T) {
	q := goldenTrace(t, 16)
	q.EnableTrace(8)
	assert.Empty(t, q.Trace())
	c := newCompletions()
	q.Submit(c.pageBio(0, OpWrite, 0, 4096, 1, 0))
	got := q.Trace()
	require.Len(t, got, 1)
	assert.Equal(t, uint64(6), got[0].Seq, "sequence numbers continue")
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteTraceError(t *testing.T) {
	q := goldenTrace(t, 16)
	assert.EqualError(t, q.WriteTrace(failWriter{}), "disk full")
}
