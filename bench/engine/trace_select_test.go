package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/source"
)

// TestTraceSelect: TraceDevice.Select replays the chosen device, file or
// action of a trace that holds several, refuses a choice the trace's format
// has no use for, and says what it chose when nothing matched.
func TestTraceSelect(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	blk := write("two.blkparse", "  8,0    0        1     0.000000000     1  Q   W 0 + 8 [a]\n"+
		"  8,16   0        2     0.000000100     1  Q   W 8 + 16 [a]\n"+
		"  8,16   0        3     0.000000200     1  D   W 8 + 16 [a]\n")
	fio := write("two.iolog", "fio version 2 iolog\n/dev/sdb add\n/dev/sdc add\n/dev/sdb open\n/dev/sdc open\n"+
		"/dev/sdb write 0 512\n/dev/sdc write 4096 1024\n")
	csv := write("one.csv", "write,0,4K\n")
	records := func(w Workload) []source.IO {
		rd, err := w.Open()
		require.NoError(t, err)
		ios, err := source.ReadAll(rd)
		require.NoError(t, err)
		return ios
	}
	for _, tc := range []struct {
		name, path string
		sel        source.TraceSelect
		want       []source.IO
		err        string
	}{
		{"blkparse: two devices", blk, source.TraceSelect{}, nil, "device 8,16 is not the trace's device 8,0"},
		{"blkparse: one device", blk, source.TraceSelect{Device: "8,16"}, []source.IO{{Kind: source.IOWrite, Offset: 4096, Length: 8192, At: 100, Line: 2}}, ""},
		{"blkparse: the issued requests", blk, source.TraceSelect{Device: "8,16", Action: source.BlkparseIssue}, []source.IO{{Kind: source.IOWrite, Offset: 4096, Length: 8192, At: 200, Line: 3}}, ""},
		{"blkparse: a device it does not hold", blk, source.TraceSelect{Device: "8,32"}, nil, "two.blkparse: no records of device 8,32"},
		{"fio: two files", fio, source.TraceSelect{}, nil, "but the trace's file is /dev/sdb"},
		{"fio: one file", fio, source.TraceSelect{File: "/dev/sdc"}, []source.IO{{Kind: source.IOWrite, Offset: 4096, Length: 1024, Line: 7}}, ""},
		{"fio: a file it does not name", fio, source.TraceSelect{File: "/dev/sdz"}, nil, "no records of file /dev/sdz"},
		{"a device for a fio iolog", fio, source.TraceSelect{Device: "8,0"}, nil, "applies to a trace whose records name devices (blkparse, msr, spc, alibaba, disksim, columns), not to a fio one"},
		{"an action for a fio iolog", fio, source.TraceSelect{Action: source.BlkparseIssue}, nil, "an action to replay applies to a blkparse trace, not to a fio one"},
		{"a file for CSV", csv, source.TraceSelect{File: "x"}, nil, "applies to a fio iolog, not to a csv trace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := TraceWorkload(tc.path, TraceDevice{Size: 1 << 20, Select: tc.sel})
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, records(w))
		})
	}
}

// TestTraceWorkloadHolds: a small trace's records are kept from
// TraceWorkload's pass and replayed from memory, each Open from the first
// record, equal to the file's own — flags, CPUs, lines and times too.
func TestTraceWorkloadHolds(t *testing.T) {
	for _, name := range []string{"sample.blkparse", "sample.csv", "financial.spc", "sample.csv.zst"} {
		path := filepath.Join(tracesDir, name)
		tr, err := source.OpenTrace(path)
		require.NoError(t, err)
		want, err := source.ReadAll(tr)
		require.NoError(t, err)
		tr.Close()
		w, err := TraceWorkload(path, TraceDevice{Size: 64 << 30})
		require.NoError(t, err)
		for range 2 {
			r, err := w.Open()
			require.NoError(t, err)
			_, isFile := r.(*source.Trace)
			assert.False(t, isFile, "%s: replayed from memory", name)
			got, err := source.ReadAll(r)
			require.NoError(t, err)
			assert.Equal(t, want, got, name)
		}
	}
}

// TestTraceWorkloadOnePass: a trace file read in one pass
// (TraceDevice.OnePass) runs to the result the two passes give on the same
// CPUs, for every format, compressed or not; it needs the device's size,
// each Open reads the file afresh, and a miss-ratio curve refuses it.
func TestTraceWorkloadOnePass(t *testing.T) {
	for _, name := range []string{"sample.blkparse", "sample.csv", "financial.spc", "sample.csv.zst", "sample-v3.iolog", "msr-hm_0.csv"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(tracesDir, name)
			dev := TraceDevice{Size: 64 << 30}
			two, err := TraceWorkload(path, dev)
			require.NoError(t, err)
			require.False(t, two.Streamed)
			dev.OnePass = true
			one, err := TraceWorkload(path, dev)
			require.NoError(t, err)
			assert.True(t, one.Streamed)
			assert.Zero(t, one.Records, "no first pass counts them")
			o := RunOptions{CPUs: two.CPUs}
			want, err := Run(context.Background(), two, o)
			require.NoError(t, err)
			got, err := Run(context.Background(), one, o)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	path := filepath.Join(tracesDir, "sample.csv")
	_, err := TraceWorkload(path, TraceDevice{OnePass: true})
	assert.ErrorContains(t, err, "is to be read in one pass (TraceDevice.OnePass), so its device size cannot come from a first pass over it")
	one, err := TraceWorkload(path, TraceDevice{Size: 1 << 20, OnePass: true})
	require.NoError(t, err)
	for range 2 { // each Open reopens the file
		r, err := one.Open()
		require.NoError(t, err)
		recs, err := source.ReadAll(r)
		require.NoError(t, err)
		assert.NotEmpty(t, recs)
	}
	_, err = Run(context.Background(), one, RunOptions{MRCSizes: []int{4}})
	assert.ErrorIs(t, err, ErrRunOptions)
	assert.ErrorContains(t, err, "a miss-ratio curve reruns the workload once per LRU size")
}

// TestOnePassProgress: a trace read in one pass has no record count, so
// its progress estimates the total from how much of the file has been
// read: near the true count, never below the records done, and exact at
// the end.
func TestOnePassProgress(t *testing.T) {
	const n = 3 * runProgressEvery / 2
	var b strings.Builder
	b.WriteString("op,offset,length\n")
	for i := range n {
		fmt.Fprintf(&b, "write,%d,4K\n", 4096*(i%256))
	}
	path := filepath.Join(t.TempDir(), "t.csv")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	w, err := TraceWorkload(path, TraceDevice{Size: 1 << 20, OnePass: true})
	require.NoError(t, err)
	type call struct{ done, total uint64 }
	var calls []call
	_, err = Run(context.Background(), w, RunOptions{Disk: Disk{Name: "null"}, Progress: func(done, total uint64) { calls = append(calls, call{done, total}) }})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(calls), 2, "on the way, and at the end")
	i := slices.IndexFunc(calls, func(c call) bool { return c.done == runProgressEvery })
	require.GreaterOrEqual(t, i, 0, "a report at %d records: %v", runProgressEvery, calls)
	for _, c := range calls[:len(calls)-1] {
		assert.Greater(t, c.total, c.done)
		assert.LessOrEqual(t, c.total, uint64(n), "the reader is ahead, so the estimate is low")
	}
	// Records read per byte read, the bytes read ahead into the reader's
	// two 64 KiB buffers counted: 5 % low on this 1.5 MB file (93,749 of
	// 98,304), half a percent on a 1M-record file's 20 MB.
	assert.InEpsilon(t, float64(n), float64(calls[i].total), 0.1, "the estimate")
	assert.Equal(t, call{n, n}, calls[len(calls)-1])
}
