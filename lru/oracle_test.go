package lru

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("lru.seed", 0, "seed of TestOracle's random operations (0: take one from the clock)")

// randomOp draws one operation, mostly lookups and installs.
func randomOp(rng *rand.Rand, cpus, nkeys int) op {
	o := op{cpu: rng.IntN(cpus), key: rng.IntN(nkeys)}
	switch r := rng.IntN(100); {
	case r < 40:
		o.kind = opLookup
	case r < 45:
		o.kind = opLookupKeep
	case r < 85:
		o.kind = opInstall
	case r < 88:
		o.kind = opInvalidateAll
	case r < 91:
		o.kind = opInvalidateCPU
	case r < 93:
		o.kind = opDisable
	case r < 96:
		o.kind = opEnable
	case r < 97:
		o.kind = opIsolate
	default:
		o.kind = opRelease
	}
	return o
}

// TestOracle runs seeded random operation sequences against the slice model.
// Rerun a failure with -lru.seed=<the logged seed>.
func TestOracle(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed=%d (rerun with -lru.seed=%d)", seed, seed)
	tests := []struct {
		cpus, size, nkeys, ops int
	}{
		{cpus: 3, size: 1, nkeys: 4, ops: 3000},
		{cpus: 3, size: OldSize, nkeys: 20, ops: 5000},
		{cpus: 3, size: DefaultSize, nkeys: 40, ops: 5000},
		{cpus: 2, size: 64, nkeys: 150, ops: 5000},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("cpus=%d/size=%d", tt.cpus, tt.size), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			c, p := newTestCache(t, tt.cpus, tt.size, tt.nkeys)
			m := newModel(tt.cpus, tt.size, tt.nkeys)
			for range tt.ops {
				m.apply(t, c, p, randomOp(rng, tt.cpus, tt.nkeys))
			}
			m.finish(t, c, p)
		})
	}
}
