package source

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPublicFormatLines reads real-looking lines of each public format.
func TestPublicFormatLines(t *testing.T) {
	msr := func(s string) IOReader { return NewMSRReader(strings.NewReader(s)) }
	spc := func(s string) IOReader { return NewSPCReader(strings.NewReader(s)) }
	ali := func(s string) IOReader { return NewAlibabaReader(strings.NewReader(s)) }
	dsim := func(s string) IOReader { return NewDiskSimReader(strings.NewReader(s)) }
	fiol := func(s string) IOReader { return NewFioStatLogReader(strings.NewReader(s)) }
	tests := []struct {
		name string
		open func(string) IOReader
		text string
		want []IO
		err  string
	}{
		{"msr", msr, "128166372003061629,hm,1,Read,3718946816,4096,5689\n",
			[]IO{{Kind: IORead, Offset: 3718946816, Length: 4096, At: 12816637200306162900, Line: 1}}, ""},
		{"msr header and write", msr, "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n128166372016382155,hm,1,Write,3302858752,8192,19076\n",
			[]IO{{Kind: IOWrite, Offset: 3302858752, Length: 8192, At: 12816637201638215500, Line: 2}}, ""},
		{"msr filetime past 2^64 ns", msr, "184467440737095517,hm,1,Read,0,4096,1\n", nil, `line 1: msr: time "184467440737095517" is not a non-negative decimal number (of 100 ns (Windows filetime))`},
		{"msr another disk", msr, "1,hm,1,Read,0,4096,1\n2,hm,2,Read,0,4096,1\n", nil, `line 2: msr: device "2" is not the trace's device "1" (choose one with TraceSelect.Device)`},
		{"msr bad type", msr, "1,hm,1,Rd2,0,4096,1\n", nil, `line 1: msr: op "Rd2" is not one of read, write`},
		{"msr short", msr, "1,hm,1,Read,0\n", nil, "line 1: msr: 5 fields, want at least 6"},
		{"spc", spc, "0,20941264,8192,W,0.551706\n",
			[]IO{{Kind: IOWrite, Offset: 20941264 * 512, Length: 8192, At: 551706000, Line: 1}}, ""},
		{"spc lower case and extra fields", spc, "1,303567,3584,r,12.000001,xyz,7\n",
			[]IO{{Kind: IORead, Offset: 303567 * 512, Length: 3584, At: 12000001000, Line: 1}}, ""},
		{"spc zero size", spc, "0,1,0,w,0.1\n", nil, `line 1: spc: length "0" is not a positive whole number of bytes`},
		{"spc negative time", spc, "0,1,512,w,-0.1\n", nil, `time "-0.1"`},
		{"spc lba overflow", spc, "0,36028797018963968,512,w,0\n", nil, "offset \"36028797018963968\" is not a whole number of 512-byte sectors that fits 64 bits"},
		{"alibaba", ali, "419,W,8250941440,4096,1577808000000287\n",
			[]IO{{Kind: IOWrite, Offset: 8250941440, Length: 4096, At: 1577808000000287000, Line: 1}}, ""},
		{"alibaba header", ali, "device_id,opcode,offset,length,timestamp\n7,R,0,512,1\n",
			[]IO{{Kind: IORead, Length: 512, At: 1000, Line: 2}}, ""},
		{"alibaba end past 2^64", ali, "1,R,18446744073709551615,512,1\n", nil, "line 1: alibaba: 512 bytes at offset 18446744073709551615 end past 2^64"},
		{"disksim", dsim, "12.455 0 2367200 16 1\n 13.5\t0 8 8 0\n",
			[]IO{{Kind: IORead, Offset: 2367200 * 512, Length: 8192, At: 12455000, Line: 1},
				{Kind: IOWrite, Offset: 4096, Length: 4096, At: 13500000, Line: 2}}, ""},
		{"disksim other flags", dsim, "0 0 0 8 3\n0 0 0 8 2\n",
			[]IO{{Kind: IORead, Length: 4096, Line: 1}, {Kind: IOWrite, Length: 4096, Line: 2}}, ""},
		{"disksim bad flags", dsim, "0 0 0 8 r\n", nil, `line 1: disksim: op "r" is not one of DiskSim's flags`},
		{"fio log, offsets, fio 3.18 on", fiol, "1, 120384, 0, 4096, 1073213440, 0\n3, 39424, 2, 4096, 1029947392, 0x6004\n",
			[]IO{{Kind: IORead, Offset: 1073213440, Length: 4096, At: 1e6, Line: 1},
				{Kind: IODiscard, Offset: 1029947392, Length: 4096, At: 3e6, Line: 2}}, ""},
		{"fio log, offsets and issue time", fiol, "7, 1200, 1, 8192, 65536, 0, 6999880\n",
			[]IO{{Kind: IOWrite, Offset: 65536, Length: 8192, At: 7e6, Line: 1}}, ""},
		{"fio log, offsets, old fio", fiol, "12, 80, 1, 4096, 409600\n",
			[]IO{{Kind: IOWrite, Offset: 409600, Length: 4096, At: 12e6, Line: 1}}, ""},
		{"fio log without offsets, old fio", fiol, "12, 80, 1, 4096\n", nil,
			"line 1: fiolog: a fio log without offsets (time, value, direction, block size) cannot be replayed: fio writes offsets with log_offset=1"},
		{"fio log without offsets", fiol, "12, 80, 1, 4096, 0\n", nil,
			`line 1: fiolog: a fio log without offsets (its fifth column "0" is a priority) cannot be replayed: fio writes offsets with log_offset=1`},
		{"fio log without offsets, log_prio", fiol, "12, 80, 1, 4096, 0x2004\n", nil, "is a priority"},
		{"fio windowed log", fiol, "1000, 23456, 0, 0, 0, 0\n", nil, "block size 0: a windowed fio log (log_avg_msec)"},
		{"fio windowed log, both values", fiol, "1000, 23456, 30000, 0, 0, 0, 0, 0\n", nil, "a windowed log with maximum values"},
		{"fio log, bad direction", fiol, "1, 2, 3, 4096, 0, 0\n", nil, `op "3" is not one of fio's directions`},
		{"fio log, too few", fiol, "1, 2\n", nil, "at least 4 columns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadAll(tt.open(tt.text))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Positive(t, traceErrLine(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestColumnReaderLines reads column-mapped CSVs: by index and by header
// name, with units, in any coding.
func TestColumnReaderLines(t *testing.T) {
	tests := []struct {
		name, spec, text string
		want             []IO
		err              string
	}{
		{"by index", "time=0:us,op=1,offset=2,length=3", "10,read,4096,512\n20,W,0,4096\n",
			[]IO{{Kind: IORead, Offset: 4096, Length: 512, At: 10000, Line: 1}, {Kind: IOWrite, Length: 4096, At: 20000, Line: 2}}, ""},
		{"header skipped by index", "time=1,op=2,length=3,offset=4:sector", "version,time,op,size,lbn\n1,33898,2a,512,42932745\n",
			[]IO{{Kind: IOWrite, Offset: 42932745 * 512, Length: 512, At: 33898e9, Line: 2}}, ""},
		{"by header name", "time=ts:ms,offset=lba:sector,length=bytes,op=rw,cpu=core", "# a comment\nlba,rw,bytes,ts,core\n8,r,4096,1.5,3\n",
			[]IO{{Kind: IORead, Offset: 4096, Length: 4096, At: 1500000, CPU: 3, Line: 3}}, ""},
		{"no op: reads", "offset=0,length=1", "0,4096\n",
			[]IO{{Kind: IORead, Length: 4096, Line: 1}}, ""},
		{"flush ignores offset", "op=0,offset=1,length=2", "flush,99,x\n35,0,0\n",
			[]IO{{Kind: IOFlush, Line: 1}, {Kind: IOFlush, Line: 2}}, ""},
		{"blanks", "sep=blank,time=0:s,length=2,offset=1:4K", "0.5\t3 8192\n",
			[]IO{{Kind: IORead, Offset: 3 * 4096, Length: 8192, At: 5e8, Line: 1}}, ""},
		{"devices chosen", "device=0,offset=1,length=2", "a,0,1\nb,0,2\na,0,3\n", nil, `line 2: columns: device "b" is not the trace's device "a"`},
		{"a header name missing", "offset=lba,length=size", "lbn,size\n", nil, `line 1: columns: no column "lba" in the header line (its columns: lbn,size)`},
		{"too few fields", "offset=0,length=3", "1,2\n", nil, "line 1: columns: 2 fields, want at least 4"},
		{"bad op", "op=0,offset=1,length=2", "get,0,1\n", nil, `op "get" is not one of read, write`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseColumnMap(tt.spec)
			require.NoError(t, err)
			got, err := ReadAll(NewColumnReader(strings.NewReader(tt.text), m))
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

// TestColumnDevice replays one device of a trace of several.
func TestColumnDevice(t *testing.T) {
	text := "0,8,512,w,0.1\n1,8,512,r,0.2\n0,16,512,w,0.3\n"
	_, err := ReadAll(NewSPCReader(strings.NewReader(text)))
	assert.ErrorContains(t, err, `line 2: spc: device "1" is not the trace's device "0"`)
	got, err := ReadAll(NewSPCReader(strings.NewReader(text), ColumnDevice("1")))
	require.NoError(t, err)
	assert.Equal(t, []IO{{Kind: IORead, Offset: 4096, Length: 512, At: 2e8, Line: 2}}, got)
	tr, err := NewTrace(strings.NewReader(text), "x.spc", "")
	require.NoError(t, err)
	assert.Equal(t, TraceSPC, tr.Format)
	tr, err = newTrace(strings.NewReader(text), "x.spc", TraceSelect{Device: "0"})
	require.NoError(t, err)
	got, err = ReadAll(tr)
	require.NoError(t, err)
	assert.Len(t, got, 2)
	_, err = newTrace(strings.NewReader("write,0,1\n"), "x.csv", TraceSelect{Device: "0"})
	assert.ErrorContains(t, err, "a device to replay applies to a trace whose records name devices")
}

func TestParseColumnMap(t *testing.T) {
	m, err := ParseColumnMap(" time = 0:100ns , op=3, offset=4, length=5:sector, device=2, cpu=7 ")
	require.NoError(t, err)
	assert.Equal(t, ColumnMap{Time: Column{Index: 0, Unit: 100}, Op: Column{Index: 3}, Offset: Column{Index: 4, Unit: 1},
		Length: Column{Index: 5, Unit: 512}, Device: Column{Index: 2}, CPU: Column{Index: 7}}, m)
	m, err = ParseColumnMap("op=dir:fio,length=bs,offset=off:4K,sep=blank")
	require.NoError(t, err)
	assert.Equal(t, ColumnMap{Time: NoColumn, Op: Column{Index: -1, Name: "dir"}, Offset: Column{Index: -1, Name: "off", Unit: 4096},
		Length: Column{Index: -1, Name: "bs", Unit: 1}, Device: NoColumn, CPU: NoColumn, Ops: OpFioDirection, Blanks: true}, m)
	for _, tt := range []struct{ spec, err string }{
		{"", "an empty column spec"},
		{"offset=0", "needs a length column"},
		{"length=0,offset=0", "the offset and length fields are the same column"},
		{"length=1,length=2", `"length=2": length given twice`},
		{"length", "want FIELD=COLUMN[:UNIT]"},
		{"length=1,size=2", `unknown field "size"`},
		{"length=1,time=0:fortnights", `time unit "fortnights"`},
		{"length=1:furlong", `size unit "furlong"`},
		{"length=1,op=2:morse", `op coding "morse"`},
		{"length=1,cpu=2:s", "cpu takes no unit"},
		{"length=99", "column 99 is past the 64th"},
		{"length=1,sep=semicolon", "sep is blank or comma"},
	} {
		_, err := ParseColumnMap(tt.spec)
		assert.ErrorContains(t, err, tt.err, tt.spec)
	}
}

func TestHeaderColumnMap(t *testing.T) {
	m, ok := HeaderColumnMap([]string{"version", "time", "op", "size", "lbn"})
	require.True(t, ok)
	assert.Equal(t, ColumnMap{Time: Column{Index: 1, Unit: 1e9}, Op: Column{Index: 2}, Offset: Column{Index: 4, Unit: 512},
		Length: Column{Index: 3, Unit: 1}, Device: NoColumn, CPU: NoColumn}, m)
	m, ok = HeaderColumnMap([]string{"Timestamp_us", "Device_ID", "Offset", "Length", "Offset"})
	require.True(t, ok)
	assert.Equal(t, Column{Index: 0, Unit: 1e3}, m.Time)
	assert.Equal(t, Column{Index: 2, Unit: 1}, m.Offset, "the first column that names a field")
	assert.Equal(t, Column{Index: 1}, m.Device)
	_, ok = HeaderColumnMap([]string{"key", "size"})
	assert.False(t, ok, "no offset")
}

func TestTraceScaled(t *testing.T) {
	for _, tt := range []struct {
		s    string
		unit uint64
		want uint64
		ok   bool
	}{
		{"0", 1e9, 0, true}, {"0.551706", 1e9, 551706000, true}, {"12.455", 1e6, 12455000, true},
		{"1.0000000001", 1e9, 1e9, true}, {"3", 100, 300, true}, {"0.5", 100, 50, true},
		{"184467440737095516", 100, 18446744073709551600, true}, {"184467440737095517", 100, 0, false},
		{"1.", 1e9, 0, false}, {".5", 1e9, 0, false}, {"1.2.3", 1e9, 0, false}, {"-1", 1, 0, false},
		{"1e3", 1, 0, false}, {"18446744073709551615.9", 1, 18446744073709551615, true},
	} {
		got, ok := traceScaled(tt.s, tt.unit)
		assert.Equal(t, tt.ok, ok, tt.s)
		assert.Equal(t, tt.want, got, tt.s)
	}
}
