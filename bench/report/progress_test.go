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

func TestIsTerminal(t *testing.T) {
	assert.False(t, IsTerminal(&bytes.Buffer{}))
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, IsTerminal(f), "a regular file")
	assert.Nil(t, NewTerminalProgress(f, "bhsim test", "a"), "no progress line in a file")
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	assert.True(t, IsTerminal(null), "a character device")
	assert.NotNil(t, NewTerminalProgress(null, "bhsim test", "a"))
}
