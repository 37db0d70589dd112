package threads

import (
	"fmt"
	"sync"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
)

// The Helios4 and Xu Yang tables at full size are the suite's longest
// runs: 20 dd runs of 2000 MiB and 18 of 4 GiB. This test binary makes each
// once, as `bhsim reproduce` makes it (the thread's own profile and fit,
// Options{}), and every test that needs them shares them:
// TestReproduceBlocksize and TestReproduceIomap check the tables' claims,
// TestCommittedFiguresAreCurrent (package threads_test) their charts.

// fullRun is a table's full-size reproduction and its dd runs.
type fullRun[K comparable] struct {
	rep  *Reproduction
	runs map[K]*workload.DDResult
	err  error
}

var (
	fullBlocksize = sync.OnceValue(func() fullRun[blocksizeRun] {
		p, err := threadProfile("blocksize")
		if err != nil {
			return fullRun[blocksizeRun]{err: err}
		}
		rep, runs, err := reproduceBlocksize(p, BlocksizeFit(), Options{})
		return fullRun[blocksizeRun]{rep, runs, err}
	})
	fullIomap = sync.OnceValue(func() fullRun[iomapRun] {
		p, err := threadProfile("iomap")
		if err != nil {
			return fullRun[iomapRun]{err: err}
		}
		rep, runs, err := reproduceIomap(p, IomapFit(), Options{})
		return fullRun[iomapRun]{rep, runs, err}
	})
)

// threadProfile is the built-in profile of the thread called name, the one
// Thread.Run prices it with when given none.
func threadProfile(name string) (*timing.Profile, error) {
	for _, t := range All() {
		if t.Name == name {
			return timing.ProfileByName(t.Profile)
		}
	}
	return nil, fmt.Errorf("threads: no thread %q", name)
}

// FullFigures returns the charts of the thread called name at full size,
// the ones `bhsim reproduce --plot` draws: the Helios4's and Xu Yang's from
// the runs this binary shares, the others from a run of their own.
func FullFigures(name string) ([]Figure, error) {
	switch name {
	case "blocksize":
		r := fullBlocksize()
		if r.err != nil {
			return nil, r.err
		}
		return r.rep.Figures, nil
	case "iomap":
		r := fullIomap()
		if r.err != nil {
			return nil, r.err
		}
		return r.rep.Figures, nil
	}
	for _, t := range All() {
		if t.Name == name {
			rep, err := t.Run(nil, Options{})
			if err != nil {
				return nil, err
			}
			return rep.Figures, nil
		}
	}
	return nil, fmt.Errorf("threads: no thread %q", name)
}
