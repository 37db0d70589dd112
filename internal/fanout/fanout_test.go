package fanout

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 100} {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			var running, peak atomic.Int32
			out := make([]int, 50)
			var calls []int
			err := Run(context.Background(), len(out), workers, func(_ context.Context, i int) error {
				if r := running.Add(1); r > peak.Load() {
					peak.Store(r)
				}
				out[i] = i * i
				running.Add(-1)
				return nil
			}, func(done, total int) {
				assert.Equal(t, 50, total)
				calls = append(calls, done)
			})
			require.NoError(t, err)
			for i, v := range out {
				assert.Equal(t, i*i, v)
			}
			require.Len(t, calls, 50)
			for i, d := range calls {
				assert.Equal(t, i+1, d, "progress counts up one call at a time")
			}
			if workers > 0 {
				assert.LessOrEqual(t, int(peak.Load()), workers)
			}
		})
	}
}

func TestRunLowestError(t *testing.T) {
	errAt := func(i int) error { return fmt.Errorf("call %d", i) }
	var ran atomic.Int32
	err := Run(context.Background(), 20, 4, func(_ context.Context, i int) error {
		ran.Add(1)
		if i == 7 || i == 3 || i == 15 {
			return errAt(i)
		}
		return nil
	}, nil)
	assert.EqualError(t, err, "call 3")
	assert.Equal(t, int32(20), ran.Load(), "every call runs")
	assert.NoError(t, Run(context.Background(), 0, 2, func(context.Context, int) error { return errors.New("never") }, nil))
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	err := Run(ctx, 100, 1, func(_ context.Context, i int) error {
		if ran.Add(1) == 5 {
			cancel()
		}
		return nil
	}, nil)
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Less(t, ran.Load(), int32(100), "no new calls once cancelled")
}

// TestSlotsBoundConcurrentRuns: three Runs side by side, each with more
// workers than the slots, never have more pieces running than the slots
// allow, and do every piece.
func TestSlotsBoundConcurrentRuns(t *testing.T) {
	for _, slots := range []int{1, 2, 3} {
		t.Run(fmt.Sprint("slots=", slots), func(t *testing.T) {
			s := NewSlots(slots)
			var running, peak, done atomic.Int32
			err := Run(context.Background(), 3, 3, func(_ context.Context, _ int) error {
				return Run(context.Background(), 20, 4, func(_ context.Context, _ int) error {
					return s.Do(func() error {
						r := running.Add(1)
						for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
						}
						time.Sleep(100 * time.Microsecond)
						running.Add(-1)
						done.Add(1)
						return nil
					})
				}, nil)
			}, nil)
			require.NoError(t, err)
			assert.Equal(t, int32(60), done.Load())
			assert.LessOrEqual(t, peak.Load(), int32(slots))
			assert.Equal(t, int32(0), running.Load())
		})
	}
	assert.Equal(t, runtime.GOMAXPROCS(0), cap(NewSlots(0).c), "0 means GOMAXPROCS")

	// All n slots are usable at once: n pieces that each wait for the others
	// to start finish (a Slots that ran fewer at a time would time out).
	const n = 3
	s := NewSlots(n)
	var started sync.WaitGroup
	started.Add(n)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	err := Run(context.Background(), n, n, func(_ context.Context, _ int) error {
		return s.Do(func() error {
			started.Done()
			select {
			case <-all:
				return nil
			case <-time.After(10 * time.Second):
				return errors.New("the slots did not run every piece at once")
			}
		})
	}, nil)
	require.NoError(t, err)
	want := errors.New("piece failed")
	assert.Same(t, want, NewSlots(1).Do(func() error { return want }), "Do returns do's error")
}
