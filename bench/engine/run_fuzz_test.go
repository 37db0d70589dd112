package engine

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bufcache/blk/md"
)

// fuzzArrays are the devices FuzzRun runs on: one disk, and an array of
// each kind of md's work (on the submitter, and raid5d's).
var fuzzArrays = []Array{{}, {Level: md.Raid0, Members: 2, Chunk: 4096}, {Level: md.Raid10Near2, Members: 3, Chunk: 4096},
	{Level: md.Raid6, Members: 4, Chunk: 4096}}

// FuzzRun runs any CSV trace on a small device of 1 KiB blocks with two
// CPUs, the machine's invariant checks and step mode, with or without dd's
// reads of /dev/zero and its last close, on one disk or an md array: an error must be a trace
// error naming its line (or saying the trace has no record), never a panic
// or a broken invariant.
func FuzzRun(f *testing.F) {
	traceSeeds(f, ".csv")
	f.Add("write,0,4K,0,0\nwrite,100,5000,1,0\nread,0,64K,1,5us\nfsync,,,0,1ms\ndiscard,1K,3K,0,2ms\n")
	f.Add("write,60K,4K\nflush,0,0\nfdatasync,0,0,3,0\n")
	f.Add("# no record: ErrNoRecords\n")
	f.Fuzz(func(t *testing.T, text string) {
		w := csvWorkload("f.csv", text, 64<<10, 1024, 2)
		_, err := Run(context.Background(), w, RunOptions{Kernel: MustKernel("5.10.10"), Check: true, MRCSizes: []int{2},
			Step: &StepOptions{W: io.Discard, Quiz: len(text)%2 == 0}, FromZero: len(text)%3 == 0, ToNull: len(text)%3 == 1, LastClose: len(text)%5 < 3,
			Array: fuzzArrays[len(text)%len(fuzzArrays)]})
		var te *source.TraceError
		if err != nil && !errors.Is(err, source.ErrNoRecords) && (!errors.As(err, &te) || te.Line <= 0) {
			t.Fatalf("an error that names no line: %v", err)
		}
	})
}
