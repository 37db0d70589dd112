package source

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/scenario"
)

const tracesDir = "testdata/traces"

// traceErrLine returns the line of a *TraceError or *ParseError, -1 for
// another error.
func traceErrLine(err error) int {
	var te *TraceError
	if errors.As(err, &te) {
		return te.Line
	}
	var pe *scenario.ParseError
	if errors.As(err, &pe) {
		return pe.Line
	}
	return -1
}

func TestIOKind(t *testing.T) {
	tests := []struct {
		k       IOKind
		name    string
		valid   bool
		hasData bool
	}{
		{0, "kind(0)", false, false},
		{IORead, "read", true, true},
		{IOWrite, "write", true, true},
		{IOFsync, "fsync", true, false},
		{IOFdatasync, "fdatasync", true, false},
		{IOFlush, "flush", true, false},
		{IODiscard, "discard", true, true},
		{7, "kind(7)", false, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.name, tt.k.String())
		assert.Equal(t, tt.valid, tt.k.Valid(), tt.name)
		assert.Equal(t, tt.hasData, tt.k.HasData(), tt.name)
	}
	assert.Equal(t, "FASM", (FlagSync | FlagMeta | FlagFUA | FlagAhead).String())
	assert.Equal(t, "", IOFlags(0).String())
}

// TestIOSize keeps a record at 48 bytes, three 16-byte moves: at 56 a
// copy's last two moves overlap, and the next copy of a record just
// copied waits for them (see IO.Flags).
func TestIOSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the size is stated for 64-bit machines")
	}
	assert.Equal(t, uintptr(48), unsafe.Sizeof(IO{}))
}

func TestIOValid(t *testing.T) {
	tests := []struct {
		name string
		io   IO
		ok   bool
	}{
		{"write", IO{Kind: IOWrite, Offset: 4096, Length: 4096}, true},
		{"fsync", IO{Kind: IOFsync}, true},
		{"no kind", IO{Offset: 0, Length: 1}, false},
		{"empty read", IO{Kind: IORead, Offset: 4096}, false},
		{"overflow", IO{Kind: IOWrite, Offset: ^uint64(0), Length: 2}, false},
		{"fsync with length", IO{Kind: IOFsync, Length: 512}, false},
		{"flush with offset", IO{Kind: IOFlush, Offset: 512}, false},
		{"cpu", IO{Kind: IOFsync, CPU: MaxTraceCPU + 1}, false},
		{"negative cpu", IO{Kind: IOFsync, CPU: -1}, false},
	}
	for _, tt := range tests {
		err := tt.io.Valid()
		assert.Equal(t, tt.ok, err == nil, "%s: %v", tt.name, err)
	}
}

func TestIOBlocks(t *testing.T) {
	tests := []struct {
		name              string
		off, len          uint64
		bs                uint32
		first, last       uint64
		head, tail        bool
		count             uint64
		pieces            []BlockPiece
		needsReadIfNotHot int // partly covered blocks: the reads of an uncached write
	}{
		{"aligned one block", 4096, 4096, 4096, 1, 1, false, false, 1,
			[]BlockPiece{{1, 0, 4096, false}}, 0},
		{"aligned many", 0, 16384, 4096, 0, 3, false, false, 4,
			[]BlockPiece{{0, 0, 4096, false}, {1, 0, 4096, false}, {2, 0, 4096, false}, {3, 0, 4096, false}}, 0},
		// rmw-uncached-bs512: 512 B at 1K with 512-byte blocks covers block 2 whole.
		{"sector inside 512", 1024, 512, 512, 2, 2, false, false, 1,
			[]BlockPiece{{2, 0, 512, false}}, 0},
		// rmw-uncached-bs4k: 512 B at 1K with 4K blocks: one partial block.
		{"inside one block", 1024, 512, 4096, 0, 0, true, true, 1,
			[]BlockPiece{{0, 1024, 512, true}}, 1},
		// rmw-unaligned-bs1k: 100 B at 1000 straddles blocks 0 and 1.
		{"straddle tiny", 1000, 100, 1024, 0, 1, true, true, 2,
			[]BlockPiece{{0, 1000, 24, true}, {1, 0, 76, true}}, 2},
		// rmw-straddle-bs4k: 4K at 2K: two partial blocks.
		{"straddle page", 2048, 4096, 4096, 0, 1, true, true, 2,
			[]BlockPiece{{0, 2048, 2048, true}, {1, 0, 2048, true}}, 2},
		{"head only", 512, 1536, 1024, 0, 1, true, false, 2,
			[]BlockPiece{{0, 512, 512, true}, {1, 0, 1024, false}}, 1},
		{"tail only", 0, 1536, 1024, 0, 1, false, true, 2,
			[]BlockPiece{{0, 0, 1024, false}, {1, 0, 512, true}}, 1},
		// rmw-uncached-bs16k: 4K at 4K with 16K blocks.
		{"below a large block", 4096, 4096, 16384, 0, 0, true, true, 1,
			[]BlockPiece{{0, 4096, 4096, true}}, 1},
		{"full large block", 16384, 16384, 16384, 1, 1, false, false, 1,
			[]BlockPiece{{1, 0, 16384, false}}, 0},
		{"zero block size is 512", 512, 512, 0, 1, 1, false, false, 1,
			[]BlockPiece{{1, 0, 512, false}}, 0},
		{"sync", 0, 0, 4096, 0, 0, false, false, 0, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			io := IO{Kind: IOWrite, Offset: tt.off, Length: tt.len}
			if tt.len == 0 {
				io.Kind = IOFsync
			}
			first, last, head, tail := io.Blocks(tt.bs)
			assert.Equal(t, []any{tt.first, tt.last, tt.head, tt.tail}, []any{first, last, head, tail})
			assert.Equal(t, tt.count, io.BlockCount(tt.bs))
			pieces := slices.Collect(io.Pieces(tt.bs))
			assert.Equal(t, tt.pieces, pieces)
			partial := 0
			var sum uint64
			for _, p := range pieces {
				if p.Partial {
					partial++
				}
				sum += uint64(p.Len)
			}
			assert.Equal(t, tt.needsReadIfNotHot, partial)
			assert.Equal(t, tt.len, sum, "the pieces cover the record")
		})
	}
	// The last block of the address space: no wrap.
	end := IO{Kind: IOWrite, Offset: ^uint64(0) - 1023, Length: 1024}
	assert.Len(t, slices.Collect(end.Pieces(512)), 2)
	// Stopping early.
	for range (IO{Kind: IOWrite, Length: 1 << 20}).Pieces(512) {
		break
	}
}

func TestIOCheckDevice(t *testing.T) {
	dev := uint64(64 << 20)
	tests := []struct {
		io   IO
		want string // "" for no error
	}{
		{IO{Kind: IOWrite, Offset: dev - 4096, Length: 4096, Line: 3}, ""},
		{IO{Kind: IOWrite, Offset: dev - 4095, Length: 4096, Line: 7}, "line 7: write of 4096 bytes at offset 67104769 ends at 67108865, past the device's end (67108864 bytes, 64M)"},
		{IO{Kind: IORead, Offset: dev, Length: 1, Line: 9}, "line 9: read of 1 bytes"},
		{IO{Kind: IOFsync, Line: 2}, ""},
		{IO{Kind: IOWrite, Offset: ^uint64(0), Length: 2, Line: 4}, "line 4: write"},
	}
	for _, tt := range tests {
		err := tt.io.CheckDevice(dev)
		if tt.want == "" {
			assert.NoError(t, err)
			continue
		}
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.want)
		assert.Equal(t, tt.io.Line, traceErrLine(err))
	}
}

func TestTraceError(t *testing.T) {
	tests := []struct {
		e    TraceError
		want string
	}{
		{TraceError{File: "a.csv", Line: 3, Format: "csv", Msg: "bad"}, "a.csv:3: csv: bad"},
		{TraceError{File: "a.csv", Format: "csv", Msg: "bad"}, "a.csv: csv: bad"},
		{TraceError{Line: 3, Format: "fio", Msg: "bad"}, "line 3: fio: bad"},
		{TraceError{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.e.Error())
	}
	inner := errors.New("disk")
	assert.ErrorIs(t, &TraceError{Err: inner}, inner)
}

func TestTraceNumbers(t *testing.T) {
	uints := []struct {
		s  string
		v  uint64
		ok bool
	}{
		{"0", 0, true}, {"4096", 4096, true}, {"18446744073709551615", 1<<64 - 1, true},
		{"18446744073709551616", 0, false}, {"", 0, false}, {"-1", 0, false}, {"+1", 0, false},
		{"0x10", 0, false}, {"1_000", 0, false}, {"99999999999999999999", 0, false},
	}
	for _, tt := range uints {
		v, ok := traceUint(tt.s)
		assert.Equal(t, tt.ok, ok, tt.s)
		assert.Equal(t, tt.v, v, tt.s)
	}
	secs := []struct {
		s  string
		ns uint64
		ok bool
	}{
		{"0.000000000", 0, true}, {"1.5", 1500000000, true}, {"5274.048597", 5274048597000, true},
		{"3", 3000000000, true}, {"1.0000000001", 0, false}, {"1.", 0, false}, {".5", 0, false},
		{"1.-5", 0, false}, {"x", 0, false}, {"18446744073.0", 0, false},
	}
	for _, tt := range secs {
		ns, ok := traceSeconds(tt.s)
		assert.Equal(t, tt.ok, ok, tt.s)
		assert.Equal(t, tt.ns, ns, tt.s)
	}
	sizes := []struct {
		s  string
		v  uint64
		ok bool
	}{
		{"0", 0, true}, {"100", 100, true}, {"4K", 4096, true}, {"4k", 4096, true}, {"1M", 1 << 20, true},
		{"2G", 2 << 30, true}, {"1T", 1 << 40, true}, {"4.5K", 0, false}, {"K", 0, false}, {"-4K", 0, false},
		{"0K", 0, false},
	}
	for _, tt := range sizes {
		v, ok := traceSize(tt.s)
		assert.Equal(t, tt.ok, ok, tt.s)
		assert.Equal(t, tt.v, v, tt.s)
	}
}

func TestDetectTraceFormat(t *testing.T) {
	tests := []struct {
		name, head string
		want       TraceFormat
	}{
		{"fio v2", "fio version 2 iolog\n/dev/sdb add\n", TraceFio},
		{"fio v3 after blank", "\n\nfio version 3 iolog\n", TraceFio},
		{"blkparse", "  8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]\n", TraceBlkparse},
		{"scenario", "# pins\n# more\n\ndevice size=64M\nopen a rdwr\n", TraceScenario},
		{"csv", "# comment\nop,offset,length\nwrite,0,4K\n", TraceCSV},
		{"csv no header", "write,0,4096\n", TraceCSV},
		{"unknown", "hello world\n", ""},
		{"empty", "", ""},
		{"comments only", "# a\n# b\n", ""},
		{"blkparse-ish bad time", "  8,0 3 1 x 697 Q W 1 + 8 [a]\n", TraceCSV},
		{"blkparse saved with its input lines", "Input file sda.blktrace.0 added\nInput file sda.blktrace.1 added\n  8,0    0        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]\n", TraceBlkparse},
		{"blkparse input lines only", "Input file sda.blktrace.0 added\n", TraceBlkparse},
		{"csv reordered header", "offset,length,op\n0,4K,w\n", TraceCSV},
		{"csv r/w", "W,0,4096\n", TraceCSV},
		{"msr", "128166372003061629,hm,1,Read,3718946816,4096,5689\n", TraceMSR},
		{"msr header", "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n", TraceMSR},
		{"spc", "0,20941264,8192,W,0.551706\n", TraceSPC},
		{"spc integer time", "1,303567,3584,r,12\n", TraceSPC},
		{"alibaba", "419,W,8250941440,4096,1577808000000287\n", TraceAlibaba},
		{"alibaba header", "device_id,opcode,offset,length,timestamp\n", TraceAlibaba},
		{"fio log", "1, 120384, 0, 4096, 1073213440, 0\n", TraceFioLog},
		{"fio log without offsets", "12, 80, 1, 4096\n", TraceFioLog},
		{"libcachesim header", "version,time,op,size,lbn\n1,33898,2a,512,42932745\n", TraceColumns},
		{"header of unknown columns", "key,bytes_read\n", TraceCSV},
		{"disksim", "12.455 0 2367200 16 1\n", TraceDiskSim},
		{"disksim integer time", "0 0 2367200 16 1\n", TraceDiskSim},
		{"four numbers", "0 0 2367200 16\n", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, DetectTraceFormat([]byte(tt.head)), tt.name)
	}
	for _, f := range TraceFormats() {
		got, err := ParseTraceFormat(string(f))
		require.NoError(t, err)
		assert.Equal(t, f, got)
	}
	_, err := ParseTraceFormat("pcap")
	assert.ErrorContains(t, err, "want blkparse, fio, csv, scenario, msr, spc, alibaba, disksim, fiolog, columns")
}

// TestOpenTraceSamples opens every shipped sample through OpenTrace and
// checks what it holds.
func TestOpenTraceSamples(t *testing.T) {
	tests := []struct {
		file   string
		format TraceFormat
		want   string // the summary
	}{
		{"sample.blkparse", TraceBlkparse, "10 records: read 2 (8K), write 5 (144K), flush 2, discard 1 (4M); end 8197M; 4 cpus; 0..20999900000 ns"},
		{"sample-v2.iolog", TraceFio, "8 records: read 2 (9K), write 3 (8704), fsync 1, fdatasync 1, discard 1 (64K); end 2112K; 1 cpu; 0..1500000 ns"},
		{"sample-v3.iolog", TraceFio, "9 records: read 2 (68K), write 4 (37K), fsync 1, fdatasync 1, discard 1 (1M); end 2M; 1 cpu; 240000..1890000 ns"},
		{"sample.csv", TraceCSV, "7 records: read 1 (2K), write 4 (6244), fsync 1, fdatasync 1; end 64K; 2 cpus; 0..2000000 ns"},
		{"loop-6.18.blkparse", TraceBlkparse, "1025 records: write 1024 (4M), flush 1; end 4M; 2 cpus; 0..2448000 ns"},
		{"loop-6.18-rmw-cached.blkparse", TraceBlkparse, "3 records: read 1 (16K), write 1 (4K), flush 1; end 16K; 1 cpu; 0..3368000 ns"},
		{"saved.blkparse", TraceBlkparse, "2 records: read 2 (8K); end 2228232K; 3 cpus; 0..302000 ns"},
		{"msr-hm_0.csv", TraceMSR, "6 records: read 3 (72K), write 3 (16K); end 3631792K; 1 cpu; 12816637200306162900..12816637205638252800 ns"},
		{"financial.spc", TraceSPC, "6 records: read 2 (1536), write 4 (13824); end 151794K; 1 cpu; 0..175618000 ns"},
		{"alibaba-419.csv", TraceAlibaba, "5 records: read 2 (20K), write 3 (16K); end 33554392K; 1 cpu; 1577808000000287000..1577808000031994000 ns"},
		{"sample.disksim", TraceDiskSim, "5 records: read 3 (32K), write 2 (8K); end 1183632K; 1 cpu; 0..5500000 ns"},
		{"fio-randrw_clat.1.log", TraceFioLog, "6 records: read 3 (12K), write 2 (8K), discard 1 (4K); end 1048064K; 1 cpu; 1000000..3000000 ns"},
		{"libcachesim.csv", TraceColumns, "5 records: read 2 (10K), write 3 (8704); end 21466373K; 1 cpu; 33898000000000..33900000000000 ns"},
		{"sample.csv.gz", TraceCSV, "7 records: read 1 (2K), write 4 (6244), fsync 1, fdatasync 1; end 64K; 2 cpus; 0..2000000 ns"},
		{"sample.csv.bz2", TraceCSV, "7 records: read 1 (2K), write 4 (6244), fsync 1, fdatasync 1; end 64K; 2 cpus; 0..2000000 ns"},
		{"sample.csv.zst", TraceCSV, "7 records: read 1 (2K), write 4 (6244), fsync 1, fdatasync 1; end 64K; 2 cpus; 0..2000000 ns"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tr, err := OpenTrace(filepath.Join(tracesDir, tt.file))
			require.NoError(t, err)
			defer tr.Close()
			assert.Equal(t, tt.format, tr.Format)
			s, err := SummarizeTrace(tr)
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.String())
			assert.NoError(t, tr.Close())
			assert.NoError(t, tr.Close(), "a second Close does nothing")
		})
	}
}

func TestOpenTraceScenario(t *testing.T) {
	tr, err := OpenTrace("../../testdata/scenarios/rmw-unaligned-bs1k.scn")
	require.NoError(t, err)
	defer tr.Close()
	assert.Equal(t, TraceScenario, tr.Format)
	require.NotNil(t, tr.Scenario)
	assert.Equal(t, int64(16<<20), tr.Scenario.Device.Size)
	got, err := ReadAll(tr)
	require.NoError(t, err)
	assert.Equal(t, []IO{
		{Kind: IOWrite, Offset: 1000, Length: 100, Line: 6},
		{Kind: IOFsync, Line: 7},
	}, got)
}

func TestOpenTraceErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	_, err := OpenTrace(filepath.Join(dir, "missing.csv"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	_, err = OpenTrace(write("what.txt", "hello\n"))
	assert.ErrorContains(t, err, "what.txt: cannot tell the trace's format")

	// An extension decides when the content does not.
	tr, err := OpenTrace(write("empty.csv", ""))
	require.NoError(t, err)
	assert.Equal(t, TraceCSV, tr.Format)
	tr.Close()

	// Errors name the file and the line.
	p := write("bad.csv", "op,offset,length\nwrite,0,4K\nwirte,0,4K\n")
	tr, err = OpenTrace(p)
	require.NoError(t, err)
	defer tr.Close()
	_, err = ReadAll(tr)
	assert.EqualError(t, err, p+`:3: csv: unknown op "wirte" (want read, write, fsync, fdatasync, flush or discard)`)

	// A scenario's errors are the parser's.
	_, err = OpenTrace(write("bad.scn", "device size=64M\npwirte a off=0 len=1\n"))
	assert.ErrorContains(t, err, "bad.scn:2: unknown operation")
	assert.Equal(t, 2, traceErrLine(err))

	_, err = NewTrace(strings.NewReader(""), "x", "pcap")
	assert.Error(t, err)
	_, err = NewTrace(strings.NewReader(strings.Repeat("#\n", maxScenarioText)), "big.scn", TraceScenario)
	assert.ErrorContains(t, err, "a scenario is at most 4M")
}

func TestNewTraceForced(t *testing.T) {
	// A CSV forced to be read as fio fails on its first line.
	tr, err := NewTrace(strings.NewReader("write,0,4K\n"), "x.csv", TraceFio)
	require.NoError(t, err)
	_, err = tr.Next()
	assert.EqualError(t, err, `x.csv:1: fio: not a fio iolog: the first line must be "fio version 2 iolog" or "fio version 3 iolog" (version 1 is not supported, as by fio since 1.20)`)
}

func TestTraceSummary(t *testing.T) {
	var s TraceSummary
	assert.Equal(t, "0 records:; end 0; 0 cpus; 0..0 ns", s.String())
	s.Add(IO{Kind: IOWrite, Offset: 4096, Length: 4096, CPU: 2, At: 50})
	s.Add(IO{Kind: IOFsync, At: 10})
	assert.Equal(t, "2 records: write 1 (4K), fsync 1; end 8K; 3 cpus; 10..50 ns", s.String())
}
