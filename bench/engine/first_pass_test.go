package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/source"
)

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
				want, err := source.ReadAll(&heldReader{held: wantHeld})
				require.NoError(t, err)
				requireHeldIs(t, want, held)
			}
		})
	}
}
