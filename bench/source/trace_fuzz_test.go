package source

import (
	"errors"
	"io"
	"os"
	"path/filepath"
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
	traceSeeds(f, ".blkparse", ".iolog", ".csv")
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
