package report

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
)

// corpus is the host-kernel scenario corpus, recorded under ../kernel/6.18
// beside it.
const corpus = "../../testdata/scenarios"

// TestValidate sets two corpus scenarios beside their recordings: every
// row equal, summed over both; another kernel preset differs.
func TestValidate(t *testing.T) {
	files, err := ScenarioFiles(filepath.Join(corpus, "dd-bs4k.scn"), filepath.Join(corpus, "bszset-last-close-16k.scn"))
	require.NoError(t, err)
	require.Len(t, files, 2)
	var progress []int
	v, err := Validate(context.Background(), files, Recorded(""), ValidateOptions{On: "recorded",
		Progress: func(done, total int) { progress = append(progress, done, total) }})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 2, 2}, progress)
	assert.Equal(t, ValidateSchema, v.Schema)
	assert.Equal(t, "6.18", v.Model, "a kernel without a name is 6.18")
	assert.True(t, strings.HasPrefix(v.Kernel, "6.18"), v.Kernel)
	require.Len(t, v.Scenarios, 2)
	assert.Equal(t, "dd-bs4k", v.Scenarios[0].Scenario)
	assert.Equal(t, v.Scenarios[0].Total+v.Scenarios[1].Total, v.Summary.Total)
	assert.Equal(t, v.Summary.Total, v.Summary.Equal)
	assert.Zero(t, v.Summary.Differ())
	assert.Equal(t, 2, v.Summary.Scenarios)

	old, err := engine.KernelByName("6.6")
	require.NoError(t, err)
	v, err = Validate(context.Background(), files[1:], Recorded(""), ValidateOptions{Kernel: old})
	require.NoError(t, err, "a row that differs is no error")
	assert.Equal(t, "6.6", v.Model)
	assert.Positive(t, v.Summary.Differ(), "6.6 refuses block sizes above PAGE_SIZE")
}

// TestValidateErrors: a missing recording is a *NoRecordingError (an
// os.ErrNotExist); paths without scenarios are refused.
func TestValidateErrors(t *testing.T) {
	files, err := ScenarioFiles(filepath.Join(corpus, "dd-bs4k.scn"))
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = Validate(context.Background(), files, Recorded(dir), ValidateOptions{})
	var nr *NoRecordingError
	require.ErrorAs(t, err, &nr)
	assert.Equal(t, "dd-bs4k", nr.Scenario)
	assert.Equal(t, dir, nr.Dir)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.EqualError(t, err, "dd-bs4k: no recorded result in "+dir)

	failed := errors.New("no kernel")
	_, err = Validate(context.Background(), files, func(context.Context, string, *scenario.Scenario) (*scenario.Result, error) {
		return nil, failed
	}, ValidateOptions{})
	assert.ErrorIs(t, err, failed)

	_, err = ScenarioFiles(dir)
	assert.ErrorContains(t, err, "no *.scn scenario files")
	_, err = ScenarioFiles(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestValidationWriteText checks which rows each choice prints.
func TestValidationWriteText(t *testing.T) {
	v := Validation{Model: "6.18", Kernel: "6.18 x86_64", On: "recorded", Scenarios: []Comparison{{Scenario: "s", Rows: []Row{
		{Op: 0, Name: "total-equal", Equal: true},
		{Op: 1, Name: "op-equal", Equal: true},
		{Op: 2, Name: "op-differs", Model: "1", Kernel: "2"},
	}}}}
	for _, tt := range []struct {
		rows Rows
		want []string
	}{
		{RowsTotals, []string{"total-equal", "op-differs"}},
		{RowsAll, []string{"total-equal", "op-equal", "op-differs"}},
		{RowsDiff, []string{"op-differs"}},
	} {
		var b bytes.Buffer
		require.NoError(t, v.WriteText(&b, tt.rows))
		for _, name := range []string{"total-equal", "op-equal", "op-differs"} {
			assert.Equal(t, slices.Contains(tt.want, name), strings.Contains(b.String(), name), "%s: %s", tt.rows, name)
		}
		assert.Contains(t, b.String(), "op-differs         1      2       ≠", "a row that differs is marked")
	}
}
