package lru

import (
	"errors"
	"fmt"
)

// Sentinel errors. New wraps ErrCPUs, ErrSize and ErrHooks with the offending value;
// test for them with errors.Is.
var (
	// ErrCPUs reports a CPU count below 1 passed to New.
	ErrCPUs = errors.New("lru: the number of CPUs must be at least 1")
	// ErrSize reports an LRU size below 1 passed to New, or one so large that
	// the slots of all CPUs would not fit in one allocation.
	ErrSize = errors.New("lru: the LRU size must be at least 1 and fit in memory")
	// ErrHooks reports a nil Hooks.Hold or Hooks.Release passed to New.
	ErrHooks = errors.New("lru: Hooks.Hold and Hooks.Release must both be set")
	// ErrNotDisabled reports an Enable without a matching Disable (the kernel's
	// lru_cache_enable would drive lru_disable_count below zero).
	ErrNotDisabled = errors.New("lru: Enable without a matching Disable")
	// ErrInvariant is wrapped by every *InvariantError that Check returns.
	ErrInvariant = errors.New("lru: invariant violated")
)

// InvariantError describes one broken invariant found by Check. It unwraps to
// ErrInvariant.
type InvariantError struct {
	// CPU is the CPU whose LRU is broken.
	CPU int
	// Slot is the slot where the problem was seen, or -1 when it concerns the
	// whole CPU (its occupied count or its isolation).
	Slot int
	// Problem says what is wrong, in words.
	Problem string
}

// Error implements error.
func (e *InvariantError) Error() string {
	if e.Slot < 0 {
		return fmt.Sprintf("lru: cpu %d: %s", e.CPU, e.Problem)
	}
	return fmt.Sprintf("lru: cpu %d slot %d: %s", e.CPU, e.Slot, e.Problem)
}

// Unwrap returns ErrInvariant, so errors.Is(err, ErrInvariant) holds for any
// error Check returns.
func (e *InvariantError) Unwrap() error { return ErrInvariant }
