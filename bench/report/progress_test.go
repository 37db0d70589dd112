package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	var none *Progress
	assert.Nil(t, none.Task(0))
	none.Finish()

	quick := NewProgress(&buf, "bhsim sweep", "cells")
	quick.Task(0)(1, 2)
	quick.Finish()
	assert.Empty(t, buf.String(), "under a second: nothing shown")

	p := NewProgress(&buf, "bhsim reproduce", "alloc", "lru")
	p.start = time.Now().Add(-4 * time.Second)
	p.Task(0)(1, 2)
	assert.Contains(t, buf.String(), "\rbhsim reproduce: alloc 1/2, lru 0/?, 4 s")
	assert.NotContains(t, buf.String(), "left", "no estimate while a total is unknown")
	p.Task(1)(1, 2)
	assert.Contains(t, buf.String(), "alloc 1/2, lru 1/2, 4 s, about 4 s left")
	p.Finish()
	assert.True(t, strings.HasSuffix(buf.String(), "\n"))
}

// TestProgressLines: for a writer that is not a terminal, plain lines,
// the first after a second, then at most one every LineEvery.
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgressLines(&buf, "bhsim run", "records")
	now := p.start
	p.now = func() time.Time { return now }
	for _, tt := range []struct {
		at    time.Duration
		done  int
		lines int
	}{
		{500 * time.Millisecond, 1, 0},
		{time.Second, 2, 1},
		{3 * time.Second, 3, 1},
		{time.Second + LineEvery, 4, 2},
		{time.Second + LineEvery + time.Second, 5, 2},
		{time.Second + 2*LineEvery, 6, 3},
	} {
		now = p.start.Add(tt.at)
		p.Task(0)(tt.done, 10)
		assert.Equal(t, tt.lines, strings.Count(buf.String(), "\n"), "at %s", tt.at)
	}
	p.Finish()
	assert.Equal(t, "bhsim run: records 2/10, 1 s, about 4 s left\n"+
		"bhsim run: records 4/10, 6 s, about 9 s left\n"+
		"bhsim run: records 6/10, 11 s, about 7 s left\n", buf.String(), "plain lines: no carriage return or erase")
}

// TestIsTerminal: a character device is a terminal (a progress line is
// redrawn), a buffer or a file is not (plain lines).
func TestIsTerminal(t *testing.T) {
	assert.False(t, IsTerminal(&bytes.Buffer{}))
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, IsTerminal(f), "a regular file")
	assert.True(t, ProgressOn(f, "x").lines, "plain lines into a file")
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	assert.True(t, IsTerminal(null), "a character device")
	assert.False(t, ProgressOn(null, "x").lines, "a line redrawn on a terminal")
}
