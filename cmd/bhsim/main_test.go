package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrors runs every command-line error: each exits with status 2 and
// one line on stderr naming what is valid, and prints nothing on stdout.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "usage: bhsim reproduce|sweep|explain"},
		{"unknown command", []string{"frobnicate"}, "valid: reproduce, sweep, explain"},

		{"reproduce: unknown thread", []string{"reproduce", "nope"}, "alloc, blocksize, iomap, lru)"},
		{"reproduce: unknown format", []string{"reproduce", "--format", "xml"}, "valid: text, csv, json"},
		{"reproduce: unknown profile", []string{"reproduce", "--profile", "vax"}, "valid: x86-server, helios4"},
		{"reproduce: bad flag", []string{"reproduce", "--nope"}, "flags: --format, --plot, --profile"},
		{"reproduce: flag without value", []string{"reproduce", "lru", "--format"}, "flag needs an argument"},

		{"sweep: unknown scenario", []string{"sweep", "--scenario", "fio"}, "unknown scenario \"fio\" (valid: dd)"},
		{"sweep: unknown machine", []string{"sweep", "--machine", "vax"}, "valid: helios4, xu-yang"},
		{"sweep: unknown preset", []string{"sweep", "--preset", "5.10.10,4.19"}, "unknown kernel preset \"4.19\" (valid: 9011495c9466"},
		{"sweep: unknown layout", []string{"sweep", "--layout", "raid5"}, "unknown layout \"raid5\" (valid: direct, raid0, raid10f2, raid10n2, raid6)"},
		{"sweep: unknown block size", []string{"sweep", "--blocksize", "3000"}, "valid: grow, logical, 512"},
		{"sweep: unknown profile", []string{"sweep", "--profile", "vax"}, "valid: x86-server"},
		{"sweep: unknown format", []string{"sweep", "--format", "yaml"}, "valid: text, csv, json"},
		{"sweep: unknown op", []string{"sweep", "--op", "trim"}, "unknown op \"trim\" (valid: write, read)"},
		{"sweep: bad bs", []string{"sweep", "--bs", "1Q"}, "--bs: invalid size \"1Q\""},
		{"sweep: bad size", []string{"sweep", "--size", "0"}, "--size: invalid size"},
		{"sweep: one CPU", []string{"sweep", "--cpus", "1"}, "at least 2"},
		{"sweep: bad count", []string{"sweep", "--count", "-3"}, "invalid count"},
		{"sweep: count and size", []string{"sweep", "--count", "1", "--size", "1M"}, "not both"},
		{"sweep: argument", []string{"sweep", "raid0"}, "sweep takes flags only"},
		{"sweep: bad flag", []string{"sweep", "--kernel", "6.6"}, "--preset"},

		{"explain: no op", []string{"explain"}, "name one operation (valid: find-get-block-hit"},
		{"explain: two ops", []string{"explain", "write-page", "find-get-block-hit"}, "name one operation"},
		{"explain: unknown op", []string{"explain", "getblk"}, "unknown operation \"getblk\" (valid: find-get-block-hit"},
		{"explain: unknown profile", []string{"explain", "write-page", "--profile", "vax"}, "valid: x86-server"},
		{"explain: unknown layout", []string{"explain", "write-page", "--layout", "jbod"}, "valid: direct, raid0"},
		{"explain: bad block size", []string{"explain", "write-page", "--bsize", "8192"}, "valid: 512, 1024, 2048, 4096"},
		{"explain: huge block size", []string{"explain", "write-page", "--bsize", "4294967808"}, "valid: 512, 1024, 2048, 4096"},
		{"explain: unknown kernel", []string{"explain", "iomap-write-page", "--kernel", "6.1"}, "valid: 6.6, 6.6-revert, 6.6-fix"},
		{"explain: bad bs", []string{"explain", "iomap-write-page", "--bs", "lots"}, "--bs: invalid size"},
		{"explain: block past the end", []string{"explain", "find-get-block-slow", "--block", "9999999999999"}, "past the end"},
		{"explain: flag of another op", []string{"explain", "write-page", "--bs", "1M"}, "--bs does not apply to write-page (its flags: --profile, --fitted, --bsize, --layout, --count)"},
		{"explain: bad flag", []string{"explain", "write-page", "--nope"}, "--bsize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			assert.Equal(t, 2, run(tc.args, &out, &errb))
			assert.Contains(t, errb.String(), tc.want)
			assert.Equal(t, 1, bytes.Count(errb.Bytes(), []byte("\n")), "one line: %q", errb.String())
			assert.Empty(t, out.String())
		})
	}
}

func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--help"}, "usage: bhsim reproduce|sweep|explain"},
		{[]string{"reproduce", "--help"}, "-plot DIR"},
		{[]string{"sweep", "-h"}, "bhsim sweep --layout raid0,raid6"},
		{[]string{"explain", "--help"}, "iomap-write-page"},
	} {
		var out, errb bytes.Buffer
		assert.Equal(t, 0, run(tc.args, &out, &errb), tc.args)
		assert.Contains(t, out.String(), tc.want)
		assert.Empty(t, errb.String())
	}
}

func TestIsTerminal(t *testing.T) {
	assert.False(t, isTerminal(&bytes.Buffer{}))
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "a regular file")
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	assert.True(t, isTerminal(null), "a character device")
}

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	assert.Nil(t, progressLine(&buf, false, "sweep", time.Now()), "not a terminal: no progress")

	quick := progressLine(&buf, true, "sweep", time.Now())
	require.NotNil(t, quick)
	quick(1, 2)
	quick(2, 2)
	assert.Empty(t, buf.String(), "under a second: nothing shown")

	slow := progressLine(&buf, true, "sweep", time.Now().Add(-2*time.Second))
	slow(1, 3)
	slow(3, 3)
	assert.Regexp(t, `^\rbhsim sweep: 1/3 cells, 2 s\rbhsim sweep: 3/3 cells, 2 s\n$`, buf.String())
}
