package source

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/scenario"
)

func TestBlkparseLines(t *testing.T) {
	const h = "  8,0    3        1     0.000001500   697"
	tests := []struct {
		name string
		line string
		opts []BlkparseOption
		want []IO
		err  string // a part of the error; "" for none
	}{
		{"write", h + "  Q  WS 223490 + 8 [kjournald]", nil,
			[]IO{{Kind: IOWrite, Offset: 223490 * 512, Length: 4096, CPU: 3, At: 1500, Line: 1, Flags: FlagSync}}, ""},
		{"read ahead", h + "  Q  RA 0 + 32 [cat]", nil,
			[]IO{{Kind: IORead, Length: 16384, CPU: 3, At: 1500, Line: 1, Flags: FlagAhead}}, ""},
		{"meta read", h + "  Q  RM 8 + 8 [ls]", nil,
			[]IO{{Kind: IORead, Offset: 4096, Length: 4096, CPU: 3, At: 1500, Line: 1, Flags: FlagMeta}}, ""},
		{"discard", h + "  Q   D 2048 + 2048 [fstrim]", nil,
			[]IO{{Kind: IODiscard, Offset: 1 << 20, Length: 1 << 20, CPU: 3, At: 1500, Line: 1}}, ""},
		{"empty preflush", h + "  Q FWS [fsync]", nil,
			[]IO{{Kind: IOFlush, CPU: 3, At: 1500, Line: 1, Flags: FlagSync}}, ""},
		{"preflush fua write", h + "  Q FWFSM 16 + 8 [jbd2/sda1-8]", nil,
			[]IO{{Kind: IOFlush, CPU: 3, At: 1500, Line: 1, Flags: FlagFUA | FlagSync | FlagMeta},
				{Kind: IOWrite, Offset: 8192, Length: 4096, CPU: 3, At: 1500, Line: 1, Flags: FlagFUA | FlagSync | FlagMeta}}, ""},
		{"old barrier", h + "  Q WBS 16 + 8 [kjournald]", nil,
			[]IO{{Kind: IOFlush, CPU: 3, At: 1500, Line: 1, Flags: FlagFUA | FlagSync},
				{Kind: IOWrite, Offset: 8192, Length: 4096, CPU: 3, At: 1500, Line: 1, Flags: FlagFUA | FlagSync}}, ""},
		{"kernel spelling of a flush", h + "  D  FF [kworker/0:1H]", []BlkparseOption{BlkparseReplay(BlkparseIssue)},
			[]IO{{Kind: IOFlush, CPU: 3, At: 1500, Line: 1}}, ""},
		{"elapsed of -t", h + "  D   W 100 + 8 (   12345) [fio]", []BlkparseOption{BlkparseReplay(BlkparseIssue)},
			[]IO{{Kind: IOWrite, Offset: 51200, Length: 4096, CPU: 3, At: 1500, Line: 1}}, ""},
		{"complete", h + "  C   W 100 + 8 [0]", []BlkparseOption{BlkparseReplay(BlkparseComplete)},
			[]IO{{Kind: IOWrite, Offset: 51200, Length: 4096, CPU: 3, At: 1500, Line: 1}}, ""},
		{"flush complete", h + "  C  FN 18446744073709551615 [0]", []BlkparseOption{BlkparseReplay(BlkparseComplete)},
			[]IO{{Kind: IOFlush, CPU: 3, At: 1500, Line: 1}}, ""},
		{"empty write complete", h + "  C  WS 0 [0]", []BlkparseOption{BlkparseReplay(BlkparseComplete)}, nil, ""},
		{"insert", h + "  I   R 8 + 8 [dd]", []BlkparseOption{BlkparseReplay(BlkparseInsert)},
			[]IO{{Kind: IORead, Offset: 4096, Length: 4096, CPU: 3, At: 1500, Line: 1}}, ""},
		{"not the replayed action", h + "  D   W 100 + 8 [fio]", nil, nil, ""},
		{"merge", h + "  M   W 100 + 8 [fio]", nil, nil, ""},
		{"plug", h + "  P   N [fio]", nil, nil, ""},
		{"unplug", h + "  U   N [fio] 1", nil, nil, ""},
		{"timer unplug", h + " UT   N [fio] 1", nil, nil, ""},
		{"split", h + "  X   W 100 / 108 [fio]", nil, nil, ""},
		{"remap", h + "  A   W 2048 + 8 <- (8,1) 0", nil, nil, ""},
		{"message", "  8,0    3        0     0.000001500     0  m   N cfq697 slice expired", nil, nil, ""},
		{"unknown action", h + "  Z   W 100 + 8 [fio]", nil, nil, ""},
		{"passthrough", h + "  Q   R 36 (12 00 00 ..) [sg_inq]", nil, nil, ""},
		{"N with data", h + "  Q   N 0 + 8 [x]", nil, nil, ""},
		{"summary header", "CPU0 (8,0):", nil, nil, ""},
		{"total header", "Total (sda):", nil, nil, ""},
		{"stat line", " Reads Queued:           0,        0KiB\t Writes Queued:         269,    1,076KiB", nil, nil, ""},
		{"throughput", "Throughput (R/W): 0KiB/s / 1,076KiB/s", nil, nil, ""},
		{"events", "Events (8,0): 1,019 entries", nil, nil, ""},
		{"skips", "Skips: 0 forward (0 -   0.0%)", nil, nil, ""},
		{"process header", "kjournald (697)", nil, nil, ""},
		{"blank", "   ", nil, nil, ""},
		{"input file line", "Input file sda.blktrace.0 added", nil, nil, ""},
		{"input file line of a long name", "Input file nvme0n1p2.blktrace.11 added", nil, nil, ""},
		{"other device with option", "  8,16   3        1     0.000001500   697  Q   W 0 + 8 [x]", []BlkparseOption{BlkparseDevice("8,0")}, nil, ""},

		{"garbage", "hello world", nil, nil, "line 1: blkparse: not a line of blkparse's default output"},
		{"short", "  8,0 3 1 0.0 697", nil, nil, "needs at least device"},
		{"bad device", "  8,x    3        1     0.000001500   697  Q   W 0 + 8 [x]", nil, nil, `device "8,x" is not MAJ,MIN`},
		{"bad cpu", "  8,0    x        1     0.000001500   697  Q   W 0 + 8 [x]", nil, nil, `cpu "x"`},
		{"cpu too large", "  8,0 99999        1     0.000001500   697  Q   W 0 + 8 [x]", nil, nil, `cpu "99999"`},
		{"bad sequence", "  8,0    3        z     0.000001500   697  Q   W 0 + 8 [x]", nil, nil, `sequence "z"`},
		{"bad time", "  8,0    3        1     0.0000015x0   697  Q   W 0 + 8 [x]", nil, nil, `time "0.0000015x0"`},
		{"bad pid", "  8,0    3        1     0.000001500   p97  Q   W 0 + 8 [x]", nil, nil, `pid "p97"`},
		{"bad action", "  8,0    3        1     0.000001500   697  Q1   W 0 + 8 [x]", nil, nil, `action "Q1"`},
		{"no rwbs", "  8,0    3        1     0.000001500   697  Q", nil, nil, "no rwbs"},
		{"bad rwbs", h + "  Q  WQ 0 + 8 [x]", nil, nil, `rwbs "WQ"`},
		{"bad sectors", h + "  Q   W a + 8 [x]", nil, nil, `"a + 8" is not SECTOR + COUNT`},
		{"no name", h + "  Q   W 0 + 8", nil, nil, "no [process]"},
		{"nothing after rwbs", h + "  Q   W", nil, nil, "no SECTOR + COUNT"},
		{"truncated after +", h + "  Q  WS 223490 +", nil, nil, `"223490 +" is truncated: no COUNT after SECTOR +`},
		{"truncated complete after +", h + "  C  WS 223490 +", []BlkparseOption{BlkparseReplay(BlkparseComplete)}, nil, "is truncated"},
		{"input file line almost", "Input file sda.blktrace.0", nil, nil, "not a line of blkparse's default output"},
		{"overflow", h + "  Q   W 36028797018963968 + 8 [x]", nil, nil, "do not fit 64-bit byte offsets"},
		{"bad replay option", h + "  Q   W 0 + 8 [x]", []BlkparseOption{BlkparseReplay('M')}, nil, `cannot replay action "M"`},
		{"bad device option", h + "  Q   W 0 + 8 [x]", []BlkparseOption{BlkparseDevice("sda")}, nil, `device "sda" is not MAJ,MIN`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadAll(NewBlkparseReader(strings.NewReader(tt.line+"\n"), tt.opts...))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestBlkparseDevices(t *testing.T) {
	text := "  8,0    0        1     0.000000000     1  Q   W 0 + 8 [a]\n" +
		"  8,16   0        2     0.000000100     1  Q   W 8 + 8 [a]\n"
	_, err := ReadAll(NewBlkparseReader(strings.NewReader(text)))
	assert.EqualError(t, err, "line 2: blkparse: device 8,16 is not the trace's device 8,0 (choose one with TraceSelect.Device)")
	got, err := ReadAll(NewBlkparseReader(strings.NewReader(text), BlkparseDevice("8,16")))
	require.NoError(t, err)
	assert.Equal(t, []IO{{Kind: IOWrite, Offset: 4096, Length: 4096, At: 100, Line: 2}}, got)
}

// TestBlkparseInputFiles reads a saved blkparse output (blkparse -i sda >
// out.txt): one "Input file" line per CPU first, and again where a second
// output was appended.
func TestBlkparseInputFiles(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(tracesDir, "sample.blkparse"))
	require.NoError(t, err)
	want, err := ReadAll(NewBlkparseReader(strings.NewReader(string(text))))
	require.NoError(t, err)
	head := "Input file sdb.blktrace.0 added\nInput file sdb.blktrace.1 added\n"
	got, err := ReadAll(NewBlkparseReader(strings.NewReader(head + string(text) + head)))
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i := range got {
		assert.Equal(t, want[i].Line+2, got[i].Line)
	}
}

// TestBlkparseOrphanMerges: a Q replay of a trace whose merges come without
// their Q (an old blktrace's) is refused past a few, naming the fix; the
// same merges after their Q, or a D replay, read.
func TestBlkparseOrphanMerges(t *testing.T) {
	var orphan, paired strings.Builder
	for i := 0; i < 6; i++ {
		sec := 100 + 8*i
		fmt.Fprintf(&orphan, "  8,0    0 %8d     0.%09d   697  M  WS %d + 8 [jbd2]\n", 2*i+1, 10*i, sec)
		fmt.Fprintf(&orphan, "  8,0    0 %8d     0.%09d   697  D  WS %d + 8 [jbd2]\n", 2*i+2, 10*i+5, sec)
		fmt.Fprintf(&paired, "  8,0    0 %8d     0.%09d   697  Q  WS %d + 8 [jbd2]\n", 2*i+1, 10*i, sec)
		fmt.Fprintf(&paired, "  8,0    0 %8d     0.%09d   697  M  WS %d + 8 [jbd2]\n", 2*i+2, 10*i+5, sec)
	}
	_, err := ReadAll(NewBlkparseReader(strings.NewReader(orphan.String())))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 9: blkparse: 5 merges (M or F events, the first on line 1) of bios with no Q event before them")
	assert.Contains(t, err.Error(), "replay its D (issued) events (TraceSelect.Action D)")
	got, err := ReadAll(NewBlkparseReader(strings.NewReader(orphan.String()), BlkparseReplay(BlkparseIssue)))
	require.NoError(t, err)
	assert.Len(t, got, 6)
	got, err = ReadAll(NewBlkparseReader(strings.NewReader(paired.String())))
	require.NoError(t, err)
	assert.Len(t, got, 6)
}

// TestBlkparseSummary reads two blkparse outputs one after the other: the
// first's summary is skipped and the second's events read.
func TestBlkparseSummary(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(tracesDir, "sample.blkparse"))
	require.NoError(t, err)
	one, err := ReadAll(NewBlkparseReader(strings.NewReader(string(text))))
	require.NoError(t, err)
	two, err := ReadAll(NewBlkparseReader(strings.NewReader(string(text) + string(text))))
	require.NoError(t, err)
	require.Len(t, two, 2*len(one))
	lines := strings.Count(string(text), "\n")
	for i, rec := range two[len(one):] {
		want := one[i]
		want.Line += lines
		assert.Equal(t, want, rec)
	}
	// A summary with per-process blocks (blkparse -s).
	perProcess := "kjournald (697)\n Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB\n Allocation wait:        0        \t Allocation wait:         0\n\n"
	got, err := ReadAll(NewBlkparseReader(strings.NewReader(string(text) + perProcess)))
	require.NoError(t, err)
	assert.Equal(t, one, got)
	// A garbage line inside the summary is skipped; before it, an error.
	_, err = ReadAll(NewBlkparseReader(strings.NewReader(string(text) + "garbage\n")))
	assert.NoError(t, err)
	_, err = ReadAll(NewBlkparseReader(strings.NewReader("garbage\n" + string(text))))
	assert.Error(t, err)
}

func TestBlkparseSample(t *testing.T) {
	f, err := os.Open(filepath.Join(tracesDir, "sample.blkparse"))
	require.NoError(t, err)
	defer f.Close()
	got, err := ReadAll(NewBlkparseReader(f))
	require.NoError(t, err)
	want := []IO{
		{Kind: IORead, Offset: 4456448 * 512, Length: 4096, CPU: 2, At: 0, Line: 1, Flags: FlagMeta},
		{Kind: IORead, Offset: 4456456 * 512, Length: 4096, CPU: 2, At: 302000, Line: 8, Flags: FlagMeta},
		{Kind: IOWrite, Offset: 8390656 * 512, Length: 4096, CPU: 0, At: 5099900000, Line: 12, Flags: FlagSync},
		{Kind: IOWrite, Offset: 8390664 * 512, Length: 4096, CPU: 0, At: 5099905000, Line: 15, Flags: FlagSync},
		{Kind: IOWrite, Offset: 8390672 * 512, Length: 4096, CPU: 0, At: 5099908000, Line: 17, Flags: FlagSync},
		{Kind: IOFlush, CPU: 0, At: 5100400000, Line: 23, Flags: FlagFUA | FlagSync},
		{Kind: IOWrite, Offset: 8390680 * 512, Length: 4096, CPU: 0, At: 5100400000, Line: 23, Flags: FlagFUA | FlagSync},
		{Kind: IOWrite, Offset: 2099200 * 512, Length: 128 << 10, CPU: 1, At: 9999900000, Line: 29},
		{Kind: IODiscard, Offset: 16779264 * 512, Length: 4 << 20, CPU: 3, At: 19999900000, Line: 36},
		{Kind: IOFlush, CPU: 2, At: 20999900000, Line: 40, Flags: FlagSync},
	}
	assert.Equal(t, want, got)
	for _, rec := range got {
		assert.NoError(t, rec.Valid())
	}
}

// TestBlkparseLoopTraces reads the real traces (WriteBlkparse's conversion
// of the host runner's dumps, see docs/traces.md) and checks them against
// the recorded kernel results of their scenarios: the queued bios are the
// result's bios, the issued requests its requests, byte for byte.
func TestBlkparseLoopTraces(t *testing.T) {
	tests := []struct{ file, scenario string }{
		{"loop-6.18.blkparse", "plug-write-4m"},
		{"loop-6.18-rmw-cached.blkparse", "rmw-cached"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res, err := scenario.ReadResultFile(filepath.Join("../../testdata/kernel/6.18", tt.scenario+".json"))
			require.NoError(t, err)
			text, err := os.ReadFile(filepath.Join(tracesDir, tt.file))
			require.NoError(t, err)
			total := res.Total
			sizes := func(prefix string, recs []IO, kind IOKind) map[string]uint64 {
				m := map[string]uint64{}
				for _, r := range recs {
					if r.Kind == kind {
						m[fmt.Sprintf("%s=%d", prefix, r.Length)]++
					}
				}
				return m
			}
			want := func(names map[string]uint64) map[string]uint64 {
				m := map[string]uint64{}
				for name := range names {
					m[name] = total.Value(name)
				}
				return m
			}
			count := func(recs []IO, kind IOKind) (n, sectors uint64) {
				for _, r := range recs {
					if r.Kind == kind {
						n++
						sectors += r.Length / 512
					}
				}
				return n, sectors
			}

			// Q: the bios.
			bios, err := ReadAll(NewBlkparseReader(strings.NewReader(string(text))))
			require.NoError(t, err)
			n, _ := count(bios, IOWrite)
			assert.Equal(t, total.Value("bio.write"), n, "bio.write")
			n, _ = count(bios, IORead)
			assert.Equal(t, total.Value("bio.read"), n, "bio.read")
			n, _ = count(bios, IOFlush)
			assert.Equal(t, total.Value("bio.flush"), n, "bio.flush")
			assert.Equal(t, total.Value("bio.preflush"), n, "every flush is an empty preflush write")
			ws, rs := sizes("bio.write.bytes", bios, IOWrite), sizes("bio.read.bytes", bios, IORead)
			assert.Equal(t, want(ws), ws)
			assert.Equal(t, want(rs), rs)
			ahead := uint64(0)
			for _, b := range bios {
				if b.Flags&FlagAhead != 0 {
					ahead++
				}
			}
			assert.Equal(t, total.Value("bio.read.ahead"), ahead, "bio.read.ahead")

			// D: the requests, and the sectors they moved.
			rqs, err := ReadAll(NewBlkparseReader(strings.NewReader(string(text)), BlkparseReplay(BlkparseIssue)))
			require.NoError(t, err)
			n, sec := count(rqs, IOWrite)
			assert.Equal(t, total.Value("rq.write"), n, "rq.write")
			assert.Equal(t, total.Value("sectors.written"), sec, "sectors.written")
			n, sec = count(rqs, IORead)
			assert.Equal(t, total.Value("rq.read"), n, "rq.read")
			assert.Equal(t, total.Value("sectors.read"), sec, "sectors.read")
			n, _ = count(rqs, IOFlush)
			assert.Equal(t, total.Value("rq.flush"), n, "rq.flush")
			rws := sizes("rq.write.bytes", rqs, IOWrite)
			assert.Equal(t, want(rws), rws)

			// C: every request completed; the empty completion of the
			// preflush write is not a record.
			done, err := ReadAll(NewBlkparseReader(strings.NewReader(string(text)), BlkparseReplay(BlkparseComplete)))
			require.NoError(t, err)
			cLines := 0
			for _, l := range strings.Split(string(text), "\n") {
				if f := strings.Fields(l); len(f) > 6 && f[5] == "C" {
					cLines++
				}
			}
			assert.Equal(t, total.Value("rq.complete"), uint64(cLines), "rq.complete")
			assert.Equal(t, len(rqs), len(done), "each issued request completes")
		})
	}
}
