package engine

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/source"
)

// budgetOf is a budget of n bytes held.
func budgetOf(n int64) *atomic.Int64 {
	b := new(atomic.Int64)
	b.Store(n)
	return b
}

// requireHeldIs holds the records held replays, from each of two readers'
// own start, to recs.
func requireHeldIs(t *testing.T, recs []source.IO, held *heldRecords) {
	t.Helper()
	require.NotNil(t, held)
	assert.Equal(t, len(recs), held.len())
	for range 2 {
		r := &heldReader{held: held}
		for i := range recs {
			got, err := r.Next()
			require.NoError(t, err)
			if got != recs[i] { // assert.Equal of every record would take long
				require.Equal(t, recs[i], got, "record %d of %d", i, len(recs))
			}
		}
		_, err := r.Next()
		assert.Equal(t, io.EOF, err)
	}
}

// TestHeldRecords: records held in memory, over several chunks, replay
// exactly and in order, whatever their fields; a budget too small for
// them lets go of them all.
func TestHeldRecords(t *testing.T) {
	random := func(n int) []source.IO { // about 19 bytes a record held
		recs := make([]source.IO, n)
		for i := range recs {
			recs[i] = source.IO{Kind: source.IOKind(1 + i%3), Offset: uint64(i*7919%262144)*4096 + 1<<50 + 1, Length: 4096, CPU: i % 5, At: uint64(i) << 40, Line: i + 2}
		}
		return recs
	}
	odd := []source.IO{
		{},
		{Kind: source.IODiscard, Offset: 1, Length: 511, Line: 5, At: 10},
		{Kind: source.IOWrite, Offset: math.MaxUint64 - 511, Length: 512, Flags: source.FlagFUA | source.FlagSync, Line: 3, At: 2},
		{Kind: source.IOKind(200), Flags: source.IOFlags(0xff), CPU: math.MaxInt, Line: -7, At: math.MaxUint64},
		{Kind: source.IOKind(7), Flags: source.IOFlags(16), Line: math.MaxInt, At: 0},
		{Kind: source.IOFlush, Line: math.MinInt},
	}
	tests := []struct {
		name   string
		recs   []source.IO
		budget int64
		held   bool
	}{
		{"none", nil, maxHeldBytes, true},
		{"one", random(1), maxHeldBytes, true},
		{"odd fields", odd, maxHeldBytes, true},
		{"several chunks", random(3 * heldChunk / 19), maxHeldBytes, true},
		{"a budget of one chunk", random(3 * heldChunk / 19), heldChunk, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum, held, err := summarizeHolding(&sliceReader{slices.Clone(tt.recs)}, budgetOf(tt.budget), nil)
			require.NoError(t, err)
			assert.Equal(t, uint64(len(tt.recs)), sum.Records)
			if !tt.held {
				assert.Nil(t, held)
				return
			}
			requireHeldIs(t, tt.recs, held)
			assert.Equal(t, len(tt.recs) > heldChunk/19, len(held.chunks) >= 3, "%d chunks", len(held.chunks))
		})
	}
}

// TestHeldRecordSize: a random 4 KiB record over a 1 GiB device is held
// in 8 bytes, as heldRecords says.
func TestHeldRecordSize(t *testing.T) {
	held := &heldRecords{budget: budgetOf(maxHeldBytes)}
	n := 100000
	for i := range n {
		require.True(t, held.add(source.IO{Kind: source.IOWrite, Offset: uint64(i*7919%262144) * 4096, Length: 4096, CPU: i % 4, Line: i + 2}))
	}
	bytes := 0
	for _, c := range held.chunks {
		bytes += len(c)
	}
	assert.InDelta(t, 8, float64(bytes)/float64(n), 0.5)
}

// FuzzHeldRecords holds every sequence of records, held and joined in
// two parts, to itself replayed.
func FuzzHeldRecords(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		var recs []source.IO
		for len(data) >= 23 {
			u := func(i int) uint64 {
				return uint64(data[i]) | uint64(data[i+1])<<8 | uint64(data[i+2])<<16 | uint64(data[i+3])<<56
			}
			recs = append(recs, source.IO{Kind: source.IOKind(data[0]), Flags: source.IOFlags(data[1]), Offset: u(2) << (data[6] % 16),
				Length: u(7), CPU: int(u(11)), At: u(15), Line: int(u(19))})
			data = data[23:]
		}
		cut := min(int(split), len(recs))
		budget := budgetOf(maxHeldBytes)
		_, a, err := summarizeHolding(&sliceReader{slices.Clone(recs[:cut])}, budget, nil)
		require.NoError(t, err)
		_, b, err := summarizeHolding(&sliceReader{slices.Clone(recs[cut:])}, budget, nil)
		require.NoError(t, err)
		a.join(b)
		requireHeldIs(t, recs, a)
	})
}

// requireSameHeld holds the records of got to those of want, in order.
func requireSameHeld(t *testing.T, want, got *heldRecords) {
	t.Helper()
	w, g := &heldReader{held: want}, &heldReader{held: got}
	for i := 0; ; i++ {
		a, errW := w.Next()
		b, errG := g.Next()
		require.Equal(t, errW, errG, "record %d", i)
		if errW != nil {
			return
		}
		if a != b { // assert.Equal of every record would take a second
			require.Equal(t, a, b, "record %d", i)
		}
	}
}

// TestSummarizeParts: a CSV file large enough to be read in parts gives
// the whole trace's summary, held records and first error, and parts
// share the budget of records held.
func TestSummarizeParts(t *testing.T) {
	// 100,000 records in lines of 88 bytes (blanks around a field are
	// ignored): large enough to be read in two parts.
	const n = 100000
	var text strings.Builder
	text.WriteString("op,offset,length,cpu,time\n")
	for i := range n {
		fmt.Fprintf(&text, "%-60s,%10d,4K,%d,%10d\n", []string{"write", "read"}[i%2], i*7919%262144*4096, i%4, 1000*i)
	}
	require.Greater(t, text.Len(), 2*source.MinTracePart)
	lines := strings.SplitAfter(text.String(), "\n")
	bad := func(at ...int) string {
		ls := slices.Clone(lines)
		for _, l := range at {
			ls[l-1] = "write,0,x\n"
		}
		return strings.Join(ls, "")
	}
	dir := t.TempDir()
	tests := []struct {
		name    string
		text    string
		maxHeld int64
		errLine int // 0: none
		held    bool
	}{
		{"whole trace", text.String(), maxHeldBytes, 0, true},
		{"a budget too small", text.String(), heldChunk / 2, 0, false},
		{"an error in the second part", bad(80000), maxHeldBytes, 80000, false},
		{"errors in both parts", bad(100, 80000), maxHeldBytes, 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "t.csv")
			require.NoError(t, os.WriteFile(path, []byte(tt.text), 0o644))
			whole, err := source.OpenTrace(path)
			require.NoError(t, err)
			wantSum, wantHeld, wantErr := summarizeParts([]*source.Trace{whole}, tt.maxHeld)
			parts, err := source.OpenTraceParts(path, source.TraceSelect{}, 2)
			require.NoError(t, err)
			require.Len(t, parts, 2)
			sum, held, err := summarizeParts(parts, tt.maxHeld)
			if tt.errLine > 0 {
				require.Error(t, wantErr)
				require.Error(t, err)
				assert.Equal(t, wantErr.Error(), err.Error())
				var te *source.TraceError
				require.ErrorAs(t, err, &te)
				assert.Equal(t, tt.errLine, te.Line)
				return
			}
			require.NoError(t, wantErr)
			require.NoError(t, err)
			assert.Equal(t, wantSum, sum)
			assert.Equal(t, uint64(n), sum.Records)
			require.Equal(t, tt.held, held != nil, "held")
			require.Equal(t, tt.held, wantHeld != nil, "held whole")
			if tt.held {
				requireSameHeld(t, wantHeld, held)
			}
		})
	}
}
