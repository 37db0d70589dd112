//go:build linux

package host

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/scenario"
)

// loopTraces are the real traces shipped for the trace readers: each a
// corpus scenario run once on the host kernel with its raw trace dumped
// and converted by WriteBlkparse.
var loopTraces = []struct{ scenario, file string }{
	{"plug-write-4m", "loop-6.18.blkparse"},
	{"rmw-cached", "loop-6.18-rmw-cached.blkparse"},
}

const tracesDir = "../source/testdata/traces"

// blkparseActions counts a blkparse text's event lines by action.
func blkparseActions(text string) map[string]int {
	n := map[string]int{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) >= 7 && strings.Contains(f[0], ",") {
			n[f[5]+" "+f[6]]++
		}
	}
	return n
}

// TestLoopTraces runs the scenarios of the shipped real traces on the live
// kernel, converts their raw traces to blkparse text and checks that they
// have the shipped traces' events, action by action (times, pids and the
// loop device's minor differ from run to run); with -update it writes them
// instead:
//
//	BHSIM_KERNEL=1 go test ./bench/host/ -run TestLoopTraces -update
func TestLoopTraces(t *testing.T) {
	needKernel(t)
	for _, lt := range loopTraces {
		t.Run(lt.scenario, func(t *testing.T) {
			s, err := scenario.ParseFile(filepath.Join(scenarioDir, lt.scenario+".scn"))
			require.NoError(t, err)
			var raw, out bytes.Buffer
			_, err = Run(context.Background(), s, Options{TraceDump: &raw})
			require.NoError(t, err)
			st, err := WriteBlkparse(&out, &raw, BlkparseOptions{})
			require.NoError(t, err)
			require.Positive(t, st.Events)
			dst := filepath.Join(tracesDir, lt.file)
			if *update {
				require.NoError(t, os.WriteFile(dst, out.Bytes(), 0o644))
				return
			}
			want, err := os.ReadFile(dst)
			require.NoError(t, err)
			assert.Equal(t, blkparseActions(string(want)), blkparseActions(out.String()))
		})
	}
	assertNoLeftovers(t, os.Getpid())
}
