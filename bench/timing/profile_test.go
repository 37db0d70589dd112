package timing

import (
	"math"
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
