package lru

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/internal/speedtest"
)

// TestHitCostVsInline checks that the best case of the model's LRU — a hit in
// slot 0 plus the caller's brelse, Tosatti's loop — costs at most 1.6 times the
// same work written inline: a compare-and-swap lock, one key compare, get_bh,
// a swap unlock, brelse. Both sides do the same four atomic operations, so the
// ratio is what the generic cache adds (the slot scan, the indirect hooks) and
// does not move with how dear a CPU's atomics are; against a bare mutex pair,
// two atomics, the ratio was 2.3 on one machine and 2.9 on another for the same
// code. The two are measured in alternating rounds and the median ratio is
// compared (internal/speedtest). It runs when BHSIM_SPEED_TESTS=1, as CI's
// speed step sets.
func TestHitCostVsInline(t *testing.T) {
	speedtest.Require(t)
	const maxRatio = 1.6
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

	var lock uint32
	one := &slot[bhKey, *testBH]{key: key, e: p.bhs[0]}
	inline := func() {
		for !atomic.CompareAndSwapUint32(&lock, 0, 1) {
		}
		var b *testBH
		if one.key == key {
			b = one.e
			b.refs.Add(1)
		}
		atomic.SwapUint32(&lock, 0)
		if b != nil {
			b.refs.Add(-1)
		}
	}
	ratio, hitNS, inlineNS := speedtest.Ratio(hit, inline, 200_000, 15)
	t.Logf("lookup hit slot 0 + release: %.2f ns/op; inline lock, compare, get_bh, unlock, brelse: %.2f ns/op; median ratio %.2f (limit %.1f)",
		hitNS, inlineNS, ratio, maxRatio)
	assert.LessOrEqual(t, ratio, maxRatio)
	assert.Zero(t, p.underflow.Load())
}
