package conc

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLockUnlock(t *testing.T) {
	var l SpinLock
	require.False(t, l.Locked())
	l.Lock()
	assert.True(t, l.Locked())
	assert.False(t, l.TryLock(), "held")
	l.Unlock()
	assert.False(t, l.Locked())
	assert.True(t, l.TryLock())
	l.Unlock()
	assert.PanicsWithValue(t, "conc: unlock of unlocked lock", l.Unlock)
}

// BenchmarkLockUnlock measures an uncontended acquire and release, against
// sync.Mutex's.
func BenchmarkLockUnlock(b *testing.B) {
	b.Run("lock=spin", func(b *testing.B) {
		var l SpinLock
		for b.Loop() {
			l.Lock()
			//lint:ignore SA2001 the empty critical section is the point: this times the lock itself
			l.Unlock()
		}
	})
	b.Run("lock=sync.Mutex", func(b *testing.B) {
		var mu sync.Mutex
		for b.Loop() {
			mu.Lock()
			//lint:ignore SA2001 the empty critical section is the point: this times the lock itself
			mu.Unlock()
		}
	})
}
