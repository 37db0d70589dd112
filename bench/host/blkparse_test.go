package host

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blkparseRawSample is raw tracefs text as the host runner dumps it, with
// an event of every kind WriteBlkparse converts: a plug before the first
// event that names the device, a readahead read queued, inserted, issued
// and completed, meta writes with a front merge, a split, a remap, a
// requeue, a completion with an error, a PREFLUSH|FUA write, a discard, an
// empty PREFLUSH write and its flush request, an event of another device,
// events blktrace has no action for, markers, comments and a garbage line.
const blkparseRawSample = `# tracer: nop
#
# entries-in-buffer/entries-written: 30/30   #P:2
#
          record-24937   [001] ...1.  1266.792856: tracing_mark_write: bhsim begin 3
          record-24937   [001] .....  1266.792870: block_plug: [record]
          record-24937   [001] .....  1266.792900: block_bio_queue: 7,8 RA 0 + 32 [record]
          record-24937   [001] .....  1266.792902: block_getrq: 7,8 RA 0 + 32 [record]
          record-24937   [001] .....  1266.792910: block_unplug: [record] 1
          record-24937   [001] .....  1266.792911: block_rq_insert: 7,8 RA 16384 () 0 + 32 none,0,0 [record]
          record-24937   [001] .....  1266.792912: block_rq_issue: 7,8 RA 16384 () 0 + 32 none,0,0 [record]
     ksoftirqd/1-22      [001] ..s..  1266.793000: block_rq_complete: 7,8 RA () 0 + 32 none,0,0 [0]
          record-24937   [001] .....  1266.793100: mm_filemap_add_to_page_cache: dev 0:3 ino 700008 pfn=0x1 ofs=0 order=0
          record-24937   [001] .....  1266.793200: block_dirty_buffer: 7,8 sector=2 size=512
          record-24937   [000] .N...  1266.794000: block_bio_queue: 7,8 WSM 8 + 8 [record]
          record-24937   [000] .N...  1266.794001: block_getrq: 7,8 WSM 8 + 8 [record]
          record-24937   [000] .N...  1266.794002: block_bio_queue: 7,8 WSM 0 + 8 [record]
          record-24937   [000] .N...  1266.794003: block_bio_frontmerge: 7,8 WSM 0 + 8 [record]
          record-24937   [000] .N...  1266.794004: block_bio_queue: 7,9 W 0 + 8 [other]
          record-24937   [000] .....  1266.794005: block_split: 7,8 W 64 / 72 [record]
          record-24937   [000] .....  1266.794006: block_bio_remap: 7,8 W 2048 + 8 <- (259,1) 0
          record-24937   [000] .....  1266.794010: block_rq_issue: 7,8 WSM 8192 () 0 + 16 be,0,4 [record]
    kworker/0:1H-77      [000] .....  1266.794020: block_rq_requeue: 7,8 WSM () 0 + 16 be,0,4 [0]
    kworker/0:1H-77      [000] .....  1266.794030: block_rq_issue: 7,8 WSM 8192 () 0 + 16 be,0,4 [kworker/0:1H]
          <idle>-0       [001] ..s1.  1266.794100: block_rq_complete: 7,8 WSM () 0 + 16 be,0,4 [-5]
          record-24937   [000] .....  1266.795000: block_bio_queue: 7,8 FWFS 256 + 8 [record]
          record-24937   [000] .....  1266.795001: block_bio_queue: 7,8 DS 4096 + 2048 [fstrim]
          record-24937   [000] .....  1266.795002: block_bio_queue: 7,8 FWS 0 + 0 [record]
          record-24937   [000] .....  1266.795003: block_getrq: 7,8 FWS 0 + 0 [record]
    kworker/0:1H-77      [000] .....  1266.795010: block_rq_issue: 7,8 FF 0 () 0 + 0 none,0,0 [kworker/0:1H]
     ksoftirqd/0-15      [000] ..s..  1266.795020: block_rq_complete: 7,8 FF () 18446744073709551615 + 0 none,0,0 [0]
     ksoftirqd/0-15      [000] d.s1.  1266.795021: block_rq_complete: 7,8 WS () 0 + 0 be,0,4 [0]
this line is garbage
          record-24937   [000] ...1.  1266.795100: tracing_mark_write: bhsim end 3
`

// blkparseWantSample is what blkparse would print for it.
const blkparseWantSample = `  7,8    1        1     0.000000000 24937  P   N [record]
  7,8    1        2     0.000030000 24937  Q  RA 0 + 32 [record]
  7,8    1        3     0.000032000 24937  G  RA 0 + 32 [record]
  7,8    1        4     0.000040000 24937  U   N [record] 1
  7,8    1        5     0.000041000 24937  I  RA 0 + 32 [record]
  7,8    1        6     0.000042000 24937  D  RA 0 + 32 [record]
  7,8    1        7     0.000130000    22  C  RA 0 + 32 [0]
  7,8    0        1     0.001130000 24937  Q WSM 8 + 8 [record]
  7,8    0        2     0.001131000 24937  G WSM 8 + 8 [record]
  7,8    0        3     0.001132000 24937  Q WSM 0 + 8 [record]
  7,8    0        4     0.001133000 24937  F WSM 0 + 8 [record]
  7,8    0        5     0.001135000 24937  X   W 64 / 72 [record]
  7,8    0        6     0.001136000 24937  A   W 2048 + 8 <- (259,1) 0
  7,8    0        7     0.001140000 24937  D WSM 0 + 16 [record]
  7,8    0        8     0.001150000    77  R WSM 0 + 16 [0]
  7,8    0        9     0.001160000    77  D WSM 0 + 16 [kworker/0:1H]
  7,8    1        8     0.001230000     0  C WSM 0 + 16 [-5]
  7,8    0       10     0.002130000 24937  Q FWFS 256 + 8 [record]
  7,8    0       11     0.002131000 24937  Q  DS 4096 + 2048 [fstrim]
  7,8    0       12     0.002132000 24937  Q FWS [record]
  7,8    0       13     0.002133000 24937  G FWS [record]
  7,8    0       14     0.002140000    77  D  FN [kworker/0:1H]
  7,8    0       15     0.002150000    15  C  FN 18446744073709551615 [0]
  7,8    0       16     0.002151000    15  C  WS 0 [0]
CPU0 (7,8):
 Reads Queued:           0,        0KiB	 Writes Queued:           5,    1,036KiB
 Read Dispatches:        1,        0KiB	 Write Dispatches:        2,        8KiB
 Reads Requeued:         0		 Writes Requeued:         1
 Reads Completed:        1,        0KiB	 Writes Completed:        1,        0KiB
 Read Merges:            0,        0KiB	 Write Merges:            1,        4KiB
 Read depth:             1        	 Write depth:             1
 IO unplugs:             0        	 Timer unplugs:           0
CPU1 (7,8):
 Reads Queued:           1,       16KiB	 Writes Queued:           0,        0KiB
 Read Dispatches:        1,       16KiB	 Write Dispatches:        0,        0KiB
 Reads Requeued:         0		 Writes Requeued:         0
 Reads Completed:        1,       16KiB	 Writes Completed:        1,        8KiB
 Read Merges:            0,        0KiB	 Write Merges:            0,        0KiB
 Read depth:             1        	 Write depth:             1
 IO unplugs:             1        	 Timer unplugs:           0

Total (7,8):
 Reads Queued:           1,       16KiB	 Writes Queued:           5,    1,036KiB
 Read Dispatches:        2,       16KiB	 Write Dispatches:        2,        8KiB
 Reads Requeued:         0		 Writes Requeued:         1
 Reads Completed:        2,       16KiB	 Writes Completed:        2,        8KiB
 Read Merges:            0,        0KiB	 Write Merges:            1,        4KiB
 IO unplugs:             1        	 Timer unplugs:           0

Throughput (R/W): 8,000KiB/s / 4,000KiB/s
Events (7,8): 24 entries
Skips: 0 forward (0 -   0.0%)
`

func TestWriteBlkparse(t *testing.T) {
	var b bytes.Buffer
	st, err := WriteBlkparse(&b, strings.NewReader(blkparseRawSample), BlkparseOptions{})
	require.NoError(t, err)
	assert.Equal(t, blkparseWantSample, b.String())
	assert.Equal(t, BlkparseStats{Device: "7,8", Events: 24, Skipped: 10}, st)
}

func TestWriteBlkparseDevice(t *testing.T) {
	var b bytes.Buffer
	st, err := WriteBlkparse(&b, strings.NewReader(blkparseRawSample), BlkparseOptions{Device: "7,9"})
	require.NoError(t, err)
	assert.Equal(t, "7,9", st.Device)
	// The other device's one event, and the plugs and unplugs, which are
	// the converted device's.
	assert.Equal(t, 3, st.Events)
	assert.Contains(t, b.String(), "  7,9    1        1     0.000000000 24937  P   N [record]\n")
	assert.Contains(t, b.String(), "  7,9    1        2     0.000040000 24937  U   N [record] 1\n")
	assert.Contains(t, b.String(), "  7,9    0        1     0.001134000 24937  Q   W 0 + 8 [other]\n")
	assert.Contains(t, b.String(), "Events (7,9): 3 entries\n")
	assert.Contains(t, b.String(), "\nTotal (7,9):\n", "two CPUs: a total")

	for _, bad := range []string{"7", "7,", "a,b", "7,8,9", "-1,2"} {
		_, err := WriteBlkparse(&b, strings.NewReader(""), BlkparseOptions{Device: bad})
		assert.Error(t, err, bad)
	}
}

func TestWriteBlkparseEmpty(t *testing.T) {
	for _, in := range []string{"", "# tracer: nop\n", "          record-1   [000] .....  1.000000: block_plug: [record]\n"} {
		var b bytes.Buffer
		st, err := WriteBlkparse(&b, strings.NewReader(in), BlkparseOptions{})
		require.NoError(t, err)
		assert.Empty(t, b.String(), "no event of a device: no output at all")
		assert.Equal(t, 0, st.Events)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

type failReader struct{}

func (failReader) Read([]byte) (int, error) { return 0, errors.New("bad sector") }

func TestWriteBlkparseIOErrors(t *testing.T) {
	_, err := WriteBlkparse(failWriter{}, strings.NewReader(blkparseRawSample), BlkparseOptions{})
	assert.ErrorContains(t, err, "disk full")
	_, err = WriteBlkparse(&bytes.Buffer{}, failReader{}, BlkparseOptions{})
	assert.ErrorContains(t, err, "bad sector")
}

func TestBlkRWBS(t *testing.T) {
	tests := []struct {
		in    string
		bytes uint64
		want  string
		write bool
		ok    bool
	}{
		{"W", 4096, "W", true, true},
		{"WS", 4096, "WS", true, true},
		{"FWS", 0, "FWS", true, true},
		{"FWFS", 4096, "FWFS", true, true},
		{"FF", 0, "FN", false, true},
		{"F", 0, "FN", false, true},
		{"R", 4096, "R", false, true},
		{"R", 0, "N", false, true},
		{"RA", 16384, "RA", false, true},
		{"RM", 4096, "RM", false, true},
		{"DS", 1 << 20, "DS", true, true},
		{"DE", 1 << 20, "D", true, true},
		{"N", 0, "N", false, true},
		{"ZA", 4096, "W", true, true},
		{"ZRA", 0, "W", true, true},
		{"ZO", 0, "N", false, true},
		{"WSU", 4096, "WS", true, true},
		{"WZ", 4096, "W", true, true},
		{"", 0, "", false, false},
		{"Z", 0, "", false, false},
		{"X", 0, "", false, false},
		{"WQ", 0, "", false, false},
	}
	for _, tt := range tests {
		got, write, ok := blkRWBS(tt.in, tt.bytes)
		assert.Equal(t, tt.ok, ok, tt.in)
		if tt.ok {
			assert.Equal(t, tt.want, got, tt.in)
			assert.Equal(t, tt.write, write, tt.in)
		}
	}
}

func TestBlkRawLine(t *testing.T) {
	tests := []struct {
		line       string
		ok         bool
		pid, cpu   int
		at         uint64
		name, args string
	}{
		{"     ksoftirqd/1-22      [001] ..s..  1266.793198: block_rq_complete: 7,8 WS () 0 + 8 be,0,4 [-28]", true, 22, 1, 1266793198000, "block_rq_complete", "7,8 WS () 0 + 8 be,0,4 [-28]"},
		{"  kworker/u8:3-my-task-77 [003] d..2.  1.000000001: block_plug: [kworker/u8:3]", true, 77, 3, 1000000001, "block_plug", "[kworker/u8:3]"},
		{"  record-5 [000] 12.5: block_plug: [record]", true, 5, 0, 12500000000, "block_plug", "[record]"},
		{"# entries-in-buffer/entries-written: 43/43   #P:2", false, 0, 0, 0, "", ""},
		{"", false, 0, 0, 0, "", ""},
		{"task-x [001] ..... 1.0: ev: a", false, 0, 0, 0, "", ""},
		{"task-1 [abc] ..... 1.0: ev: a", false, 0, 0, 0, "", ""},
		{"task-1 [001] ..... 1.0x: ev: a", false, 0, 0, 0, "", ""},
		{"task-1 [001] ..... 1.0 no colon", false, 0, 0, 0, "", ""},
		{"task-1 [001 ..... 1.0: ev: a", false, 0, 0, 0, "", ""},
	}
	for _, tt := range tests {
		pid, cpu, at, name, args, ok := blkRawLine(tt.line)
		assert.Equal(t, tt.ok, ok, tt.line)
		if tt.ok {
			assert.Equal(t, []any{tt.pid, tt.cpu, tt.at, tt.name, tt.args}, []any{pid, cpu, at, name, args}, tt.line)
		}
	}
}

func TestBlkSize(t *testing.T) {
	tests := []struct {
		n    uint64
		kb   bool
		want string
	}{
		{0, false, "       0"},
		{1024, false, "   1,024"},
		{999999, true, " 999,999K"},
		{1000001, true, "   1,000M"},
		{1234567890, false, "   1,234M"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, blkSize(tt.n, tt.kb), tt.n)
	}
}

// FuzzWriteBlkparse: any input converts without a panic, and every line
// written before the summary is an event line of blkparse's shape.
func FuzzWriteBlkparse(f *testing.F) {
	f.Add(blkparseRawSample)
	f.Add("  a-1 [000] . 1.0: block_bio_queue: 7,8 W 0 + 8 [a]\n  a-1 [000] . 1.0: block_unplug: [a] x\n")
	f.Fuzz(func(t *testing.T, in string) {
		var b bytes.Buffer
		st, err := WriteBlkparse(&b, strings.NewReader(in), BlkparseOptions{})
		if err != nil {
			return // a line over 1 MiB
		}
		lines := strings.Split(b.String(), "\n")
		for i := 0; i < st.Events; i++ {
			f := strings.Fields(lines[i])
			if len(f) < 8 || !strings.Contains(f[0], ",") {
				t.Fatalf("line %d %q is not an event line", i+1, lines[i])
			}
		}
	})
}

// TestWriteBlkparseTruncated cuts every line of the sample after each of
// its words: a truncated event is skipped or converted, never a panic (a
// block_rq_issue of two words once indexed past its end).
func TestWriteBlkparseTruncated(t *testing.T) {
	for _, line := range strings.Split(blkparseRawSample, "\n") {
		words := strings.Fields(line)
		for n := 0; n <= len(words); n++ {
			in := "  a-1 [000] . 1.0: block_bio_queue: 7,8 W 0 + 8 [a]\n" + strings.Join(words[:n], " ") + "\n"
			var b bytes.Buffer
			_, err := WriteBlkparse(&b, strings.NewReader(in), BlkparseOptions{})
			require.NoError(t, err, in)
		}
	}
}
