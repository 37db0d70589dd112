package source

import (
	"errors"
	"testing"
)

// FuzzParseGenerator: a spec never panics; one that parses prints as a spec
// that parses to the same configuration; one that validates generates
// valid records within the device, and the same ones twice.
func FuzzParseGenerator(f *testing.F) {
	f.Add("random:dev=1G,n=1000000,size=4K,reads=0.3,cpus=4,qd=8,seed=7")
	f.Add("zipf:dev=64M,n=50,size=4K/75:64K/25,theta=1.2,scatter=1")
	f.Add("hotcold:dev=1M,n=30,size=512-8K,sizestep=512,cpus=3,cpumode=percpu,fdatasync=2")
	f.Add("seq:dev=64K,size=4K,n=20,fsync=4,seed=1")
	f.Fuzz(func(t *testing.T, spec string) {
		g, err := ParseGenerator(spec)
		if err != nil {
			var ge *GenError
			if !errors.As(err, &ge) {
				t.Fatalf("not a *GenError: %v", err)
			}
			return
		}
		back, err := ParseGenerator(g.String())
		if err != nil {
			t.Fatalf("String %q does not parse: %v", g.String(), err)
		}
		if back.String() != g.String() {
			t.Fatalf("round trip: %q then %q", g.String(), back.String())
		}
		if g.Count > 200 {
			g.Count = 200
		}
		if g.Bytes > 1<<20 {
			g.Bytes = 1 << 20
		}
		r1, err := NewGenerator(g)
		if err != nil {
			var ge *GenError
			if !errors.As(err, &ge) {
				t.Fatalf("not a *GenError: %v", err)
			}
			return
		}
		r2, _ := NewGenerator(g)
		for i := 0; i < 1000; i++ {
			a, err1 := r1.Next()
			b, err2 := r2.Next()
			if err1 != err2 || a != b {
				t.Fatalf("record %d differs between two runs: %+v %v, %+v %v", i, a, err1, b, err2)
			}
			if err1 != nil {
				return
			}
			if err := a.Valid(); err != nil {
				t.Fatalf("invalid record %+v: %v", a, err)
			}
			if err := a.CheckDevice(g.DeviceSize); err != nil {
				t.Fatalf("record %+v: %v", a, err)
			}
		}
	})
}
