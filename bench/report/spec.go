package report

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bench/threads"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/blocksize"
)

// Costs chooses the costs a run prices with, as bhsim's commands take them
// and as the outputs' "costs" fields describe them: a built-in profile or a
// profile file, a built-in profile's built-in or fitted costs, and single
// costs set one by one.
type Costs struct {
	// Profile is a built-in profile's name or a profile file's path (see
	// IsProfileFile); "" is Resolve's default.
	Profile string
	// Costs is a built-in profile's costs: "built-in" (its documented
	// estimates) or "fitted" (as the thread measured on that machine
	// calibrates them, threads.Fitted); "" is built-in. A file's costs are
	// its own.
	Costs string
	// Set are single costs, "PARAM=NS" each (nanoseconds), applied in order
	// over the profile's.
	Set []string
	// SetBy names what set the costs of Set, for their source ("set by
	// SetBy") and the description; "" is "Costs.Set".
	SetBy string
}

// FieldError is the error of one value of a field: Field names it
// ("Costs.Set"), Value is the value at fault and Err why.
type FieldError struct {
	Field, Value string
	Err          error
}

// Error prints `Field "Value": Err`.
func (e *FieldError) Error() string { return fmt.Sprintf("%s %q: %v", e.Field, e.Value, e.Err) }

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// IsProfileFile reports whether a profile value names a file (it holds a
// '/' or ends in .json) rather than a built-in profile.
func IsProfileFile(v string) bool {
	return strings.ContainsRune(v, '/') || strings.HasSuffix(v, ".json")
}

// Resolve returns the profile c chooses, the built-in profile def when
// c.Profile is "", and what its costs are, as an output's "costs" field
// says it: "fitted", "built-in" or "from FILE", with ", N set by SetBy"
// when Set holds N costs. Errors: an unknown profile or Costs value, a
// file that does not load, and a *FieldError (Field "Costs.Set") for a
// cost that is not PARAM=NS or that the profile refuses
// (timing.Profile.SetCost). O(parameters × len(Set)), plus the file.
func (c Costs) Resolve(def string) (*timing.Profile, string, error) {
	name := c.Profile
	if name == "" {
		name = def
	}
	costs := c.Costs
	if costs == "" {
		costs = "built-in"
	}
	var p *timing.Profile
	var err error
	switch {
	case IsProfileFile(name):
		p, err = timing.LoadProfile(name)
		costs = "from " + name
	case costs == "fitted":
		if _, err = timing.ProfileByName(name); err == nil {
			p, err = threads.Fitted(name)
		}
	case costs == "built-in":
		p, err = timing.ProfileByName(name)
	default:
		err = fmt.Errorf("unknown costs %q (valid: fitted, built-in)", costs)
	}
	if err != nil {
		return nil, "", err
	}
	setBy := c.SetBy
	if setBy == "" {
		setBy = "Costs.Set"
	}
	for _, kv := range c.Set {
		k, v, ok := strings.Cut(kv, "=")
		ns, perr := strconv.ParseFloat(v, 64)
		if !ok || perr != nil {
			return nil, "", &FieldError{"Costs.Set", kv, errors.New("want PARAM=NS, e.g. bios=1500")}
		}
		if err := p.SetCost(k, ns, "set by "+setBy); err != nil {
			return nil, "", &FieldError{"Costs.Set", kv, err}
		}
	}
	if len(c.Set) > 0 {
		costs += fmt.Sprintf(", %d set by %s", len(c.Set), setBy)
	}
	return p, costs, nil
}

// WorkloadSpec is a workload of one's own — a trace, a scenario run as a
// workload, or a seeded generator — and the machine it runs on, in the
// text forms bhsim's command line takes them (`bhsim run`,
// docs/traces.md): Workload builds what runs, Options how. Start from
// DefaultWorkloadSpec, which holds the defaults the comments give. Errors
// name the field at fault (*FieldError, Field "WorkloadSpec.NAME") or come
// from bench/workload.
type WorkloadSpec struct {
	// Gen is a generator spec (source.ParseGenerator); when it is "",
	// File is a trace or scenario file (engine.TraceWorkload).
	Gen, File string
	// Seed, if not "", is the generator's seed, in decimal: it overrides
	// the spec's seed=. Only with Gen.
	Seed string
	// Dev is a trace's device size ("64K"; "": the trace's extent, rounded
	// up to 1M), only with File; LBS the trace's or generator's logical
	// block size, a power of two from 512 to 4K (default 512).
	Dev, LBS string
	// TraceDevice (blkparse's "MAJ,MIN", or the value of a device column:
	// SPC's ASU, Alibaba's device_id, MSR's disk) and TraceFile choose what
	// a trace or a fio iolog that holds several replays
	// (source.TraceSelect); Replay is the blkparse action replayed: Q (bios
	// as queued; "" too), D, I or C.
	TraceDevice, TraceFile, Replay string
	// TraceFormat forces the trace's format (source.ParseTraceFormat; "":
	// told from its content); CSVColumns is a column-mapped CSV's map
	// (source.ParseColumnMap, "time=0:us,op=1,offset=2,length=3"), which
	// makes the format "columns".
	TraceFormat, CSVColumns string
	// ReplayNoStall issues a trace's records as fast as the model takes
	// them; ReplayTimeScale multiplies the time between them ("2", "0.5";
	// "" is 1; "200%" is fio's replay_time_scale=200, twice the rate: a
	// factor of 0.5). engine.RunOptions.ReplayNoStall, ReplayTimeScale.
	ReplayNoStall   bool
	ReplayTimeScale string
	// FromZero makes every write read its data from /dev/zero first,
	// ToNull every read write its data to /dev/null after, and LastClose
	// ends the run with the device's last close, as dd does
	// (engine.RunOptions.FromZero, ToNull, LastClose).
	FromZero, ToNull, LastClose bool
	// Array makes the device an md array (engine.ParseArray: "raid6:4",
	// "raid0:4:64K"); "" is one disk. SetBlocksize is a block size set
	// once the device is open ("16K"; engine.RunOptions.SetBlocksize); ""
	// keeps the kernel's policy's.
	Array, SetBlocksize string
	// Kernel is the kernel preset (default 6.18); Costs the timing
	// profile's costs, its default profile x86-server.
	Kernel string
	Costs  Costs
	// Disk is the disk model (engine.DiskByName; default ssd), Access how
	// records reach the page cache (engine.ParseAccess; default auto) and
	// Memory the machine's memory size (default 2G).
	Disk, Access, Memory string
	// CPUs and QueueDepth are the simulated CPUs and the operations each
	// keeps in flight (0: the workload's); Data keeps page data.
	CPUs, QueueDepth int
	Data             bool
	// MRC are bh LRU sizes ("4") of a miss-ratio curve, each a rerun.
	MRC []string
	// OnePass reads a trace File once, as it runs, without the first pass
	// for its CPUs, records and extent (engine.TraceDevice.OnePass): it
	// needs Dev, runs on CPUs (else 1), and its progress estimates its
	// total from the bytes of the file read.
	OnePass bool
	// Rules are a trace's or a generator's device rules as a scenario's
	// device line writes them ("wbps=8M max_bytes=4M strict_limit=1",
	// scenario.ParseRules); a scenario's are its device line's.
	Rules string
}

// IsInputError reports whether err, from engine.Run, is about what it was
// given rather than a failure of the run: the options (engine.ErrRunOptions),
// or a record of the input (a *source.TraceError without a cause, or one
// with no records), as a malformed line is. O(wrapped errors).
func IsInputError(err error) bool {
	var bad *source.TraceError
	return errors.Is(err, engine.ErrRunOptions) || errors.As(err, &bad) && (bad.Err == nil || errors.Is(bad.Err, source.ErrNoRecords))
}

// IsScenarioFile reports whether the file at path holds a scenario
// (docs/scenario-language.md) rather than a trace, by its content
// (source.OpenTrace), or by its .scn extension when it cannot be opened:
// `bhsim run FILE` runs a scenario on the model, a trace as a workload.
// Standard input ("-"), a pipe or a FIFO is not read (it can be read
// once): it is a trace.
func IsScenarioFile(path string) bool {
	if fi, err := os.Stat(path); path == source.StdinName || err == nil && !fi.Mode().IsRegular() {
		return false // a stream is read once, by the run: a trace
	}
	t, err := source.OpenTrace(path)
	if err != nil {
		return strings.HasSuffix(path, ".scn")
	}
	defer t.Close()
	return t.Format == source.TraceScenario
}

// DefaultWorkloadSpec returns a spec of the defaults: logical blocks of
// 512 bytes, kernel 6.18, the x86-server profile's built-in costs, an ssd,
// access auto, 2G of memory; no workload yet (Gen or File).
func DefaultWorkloadSpec() WorkloadSpec {
	return WorkloadSpec{LBS: "512", Kernel: "6.18", Disk: "ssd", Access: "auto", Memory: "2G"}
}

// Workload builds the workload s names: the generator Gen (with Seed), or
// the trace or scenario in File. Errors: Gen and File, or Seed and File,
// both set; a *FieldError for Seed, Dev, LBS, Replay, TraceFormat or
// CSVColumns; the generator's or the trace's own (source.ParseGenerator,
// GenWorkload, TraceWorkload), and a *FieldError for Rules, or for Rules
// given to a scenario (its rules are its device line's); OnePass without
// Dev (engine.TraceWorkload's error). O(the trace's records) for a trace,
// which is read for its extent, CPUs and records — but a stream, or a file
// with OnePass, which the run reads once.
func (s WorkloadSpec) Workload() (engine.Workload, error) {
	w, err := s.workload()
	if err != nil || s.Rules == "" {
		return w, err
	}
	if w.Kind == "scenario" {
		return w, &FieldError{"WorkloadSpec.Rules", s.Rules, errors.New("a scenario's device rules are its device line's")}
	}
	if w.Rules, err = scenario.ParseRules(s.Rules); err != nil {
		return w, &FieldError{"WorkloadSpec.Rules", s.Rules, err}
	}
	return w, nil
}

// workload is Workload without the rules.
func (s WorkloadSpec) workload() (engine.Workload, error) {
	if s.Gen != "" {
		if s.File != "" {
			return engine.Workload{}, errors.New("report: WorkloadSpec: both Gen and File are set")
		}
		g, err := source.ParseGenerator(s.Gen)
		if err != nil {
			return engine.Workload{}, err
		}
		if s.Seed != "" {
			seed, err := strconv.ParseUint(s.Seed, 10, 64)
			if err != nil {
				return engine.Workload{}, &FieldError{"WorkloadSpec.Seed", s.Seed, errors.New("want a decimal seed")}
			}
			g = g.WithSeed(seed)
		}
		gw, err := engine.GenWorkload(g)
		if err != nil {
			return gw, err
		}
		gw.LogicalBlockSize, err = s.logicalBlockSize()
		return gw, err
	}
	if s.Seed != "" {
		return engine.Workload{}, errors.New("report: WorkloadSpec: Seed is set for a File (a seed is a generator's)")
	}
	var dev engine.TraceDevice
	if s.Dev != "" {
		n, err := scenario.ParseDDSize(s.Dev)
		if err != nil {
			return engine.Workload{}, &FieldError{"WorkloadSpec.Dev", s.Dev, err}
		}
		dev.Size = n
	}
	lbs, err := s.logicalBlockSize()
	if err != nil {
		return engine.Workload{}, err
	}
	dev.LogicalBlockSize = lbs
	if dev.Select, err = s.traceSelect(); err != nil {
		return engine.Workload{}, err
	}
	dev.OnePass = s.OnePass
	return engine.TraceWorkload(s.File, dev)
}

// traceSelect is what of the trace to replay and how to read it.
func (s WorkloadSpec) traceSelect() (source.TraceSelect, error) {
	sel := source.TraceSelect{Device: s.TraceDevice, File: s.TraceFile}
	switch a := s.Replay; a {
	case "": // Q, the reader's default
	case "Q", "D", "I", "C":
		sel.Action = source.BlkparseAction(a[0])
	default:
		return sel, &FieldError{"WorkloadSpec.Replay", a, errors.New("want Q, D, I or C")}
	}
	if s.TraceFormat != "" {
		f, err := source.ParseTraceFormat(s.TraceFormat)
		if err != nil {
			return sel, &FieldError{"WorkloadSpec.TraceFormat", s.TraceFormat, errors.New(strings.TrimPrefix(err.Error(), "source: "))}
		}
		sel.Format = f
	}
	if s.CSVColumns != "" {
		m, err := source.ParseColumnMap(s.CSVColumns)
		if err != nil {
			return sel, &FieldError{"WorkloadSpec.CSVColumns", s.CSVColumns, errors.New(strings.TrimPrefix(err.Error(), "source: "))}
		}
		sel.Columns = &m
	}
	return sel, nil
}

// replayTimeScale reads ReplayTimeScale: a factor, or fio's percentage of
// the rate ("200%": a factor of 0.5).
func (s WorkloadSpec) replayTimeScale() (float64, error) {
	v := s.ReplayTimeScale
	if v == "" {
		return 0, nil
	}
	num, pct := strings.CutSuffix(v, "%")
	f, err := strconv.ParseFloat(num, 64)
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0:
		return 0, &FieldError{"WorkloadSpec.ReplayTimeScale", v, errors.New("want a positive factor on the time between records (2: half the rate), or fio's percentage of the rate (200%)")}
	case pct:
		return 100 / f, nil
	}
	return f, nil
}

// logicalBlockSize is LBS: a power of two from 512 to a page.
func (s WorkloadSpec) logicalBlockSize() (uint32, error) {
	lbs, err := scenario.ParseDDSize(s.LBS)
	if err == nil && (lbs > 1<<12 || blocksize.ValidateLogical(uint32(lbs), 1<<12) != nil) {
		err = errors.New("not a power of two from 512 to 4K (a logical block is at most a page)")
	}
	if err != nil {
		return 0, &FieldError{"WorkloadSpec.LBS", s.LBS, err}
	}
	return uint32(lbs), nil
}

// Options builds the run options s gives (workload.Run checks the rest:
// the CPUs, the queue depth, the LRU sizes). Errors: an unknown kernel,
// disk or access; Costs.Resolve's; a *FieldError for Memory, MRC or
// ReplayTimeScale.
func (s WorkloadSpec) Options() (engine.RunOptions, error) {
	var o engine.RunOptions
	k, err := engine.KernelByName(s.Kernel)
	if err != nil {
		return o, err
	}
	p, costs, err := s.Costs.Resolve("x86-server")
	if err != nil {
		return o, err
	}
	d, err := engine.DiskByName(s.Disk)
	if err != nil {
		return o, err
	}
	a, err := engine.ParseAccess(s.Access)
	if err != nil {
		return o, err
	}
	mem, err := scenario.ParseDDSize(s.Memory)
	if err != nil {
		return o, &FieldError{"WorkloadSpec.Memory", s.Memory, err}
	}
	scale, err := s.replayTimeScale()
	if err != nil {
		return o, err
	}
	arr, err := engine.ParseArray(s.Array)
	if err != nil {
		return o, &FieldError{"WorkloadSpec.Array", s.Array, err}
	}
	var bsize uint64
	if s.SetBlocksize != "" {
		if bsize, err = scenario.ParseDDSize(s.SetBlocksize); err != nil || bsize > math.MaxUint32 {
			return o, &FieldError{"WorkloadSpec.SetBlocksize", s.SetBlocksize, fmt.Errorf("want a block size such as 16K")}
		}
	}
	o = engine.RunOptions{Array: arr, SetBlocksize: uint32(bsize), Kernel: k, Profile: p, ProfileCosts: costs, Disk: d, CPUs: s.CPUs, QueueDepth: s.QueueDepth, Access: a,
		MemoryBytes: mem, Data: s.Data, ReplayNoStall: s.ReplayNoStall, ReplayTimeScale: scale, FromZero: s.FromZero, ToNull: s.ToNull, LastClose: s.LastClose}
	for _, v := range s.MRC {
		n, err := strconv.Atoi(v)
		if err != nil {
			return o, &FieldError{"WorkloadSpec.MRC", v, errors.New("want LRU sizes such as 1,2,4,8,16")}
		}
		o.MRCSizes = append(o.MRCSizes, n)
	}
	return o, nil
}
