package pageindex

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKindStringAndParse(t *testing.T) {
	tests := []struct {
		kind Kind
		name string
	}{
		{KindXArray, "xarray"},
		{KindBTree, "btree"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.name, tc.kind.String())
		k, err := ParseKind(tc.name)
		require.NoError(t, err)
		assert.Equal(t, tc.kind, k)
		idx := New[folio](tc.kind)
		assert.Equal(t, tc.kind, idx.Kind())
	}
	assert.Equal(t, "Kind(7)", Kind(7).String())
}

func TestParseKindRejectsUnknownNames(t *testing.T) {
	for _, s := range []string{"", "XArray", "radix", "b-tree", "xarray "} {
		_, err := ParseKind(s)
		require.Error(t, err, "%q", s)
		assert.ErrorIs(t, err, ErrUnknownKind)
		assert.Contains(t, err.Error(), "xarray")
		assert.Contains(t, err.Error(), "btree")
	}
}

func TestNewPanicsOnUnknownKind(t *testing.T) {
	assert.PanicsWithValue(t, "pageindex.New: unknown Kind(2)", func() { New[folio](Kind(2)) })
}
