package threads_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/threads"
	"github.com/bhsim/bhsim/internal/race"
)

// TestCommittedFiguresAreCurrent: the charts the README shows
// (bench/figures/*.svg) are what `bhsim reproduce --plot` draws now, so that
// a change that moves a figure re-renders them. Each thread runs at full
// size, the Helios4's and Xu Yang's tables on the runs their own tests
// check (threads.FullFigures); .ci/run draws them once more through the
// README's command and compares the same files.
func TestCommittedFiguresAreCurrent(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("runs every thread at full size: not under -short or -race")
	}
	t.Parallel()
	dir := t.TempDir()
	for _, th := range threads.All() {
		for _, f := range threads.FullFigures(t, th.Name) {
			require.NoError(t, report.WriteFigure(dir, f))
		}
	}
	drawn, err := filepath.Glob(filepath.Join(dir, "*.svg"))
	require.NoError(t, err)
	committed, err := filepath.Glob("../figures/*.svg")
	require.NoError(t, err)
	require.NotEmpty(t, committed)
	assert.Len(t, drawn, len(committed), "one committed chart per chart reproduce draws")
	for _, path := range committed {
		want, err := os.ReadFile(path)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dir, filepath.Base(path)))
		if !assert.NoError(t, err, "reproduce --plot draws %s", filepath.Base(path)) {
			continue
		}
		assert.True(t, bytes.Equal(want, got),
			"%s is stale: go run ./cmd/bhsim reproduce --plot bench/figures", path)
	}
}
