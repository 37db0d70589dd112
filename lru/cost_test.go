package lru

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/internal/speedtest"
)

// TestHitCostVsMutex checks that the best case of the model's LRU — a hit in
// slot 0 plus the caller's brelse, Tosatti's loop — costs at most 2.5 times an
// uncontended sync.Mutex Lock/Unlock pair: the model's bh_lru_lock must stay
// cheap for the real-time clock to mean anything. The two are measured in
// alternating rounds and the median ratio is compared (internal/speedtest).
// It runs when BHSIM_SPEED_TESTS=1, as CI's speed step sets.
func TestHitCostVsMutex(t *testing.T) {
	speedtest.Require(t)
	const maxRatio = 2.5
	c, p := newTestCache(t, 1, DefaultSize, 1)
	fill(t, c, p, 0, 0)
	key := keyOf(0)
	hit := func() {
		e, ok, _ := c.Lookup(0, key)
		if ok {
			c.hooks.Release(e)
		}
	}
	require.Equal(t, 1, c.Len(0))
	var mu sync.Mutex
	var guarded int
	pair := func() { mu.Lock(); guarded++; mu.Unlock() }
	ratio, hitNS, mutexNS := speedtest.Ratio(hit, pair, 200_000, 15)
	t.Logf("lookup hit slot 0 + release: %.2f ns/op; mutex pair: %.2f ns/op; median ratio %.2f (limit %.1f)",
		hitNS, mutexNS, ratio, maxRatio)
	assert.LessOrEqual(t, ratio, maxRatio)
}
