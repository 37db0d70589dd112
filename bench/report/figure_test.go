package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/threads"
)

// checkChart checks that dir holds a valid SVG and PNG chart of id.
func checkChart(t *testing.T, dir, id string) {
	t.Helper()
	svg, err := os.ReadFile(filepath.Join(dir, id+".svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "</svg>")
	png, err := os.ReadFile(filepath.Join(dir, id+".png"))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "%s.png has the PNG magic", id)
}

// TestWriteFigure draws every kind of panel: bars, lines with published
// and simulated series, several panels in rows of two; the same figure
// draws the same bytes.
func TestWriteFigure(t *testing.T) {
	dir := t.TempDir()
	f := threads.Figure{ID: "test", Panels: []threads.Panel{
		{Title: "bars", XLabel: "x", YLabel: "y", Categories: []string{"a", "b"}, Series: []threads.Series{
			{Name: "k", Published: true, Y: []float64{1, 2}}, {Name: "k", Y: []float64{1.5, 2.5}}}},
		{Title: "lines", XLabel: "bs (KiB)", YLabel: "MB/s", Series: []threads.Series{
			{Name: "a", Published: true, X: []float64{1, 2}, Y: []float64{3, 4}}, {Name: "a", X: []float64{1, 2}, Y: []float64{3, 4}},
			{Name: "b", X: []float64{1, 2}, Y: []float64{3, 4}}}},
		{Title: "third", XLabel: "n", YLabel: "ns", Series: []threads.Series{{Name: "c", X: []float64{1}, Y: []float64{1}}}},
	}}
	require.NoError(t, WriteFigure(dir, f))
	checkChart(t, dir, "test")
	svg, err := os.ReadFile(filepath.Join(dir, "test.svg"))
	require.NoError(t, err)
	for _, s := range []string{">bars<", ">lines<", ">third<", ">published<", ">simulated<", "a published (dashed)"} {
		assert.Contains(t, string(svg), s)
	}

	again := t.TempDir()
	require.NoError(t, WriteFigure(again, f))
	for _, ext := range []string{".svg", ".png"} {
		want, err := os.ReadFile(filepath.Join(dir, "test"+ext))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(again, "test"+ext))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "test%s is drawn the same twice", ext)
	}

	assert.Error(t, WriteFigure(filepath.Join(dir, "missing"), f), "the directory must exist")
}
