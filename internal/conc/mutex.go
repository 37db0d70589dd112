package conc

import "sync"

// Mutex is a sync.Mutex that can be confined (see the package doc): the lock
// of a structure the model shares between goroutines, such as the xarray's
// xa_lock or a request queue's state. The zero value is an unlocked, shared
// Mutex. A Mutex must not be copied after first use.
//
// Confined, Lock and Unlock only mark the lock held and free, and panic on a
// Lock of a held lock (which, on one goroutine, would never return) and on an
// Unlock of a free one, as sync.Mutex's does.
type Mutex struct {
	mu       sync.Mutex
	confined bool
	held     bool // confined only
}

// Confine makes m confined: one goroutine at a time uses it from now on.
// Call it before m is shared. It panics if m is locked.
func (m *Mutex) Confine() {
	if !m.mu.TryLock() {
		panic("conc: Confine of a locked Mutex")
	}
	m.mu.Unlock()
	m.confined = true
}

// Confined reports whether m is confined.
func (m *Mutex) Confined() bool { return m.confined }

// Lock acquires m. (Small enough to inline, so that a confined Lock costs
// a test and a store: the shared path's sync.Mutex is called, not inlined,
// which adds a call of about a nanosecond to its 14.)
func (m *Mutex) Lock() {
	if m.confined {
		m.lockConfined()
		return
	}
	m.lockShared()
}

// lockShared takes the sync.Mutex.
//
//go:noinline
func (m *Mutex) lockShared() { m.mu.Lock() }

// lockConfined marks a confined m held.
func (m *Mutex) lockConfined() {
	if m.held {
		panic("conc: Lock of a confined Mutex its goroutine holds")
	}
	m.held = true
}

// Unlock releases m.
func (m *Mutex) Unlock() {
	if m.confined {
		m.unlockConfined()
		return
	}
	m.unlockShared()
}

// unlockShared releases the sync.Mutex.
//
//go:noinline
func (m *Mutex) unlockShared() { m.mu.Unlock() }

// unlockConfined marks a confined m free.
func (m *Mutex) unlockConfined() {
	if !m.held {
		panic("conc: Unlock of an unlocked confined Mutex")
	}
	m.held = false
}
