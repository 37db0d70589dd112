package md

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLevelString checks names both ways and the error for unknown names.
func TestLevelString(t *testing.T) {
	tests := []struct {
		level Level
		name  string
	}{
		{Raid0, "raid0"}, {Raid10Near2, "raid10n2"}, {Raid10Far2, "raid10f2"}, {Raid6, "raid6"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.name, tc.level.String())
		got, err := ParseLevel(tc.name)
		require.NoError(t, err)
		assert.Equal(t, tc.level, got)
	}
	assert.Equal(t, "level(9)", Level(9).String())
	for _, bad := range []string{"", "raid5", "RAID0", "raid10"} {
		_, err := ParseLevel(bad)
		assert.ErrorIs(t, err, ErrBadLevel, "%q", bad)
		assert.ErrorContains(t, err, "raid0, raid10n2, raid10f2, raid6", "the message lists the choices")
	}
}
