// Package spin provides the spin lock that stands for the kernel's spinlock_t in
// bhsim's hot paths (mapping->private_lock, bh_lru_lock).
//
// An uncontended acquire is one compare-and-swap and a release is one atomic
// swap, which also catches the release of a lock nobody holds. The kernel's
// spin_unlock is a plain release store, but Go has no release-only store:
// atomic.Store is sequentially consistent and compiles to the same locked
// exchange as Swap on amd64, so a Store would cost the same and could not see
// the bad release (a Load to check first makes the pair 28% slower:
// BenchmarkLockUnlock, 11.9 ns against 15.3 ns on the development VM). An
// uncontended pair costs about what a sync.Mutex pair does; what the spin
// lock changes is the waiting: under contention a waiter yields the
// processor with runtime.Gosched instead of sleeping, as a kernel spinner
// keeps its CPU, and goroutines that drive different simulated CPUs on fewer
// real cores still make progress. The atomic operations give the race
// detector the same happens-before edges a mutex does.
package spin

import (
	"runtime"
	"sync/atomic"
)

// Lock is a test-and-test-and-set spin lock. The zero value is unlocked. A Lock
// must not be copied after first use.
type Lock struct {
	_ noCopy
	v atomic.Uint32
}

// Lock acquires l, spinning (and yielding) until it is free.
func (l *Lock) Lock() {
	if l.v.CompareAndSwap(0, 1) {
		return
	}
	l.lockSlow()
}

// lockSlow spins on loads until l looks free, then tries to take it,
// yielding the processor between rounds.
func (l *Lock) lockSlow() {
	for {
		for i := 0; i < 32 && l.v.Load() != 0; i++ {
		}
		if l.v.Load() == 0 && l.v.CompareAndSwap(0, 1) {
			return
		}
		runtime.Gosched()
	}
}

// TryLock acquires l if it is free and reports whether it did.
func (l *Lock) TryLock() bool { return l.v.CompareAndSwap(0, 1) }

// Unlock releases l with one atomic swap. Unlocking an unlocked Lock panics:
// it is a broken invariant.
func (l *Lock) Unlock() {
	if l.v.Swap(0) == 0 {
		panic("spin: unlock of unlocked lock")
	}
}

// Locked reports whether l is held (for invariant checks; racy by nature).
func (l *Lock) Locked() bool { return l.v.Load() != 0 }

// noCopy lets go vet's copylocks check flag copies of a Lock.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
