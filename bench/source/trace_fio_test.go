package source

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFioSamples(t *testing.T) {
	tests := []struct {
		file    string
		version int
		want    []IO
	}{
		{"sample-v2.iolog", 2, []IO{
			{Kind: IOWrite, Offset: 0, Length: 4096, Line: 4},
			{Kind: IOWrite, Offset: 4096, Length: 4096, Line: 5},
			{Kind: IOWrite, Offset: 1 << 20, Length: 512, Line: 6},
			{Kind: IOFsync, Line: 7},
			{Kind: IORead, Offset: 0, Length: 8192, At: 1500000, Line: 9},
			{Kind: IORead, Offset: 1048064, Length: 1024, At: 1500000, Line: 10},
			{Kind: IOFdatasync, At: 1500000, Line: 11},
			{Kind: IODiscard, Offset: 2 << 20, Length: 64 << 10, At: 1500000, Line: 12},
		}},
		{"sample-v3.iolog", 3, []IO{
			{Kind: IOWrite, Offset: 0, Length: 16384, At: 240000, Line: 4},
			{Kind: IOWrite, Offset: 16384, Length: 16384, At: 262000, Line: 5},
			{Kind: IOWrite, Offset: 65536, Length: 4096, At: 281000, Line: 6},
			{Kind: IOFsync, At: 305000, Line: 7},
			{Kind: IORead, Offset: 4096, Length: 4096, At: 1290000, Line: 8},
			{Kind: IORead, Offset: 131072, Length: 65536, At: 1312000, Line: 9},
			{Kind: IOWrite, Offset: 2048, Length: 1024, At: 1530000, Line: 10},
			{Kind: IOFdatasync, At: 1544000, Line: 11},
			{Kind: IODiscard, Offset: 1 << 20, Length: 1 << 20, At: 1890000, Line: 12},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join(tracesDir, tt.file))
			require.NoError(t, err)
			defer f.Close()
			r := NewFioLogReader(f)
			assert.Equal(t, 0, r.Version())
			got, err := ReadAll(r)
			require.NoError(t, err)
			assert.Equal(t, tt.version, r.Version())
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFioLines(t *testing.T) {
	const v2 = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n"
	const v3 = "fio version 3 iolog\n0 /dev/sdb add\n1 /dev/sdb open\n"
	tests := []struct {
		name string
		text string
		opts []FioOption
		want []IO
		err  string // "" for no error
	}{
		{"header only", "fio version 3 iolog\n", nil, nil, ""},
		{"header with trailing text", "fio version 2 iolog (by hand)\n", nil, nil, ""},
		{"blank lines", v2 + "\n  \n/dev/sdb write 0 512\n", nil, []IO{{Kind: IOWrite, Length: 512, Line: 6}}, ""},
		{"tabs", v3 + "5\t/dev/sdb\tread\t0\t4096\n", nil, []IO{{Kind: IORead, Length: 4096, At: 5000, Line: 4}}, ""},
		{"crlf", "fio version 2 iolog\r\n/dev/sdb add\r\n/dev/sdb open\r\n/dev/sdb write 0 512\r\n", nil, []IO{{Kind: IOWrite, Length: 512, Line: 4}}, ""},
		{"waits add up", v2 + "/dev/sdb wait 100 0\n/dev/sdb wait 50 0\n/dev/sdb write 0 1\n", nil, []IO{{Kind: IOWrite, Length: 1, At: 150000, Line: 6}}, ""},
		{"reopen", v2 + "/dev/sdb close\n/dev/sdb open\n/dev/sdb write 0 1\n", nil, []IO{{Kind: IOWrite, Length: 1, Line: 6}}, ""},
		{"re-add", v2 + "/dev/sdb add\n/dev/sdb write 0 1\n", nil, []IO{{Kind: IOWrite, Length: 1, Line: 5}}, ""},
		{"choose a file", v2 + "/dev/sdc add\n/dev/sdc open\n/dev/sdc write 0 1\n/dev/sdb write 8 1\n", []FioOption{FioFile("/dev/sdb")},
			[]IO{{Kind: IOWrite, Offset: 8, Length: 1, Line: 7}}, ""},
		{"sync offsets ignored", v2 + "/dev/sdb sync 4096 512\n", nil, []IO{{Kind: IOFsync, Line: 4}}, ""},

		{"empty", "", nil, nil, "line 1: fio: empty input"},
		{"version 1", "0, 0, 4096\n", nil, nil, "line 1: fio: not a fio iolog"},
		{"second file", v2 + "/dev/sdc add\n/dev/sdc open\n/dev/sdb write 0 1\n/dev/sdc write 0 1\n", nil, nil,
			"line 7: fio: I/O on /dev/sdc, but the trace's file is /dev/sdb (choose one with TraceSelect.File)"},
		{"not added", "fio version 2 iolog\n/dev/sdb write 0 1\n", nil, nil, "line 2: fio: write on /dev/sdb, which was not added"},
		{"not open", "fio version 2 iolog\n/dev/sdb add\n/dev/sdb read 0 1\n", nil, nil, "line 3: fio: read on /dev/sdb, which is not open"},
		{"open not added", "fio version 2 iolog\n/dev/sdb open\n", nil, nil, "line 2: fio: open of /dev/sdb, which was not added"},
		{"close not open", "fio version 2 iolog\n/dev/sdb add\n/dev/sdb close\n", nil, nil, "line 3: fio: close of /dev/sdb, which is not open"},
		{"unknown file action", v2 + "/dev/sdb unlink\n", nil, nil, `line 4: fio: unknown file action "unlink"`},
		{"io action without numbers", v2 + "/dev/sdb write\n", nil, nil, "line 4: fio: write needs an offset and a length"},
		{"file action with numbers", v2 + "/dev/sdb open 0 0\n", nil, nil, "line 4: fio: file action open takes no offset"},
		{"unknown io action", v2 + "/dev/sdb sync_file_range 0 0\n", nil, nil, `line 4: fio: unknown I/O action "sync_file_range"`},
		{"three fields", v2 + "/dev/sdb write 0\n", nil, nil, "line 4: fio: want FILE ACTION or FILE ACTION OFFSET LENGTH"},
		{"too many fields", v2 + "/dev/sdb write 0 1 2\n", nil, nil, "line 4: fio: want FILE ACTION"},
		{"v3 shape", v3 + "/dev/sdb write 0 1\n", nil, nil, `line 4: fio: time stamp "/dev/sdb"`},
		{"v3 too many", v3 + "1 /dev/sdb write 0 1 2\n", nil, nil, "line 4: fio: want TIMESTAMP FILE ACTION"},
		{"v3 wait", v3 + "2 /dev/sdb wait 100 0\n", nil, nil, "line 4: fio: wait is not allowed in a version 3 iolog"},
		{"bad offset", v2 + "/dev/sdb write -1 1\n", nil, nil, `line 4: fio: offset "-1" and length "1" must be decimal byte counts`},
		{"suffix not fio", v2 + "/dev/sdb write 4K 1\n", nil, nil, "must be decimal byte counts"},
		{"zero length", v2 + "/dev/sdb read 0 0\n", nil, nil, "line 4: fio: a read of 0 bytes"},
		{"overflow", v2 + "/dev/sdb write 18446744073709551615 2\n", nil, nil, "end past 2^64"},
		{"time stamp overflow", v3 + "18446744073709551615 /dev/sdb write 0 1\n", nil, nil, "is not a number of microseconds"},
		{"waits overflow", v2 + "/dev/sdb wait 18446744073709551 0\n/dev/sdb wait 18446744073709551 0\n", nil, nil, "line 5: fio: the waits add up past 2^64"},
		{"long line", v2 + strings.Repeat("x", traceMaxLine+1) + "\n", nil, nil, "line 4: fio: line longer than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadAll(NewFioLogReader(strings.NewReader(tt.text), tt.opts...))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Positive(t, traceErrLine(err), "the error names a line")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFioTooManyFiles(t *testing.T) {
	var b strings.Builder
	b.WriteString("fio version 2 iolog\n")
	for i := 0; i <= fioMaxFiles; i++ {
		b.WriteString("/dev/f" + strconv.Itoa(i) + " add\n")
	}
	_, err := ReadAll(NewFioLogReader(strings.NewReader(b.String())))
	assert.ErrorContains(t, err, "more than 1024 files")
}

// TestFioErrorIsSticky: after a bad line the reader keeps failing the same
// way.
func TestFioErrorIsSticky(t *testing.T) {
	r := NewFioLogReader(strings.NewReader("fio version 2 iolog\n/dev/sdb bogus\n/dev/sdb add\n"))
	_, err1 := r.Next()
	_, err2 := r.Next()
	require.Error(t, err1)
	assert.Equal(t, err1, err2)
}
