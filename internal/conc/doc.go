// Package conc holds the synchronisation of the model's shared objects: Bits,
// a word of flag bits (folio->flags, bh->b_state); Int32, an atomic counter
// (a reference count); Uint64, a value stored and loaded whole by any
// goroutine (an md mirror's head position); Pointer, a pointer that readers load
// without a lock (an xarray slot, folio->mapping); SpinLock, the lock that stands for a
// spinlock_t on the hot paths (mapping->private_lock, bh_lru_lock); and
// Mutex, the lock of a structure whose kernel counterpart has its own
// locking (the xarray's xa_lock, a queue's or an md array's state).
//
// # Confinement
//
// Each type has two modes. By default every operation is atomic, so that
// goroutines driving different simulated CPUs of one machine share the
// object safely. An owner that drives its objects from one goroutine at a
// time confines them, once, before sharing them with anything — Bits,
// Int32, Uint64, SpinLock and Mutex with their Confine method; a Pointer,
// one word in arrays of slots, takes its owner's mode as an argument of Store. From
// then on the operations are plain loads and stores, with the same results,
// and without the locked instructions (a compare-and-swap, an atomic or, a
// locked exchange) that cost about 20 cycles each and made up a third of a
// dd simulation's time. A confined lock still checks its use: taking it
// twice or releasing it while free panics, where the shared lock would
// deadlock or panic. The model's counted events are counted by its callers,
// not here, so a confined run counts exactly what a shared one does.
//
// Confinement is a promise about goroutines, not about simulated CPUs: one
// goroutine may drive every CPU of a machine, in turn. Breaking the promise
// (two goroutines using a confined object at once) is a data race, which
// go test -race reports. Confinement is for good: nothing unconfines an
// object.
//
// No operation allocates. Each is O(1), except that a shared Mutex or
// SpinLock waits while another goroutine holds it, and a shared Bits'
// Change and TestAndClearSet retry their compare-and-swap while other
// goroutines change the word.
package conc

// noCopy lets go vet's copylocks check flag copies of the package's types.
type noCopy struct{}

// Lock is noCopy's marker method for go vet.
func (*noCopy) Lock() {}

// Unlock is noCopy's marker method for go vet.
func (*noCopy) Unlock() {}
