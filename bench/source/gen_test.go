package source

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseGenerator(t *testing.T) {
	tests := []struct {
		spec  string
		want  Generator
		canon string
	}{
		{"random:dev=1G,n=1000000,size=4K,reads=0.3,cpus=4,qd=8,seed=7",
			Generator{Pattern: GenRandom, DeviceSize: 1 << 30, Count: 1000000, Size: FixedSize(4096), ReadFraction: 0.3, CPUs: 4, QueueDepth: 8, Seed: 7},
			"random:dev=1G,n=1000000,size=4K,reads=0.3,cpus=4,qd=8,seed=7"},
		{"seq", Generator{Pattern: GenSequential}, "seq:seed=0"},
		{"sequential: dev = 64K , n=20 ", Generator{Pattern: GenSequential, DeviceSize: 64 << 10, Count: 20}, "seq:dev=64K,n=20,seed=0"},
		{"uniform:bytes=1G,size=4K-64K,sizestep=4K", Generator{Pattern: GenRandom, Bytes: 1 << 30, Size: UniformSize(4096, 65536, 4096)},
			"random:bytes=1G,size=4K-64K,sizestep=4K,seed=0"},
		{"zipf:dev=64M,n=10,size=4K/75:64K/25,theta=1.2,scatter=1,align=512",
			Generator{Pattern: GenZipf, DeviceSize: 64 << 20, Count: 10, Size: WeightedSizes([]uint64{4096, 65536}, []float64{75, 25}), Theta: 1.2, Scatter: true, Align: 512},
			"zipf:dev=64M,n=10,size=4K/75:64K/25,align=512,theta=1.2,scatter=1,seed=0"},
		{"zipf:size=4K:8K", Generator{Pattern: GenZipf, Size: WeightedSizes([]uint64{4096, 8192}, []float64{1, 1})}, "zipf:size=4K/1:8K/1,seed=0"},
		{"hotcold:dev=1G,n=5,hot=0.1,hotio=0.9,cpus=2,cpumode=percpu,fdatasync=16",
			Generator{Pattern: GenHotCold, DeviceSize: 1 << 30, Count: 5, HotSpace: 0.1, HotIO: 0.9, CPUs: 2, PerCPU: true, FsyncEvery: 16, Fdatasync: true},
			"hotcold:dev=1G,n=5,hot=0.1,hotio=0.9,cpus=2,cpumode=percpu,fdatasync=16,seed=0"},
		{"seq:fsync=4,cpumode=rr,scatter=0,seed=18446744073709551615", Generator{Pattern: GenSequential, FsyncEvery: 4, Seed: math.MaxUint64},
			"seq:fsync=4,seed=18446744073709551615"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			g, err := ParseGenerator(tt.spec)
			require.NoError(t, err)
			assert.Equal(t, tt.want, g)
			assert.Equal(t, tt.canon, g.String())
			back, err := ParseGenerator(g.String())
			require.NoError(t, err)
			assert.Equal(t, g, back, "String round-trips")
		})
	}
}

func TestParseGeneratorErrors(t *testing.T) {
	tests := []struct{ spec, err string }{
		{"", `gen: Generator.Pattern: unknown pattern ""`},
		{"randomly:dev=1G", `unknown pattern "randomly"`},
		{"random:dev", `gen: "dev" is not key=value`},
		{"random:=1", `"=1" is not key=value`},
		{"random:depth=8", `gen: unknown key "depth" (want one of dev, n, bytes,`},
		{"random:dev=1G,dev=2G", "gen: dev= (Generator.DeviceSize): given twice"},
		{"random:fsync=1,fdatasync=2", "gen: fdatasync= (Generator.FsyncEvery): given twice"},
		{"random:dev=0", `gen: dev= (Generator.DeviceSize): "0" is not a positive byte count`},
		{"random:dev=1.5G", `dev= (Generator.DeviceSize): "1.5G"`},
		{"zipf:dev=10000000000000000000", `dev= (Generator.DeviceSize): "10000000000000000000" is not a positive byte count`}, // over 2^63: would print as 9765625000000000K, which does not parse
		{"random:n=1M", `n= (Generator.Count): "1M" is not a decimal number`},
		{"random:n=-1", `n= (Generator.Count)`},
		{"random:reads=half", `reads= (Generator.ReadFraction): "half" is not a decimal number`},
		{"random:reads=NaN", `reads= (Generator.ReadFraction)`},
		{"random:reads=0x1p-1", `reads= (Generator.ReadFraction)`},
		{"random:theta=Inf", `theta= (Generator.Theta)`},
		{"random:scatter=yes", `scatter= (Generator.Scatter): "yes" is not 0 or 1`},
		{"random:cpumode=numa", `cpumode= (Generator.PerCPU): "numa" is not rr or percpu`},
		{"random:cpus=2000", `cpus= (Generator.CPUs): "2000" is not a decimal number from 1 to 1024`},
		{"random:qd=5000", `qd= (Generator.QueueDepth)`},
		{"zipf:dev=1M,n=1,theta=0", `theta= (Generator.Theta): "0" is not in (0, 100]`},
		{"hotcold:dev=1M,n=1,hot=0", `hot= (Generator.HotSpace): "0" is not strictly between 0 and 1`},
		{"hotcold:dev=1M,n=1,hotio=0.0", `hotio= (Generator.HotIO): "0.0" is not in (0, 1]`},
		{"random:dev=1M,n=1,cpus=0", `cpus= (Generator.CPUs): "0" is not a decimal number from 1 to 1024`},
		{"random:dev=1M,n=1,qd=0", `qd= (Generator.QueueDepth): "0" is not a decimal number from 1 to`},
		{"random:dev=1M,n=1,theta=0", `theta= (Generator.Theta): applies to the zipf pattern only`},
		{"random:dev=1M,n=1,hotio=0", `hotio= (Generator.HotIO): hot= and hotio= apply to hotcold only`},
		{"random:seed=0x10", `seed= (Generator.Seed)`},
		{"random:size=", `size= (Generator.Size): "" is not a positive byte count`},
		{"random:size=4K-", `size= (Generator.Size): "4K-" is not a range`},
		{"random:size=4K/x:8K", `size= (Generator.Size): weight "x" of 4K`},
		{"random:size=4K/-1", `weight "-1"`},
		{"random:size=0/1", `"0" in the list is not a positive byte count`},
		{"random:sizestep=4K", "sizestep= (Generator.Size.Step): applies to a size range MIN-MAX only"},
		{"random:size=4K-8K,sizestep=0", `sizestep= (Generator.Size.Step): "0"`},
		{"random:" + string(make([]byte, maxGenSpec)), "a spec is at most 4096 bytes"},
	}
	for _, tt := range tests {
		_, err := ParseGenerator(tt.spec)
		require.Error(t, err, tt.spec)
		assert.Contains(t, err.Error(), tt.err, tt.spec)
		var ge *GenError
		assert.True(t, errors.As(err, &ge), tt.spec)
	}
}

// TestGenSettersCoverKeys checks that the spec's key lists agree: every
// key String prints has a field for its errors and a setter, and no
// setter or field is for a key genKeys does not list.
func TestGenSettersCoverKeys(t *testing.T) {
	for _, k := range genKeys {
		assert.Contains(t, genFields, k, "genFields")
		assert.Contains(t, genSetters, k, "genSetters")
	}
	assert.Len(t, genFields, len(genKeys), "genFields has a key genKeys lacks")
	assert.Len(t, genSetters, len(genKeys), "genSetters has a key genKeys lacks")
}

func TestGeneratorValidate(t *testing.T) {
	base := Generator{Pattern: GenRandom, DeviceSize: 1 << 20, Count: 10}
	require.NoError(t, base.Validate())
	tests := []struct {
		name string
		mod  func(*Generator)
		err  string
	}{
		{"no pattern", func(g *Generator) { g.Pattern = 0 }, "Generator.Pattern: unknown pattern 0"},
		{"no device", func(g *Generator) { g.DeviceSize = 0 }, "dev= (Generator.DeviceSize): the device size is required"},
		{"huge device", func(g *Generator) { g.DeviceSize = 1 << 61 }, "dev= (Generator.DeviceSize): 2048P is over the bound"},
		{"partial sector", func(g *Generator) { g.DeviceSize = 7 }, "dev= (Generator.DeviceSize): 7 bytes is not a whole number of 512-byte sectors"},
		{"no length", func(g *Generator) { g.Count = 0 }, "n= (Generator.Count): say how much"},
		{"both lengths", func(g *Generator) { g.Bytes = 1 }, "bytes= (Generator.Bytes): give n= or bytes=, not both"},
		{"reads", func(g *Generator) { g.ReadFraction = 1.5 }, "reads= (Generator.ReadFraction): 1.5 is not from 0 to 1"},
		{"reads NaN", func(g *Generator) { g.ReadFraction = math.NaN() }, "reads= (Generator.ReadFraction)"},
		{"theta not zipf", func(g *Generator) { g.Theta = 1 }, "theta= (Generator.Theta): applies to the zipf pattern only"},
		{"theta negative", func(g *Generator) { g.Pattern, g.Theta = GenZipf, -1 }, "theta= (Generator.Theta): -1 is not in (0, 100]"},
		{"scatter", func(g *Generator) { g.Scatter = true }, "scatter= (Generator.Scatter): applies to zipf and hotcold only"},
		{"hot not hotcold", func(g *Generator) { g.HotIO = 0.5 }, "hot= (Generator.HotSpace): hot= and hotio= apply to hotcold only"},
		{"hot 1", func(g *Generator) { g.Pattern, g.HotSpace = GenHotCold, 1 }, "hot= (Generator.HotSpace): 1 is not strictly between 0 and 1"},
		{"hotio", func(g *Generator) { g.Pattern, g.HotIO = GenHotCold, 2 }, "hotio= (Generator.HotIO)"},
		{"cpus", func(g *Generator) { g.CPUs = -1 }, "cpus= (Generator.CPUs)"},
		{"fsync", func(g *Generator) { g.FsyncEvery = -1 }, "fsync= (Generator.FsyncEvery)"},
		{"fdatasync alone", func(g *Generator) { g.Fdatasync = true }, "fdatasync= (Generator.Fdatasync)"},
		{"qd", func(g *Generator) { g.QueueDepth = MaxGenQueueDepth + 1 }, "qd= (Generator.QueueDepth)"},
		{"size too large", func(g *Generator) { g.Size = FixedSize(2 << 20) }, "size= (Generator.Size): the largest request (2M) is larger than the device (1M)"},
		{"size per cpu", func(g *Generator) { g.Size, g.CPUs, g.PerCPU = FixedSize(512<<10), 4, true }, "does not fit a CPU's region"},
		{"align", func(g *Generator) { g.Align = 2 << 20 }, "align= (Generator.Align): 2M is larger than the region"},
		{"fixed zero", func(g *Generator) { g.Size = FixedSize(0) }, "size= (Generator.Size): a fixed size is one positive byte count"},
		{"range inverted", func(g *Generator) { g.Size = UniformSize(8192, 4096, 0) }, "needs 0 < MIN ≤ MAX"},
		{"range step", func(g *Generator) { g.Size = UniformSize(1000, 4096, 0) }, "sizestep= (Generator.Size.Step): 1000-4K are not multiples of the step 512"},
		{"weights count", func(g *Generator) { g.Size = WeightedSizes([]uint64{512, 1024}, []float64{1}) }, "2 sizes but 1 weights"},
		{"weights zero", func(g *Generator) { g.Size = WeightedSizes([]uint64{512}, []float64{0}) }, "the weights add up to 0"},
		{"weights inf", func(g *Generator) { g.Size = WeightedSizes([]uint64{512}, []float64{math.Inf(1)}) }, "is not a finite number"},
		{"weighted zero size", func(g *Generator) { g.Size = WeightedSizes([]uint64{0}, []float64{1}) }, "size 1 of the list is 0"},
		{"unknown kind", func(g *Generator) { g.Size = SizeDist{Kind: 9} }, "unknown size distribution 9"},
	}
	for _, tt := range tests {
		g := base
		tt.mod(&g)
		err := g.Validate()
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.err, tt.name)
		_, err = NewGenerator(g)
		assert.Error(t, err, tt.name)
	}
}

func genCSV(t *testing.T, spec string) []byte {
	t.Helper()
	g, err := ParseGenerator(spec)
	require.NoError(t, err)
	r, err := NewGenerator(g)
	require.NoError(t, err)
	var b bytes.Buffer
	_, err = WriteCSV(&b, r, g.Header())
	require.NoError(t, err)
	return b.Bytes()
}

// TestGeneratorReproducible: the same spec and seed give byte-identical
// output; another seed another stream; and the streams are pinned, so that
// a change of the algorithm (or of math/rand/v2's PCG) is noticed.
func TestGeneratorReproducible(t *testing.T) {
	specs := []struct{ spec, sha string }{
		{"random:dev=1G,n=2000,size=4K,reads=0.3,cpus=4,qd=8,seed=7", "fc64a7ecad0c9b43"},
		{"zipf:dev=64M,n=2000,size=4K/75:64K/25,theta=0.99,scatter=1,seed=1", "372d4b63222dcc63"},
		{"hotcold:dev=64M,n=2000,size=512-16K,cpus=2,cpumode=percpu,fsync=8,seed=3", "939f4a799aa3805c"},
		{"seq:dev=1M,bytes=4M,size=4K-64K,sizestep=4K,reads=0.5,fdatasync=3,seed=11", "cc3d22219fcfc6c7"},
	}
	for _, s := range specs {
		a, b := genCSV(t, s.spec), genCSV(t, s.spec)
		assert.Equal(t, a, b, s.spec)
		other := genCSV(t, s.spec+"0")
		assert.NotEqual(t, a, other, "seed %s0 gives another stream", s.spec)
		assert.Equal(t, s.sha, fmt.Sprintf("%x", sha256.Sum256(a))[:16], s.spec)
	}
}

func TestGeneratorHeader(t *testing.T) {
	g, err := ParseGenerator("zipf:dev=64M,n=10")
	require.NoError(t, err)
	assert.Equal(t, "gen zipf:dev=64M,n=10,size=4K,align=4K,theta=0.99,cpus=1,qd=1,seed=0", g.Header())
	assert.Equal(t, "gen zipf:dev=64M,n=10,size=4K,align=4K,theta=0.99,cpus=1,qd=1,seed=42", g.WithSeed(42).Header())
	// The header is a spec of the same stream.
	n, err := ParseGenerator(g.Header()[len("gen "):])
	require.NoError(t, err)
	assert.Equal(t, g.Normalize(), n)
}

// TestGeneratorFlags shows a command line: -gen SPEC and -s SEED, the seed
// flag overriding the spec's seed= when given.
func TestGeneratorFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var g Generator
	fs.Var(&g, "gen", "workload spec")
	seed := fs.Uint64("s", 0, "seed")
	require.NoError(t, fs.Parse([]string{"-gen", "random:dev=1G,n=5,seed=3", "-s", "9"}))
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "s" {
			g = g.WithSeed(*seed)
		}
	})
	assert.Equal(t, uint64(9), g.Seed)
	assert.Equal(t, "random:dev=1G,n=5,seed=9", g.String())
	assert.Error(t, fs.Parse([]string{"-gen", "nope"}))
}

// genAll generates a spec's whole stream.
func genAll(t *testing.T, spec string) (Generator, []IO) {
	t.Helper()
	g, err := ParseGenerator(spec)
	require.NoError(t, err)
	r, err := NewGenerator(g)
	require.NoError(t, err)
	recs, err := ReadAll(r)
	require.NoError(t, err)
	for i, rec := range recs {
		if err := rec.Valid(); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if err := rec.CheckDevice(g.DeviceSize); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	return g.Normalize(), recs
}

func TestGeneratorSequential(t *testing.T) {
	_, recs := genAll(t, "seq:dev=16K,size=4K,n=6,fsync=2")
	var got []string
	for _, r := range recs {
		got = append(got, r.String())
	}
	assert.Equal(t, []string{
		"write,0,4K,0,0", "write,4K,4K,0,0", "fsync,0,0,0,0",
		"write,8K,4K,0,0", "write,12K,4K,0,0", "fsync,0,0,0,0",
		"write,0,4K,0,0", "write,4K,4K,0,0", "fsync,0,0,0,0",
	}, got, "wraps at the end of the device, a sync every 2 writes")

	// Per-CPU streams: each on its own quarter of the device.
	_, recs = genAll(t, "seq:dev=64K,size=4K,n=8,cpus=4,cpumode=percpu")
	for i, r := range recs {
		assert.Equal(t, i%4, r.CPU)
		assert.Equal(t, uint64(i%4)*16384+uint64(i/4)*4096, r.Offset, "record %d", i)
	}
	// Round-robin: one stream dealt to the CPUs.
	_, recs = genAll(t, "seq:dev=64K,size=4K,n=8,cpus=4")
	for i, r := range recs {
		assert.Equal(t, i%4, r.CPU)
		assert.Equal(t, uint64(i)*4096, r.Offset)
	}
	// bytes= ends with the I/O that reaches it.
	_, recs = genAll(t, "seq:dev=1M,size=3K,bytes=10K")
	assert.Len(t, recs, 4)
}

func TestGeneratorDistributions(t *testing.T) {
	const n = 100000
	// Reads, sizes and alignment.
	g, recs := genAll(t, fmt.Sprintf("random:dev=64M,n=%d,size=4K/3:16K/1,reads=0.3,align=2K,seed=5", n))
	reads, big := 0, 0
	for _, r := range recs {
		assert.Zero(t, r.Offset%2048)
		if r.Kind == IORead {
			reads++
		}
		if r.Length == 16384 {
			big++
		}
	}
	assert.InDelta(t, 0.3, float64(reads)/n, 0.01, "reads")
	assert.InDelta(t, 0.25, float64(big)/n, 0.01, "16K requests")
	assert.Equal(t, uint64(2048), g.Align)

	// Uniform sizes: every step, about equally often.
	_, recs = genAll(t, fmt.Sprintf("random:dev=64M,n=%d,size=4K-16K,sizestep=4K,seed=6", n))
	sizes := map[uint64]int{}
	for _, r := range recs {
		sizes[r.Length]++
	}
	require.Len(t, sizes, 4)
	for s, c := range sizes {
		assert.InDelta(t, 0.25, float64(c)/n, 0.01, "size %d", s)
	}

	// Hot/cold: 80 % of the I/Os to the first 20 % of the slots.
	_, recs = genAll(t, fmt.Sprintf("hotcold:dev=100M,n=%d,size=4K,seed=8", n))
	hot := 0
	slots := uint64((100<<20)-4096)/4096 + 1
	for _, r := range recs {
		if r.Offset/4096 < uint64(float64(slots)*0.2) {
			hot++
		}
	}
	assert.InDelta(t, 0.8, float64(hot)/n, 0.01, "hot I/Os")

	// Zipf: slot k with probability ∝ 1/(k+1)^θ, for θ below, at and above 1.
	for _, theta := range []float64{0.5, 0.99, 1, 1.2, 2} {
		_, recs = genAll(t, fmt.Sprintf("zipf:dev=40K,size=4K,n=%d,theta=%g,seed=9", n, theta))
		counts := make([]int, 10)
		for _, r := range recs {
			counts[r.Offset/4096]++
		}
		h := 0.0
		for k := 1; k <= 10; k++ {
			h += math.Pow(float64(k), -theta)
		}
		for k := 1; k <= 10; k++ {
			p := math.Pow(float64(k), -theta) / h
			assert.InDelta(t, p, float64(counts[k-1])/n, 0.006, "theta %g rank %d", theta, k)
		}
	}
	// Scatter moves the hottest slot away from the start but keeps the
	// frequencies.
	_, recs = genAll(t, fmt.Sprintf("zipf:dev=40M,size=4K,n=%d,theta=1.2,scatter=1,seed=9", 50000))
	freq := map[uint64]int{}
	for _, r := range recs {
		freq[r.Offset]++
	}
	var top uint64
	for off, c := range freq {
		if c > freq[top] {
			top = off
		}
	}
	assert.NotZero(t, top, "the hottest slot is not slot 0")
}

func TestGenPerm(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 10, 64, 97, 1000} {
		p := newGenPerm(n, 12345)
		seen := map[uint64]bool{}
		for x := uint64(0); x < n; x++ {
			y := p.apply(x)
			require.Less(t, y, n)
			seen[y] = true
		}
		assert.Len(t, seen, int(n), "a permutation of %d", n)
	}
	// A large slot count: still within range.
	p := newGenPerm(1<<60, 7)
	assert.Less(t, p.apply(1<<60-1), uint64(1<<60))
}

func TestGenZipfLarge(t *testing.T) {
	// 2^60 slots: ranks stay within them despite float64 rounding.
	g := Generator{Pattern: GenZipf, DeviceSize: MaxGenDevice, Count: 1000, Size: FixedSize(1), Theta: 0.5}
	r, err := NewGenerator(g)
	require.NoError(t, err)
	recs, err := ReadAll(r)
	require.NoError(t, err)
	for _, rec := range recs {
		require.NoError(t, rec.CheckDevice(g.DeviceSize))
	}
}

func TestGeneratorRegions(t *testing.T) {
	// Four CPUs on 20K of 4K slots aligned to 4K: regions 4K, 4K, 4K, 8K.
	_, recs := genAll(t, "random:dev=20K,size=4K,n=400,cpus=4,cpumode=percpu,seed=1")
	for _, r := range recs {
		lo := uint64(r.CPU) * 4096
		hi := lo + 4096
		if r.CPU == 3 {
			hi = 20480
		}
		assert.True(t, r.Offset >= lo && r.End() <= hi, "%+v", r)
	}
	// Alignment can leave a region too small for a request.
	g, err := ParseGenerator("random:dev=24K,size=6K,align=4K,n=1,cpus=4,cpumode=percpu")
	require.NoError(t, err)
	_, err = NewGenerator(g)
	assert.ErrorContains(t, err, "cpus= (Generator.CPUs): CPU 0's region of the device, 4K aligned to 4K, is smaller than the largest request (6K)")
}
