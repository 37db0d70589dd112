package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"LRU hit", []string{"explain", "find-get-block-hit"}, []string{
			"one __find_get_block(bdev, 1, 4096)", "profile x86-server", "lru-hits", "1.000 ×", "(costs: the profile's built-in figures)"}},
		{"Tosatti's miss", []string{"explain", "find-get-block-miss"}, []string{"__find_get_block(bdev, 1, 512)", "lru-compares", "16.000 ×"}},
		{"slow path at block 4G", []string{"explain", "find-get-block-slow", "--block", "4294967296"}, []string{
			"32 TiB", "index height 6", "index-levels", "6.000 ×"}},
		{"fitted profile", []string{"explain", "--fitted", "find-get-block-hit"}, []string{"calibrated by the thread"}},
		{"write-page 1024", []string{"explain", "write-page", "--bsize", "1024", "--count", "4"}, []string{
			"block size 1024", "profile helios4", "cpu0 (dd)", "bios", "4.000 ×", "sda", "disk service", "sets the pace"}},
		{"write-page raid6", []string{"explain", "write-page", "--layout", "raid6", "--count", "4"}, []string{
			"/dev/md0 (raid6)", "md0_raid6", "parity-bytes", "sdd"}},
		{"iomap", []string{"explain", "iomap-write-page", "--bs", "800K", "--count", "4"}, []string{
			"bs=800K count=4", "kernel 6.6", "iomap_write_iter with 2M chunks", "faultin-pages", "profile xu-yang-board"}},
		{"iomap fix, other profile", []string{"explain", "iomap-write-page", "--kernel", "6.6-fix", "--count", "2", "--profile", "helios4"}, []string{
			"iomap_write_iter with 4K chunks", "profile helios4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			require.Equal(t, 0, run(tc.args, &out, &errb), errb.String())
			for _, w := range tc.want {
				assert.Contains(t, out.String(), w)
			}
			assert.Empty(t, errb.String())
		})
	}
}

func TestExplainCrashLoss(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"explain", "crash-loss", "--count", "8"}, &out, &errb), errb.String())
	assert.Contains(t, out.String(), "after dd's close")
	assert.Contains(t, out.String(), "lost MiB")
	out.Reset()
	errb.Reset()
	assert.Equal(t, 2, run([]string{"explain", "crash-loss", "--bs", "1M"}, &out, &errb))
	assert.Contains(t, errb.String(), "does not apply")
	errb.Reset()
	assert.Equal(t, 2, run([]string{"explain", "nope"}, &out, &errb))
	assert.Contains(t, errb.String(), "crash-loss")
}
