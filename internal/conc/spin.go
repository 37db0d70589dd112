package conc

import (
	"runtime"
	"sync/atomic"
)

// SpinLock is a test-and-test-and-set spin lock: what stands for the kernel's
// spinlock_t on bhsim's hot paths (mapping->private_lock, bh_lru_lock). The
// zero value is unlocked and shared. A SpinLock must not be copied after first
// use.
//
// Shared, an uncontended acquire is one compare-and-swap and a release is one
// atomic swap, which also catches the release of a lock nobody holds. The
// kernel's spin_unlock is a plain release store, but Go has no release-only
// store: atomic.Store is sequentially consistent and compiles to the same
// locked exchange as Swap on amd64, so a Store would cost the same and could
// not see the bad release (a Load to check first makes the pair 28% slower:
// BenchmarkLockUnlock, 11.9 ns against 15.3 ns on the development VM). An
// uncontended pair costs about what a sync.Mutex pair does; what the spin
// lock changes is the waiting: under contention a waiter yields the
// processor with runtime.Gosched instead of sleeping, as a kernel spinner
// keeps its CPU, and goroutines that drive different simulated CPUs on fewer
// real cores still make progress. The atomic operations give the race
// detector the same happens-before edges a mutex does.
//
// Confined (see the package doc), acquire and release are plain stores, and
// acquiring a held lock panics: its goroutine would spin on itself for ever.
type SpinLock struct {
	_        noCopy
	v        uint32 // 1 while held
	confined bool
}

// Confine makes l confined: one goroutine at a time uses it from now on.
// Call it before l is shared. It panics if l is locked.
func (l *SpinLock) Confine() {
	if l.Locked() {
		panic("conc: Confine of a locked SpinLock")
	}
	l.confined = true
}

// Confined reports whether l is confined.
func (l *SpinLock) Confined() bool { return l.confined }

// Lock acquires l, spinning (and yielding) until it is free.
func (l *SpinLock) Lock() {
	if !l.confined && atomic.CompareAndSwapUint32(&l.v, 0, 1) {
		return
	}
	l.lockSlow()
}

// lockSlow marks a confined l held; a shared one it spins on with loads
// until l looks free, then tries to take it, yielding the processor between
// rounds. (Out of line, so that Lock's uncontended shared path inlines.)
func (l *SpinLock) lockSlow() {
	if l.confined {
		if l.v != 0 {
			panic("conc: Lock of a confined SpinLock its goroutine holds")
		}
		l.v = 1
		return
	}
	for {
		for i := 0; i < 32 && atomic.LoadUint32(&l.v) != 0; i++ {
		}
		if atomic.LoadUint32(&l.v) == 0 && atomic.CompareAndSwapUint32(&l.v, 0, 1) {
			return
		}
		runtime.Gosched()
	}
}

// TryLock acquires l if it is free and reports whether it did.
func (l *SpinLock) TryLock() bool {
	if l.confined {
		if l.v != 0 {
			return false
		}
		l.v = 1
		return true
	}
	return atomic.CompareAndSwapUint32(&l.v, 0, 1)
}

// Unlock releases l. Unlocking an unlocked SpinLock panics: it is a broken
// invariant.
func (l *SpinLock) Unlock() {
	if l.confined {
		if l.v == 0 {
			panic("conc: unlock of unlocked lock")
		}
		l.v = 0
		return
	}
	if atomic.SwapUint32(&l.v, 0) == 0 {
		panic("conc: unlock of unlocked lock")
	}
}

// Locked reports whether l is held (for invariant checks; racy by nature).
func (l *SpinLock) Locked() bool { return atomic.LoadUint32(&l.v) != 0 }
