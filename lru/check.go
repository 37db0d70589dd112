package lru

import (
	"errors"
	"fmt"
)

// Check verifies the LRU's invariants on every CPU and returns nil, or the errors.Join of one
// *InvariantError per violation (each wraps ErrInvariant). Per CPU:
//   - the occupied count is within [0, Size()];
//   - occupied slots form a prefix: every slot past the count is empty (the
//     kernel's NULL slots only ever trail, because install shifts and
//     invalidation clears every slot);
//   - no entry is held twice (keys may repeat: see Install);
//   - an isolated CPU holds nothing.
//
// Safe to call from any goroutine; each CPU is checked under its lock. It
// allocates. O(CPUs() × Size()).
func (c *Cache[K, E]) Check() error {
	var errs []error
	for i := range c.cpus {
		errs = append(errs, c.checkCPU(i)...)
	}
	return errors.Join(errs...)
}

// checkCPU returns the violations found on one CPU.
func (c *Cache[K, E]) checkCPU(cpu int) []error {
	p := &c.cpus[cpu]
	p.lock.Lock()
	defer p.lock.Unlock()
	bad := func(slot int, format string, args ...any) error {
		return &InvariantError{CPU: cpu, Slot: slot, Problem: fmt.Sprintf(format, args...)}
	}
	if p.n < 0 || p.n > len(p.slots) {
		return []error{bad(-1, "occupied count %d outside [0, %d]", p.n, len(p.slots))}
	}
	var errs []error
	if p.isolated && p.n > 0 {
		errs = append(errs, bad(-1, "isolated but holds %d entries", p.n))
	}
	var empty slot[K, E]
	for i := p.n; i < len(p.slots); i++ {
		if p.slots[i] != empty {
			errs = append(errs, bad(i, "not empty past the %d occupied slots", p.n))
		}
	}
	entries := make(map[E]int, p.n)
	for i, s := range p.slots[:p.n] {
		if j, dup := entries[s.e]; dup {
			errs = append(errs, bad(i, "entry %v also in slot %d", s.e, j))
		} else {
			entries[s.e] = i
		}
	}
	return errs
}
