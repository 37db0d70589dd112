package timing

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/bhsim/bhsim/bufcache"
)

// TestProfileSetAndScaledRefuseNonsense: Set and Scaled, which build
// profiles from figures known to be good, panic on a cost or factor that
// would make every figure meaningless, and take every good one.
func TestProfileSetAndScaledRefuseNonsense(t *testing.T) {
	bios := Ev(bufcache.EvBioSubmit)
	for _, tc := range []struct {
		name  string
		do    func(p *Profile)
		panic string
	}{
		{"a negative cost", func(p *Profile) { p.Set(bios, -1e9, "x") }, "want nanoseconds from 0 to 1e15"},
		{"a NaN cost", func(p *Profile) { p.Set(bios, math.NaN(), "x") }, "want nanoseconds from 0 to 1e15"},
		{"a share of 1", func(p *Profile) { p.Set(ParamMemStall, 1, "x") }, "want a fraction"},
		{"a zero factor", func(p *Profile) { p.Scaled("s", "d", 0, "x") }, "want a positive, finite factor"},
		{"a negative factor", func(p *Profile) { p.Scaled("s", "d", -2, "x") }, "want a positive, finite factor"},
		{"an infinite factor", func(p *Profile) { p.Scaled("s", "d", math.Inf(1), "x") }, "want a positive, finite factor"},
		{"a factor past the costs' bound", func(p *Profile) { p.Scaled("s", "d", 1e20, "x") }, "want nanoseconds from 0 to 1e15"},
		{"a zero cost", func(p *Profile) { p.Set(bios, 0, "x") }, ""},
		{"a share", func(p *Profile) { p.Set(ParamMemStall, 0.45, "x") }, ""},
		{"a factor", func(p *Profile) { assert.InDelta(t, 2*p.NS[bios], p.Scaled("s", "d", 2, "x").NS[bios], 1e-9) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := X86Server()
			if tc.panic == "" {
				assert.NotPanics(t, func() { tc.do(p) })
				return
			}
			assert.Contains(t, panicText(func() { tc.do(p) }), tc.panic, "panics with a string saying why")
		})
	}
}

// panicText returns what do panics with, as a string ("" if it returns or
// panics with another type).
func panicText(do func()) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s, _ = r.(string)
		}
	}()
	do()
	return ""
}

// TestSimNSSinceIsSimNSOfTheDifference: pricing two snapshots in place
// gives, to the bit, what pricing their difference does, for every
// profile and counter sets with few kinds counted, all, and none.
func TestSimNSSinceIsSimNSOfTheDifference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var sparse, dense, big bufcache.Counters
	sparse[bufcache.EvBioSubmit], sparse[bufcache.EvFolioGet] = 3, 1
	for e := range dense {
		dense[e] = uint64(rng.IntN(5000))
		big[e] = 1<<40 + uint64(rng.IntN(1<<20))
	}
	for _, p := range Profiles() {
		for _, tc := range []struct {
			name        string
			before, now bufcache.Counters
		}{
			{"nothing counted", dense, dense},
			{"two kinds counted", dense, dense.Add(sparse)},
			{"every kind counted", sparse, sparse.Add(dense)},
			{"large counts", big, big.Add(dense)},
		} {
			t.Run(p.Name+"/"+tc.name, func(t *testing.T) {
				want := p.SimNS(tc.now.Sub(tc.before), 0)
				got := p.SimNSSince(&tc.now, &tc.before)
				assert.Equal(t, math.Float64bits(want), math.Float64bits(got), "%v vs SimNS's %v", got, want)
			})
		}
	}
	assert.Zero(t, X86Server().SimNSSince(&dense, &dense), "nothing counted costs nothing")
}
