package conc

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPointer: Store in either mode sets what Load returns, nil included.
func TestPointer(t *testing.T) {
	for _, confined := range []bool{false, true} {
		t.Run(fmt.Sprint("confined=", confined), func(t *testing.T) {
			var p Pointer[int]
			assert.Nil(t, p.Load(), "the zero value is nil")
			a, b := new(int), new(int)
			p.Store(a, confined)
			assert.Same(t, a, p.Load())
			p.Store(b, confined)
			assert.Same(t, b, p.Load())
			p.Store(nil, confined)
			assert.Nil(t, p.Load())
		})
	}
}

// TestPointerSharedReaders: readers load a shared Pointer while a writer
// stores; each load is one of the values stored (run with -race).
func TestPointerSharedReaders(t *testing.T) {
	vals := []*int{new(int), new(int), new(int)}
	var p Pointer[int]
	p.Store(vals[0], false)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				v := p.Load()
				if v != vals[0] && v != vals[1] && v != vals[2] {
					t.Error("a load returned a pointer never stored")
					return
				}
			}
		})
	}
	for i := range 1000 {
		p.Store(vals[i%3], false)
	}
	wg.Wait()
}

// TestConfineOfLockedLockPanics: confining a held lock is a broken
// precondition; once released, the lock confines.
func TestConfineOfLockedLockPanics(t *testing.T) {
	type lock interface {
		Lock()
		Unlock()
		Confine()
		Confined() bool
	}
	for _, tc := range []struct {
		name string
		l    lock
		want string
	}{
		{"Mutex", new(Mutex), "conc: Confine of a locked Mutex"},
		{"SpinLock", new(SpinLock), "conc: Confine of a locked SpinLock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.l.Lock()
			assert.PanicsWithValue(t, tc.want, tc.l.Confine)
			tc.l.Unlock()
			tc.l.Confine()
			assert.True(t, tc.l.Confined())
		})
	}
}
