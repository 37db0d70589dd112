package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
