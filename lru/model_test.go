package lru

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// opKind is one operation of the oracle tests.
type opKind uint8

const (
	opLookup        opKind = iota // Lookup; a hit's reference is released at once
	opLookupKeep                  // Lookup; a hit's reference is kept by the caller
	opInstall                     // Install the key's entry
	opInvalidateAll               // InvalidateAll
	opInvalidateCPU               // InvalidateCPU
	opDisable                     // Disable
	opEnable                      // Enable
	opIsolate                     // toggle SetIsolated
	opRelease                     // drop one reference kept by opLookupKeep
	numOps
)

var opNames = [numOps]string{"lookup", "lookup-keep", "install", "invalidate-all", "invalidate-cpu", "disable", "enable", "isolate", "release"}

// op is one step of an oracle sequence; key is a pool index.
type op struct {
	kind     opKind
	cpu, key int
}

func (o op) String() string { return fmt.Sprintf("%s(cpu=%d key=%d)", opNames[o.kind], o.cpu, o.key) }

// model is the oracle: one plain slice per CPU, pool indexes with slot 0 first,
// and the kernel's rules written as directly as possible.
type model struct {
	size     int
	lrus     [][]int
	isolated []bool
	disabled int
	held     []int // references callers keep, per entry
}

func newModel(cpus, size, nkeys int) *model {
	return &model{size: size, lrus: make([][]int, cpus), isolated: make([]bool, cpus), held: make([]int, nkeys)}
}

// toFront moves the element at i of cpu's LRU to slot 0.
func (m *model) toFront(cpu, i int) {
	l := m.lrus[cpu]
	k := l[i]
	copy(l[1:i+1], l[:i])
	l[0] = k
}

func (m *model) lookup(cpu, key int) (hit bool, scanned int) {
	if m.isolated[cpu] {
		return false, 0
	}
	i := slices.Index(m.lrus[cpu], key)
	if i < 0 {
		return false, m.size
	}
	m.toFront(cpu, i)
	return true, i + 1
}

func (m *model) install(cpu, key int) (InstallResult, int) {
	switch {
	case m.disabled > 0:
		return InstallSkippedDisabled, 0
	case m.isolated[cpu]:
		return InstallSkippedIsolated, 0
	}
	if i := slices.Index(m.lrus[cpu], key); i >= 0 {
		m.toFront(cpu, i)
		return InstallMoved, i + 1
	}
	m.lrus[cpu] = append([]int{key}, m.lrus[cpu]...)
	if len(m.lrus[cpu]) > m.size {
		m.lrus[cpu] = m.lrus[cpu][:m.size]
		return InstallInsertedEvicted, m.size
	}
	return InstallInserted, m.size
}

func (m *model) invalidateCPU(cpu int) int {
	n := len(m.lrus[cpu])
	m.lrus[cpu] = nil
	return n
}

func (m *model) invalidateAll() (interrupted, released int) {
	for cpu := range m.lrus {
		if n := m.invalidateCPU(cpu); n > 0 {
			interrupted++
			released += n
		}
	}
	return interrupted, released
}

// refs is what an entry's count must be: one per CPU holding it, plus the
// callers' references.
func (m *model) refs(key int) int64 {
	n := m.held[key]
	for _, l := range m.lrus {
		if slices.Contains(l, key) {
			n++
		}
	}
	return int64(n)
}

// apply runs o on both the cache and the model and requires the same results
// and the same state afterwards, including every entry's reference count.
func (m *model) apply(t testing.TB, c *Cache[bhKey, *testBH], p *pool, o op) {
	t.Helper()
	b := p.bhs[o.key]
	switch o.kind {
	case opLookup, opLookupKeep:
		e, hit, scanned := c.Lookup(o.cpu, b.key)
		wantHit, wantScanned := m.lookup(o.cpu, o.key)
		require.Equal(t, wantHit, hit, "%v: hit", o)
		require.Equal(t, wantScanned, scanned, "%v: scanned", o)
		if hit {
			require.Same(t, b, e, "%v: entry", o)
			if o.kind == opLookup {
				c.hooks.Release(e)
			} else {
				m.held[o.key]++
			}
		}
	case opInstall:
		r, steps := c.Install(o.cpu, b.key, b)
		wantR, wantSteps := m.install(o.cpu, o.key)
		require.Equal(t, wantR, r, "%v: result", o)
		require.Equal(t, wantSteps, steps, "%v: steps", o)
	case opInvalidateAll:
		interrupted, released := c.InvalidateAll()
		wantInterrupted, wantReleased := m.invalidateAll()
		require.Equal(t, wantInterrupted, interrupted, "%v: CPUs interrupted", o)
		require.Equal(t, wantReleased, released, "%v: released", o)
	case opInvalidateCPU:
		require.Equal(t, m.invalidateCPU(o.cpu), c.InvalidateCPU(o.cpu), "%v: released", o)
	case opDisable:
		c.Disable()
		m.disabled++
		m.invalidateAll()
	case opEnable:
		err := c.Enable()
		if m.disabled == 0 {
			require.ErrorIs(t, err, ErrNotDisabled, "%v", o)
		} else {
			require.NoError(t, err, "%v", o)
			m.disabled--
		}
	case opIsolate:
		m.isolated[o.cpu] = !m.isolated[o.cpu]
		c.SetIsolated(o.cpu, m.isolated[o.cpu])
		if m.isolated[o.cpu] {
			m.invalidateCPU(o.cpu)
		}
	case opRelease:
		if m.held[o.key] > 0 {
			m.held[o.key]--
			c.hooks.Release(b)
		}
	}
	m.requireSame(t, c, p, o)
}

// requireSame compares the whole state of the cache with the model.
func (m *model) requireSame(t testing.TB, c *Cache[bhKey, *testBH], p *pool, o op) {
	t.Helper()
	require.NoError(t, c.Check(), "after %v", o)
	require.Equal(t, m.disabled > 0, c.Disabled(), "after %v: disabled", o)
	for cpu, l := range m.lrus {
		require.Equal(t, m.isolated[cpu], c.Isolated(cpu), "after %v: cpu %d isolated", o, cpu)
		require.Equal(t, append([]int{}, l...), entriesIdx(c, cpu), "after %v: cpu %d entries", o, cpu)
	}
	for key, b := range p.bhs {
		require.Equal(t, m.refs(key), b.refs.Load(), "after %v: refs of entry %d", o, key)
	}
	require.Zero(t, p.underflow.Load(), "after %v: a release below zero", o)
}

// finish drops every reference callers kept, flushes the cache and requires
// every count back at zero.
func (m *model) finish(t testing.TB, c *Cache[bhKey, *testBH], p *pool) {
	t.Helper()
	for key, n := range m.held {
		for range n {
			c.hooks.Release(p.bhs[key])
		}
		m.held[key] = 0
	}
	c.InvalidateAll()
	m.invalidateAll()
	for key, b := range p.bhs {
		require.Zero(t, b.refs.Load(), "entry %d", key)
	}
	require.Zero(t, p.underflow.Load())
}
