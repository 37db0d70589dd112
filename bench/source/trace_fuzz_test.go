package source

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bhsim/bhsim/bench/scenario"
)

// fuzzReader reads r to its end (at most 10 000 records) and fails the fuzz
// run if a record is invalid or out of its line order, or if an error
// other than a *TraceError (or *ParseError) naming a line comes out.
func fuzzReader(t *testing.T, r IOReader) {
	t.Helper()
	last := 0
	for i := 0; i < 10000; i++ {
		rec, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			if traceErrLine(err) <= 0 {
				t.Fatalf("an error without a line: %v", err)
			}
			return
		}
		if err := rec.Valid(); err != nil {
			t.Fatalf("invalid record %+v: %v", rec, err)
		}
		if rec.Line < last {
			t.Fatalf("line %d after line %d", rec.Line, last)
		}
		last = rec.Line
	}
}

// traceSeeds adds every shipped sample of the given extensions.
func traceSeeds(f *testing.F, exts ...string) {
	for _, ext := range exts {
		paths, _ := filepath.Glob(filepath.Join(tracesDir, "*"+ext))
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err == nil && len(b) < 16<<10 {
				f.Add(string(b))
			}
		}
	}
}

func FuzzBlkparseReader(f *testing.F) {
	traceSeeds(f, ".blkparse")
	f.Add("  8,0    3        1     0.000001500   697  Q FWFSM 16 + 8 [jbd2/sda1-8]\n")
	f.Add("  8,0    3        1     0.000001500   697  C  FN 18446744073709551615 [0]\n")
	f.Add("CPU0 (8,0):\n Reads Queued: 0\n  8,0 0 1 0.0 1 Q W 0 + 8 [a]\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzReader(t, NewBlkparseReader(strings.NewReader(in)))
		fuzzReader(t, NewBlkparseReader(strings.NewReader(in), BlkparseReplay(BlkparseComplete)))
	})
}

func FuzzFioLogReader(f *testing.F) {
	traceSeeds(f, ".iolog")
	f.Add("fio version 2 iolog\nf add\nf open\nf wait 100 0\nf write 0 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		r := NewFioLogReader(strings.NewReader(in))
		_, err := r.Next()
		if err != nil && err != io.EOF && traceErrLine(err) <= 0 {
			t.Fatalf("an error without a line: %v", err)
		}
		fuzzReader(t, NewFioLogReader(strings.NewReader(in)))
	})
}

func FuzzCSVReader(f *testing.F) {
	traceSeeds(f, ".csv")
	f.Add("op,offset,length,cpu,time\nwrite,0,4K,1,1.5us\nfsync,,\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzReader(t, NewCSVReader(strings.NewReader(in)))
	})
}

func FuzzScenarioTextReader(f *testing.F) {
	f.Add(traceScenarioText)
	f.Add("device size=1M\nopen a rdwr\npwrite a off=0 len=0 repeat=5\n")
	f.Fuzz(func(t *testing.T, in string) {
		r, err := NewScenarioTextReader("f.scn", in)
		if err != nil {
			var pe *scenario.ParseError
			if !errors.As(err, &pe) || pe.Line <= 0 {
				t.Fatalf("a parse error without a line: %v", err)
			}
			return
		}
		fuzzReader(t, r)
	})
}

// FuzzNewTrace: detection never panics, and whatever it picks reads
// without a panic.
func FuzzNewTrace(f *testing.F) {
	traceSeeds(f, ".blkparse", ".iolog", ".csv", ".spc", ".disksim", ".log")
	f.Add(traceScenarioText)
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := NewTrace(strings.NewReader(in), "fuzz", "")
		if err != nil {
			return
		}
		for i := 0; i < 10000; i++ {
			rec, err := tr.Next()
			if err != nil {
				return
			}
			if err := rec.Valid(); err != nil {
				t.Fatalf("invalid record %+v: %v", rec, err)
			}
		}
	})
}

func FuzzMSRReader(f *testing.F) {
	traceSeeds(f, ".csv")
	f.Add("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n128166372003061629,hm,1,Read,3718946816,4096,5689\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzReader(t, NewMSRReader(strings.NewReader(in)))
		fuzzReader(t, NewMSRReader(strings.NewReader(in), ColumnDevice("1")))
	})
}

func FuzzSPCReader(f *testing.F) {
	traceSeeds(f, ".spc")
	f.Add("0,20941264,8192,W,0.551706\n1,303567,3584,r,12.000001,x\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzReader(t, NewSPCReader(strings.NewReader(in)))
	})
}

func FuzzAlibabaReader(f *testing.F) {
	f.Add("419,W,8250941440,4096,1577808000000287\n419,R,0,512,1577808000000300\n")
	f.Add("device_id,opcode,offset,length,timestamp\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzReader(t, NewAlibabaReader(strings.NewReader(in)))
	})
}

func FuzzDiskSimReader(f *testing.F) {
	traceSeeds(f, ".disksim")
	f.Add("12.455 0 2367200 16 1\n13.5\t0 8 8 0\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzReader(t, NewDiskSimReader(strings.NewReader(in)))
	})
}

func FuzzFioStatLogReader(f *testing.F) {
	traceSeeds(f, ".log")
	f.Add("1, 120384, 0, 4096, 1073213440, 0\n3, 39424, 2, 4096, 1029947392, 0x6004\n")
	f.Add("12, 80, 1, 4096, 409600\n")
	f.Add("12, 80, 1, 4096\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzReader(t, NewFioStatLogReader(strings.NewReader(in)))
	})
}

func FuzzColumnReader(f *testing.F) {
	f.Add("time=0:us,op=1,offset=2,length=3", "10,read,4096,512\n20,W,0,4096\n")
	f.Add("time=ts:ms,offset=lba:sector,length=bytes,op=rw,cpu=core", "lba,rw,bytes,ts,core\n8,r,4096,1.5,3\n")
	f.Add("sep=blank,time=0,op=4:disksim,offset=2:sector,length=3:sector,device=1", "0.5 0 8 8 1\n")
	f.Add("time=1,op=2,length=3,offset=4:sector", "version,time,op,size,lbn\n1,33898,2a,512,42932745\n")
	f.Fuzz(func(t *testing.T, spec, in string) {
		m, err := ParseColumnMap(spec)
		if err != nil {
			return
		}
		fuzzReader(t, NewColumnReader(strings.NewReader(in), m))
		if tr, err := NewTrace(strings.NewReader(in), "fuzz", TraceColumns); err == nil {
			fuzzReader(t, tr)
		}
	})
}

// FuzzTraceNumbers holds the trace readers' number parsers to the
// standard library's: traceUint to strconv.ParseUint on decimal digits,
// and traceSize to it on digits and to scenario.ParseDDSize on the rest.
func FuzzTraceNumbers(f *testing.F) {
	for _, s := range []string{"0", "4096", "4K", "4k", "1M", "2G", "1T", "3P", "0K", "K", "-4K", "+5",
		"18446744073709551615", "18446744073709551616", "000000000000000000000007", "9007199254740993K", "1_000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		digits := s != "" && strings.Trim(s, "0123456789") == ""
		want, err := strconv.ParseUint(s, 10, 64)
		wantOK := digits && err == nil
		v, ok := traceUint(s)
		if ok != wantOK || v != want && ok {
			t.Fatalf("traceUint(%q) = %d, %v; ParseUint: %d, %v", s, v, ok, want, err)
		}
		if !digits {
			dd, err := scenario.ParseDDSize(s)
			want, wantOK = dd, err == nil
		}
		if v, ok := traceSize(s); ok != wantOK || v != want && ok {
			t.Fatalf("traceSize(%q) = %d, %v; want %d, %v", s, v, ok, want, wantOK)
		}
	})
}
