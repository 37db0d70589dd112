package source

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
)

// GenPattern is where a generator's I/Os go.
type GenPattern uint8

// The patterns.
const (
	// GenSequential: each I/O of a stream starts where its last ended,
	// wrapping to the start of its region when the next would pass its end
	// ("seq").
	GenSequential GenPattern = iota + 1
	// GenRandom: offsets uniform over the aligned slots of the region
	// ("random").
	GenRandom
	// GenZipf: slot k (from 0) with probability ∝ 1/(k+1)^Theta, so slot 0
	// is the hottest ("zipf"); with Scatter the ranks are spread over the
	// region by a fixed permutation.
	GenZipf
	// GenHotCold: a fraction HotIO of the I/Os go uniformly to the first
	// HotSpace of the region's slots, the rest uniformly to the others
	// ("hotcold"); with Scatter the hot slots are spread over the region.
	GenHotCold
)

var genPatternNames = [...]string{"", "seq", "random", "zipf", "hotcold"}

// String is the pattern's name in a spec: "seq", "random", "zipf",
// "hotcold".
func (p GenPattern) String() string {
	if p >= GenSequential && p <= GenHotCold {
		return genPatternNames[p]
	}
	return "pattern(" + strconv.Itoa(int(p)) + ")"
}

// SizeKind is the shape of a request-size distribution.
type SizeKind uint8

// The request-size distributions.
const (
	// SizeFixed: every request is Sizes[0] bytes ("size=4K").
	SizeFixed SizeKind = iota + 1
	// SizeUniform: uniform among Min, Min+Step, …, Max ("size=4K-64K",
	// Step from "sizestep=", 512 by default).
	SizeUniform
	// SizeWeighted: Sizes[i] with probability Weights[i]/ΣWeights
	// ("size=4K/75:64K/25", fio's bssplit notation; "4K:64K" weighs them
	// equally).
	SizeWeighted
)

// SizeDist is a request-size distribution. The zero value means 4 KiB
// requests.
type SizeDist struct {
	Kind           SizeKind
	Sizes          []uint64  // SizeFixed (one size), SizeWeighted
	Weights        []float64 // SizeWeighted, one per size
	Min, Max, Step uint64    // SizeUniform; Step 0 means 512
}

// FixedSize is requests of n bytes.
func FixedSize(n uint64) SizeDist { return SizeDist{Kind: SizeFixed, Sizes: []uint64{n}} }

// UniformSize is requests uniform among min, min+step, …, max (step 0:
// 512).
func UniformSize(min, max, step uint64) SizeDist {
	return SizeDist{Kind: SizeUniform, Min: min, Max: max, Step: step}
}

// WeightedSizes is requests of sizes[i] with probability weights[i] / Σ
// weights.
func WeightedSizes(sizes []uint64, weights []float64) SizeDist {
	return SizeDist{Kind: SizeWeighted, Sizes: sizes, Weights: weights}
}

// normalize fills in the defaults.
func (d SizeDist) normalize() SizeDist {
	switch {
	case d.Kind == 0 && len(d.Sizes) == 0 && d.Max == 0:
		return FixedSize(4096)
	case d.Kind == SizeUniform && d.Step == 0:
		d.Step = 512
	}
	return d
}

// minMax is the smallest and the largest size the distribution gives.
func (d SizeDist) minMax() (lo, hi uint64) {
	if d.Kind == SizeUniform {
		return d.Min, d.Max
	}
	for i, s := range d.Sizes {
		if i == 0 || s < lo {
			lo = s
		}
		if s > hi {
			hi = s
		}
	}
	return lo, hi
}

// maxGenSizes bounds the sizes of a weighted distribution.
const maxGenSizes = 64

// validate checks a normalized distribution.
func (d SizeDist) validate() error {
	bad := func(msg string, args ...any) error {
		return &GenError{Key: "size", Field: "Size", Msg: fmt.Sprintf(msg, args...)}
	}
	switch d.Kind {
	case SizeFixed:
		if len(d.Sizes) != 1 || d.Sizes[0] == 0 {
			return bad("a fixed size is one positive byte count")
		}
	case SizeUniform:
		step := d.Step
		if d.Min == 0 || d.Max < d.Min {
			return bad("a range MIN-MAX needs 0 < MIN ≤ MAX, got %d-%d", d.Min, d.Max)
		}
		if d.Min%step != 0 || d.Max%step != 0 {
			return &GenError{Key: "sizestep", Field: "Size.Step", Msg: fmt.Sprintf("%s-%s are not multiples of the step %s", scenario.FormatDDSize(d.Min), scenario.FormatDDSize(d.Max), scenario.FormatDDSize(step))}
		}
	case SizeWeighted:
		if len(d.Sizes) == 0 || len(d.Sizes) > maxGenSizes {
			return bad("a weighted list has 1 to %d sizes", maxGenSizes)
		}
		if len(d.Weights) != len(d.Sizes) {
			return bad("%d sizes but %d weights", len(d.Sizes), len(d.Weights))
		}
		sum := 0.0
		for i, s := range d.Sizes {
			w := d.Weights[i]
			if s == 0 {
				return bad("size %d of the list is 0", i+1)
			}
			if !(w >= 0) || math.IsInf(w, 0) {
				return bad("weight %v of %s is not a finite number ≥ 0", w, scenario.FormatDDSize(s))
			}
			sum += w
		}
		if !(sum > 0) || math.IsInf(sum, 0) {
			return bad("the weights add up to %v; want a positive finite sum", sum)
		}
	default:
		return bad("unknown size distribution %d", d.Kind)
	}
	return nil
}

// String is the distribution as a spec's size= value: "4K", "4K-64K",
// "4K/75:64K/25".
func (d SizeDist) String() string {
	switch d.Kind {
	case SizeFixed:
		if len(d.Sizes) == 1 {
			return scenario.FormatDDSize(d.Sizes[0])
		}
	case SizeUniform:
		return scenario.FormatDDSize(d.Min) + "-" + scenario.FormatDDSize(d.Max)
	case SizeWeighted:
		parts := make([]string, len(d.Sizes))
		for i, s := range d.Sizes {
			w := 0.0
			if i < len(d.Weights) {
				w = d.Weights[i]
			}
			parts[i] = scenario.FormatDDSize(s) + "/" + strconv.FormatFloat(w, 'g', -1, 64)
		}
		return strings.Join(parts, ":")
	}
	return ""
}

// Generator configures a seeded synthetic workload (NewGenerator makes the
// stream): where the I/Os go (Pattern), how large they are (Size, Align),
// how many reads (ReadFraction), on how many CPUs, with syncs, and the Seed
// that reproduces the stream exactly. The zero value of a field means its
// default; Normalize fills them in. String is the compact spec
// ParseGenerator reads:
//
//	random:dev=1G,n=1000000,size=4K,reads=0.3,cpus=4,qd=8,seed=7
//
// See docs/traces.md for the spec's grammar.
type Generator struct {
	// Pattern is where the I/Os go (spec: the word before ':').
	Pattern GenPattern
	// DeviceSize is the device's size in bytes, required (dev=).
	DeviceSize uint64
	// Count is the number of reads and writes (n=), or Bytes their total
	// size (bytes=): the stream ends with the I/O that reaches it. Exactly
	// one is set. Syncs are not counted.
	Count, Bytes uint64
	// Size is the request-size distribution (size=, sizestep=); zero: 4K.
	Size SizeDist
	// Align is the alignment of random, zipf and hot/cold offsets (align=);
	// zero: the smallest request size. Sequential I/O ignores it.
	Align uint64
	// ReadFraction is the probability that an I/O is a read (reads=), from
	// 0 (all writes, the default) to 1.
	ReadFraction float64
	// Theta is the zipf exponent θ > 0 (theta=; zipf only); zero: 0.99.
	Theta float64
	// Scatter spreads the hot slots of zipf and hot/cold over the region by
	// a fixed permutation instead of keeping them at its start (scatter=1).
	Scatter bool
	// HotSpace and HotIO are hot/cold's fraction of the space (hot=, zero:
	// 0.2) and the fraction of the I/Os that go there (hotio=, zero: 0.8).
	HotSpace, HotIO float64
	// CPUs is the number of CPUs issuing I/O (cpus=); zero: 1.
	CPUs int
	// PerCPU gives each CPU its own stream on its own 1/CPUs of the device,
	// with its own random numbers, the streams interleaved one I/O each
	// (cpumode=percpu); otherwise one stream over the whole device hands its
	// I/Os to the CPUs round-robin (cpumode=rr, the default).
	PerCPU bool
	// FsyncEvery adds a sync after every FsyncEvery writes of a CPU, on that
	// CPU (fsync=N); with Fdatasync the sync is fdatasync (fdatasync=N).
	FsyncEvery int
	Fdatasync  bool
	// QueueDepth is how many I/Os each CPU keeps in flight (qd=); zero: 1.
	// The stream does not depend on it: it is recorded for the runner.
	QueueDepth int
	// Seed seeds the generator (seed=); the same configuration and seed
	// give the same stream, on every platform and Go version (the stream
	// uses only math/rand/v2's PCG outputs, and its own arithmetic).
	Seed uint64
}

// GenError is an invalid generator configuration or spec: the spec key and
// the Generator field at fault, and what is wrong.
type GenError struct {
	Key   string // the spec key ("reads"), "" for the pattern or the spec's shape
	Field string // the Generator field ("ReadFraction")
	Msg   string
}

// Error prints "gen: reads= (Generator.ReadFraction): msg".
func (e *GenError) Error() string {
	var b strings.Builder
	b.WriteString("gen: ")
	if e.Key != "" {
		b.WriteString(e.Key + "=")
		if e.Field != "" {
			b.WriteString(" (Generator." + e.Field + ")")
		}
		b.WriteString(": ")
	} else if e.Field != "" {
		b.WriteString("Generator." + e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Limits of a generator configuration.
const (
	// MaxGenCPUs bounds Generator.CPUs.
	MaxGenCPUs = 1024
	// MaxGenQueueDepth bounds Generator.QueueDepth.
	MaxGenQueueDepth = 4096
	// MaxGenDevice bounds Generator.DeviceSize: 2^60 bytes (1 EiB), so that
	// slot arithmetic stays exact.
	MaxGenDevice = 1 << 60
)

// Normalize returns the configuration with every default filled in: the
// one NewGenerator runs and Header prints.
func (g Generator) Normalize() Generator {
	g.Size = g.Size.normalize()
	if g.Align == 0 {
		lo, _ := g.Size.minMax()
		g.Align = lo
	}
	if g.Pattern == GenZipf && g.Theta == 0 {
		g.Theta = 0.99
	}
	if g.Pattern == GenHotCold {
		if g.HotSpace == 0 {
			g.HotSpace = 0.2
		}
		if g.HotIO == 0 {
			g.HotIO = 0.8
		}
	}
	if g.CPUs == 0 {
		g.CPUs = 1
	}
	if g.QueueDepth == 0 {
		g.QueueDepth = 1
	}
	return g
}

// Validate checks the configuration (after Normalize); the error is a
// *GenError naming the field.
func (g Generator) Validate() error {
	n := g.Normalize()
	bad := func(key, field, msg string, args ...any) error {
		return &GenError{Key: key, Field: field, Msg: fmt.Sprintf(msg, args...)}
	}
	finite01 := func(v float64) bool { return v >= 0 && v <= 1 }
	switch {
	case g.Pattern < GenSequential || g.Pattern > GenHotCold:
		return bad("", "Pattern", "unknown pattern %d (want seq, random, zipf or hotcold)", g.Pattern)
	case g.DeviceSize == 0:
		return bad("dev", "DeviceSize", "the device size is required (dev=1G)")
	case g.DeviceSize > MaxGenDevice:
		return bad("dev", "DeviceSize", "%s is over the bound of %s", scenario.FormatDDSize(g.DeviceSize), scenario.FormatDDSize(MaxGenDevice))
	case g.DeviceSize%512 != 0:
		return bad("dev", "DeviceSize", "%d bytes is not a whole number of 512-byte sectors", g.DeviceSize)
	case g.Count == 0 && g.Bytes == 0:
		return bad("n", "Count", "say how much to generate: n=COUNT or bytes=SIZE")
	case g.Count != 0 && g.Bytes != 0:
		return bad("bytes", "Bytes", "give n= or bytes=, not both")
	case !finite01(g.ReadFraction):
		return bad("reads", "ReadFraction", "%v is not from 0 to 1", g.ReadFraction)
	case g.Theta != 0 && g.Pattern != GenZipf:
		return bad("theta", "Theta", "applies to the zipf pattern only")
	case g.Pattern == GenZipf && !(n.Theta > 0 && n.Theta <= 100):
		return bad("theta", "Theta", "%v is not in (0, 100]", g.Theta)
	case g.Scatter && g.Pattern != GenZipf && g.Pattern != GenHotCold:
		return bad("scatter", "Scatter", "applies to zipf and hotcold only")
	case (g.HotSpace != 0 || g.HotIO != 0) && g.Pattern != GenHotCold:
		return bad("hot", "HotSpace", "hot= and hotio= apply to hotcold only")
	case g.Pattern == GenHotCold && !(n.HotSpace > 0 && n.HotSpace < 1):
		return bad("hot", "HotSpace", "%v is not strictly between 0 and 1", g.HotSpace)
	case g.Pattern == GenHotCold && !finite01(n.HotIO):
		return bad("hotio", "HotIO", "%v is not from 0 to 1", g.HotIO)
	case g.CPUs < 0 || g.CPUs > MaxGenCPUs:
		return bad("cpus", "CPUs", "%d is not from 1 to %d", g.CPUs, MaxGenCPUs)
	case g.FsyncEvery < 0:
		return bad("fsync", "FsyncEvery", "%d is negative", g.FsyncEvery)
	case g.Fdatasync && g.FsyncEvery == 0:
		return bad("fdatasync", "Fdatasync", "set with no sync interval (fdatasync=N)")
	case g.QueueDepth < 0 || g.QueueDepth > MaxGenQueueDepth:
		return bad("qd", "QueueDepth", "%d is not from 1 to %d", g.QueueDepth, MaxGenQueueDepth)
	}
	if err := n.Size.validate(); err != nil {
		return err
	}
	_, hi := n.Size.minMax()
	region := n.DeviceSize
	if n.PerCPU {
		region /= uint64(n.CPUs)
	}
	switch {
	case hi > region && n.PerCPU:
		return bad("size", "Size", "the largest request (%s) does not fit a CPU's region of the device (%s / %d CPUs)", scenario.FormatDDSize(hi), scenario.FormatDDSize(n.DeviceSize), n.CPUs)
	case hi > n.DeviceSize:
		return bad("size", "Size", "the largest request (%s) is larger than the device (%s)", scenario.FormatDDSize(hi), scenario.FormatDDSize(n.DeviceSize))
	case n.Align > region:
		return bad("align", "Align", "%s is larger than the region I/O goes to (%s)", scenario.FormatDDSize(n.Align), scenario.FormatDDSize(region))
	}
	return nil
}

// String is the configuration as a spec, ParseGenerator's input: the
// pattern, then the fields that are not zero in a fixed order, then the
// seed, always. ParseGenerator(g.String()) equals g for a g it returned.
func (g Generator) String() string {
	var kv []string
	add := func(k, v string) { kv = append(kv, k+"="+v) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if g.DeviceSize != 0 {
		add("dev", scenario.FormatDDSize(g.DeviceSize))
	}
	if g.Count != 0 {
		add("n", strconv.FormatUint(g.Count, 10))
	}
	if g.Bytes != 0 {
		add("bytes", scenario.FormatDDSize(g.Bytes))
	}
	if s := g.Size.String(); s != "" {
		add("size", s)
	}
	if g.Size.Kind == SizeUniform && g.Size.Step != 0 {
		add("sizestep", scenario.FormatDDSize(g.Size.Step))
	}
	if g.Align != 0 {
		add("align", scenario.FormatDDSize(g.Align))
	}
	if g.ReadFraction != 0 {
		add("reads", f(g.ReadFraction))
	}
	if g.Theta != 0 {
		add("theta", f(g.Theta))
	}
	if g.Scatter {
		add("scatter", "1")
	}
	if g.HotSpace != 0 {
		add("hot", f(g.HotSpace))
	}
	if g.HotIO != 0 {
		add("hotio", f(g.HotIO))
	}
	if g.CPUs != 0 {
		add("cpus", strconv.Itoa(g.CPUs))
	}
	if g.PerCPU {
		add("cpumode", "percpu")
	}
	if g.FsyncEvery != 0 {
		if g.Fdatasync {
			add("fdatasync", strconv.Itoa(g.FsyncEvery))
		} else {
			add("fsync", strconv.Itoa(g.FsyncEvery))
		}
	}
	if g.QueueDepth != 0 {
		add("qd", strconv.Itoa(g.QueueDepth))
	}
	add("seed", strconv.FormatUint(g.Seed, 10))
	return g.Pattern.String() + ":" + strings.Join(kv, ",")
}

// Header is the line every output of a generated run starts with: "gen "
// and the normalized spec, seed included, so that the run can be
// reproduced with it.
func (g Generator) Header() string { return "gen " + g.Normalize().String() }

// WithSeed returns the configuration with its seed replaced: a command
// line's -s SEED over a spec's seed=.
func (g Generator) WithSeed(seed uint64) Generator {
	g.Seed = seed
	return g
}

// Set parses a spec into g (flag.Value), so that a command line can take
// -gen SPEC.
func (g *Generator) Set(spec string) error {
	v, err := ParseGenerator(spec)
	if err != nil {
		return err
	}
	*g = v
	return nil
}

// genKeys are the spec's keys, in String's order.
var genKeys = []string{"dev", "n", "bytes", "size", "sizestep", "align", "reads", "theta", "scatter", "hot", "hotio", "cpus", "cpumode", "fsync", "fdatasync", "qd", "seed"}

// genFields names each key's Generator field.
var genFields = map[string]string{
	"dev": "DeviceSize", "n": "Count", "bytes": "Bytes", "size": "Size", "sizestep": "Size.Step",
	"align": "Align", "reads": "ReadFraction", "theta": "Theta", "scatter": "Scatter", "hot": "HotSpace",
	"hotio": "HotIO", "cpus": "CPUs", "cpumode": "PerCPU", "fsync": "FsyncEvery", "fdatasync": "FsyncEvery",
	"qd": "QueueDepth", "seed": "Seed",
}

// maxGenSpec bounds a spec's length.
const maxGenSpec = 4096

// explicitZero refuses a 0 given for a fraction whose field's zero means
// "the default" (theta=0 would otherwise run θ = 0.99): 0 is outside each
// of these keys' ranges (hotio's too: a hot region that takes no I/O is
// the random pattern), or the key does not apply to the pattern. (cpus=
// and qd= refuse 0 as they parse.)
func explicitZero(key, value string, g Generator) error {
	var msg string
	switch {
	case key == "theta" && g.Theta == 0 && g.Pattern != GenZipf:
		return &GenError{Key: key, Field: genFields[key], Msg: "applies to the zipf pattern only"} // as Validate says for other values
	case (key == "hot" && g.HotSpace == 0 || key == "hotio" && g.HotIO == 0) && g.Pattern != GenHotCold:
		return &GenError{Key: key, Field: genFields[key], Msg: "hot= and hotio= apply to hotcold only"}
	case key == "theta" && g.Theta == 0:
		msg = "is not in (0, 100]"
	case key == "hot" && g.HotSpace == 0:
		msg = "is not strictly between 0 and 1"
	case key == "hotio" && g.HotIO == 0:
		msg = "is not in (0, 1]: a hot region that takes no I/O is the random pattern"
	default:
		return nil
	}
	return &GenError{Key: key, Field: genFields[key], Msg: fmt.Sprintf("%q %s", value, msg)}
}

// ParseGenerator reads a compact spec, PATTERN[:KEY=VALUE{,KEY=VALUE}]:
//
//	random:dev=1G,n=1000000,size=4K,reads=0.3,cpus=4,qd=8,seed=7
//	zipf:dev=64M,bytes=1G,size=4K/75:64K/25,theta=1.2,scatter=1
//	seq:dev=64K,size=4K,n=20,fsync=4,seed=1
//
// PATTERN is seq (or sequential), random (or uniform), zipf or hotcold. The
// keys: dev, n, bytes, size, sizestep, align, reads, theta, scatter, hot,
// hotio, cpus, cpumode (rr or percpu), fsync, fdatasync, qd, seed (see
// Generator's fields; docs/traces.md). Sizes take K, M, G, T, P suffixes
// (ParseDDSize); n, cpus, fsync, qd and seed are decimal; fractions are
// decimal numbers. Each key at most once. ParseGenerator checks each value
// but not the whole: a CLI may fill in DeviceSize or a seed (WithSeed)
// before NewGenerator validates it.
func ParseGenerator(spec string) (Generator, error) {
	var p genParser
	if len(spec) > maxGenSpec {
		return p.g, &GenError{Msg: fmt.Sprintf("a spec is at most %d bytes", maxGenSpec)}
	}
	spec = strings.TrimSpace(spec)
	pat, rest, hasKeys := strings.Cut(spec, ":")
	if err := p.pattern(pat); err != nil {
		return p.g, err
	}
	if !hasKeys || strings.TrimSpace(rest) == "" {
		return p.g, nil
	}
	p.seen = map[string]bool{}
	for _, item := range strings.Split(rest, ",") {
		if err := p.option(item); err != nil {
			return p.g, err
		}
	}
	err := p.sizes()
	return p.g, err
}

// genParser is ParseGenerator's state: the configuration so far, the keys
// seen, and the texts of size= and sizestep=, which are parsed after every
// option (sizestep= needs size='s kind whatever their order).
type genParser struct {
	g                  Generator
	seen               map[string]bool
	sizeText, stepText string
}

// pattern sets the configuration's pattern from a spec's PATTERN.
func (p *genParser) pattern(pat string) error {
	switch strings.TrimSpace(pat) {
	case "seq", "sequential":
		p.g.Pattern = GenSequential
	case "random", "uniform":
		p.g.Pattern = GenRandom
	case "zipf":
		p.g.Pattern = GenZipf
	case "hotcold":
		p.g.Pattern = GenHotCold
	default:
		return &GenError{Field: "Pattern", Msg: fmt.Sprintf("unknown pattern %q (want seq, random, zipf or hotcold, then :key=value,...)", pat)}
	}
	return nil
}

// option parses one KEY=VALUE item of a spec into the configuration: the
// key must be known and new (fsync= and fdatasync= count as one), and its
// value is read by the key's genSetters entry, then checked by explicitZero.
func (p *genParser) option(item string) error {
	k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok || k == "" {
		return &GenError{Msg: fmt.Sprintf("%q is not key=value", item)}
	}
	field, known := genFields[k]
	if !known {
		return &GenError{Msg: fmt.Sprintf("unknown key %q (want one of %s)", k, strings.Join(genKeys, ", "))}
	}
	o := genOption{key: k, value: v, field: field}
	if p.seen[k] {
		return o.bad("given twice")
	}
	if (k == "fsync" && p.seen["fdatasync"]) || (k == "fdatasync" && p.seen["fsync"]) {
		return o.bad("given twice (fsync= and fdatasync= count as one)")
	}
	p.seen[k] = true
	if err := genSetters[k](p, o); err != nil {
		return err
	}
	return explicitZero(k, v, p.g)
}

// sizes parses the size= and sizestep= texts the options left, once all
// are read: sizestep= applies to a size range MIN-MAX only.
func (p *genParser) sizes() error {
	if p.seen["size"] {
		d, err := parseGenSize(p.sizeText)
		if err != nil {
			return err
		}
		p.g.Size = d
	}
	if p.seen["sizestep"] {
		if p.g.Size.Kind != SizeUniform {
			return &GenError{Key: "sizestep", Field: "Size.Step", Msg: "applies to a size range MIN-MAX only"}
		}
		n, ok := genSize(p.stepText)
		if !ok {
			return &GenError{Key: "sizestep", Field: "Size.Step", Msg: fmt.Sprintf("%q is not a positive byte count", p.stepText)}
		}
		p.g.Size.Step = n
	}
	return nil
}

// genOption is one KEY=VALUE of a spec, with the Generator field the key
// sets (for its errors).
type genOption struct{ key, value, field string }

// bad is a GenError about the option.
func (o genOption) bad(msg string, args ...any) error {
	return &GenError{Key: o.key, Field: o.field, Msg: fmt.Sprintf(msg, args...)}
}

// size reads the value as a positive byte count (genSize).
func (o genOption) size() (uint64, error) {
	n, ok := genSize(o.value)
	if !ok {
		return 0, o.bad("%q is not a positive byte count (4096, 4K, 1G)", o.value)
	}
	return n, nil
}

// num reads the value as a decimal number from lo to hi.
func (o genOption) num(lo, hi uint64) (uint64, error) {
	n, ok := traceUint(o.value)
	if !ok || n < lo || n > hi {
		return 0, o.bad("%q is not a decimal number from %d to %d", o.value, lo, hi)
	}
	return n, nil
}

// frac reads the value as a finite decimal number (no hexadecimal, no
// underscores); its range is checked by explicitZero and Validate.
func (o genOption) frac() (float64, error) {
	x, err := strconv.ParseFloat(o.value, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || strings.ContainsAny(o.value, "xXpP_") {
		return 0, o.bad("%q is not a decimal number", o.value)
	}
	return x, nil
}

// genSetters parses each key's value into the configuration (genKeys'
// keys; TestGenSettersCoverKeys checks they agree). size= and sizestep=
// only keep their text, for genParser.sizes.
var genSetters = map[string]func(p *genParser, o genOption) error{
	"dev":      func(p *genParser, o genOption) (err error) { p.g.DeviceSize, err = o.size(); return err },
	"n":        func(p *genParser, o genOption) (err error) { p.g.Count, err = o.num(0, ^uint64(0)); return err },
	"bytes":    func(p *genParser, o genOption) (err error) { p.g.Bytes, err = o.size(); return err },
	"size":     func(p *genParser, o genOption) error { p.sizeText = o.value; return nil },
	"sizestep": func(p *genParser, o genOption) error { p.stepText = o.value; return nil },
	"align":    func(p *genParser, o genOption) (err error) { p.g.Align, err = o.size(); return err },
	"reads":    func(p *genParser, o genOption) (err error) { p.g.ReadFraction, err = o.frac(); return err },
	"theta":    func(p *genParser, o genOption) (err error) { p.g.Theta, err = o.frac(); return err },
	"scatter":  setGenScatter,
	"hot":      func(p *genParser, o genOption) (err error) { p.g.HotSpace, err = o.frac(); return err },
	"hotio":    func(p *genParser, o genOption) (err error) { p.g.HotIO, err = o.frac(); return err },
	"cpus": func(p *genParser, o genOption) error {
		n, err := o.num(1, MaxGenCPUs)
		p.g.CPUs = int(n)
		return err
	},
	"cpumode":   setGenCPUMode,
	"fsync":     setGenFsync,
	"fdatasync": setGenFsync,
	"qd": func(p *genParser, o genOption) error {
		n, err := o.num(1, MaxGenQueueDepth)
		p.g.QueueDepth = int(n)
		return err
	},
	"seed": func(p *genParser, o genOption) (err error) { p.g.Seed, err = o.num(0, ^uint64(0)); return err },
}

// setGenScatter parses scatter=: 1 or true, 0 or false.
func setGenScatter(p *genParser, o genOption) error {
	switch o.value {
	case "1", "true":
		p.g.Scatter = true
	case "0", "false":
	default:
		return o.bad("%q is not 0 or 1", o.value)
	}
	return nil
}

// setGenCPUMode parses cpumode=: rr or percpu.
func setGenCPUMode(p *genParser, o genOption) error {
	switch o.value {
	case "rr":
	case "percpu":
		p.g.PerCPU = true
	default:
		return o.bad("%q is not rr or percpu", o.value)
	}
	return nil
}

// setGenFsync parses fsync= or fdatasync=: every how many I/Os a stream
// syncs, 0 for never (fdatasync=0 is fsync=0).
func setGenFsync(p *genParser, o genOption) error {
	n, err := o.num(0, math.MaxInt32)
	p.g.FsyncEvery, p.g.Fdatasync = int(n), o.key == "fdatasync" && n != 0
	return err
}

// genSize parses a spec's byte count: positive and at most 2^63, the most
// ParseDDSize takes, so that what Generator.String prints with FormatDDSize
// parses again (a plain 10^19 would print as 9765625000000000K).
func genSize(s string) (uint64, bool) {
	n, ok := traceSize(s)
	return n, ok && n > 0 && n <= 1<<63
}

// parseGenSize reads a size= value: SIZE, MIN-MAX or SIZE/WEIGHT:…
func parseGenSize(v string) (SizeDist, error) {
	bad := func(msg string, args ...any) (SizeDist, error) {
		return SizeDist{}, &GenError{Key: "size", Field: "Size", Msg: fmt.Sprintf(msg, args...)}
	}
	one := func(s string) (uint64, bool) { return genSize(strings.TrimSpace(s)) }
	if !strings.ContainsAny(v, ":/") {
		if lo, hi, ok := strings.Cut(v, "-"); ok {
			a, ok1 := one(lo)
			b, ok2 := one(hi)
			if !ok1 || !ok2 {
				return bad("%q is not a range MIN-MAX of byte counts (4K-64K)", v)
			}
			return UniformSize(a, b, 0), nil
		}
		n, ok := one(v)
		if !ok {
			return bad("%q is not a positive byte count (4K), a range (4K-64K) or a list (4K/75:64K/25)", v)
		}
		return FixedSize(n), nil
	}
	items := strings.Split(v, ":")
	if len(items) > maxGenSizes {
		return bad("a list has at most %d sizes", maxGenSizes)
	}
	d := SizeDist{Kind: SizeWeighted}
	for _, it := range items {
		s, w, hasW := strings.Cut(it, "/")
		n, ok := one(s)
		if !ok {
			return bad("%q in the list is not a positive byte count", s)
		}
		weight := 1.0
		if hasW {
			x, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
			if err != nil || !(x >= 0) || math.IsInf(x, 0) || strings.ContainsAny(w, "xXpP_") {
				return bad("weight %q of %s is not a number ≥ 0", w, s)
			}
			weight = x
		}
		d.Sizes = append(d.Sizes, n)
		d.Weights = append(d.Weights, weight)
	}
	return d, nil
}
