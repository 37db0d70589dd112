package threads

import (
	"testing"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/timing"
)

// The tables at full size, each made once for this test binary (memo) and
// shared by the tests that check them: the Helios4's (20 dd runs of 2000
// MiB) and Xu Yang's (18 of 4 GiB) are the suite's longest runs. Each is
// what `bhsim reproduce` makes for its table and charts — the thread's own
// profile and fit, Options{} — without the runs on 6.18 that Thread.Run
// adds after it (todayOf), which TestTodayDD runs small and .ci/run, with
// the README's command, whole.

// fullRun is a table's full-size reproduction and its dd runs.
type fullRun[K comparable] struct {
	rep  *Reproduction
	runs map[K]*engine.RunResult
}

var (
	fullBlocksize = memo(func() (fullRun[blocksizeRun], error) {
		p, err := threadProfile("blocksize")
		if err != nil {
			return fullRun[blocksizeRun]{}, err
		}
		rep, runs, err := reproduceBlocksize(p, BlocksizeFit(), Options{})
		return fullRun[blocksizeRun]{rep, runs}, err
	})
	fullIomap = memo(func() (fullRun[iomapRun], error) {
		p, err := threadProfile("iomap")
		if err != nil {
			return fullRun[iomapRun]{}, err
		}
		rep, runs, err := reproduceIomap(p, IomapFit(), Options{})
		return fullRun[iomapRun]{rep, runs}, err
	})
	fullAlloc = memo(func() (*Reproduction, error) {
		p, err := threadProfile("alloc")
		if err != nil {
			return nil, err
		}
		rep, _, err := reproduceAlloc(p, AllocFit(), Options{})
		return rep, err
	})
)

// threadProfile is the built-in profile of the thread called name: the one
// Thread.Run and `bhsim reproduce` price it with when given none.
func threadProfile(name string) (*timing.Profile, error) {
	t, err := ByName(name)
	if err != nil {
		return nil, err
	}
	return timing.ProfileByName(t.Profile)
}

// FullFigures returns the charts of the thread called name at full size,
// the ones `bhsim reproduce --plot` draws, from the runs this test binary
// shares (a thread with none of its own: from Thread.Run).
func FullFigures(t *testing.T, name string) []Figure {
	t.Helper()
	switch name {
	case "blocksize":
		return fullBlocksize(t).rep.Figures
	case "iomap":
		return fullIomap(t).rep.Figures
	case "alloc":
		return fullAlloc(t).Figures
	case "lru":
		return lruRun(t).Figures
	}
	th, err := ByName(name)
	if err == nil {
		var rep *Reproduction
		if rep, err = th.Run(nil, Options{}); err == nil {
			return rep.Figures
		}
	}
	t.Fatal(err)
	return nil
}
