package host

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/scenario"
)

const (
	scenarioDir = "../../testdata/scenarios"
	kernelDir   = "../../testdata/kernel/6.18"
)

// TestCorpus checks the scenario corpus and its recorded kernel results:
// every scenario parses, says what it pins, is in canonical form apart from
// comments, and has a recorded result of the same operations.
func TestCorpus(t *testing.T) {
	scenarios, err := scenario.ParseDir(scenarioDir)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(scenarios), 40)
	newer := 0
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			assert.NotEmpty(t, s.Pins, "the leading comment says what the scenario pins")
			if strings.Contains(s.Pins, "[6.15+]") {
				newer++
			}
			r, err := scenario.ReadResultFile(filepath.Join(kernelDir, s.Name+".json"))
			require.NoError(t, err, "record it: go run ./bench/host/cmd/record -runs 3 -out testdata/kernel/6.18 testdata/scenarios/%s.scn", s.Name)
			assert.Equal(t, s.Name, r.Scenario)
			assert.Equal(t, scenario.RunnerKernel, r.Runner)
			assert.True(t, strings.HasPrefix(r.Kernel, "6.18"), r.Kernel)
			assert.Equal(t, "x86_64", r.Machine)
			assert.GreaterOrEqual(t, r.Runs, 3)
			require.NotNil(t, r.Queue)
			require.Len(t, r.Ops, len(s.Ops))
			for i, op := range s.Ops {
				assert.Equal(t, op.String(), r.Ops[i].Op)
			}
			// A recorded result compares equal with itself.
			c := scenario.Compare(r, r)
			assert.Equal(t, c.Summary().Total, c.Summary().Equal)
		})
	}
	assert.GreaterOrEqual(t, newer, 15, "scenarios marked [6.15+]")
}
