package engine

import (
	"fmt"
	"io"
	"math"
	"slices"
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
	for range 2 {
		r := &heldReader{held: held}
		for i := range recs {
			got, err := r.Next()
			require.NoError(t, err, "record %d of %d", i, len(recs))
			if got != recs[i] { // assert.Equal of every record would take long
				require.Equal(t, recs[i], got, "record %d of %d", i, len(recs))
			}
		}
		_, err := r.Next()
		assert.Equal(t, io.EOF, err, "after %d records", len(recs))
	}
}

// oddRecords are records whose fields reach every form of the encoding:
// zero, unaligned, the largest values, a kind and flags past the head
// byte's bits, lines and times that go back.
var oddRecords = []source.IO{
	{},
	{Kind: source.IODiscard, Offset: 1, Length: 511, Line: 5, At: 10},
	{Kind: source.IOWrite, Offset: math.MaxUint64 - 511, Length: 512, Flags: source.FlagFUA | source.FlagSync, Line: 3, At: 2},
	{Kind: source.IOKind(200), Flags: source.IOFlags(0xff), CPU: math.MaxInt, Line: -7, At: math.MaxUint64},
	{Kind: source.IOKind(7), Flags: source.IOFlags(16), Line: math.MaxInt, At: 0},
	{Kind: source.IOFlush, Line: math.MinInt},
}

// randomRecords are n random 4 KiB records over 1 GiB, each held in about
// 8 bytes, or with wide enough an offset and time about 19.
func randomRecords(n int, wide bool) []source.IO {
	recs := make([]source.IO, n)
	for i := range recs {
		recs[i] = source.IO{Kind: source.IOKind(1 + i%3), Offset: uint64(i*7919%262144) * 4096, Length: 4096, CPU: i % 5, Line: i + 2}
		if wide {
			recs[i].Offset += 1<<50 + 1
			recs[i].At = uint64(i) << 40
		}
	}
	return recs
}

// TestHeldRecords: records held in memory, over several chunks, replay
// exactly and in order, whatever their fields, wherever they fall in a
// chunk; a budget too small for them lets go of them all.
func TestHeldRecords(t *testing.T) {
	several := randomRecords(3*heldChunk/19, true)
	for i := 0; i < len(several); i += 97 {
		several[i] = oddRecords[i%len(oddRecords)]
	}
	tests := []struct {
		name   string
		recs   []source.IO
		budget int64
		held   bool
		chunks int // at least
	}{
		{"none", nil, maxHeldBytes, true, 0},
		{"one", randomRecords(1, false), maxHeldBytes, true, 1},
		{"odd fields", oddRecords, maxHeldBytes, true, 1},
		{"several chunks", several, maxHeldBytes, true, 3},
		{"a budget of one chunk", several, heldChunk, false, 0},
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
			assert.GreaterOrEqual(t, len(held.chunks), tt.chunks)
		})
	}
}

// TestHeldBudget: whether a trace's records are held depends on their
// bytes, not on how many parts read them at once: records a little under
// a budget of one chunk are held whole and in two or four parts sharing
// it, a little over in none.
func TestHeldBudget(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		held bool
	}{
		{"under the budget", heldChunk * 86 / 100 / 8, true},
		{"over the budget", heldChunk * 120 / 100 / 8, false},
	} {
		recs := randomRecords(tt.n, false)
		for _, parts := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/%d parts", tt.name, parts), func(t *testing.T) {
				budget := budgetOf(heldChunk)
				var all *heldRecords
				for k := range parts {
					_, held, err := summarizeHolding(&sliceReader{slices.Clone(recs[k*len(recs)/parts : (k+1)*len(recs)/parts])}, budget, nil)
					require.NoError(t, err)
					switch {
					case k == 0 || held == nil:
						all = held
					case all != nil:
						all.join(held)
					}
				}
				if !tt.held {
					assert.Nil(t, all)
					return
				}
				requireHeldIs(t, recs, all)
			})
		}
	}
}

// TestHeldRecordSize: a random 4 KiB record over a 1 GiB device is held
// in 8 bytes, as heldRecords says.
func TestHeldRecordSize(t *testing.T) {
	held := &heldRecords{budget: budgetOf(maxHeldBytes)}
	recs := randomRecords(100000, false)
	for _, r := range recs {
		require.True(t, held.add(r))
	}
	bytes := 0
	for _, c := range held.chunks {
		bytes += len(c)
	}
	assert.InDelta(t, 8, float64(bytes)/float64(len(recs)), 0.5)
}

// FuzzHeldRecords holds every sequence of records, held in two parts and
// joined, to itself replayed; with split odd the sequence is repeated to
// 50,000 records, so that it crosses chunks.
func FuzzHeldRecords(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}, uint8(1))
	f.Add([]byte{200, 255, 0, 0, 0, 128, 9, 1, 0, 0, 255, 255, 255, 255, 127, 0, 0, 0, 0, 1, 2, 3, 4}, uint8(0))
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
		if split%2 == 1 && len(recs) > 0 {
			for i := 0; len(recs) < 50000; i++ {
				recs = append(recs, recs[i])
			}
		}
		cut := min(int(split)*len(recs)/256, len(recs))
		budget := budgetOf(maxHeldBytes)
		_, a, err := summarizeHolding(&sliceReader{slices.Clone(recs[:cut])}, budget, nil)
		require.NoError(t, err)
		_, b, err := summarizeHolding(&sliceReader{slices.Clone(recs[cut:])}, budget, nil)
		require.NoError(t, err)
		a.join(b)
		requireHeldIs(t, recs, a)
	})
}
