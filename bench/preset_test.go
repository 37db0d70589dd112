package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
)

func TestPresets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy blocksize.Policy
	}{
		{"9011495c9466", blocksize.PolicyGrow},
		{"5ff9f19231a0", blocksize.PolicyLogical},
		{"5.10.10", blocksize.PolicyLogical},
		{"5.10.10+revert", blocksize.PolicyGrow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PresetByName(tc.name)
			require.NoError(t, err)
			assert.Equal(t, tc.policy, p.Blocksize)
			assert.Contains(t, p.Description, "not modelled")
			cfg := p.Apply(bufcache.Config{CPUs: 2})
			assert.Equal(t, tc.policy, cfg.Blocksize)
			assert.Equal(t, 2, cfg.CPUs)
		})
	}
	_, err := PresetByName("6.6")
	assert.ErrorContains(t, err, "5.10.10+revert")
}
