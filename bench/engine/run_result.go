package engine

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/source"
	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bufcache"
)

// RunSchema names the JSON layout of a RunResult (docs/output-schema.md).
const RunSchema = "bhsim-run-dist/1"

// RunResult is what Run reports: the header (what ran, on what, priced by
// which profile, with which seed), the distributions per kind of
// operation, throughput over simulated time, each resource's busy time,
// the bh LRU's hit ratio and miss-ratio curve, and each CPU's share.
type RunResult struct {
	Schema string `json:"schema"`
	// Tool is the binary that wrote the output (report.WriteRunJSON sets
	// it; Run leaves it nil).
	Tool *scenario.Tool `json:"tool,omitempty"`
	// Workload, WorkloadKind and Seed say what ran (Seed is nil for a
	// workload without one).
	Workload     string  `json:"workload"`
	WorkloadKind string  `json:"workload_kind"`
	Seed         *uint64 `json:"seed"`
	// Kernel, Profile and Disk say on what: the kernel preset, the timing
	// profile pricing the CPUs' events, the disk model.
	Kernel       string `json:"kernel"`
	Profile      string `json:"profile"`
	ProfileCosts string `json:"profile_costs"`
	Disk         string `json:"disk"`
	// CPUs stream CPUs (plus the flusher's), QueueDepth operations in
	// flight per CPU, the access path, the device, its block size (the
	// page cache's blocks: the kernel's policy picks it) and its logical
	// block size (the disk's, as the workload gives it).
	CPUs             int    `json:"cpus"`
	QueueDepth       int    `json:"queue_depth"`
	Access           string `json:"access"`
	DeviceBytes      uint64 `json:"device_bytes"`
	BlockSize        uint32 `json:"block_size"`
	LogicalBlockSize uint32 `json:"logical_block_size"`
	MemoryBytes      uint64 `json:"memory_bytes"`
	// Rules are the device's rules in a device line's form ("wbps=8M
	// max_bytes=1M strict_limit=1"), "" for none.
	Rules string `json:"rules,omitempty"`
	// FromZero says every write read its data from /dev/zero first, as dd
	// does (RunOptions.FromZero).
	FromZero bool `json:"from_zero,omitempty"`
	// ToNull says every read wrote its data to /dev/null after, as dd
	// does (RunOptions.ToNull).
	ToNull bool `json:"to_null,omitempty"`
	// LastClose says the run ended with the device's last close
	// (RunOptions.LastClose), and LastCloseNS is that close's time: its
	// sync of what was still dirty and its drop of the page cache.
	LastClose   bool    `json:"last_close,omitempty"`
	LastCloseNS float64 `json:"last_close_ns,omitempty"`
	// Array is the md array the device is (RunOptions.Array: "raid6 of 4
	// disks, 512 KiB chunks"), "" for one disk.
	Array string `json:"array,omitempty"`
	// Ops and Bytes are the records run and the bytes they read and wrote;
	// DurationNS is the simulated time from 0 — the first record's time
	// stamp: a trace's clock starts at its first event — to the last
	// completion; MBps and IOPS are the rates over it.
	Ops        uint64  `json:"ops"`
	Bytes      uint64  `json:"bytes"`
	DurationNS float64 `json:"duration_ns"`
	MBps       float64 `json:"mb_per_s"`
	IOPS       float64 `json:"iops"`
	// Bound is the bottleneck law's bound on throughput (bench/timing):
	// the busiest resource and the MB/s it allows.
	Bound Bound `json:"bound"`
	// Kinds has one entry per kind of operation that occurred, in IOKind
	// order.
	Kinds []KindResult `json:"kinds"`
	// Throughput is bytes and operations completed per interval of
	// simulated time (at most 200 intervals).
	Throughput []ThroughputBin `json:"throughput"`
	// Resources is each resource's busy time and utilisation.
	Resources []Resource `json:"resources"`
	// ReadAheadKB is the device's read_ahead_kb as the run left it
	// (bufcache.BlockDevice.ReadAheadKB). Not in the JSON.
	ReadAheadKB uint32 `json:"-"`
	// Loads are the resources' demands as the bound prices them (Bound,
	// Resources): each CPU's events, system calls, bios and requests, the
	// memory bus's bytes, each disk's busy time. Not in the JSON: its
	// counts are the model's, its line names Resources'.
	Loads []timing.Load `json:"-"`
	// LRU is the bh LRU's lookups and hits at the kernel's size; MRC the
	// miss ratio at each size of the curve (the kernel's among them).
	LRU LRUStats   `json:"lru"`
	MRC []MRCPoint `json:"mrc"`
	// PerCPU is each stream CPU's operations, busy time and LRU counts.
	PerCPU []CPUResult `json:"per_cpu"`
}

// Bound is the bottleneck law's bound: Resource is the busiest and MBps
// the throughput it allows (bytes / its demand).
type Bound struct {
	Resource string  `json:"resource"`
	BusyNS   float64 `json:"busy_ns"`
	MBps     float64 `json:"mb_per_s"`
}

// KindResult is one kind of operation: how many, their bytes, errors by
// errno, the latency distribution, bios and requests per operation, and
// the bh LRU's lookups and hits it made.
type KindResult struct {
	Kind          string            `json:"kind"`
	Ops           uint64            `json:"ops"`
	Bytes         uint64            `json:"bytes"`
	Errors        uint64            `json:"errors"`
	Errnos        map[string]uint64 `json:"errnos,omitempty"`
	Latency       Latency           `json:"latency"`
	BiosPerOp     float64           `json:"bios_per_op"`
	RequestsPerOp float64           `json:"requests_per_op"`
	LRULookups    uint64            `json:"lru_lookups"`
	LRUHits       uint64            `json:"lru_hits"`
}

// Resource is one resource's busy time over the run and its utilisation
// (busy / duration; the all-CPU line divides by its CPUs).
type Resource struct {
	Name        string  `json:"name"`
	BusyNS      float64 `json:"busy_ns"`
	Utilisation float64 `json:"utilisation"`
}

// LRUStats counts the per-CPU bh LRU's lookups (lookup_bh_lru) and hits
// over all stream CPUs at Size slots; HitRatio is hits / lookups (0
// without lookups).
type LRUStats struct {
	Size     int     `json:"size"`
	Lookups  uint64  `json:"lookups"`
	Hits     uint64  `json:"hits"`
	HitRatio float64 `json:"hit_ratio"`
}

// MRCPoint is one point of the miss-ratio curve: at Size slots per CPU,
// Lookups lookups missed Misses times.
type MRCPoint struct {
	Size      int     `json:"size"`
	Lookups   uint64  `json:"lookups"`
	Misses    uint64  `json:"misses"`
	MissRatio float64 `json:"miss_ratio"`
}

// point is s as a point of the curve.
func (s LRUStats) point() MRCPoint {
	p := MRCPoint{Size: s.Size, Lookups: s.Lookups, Misses: s.Lookups - s.Hits}
	if s.Lookups > 0 {
		p.MissRatio = float64(p.Misses) / float64(s.Lookups)
	}
	return p
}

// CPUResult is one stream CPU's share of the run.
type CPUResult struct {
	CPU        int     `json:"cpu"`
	Ops        uint64  `json:"ops"`
	BusyNS     float64 `json:"busy_ns"`
	LRULookups uint64  `json:"lru_lookups"`
	LRUHits    uint64  `json:"lru_hits"`
}

// result builds the run's result (with full false only the LRU counts).
func (e *engine) result(full bool) *RunResult {
	r := &RunResult{Schema: RunSchema, Workload: e.w.Name, WorkloadKind: e.w.Kind, Kernel: e.k.Name,
		Profile: e.o.Profile.Name, ProfileCosts: e.o.ProfileCosts, Disk: e.o.Disk.Name, CPUs: len(e.cpus), QueueDepth: e.o.QueueDepth,
		Access: e.o.Access.String(), DeviceBytes: e.w.DeviceSize, BlockSize: e.mr.dev.BlockSize(), LogicalBlockSize: uint32(e.logical()),
		MemoryBytes: e.o.MemoryBytes, Rules: strings.TrimSpace(e.w.Rules.String()), FromZero: e.o.FromZero, ToNull: e.o.ToNull, LastClose: e.o.LastClose, LastCloseNS: e.lastCloseNS, Ops: e.done, Bytes: e.bytes, DurationNS: e.end}
	if e.o.Array.Members != 0 {
		r.Array = e.o.Array.String()
	}
	if e.w.Seeded {
		seed := e.w.Seed
		r.Seed = &seed
	}
	r.LRU.Size = e.mr.m.Config().LRUSize
	for i := range e.cpus {
		c := &e.cpus[i]
		ev := c.cpu.Events().Sub(c.start)
		r.LRU.Lookups += ev[bufcache.EvLRULookup]
		r.LRU.Hits += ev[bufcache.EvLRUHit]
		r.PerCPU = append(r.PerCPU, CPUResult{CPU: i, Ops: c.ops, BusyNS: c.busyNS, LRULookups: ev[bufcache.EvLRULookup], LRUHits: ev[bufcache.EvLRUHit]})
	}
	if r.LRU.Lookups > 0 {
		r.LRU.HitRatio = float64(r.LRU.Hits) / float64(r.LRU.Lookups)
	}
	if !full {
		return r
	}
	r.MBps = finite(float64(r.Bytes) * 1e3 / r.DurationNS)
	r.IOPS = finite(float64(r.Ops) * 1e9 / r.DurationNS)
	for k := source.IORead; k <= source.IODiscard; k++ {
		ks := &e.kinds[k]
		if ks.hist.n == 0 {
			continue
		}
		n := float64(ks.hist.n)
		r.Kinds = append(r.Kinds, KindResult{Kind: k.String(), Ops: ks.hist.n, Bytes: ks.bytes, Errors: ks.errors,
			Errnos: ks.errnos, Latency: ks.hist.summary(), BiosPerOp: float64(ks.bios) / n,
			RequestsPerOp: float64(ks.requests) / n, LRULookups: ks.lruLook, LRUHits: ks.lruHits})
	}
	r.Throughput = e.tl.bins()
	loads := e.loads()
	// The stream CPUs' lines are the time the clock charged them; every
	// other line is its load's demand, a CPU's stretched at the bus's load
	// over the run (memBus), as the clock stretched theirs.
	bus := timing.Contention{Utilisation: e.clk.bus.share(r.DurationNS)}
	for i := range loads {
		busy := bus.BusyNS(e.o.Profile, &loads[i])
		if i < len(e.cpus) {
			busy = e.cpus[i].busyNS
		}
		r.Resources = append(r.Resources, Resource{Name: loads[i].Name, BusyNS: busy, Utilisation: finite(busy / r.DurationNS)})
	}
	r.Loads = loads
	r.ReadAheadKB = e.mr.dev.ReadAheadKB()
	if b, t := e.o.Profile.Bottleneck(loads); b >= 0 {
		r.Bound = Bound{Resource: loads[b].Name, BusyNS: t, MBps: finite(float64(r.Bytes) * 1e3 / t)}
	}
	return r
}

// Count returns how much of q the run's CPUs and threads did together —
// events, system calls, bios through blk-mq, requests, md's work: the
// all-CPU line of Loads (timing.AllCPUs). 0 for a run without loads.
// O(resources).
func (r *RunResult) Count(q timing.Param) float64 {
	for _, l := range r.Loads {
		if strings.HasPrefix(l.Name, "all ") && l.Kind == timing.LoadCPU {
			return l.Q[q]
		}
	}
	return 0
}

// Pages returns the 4 KiB pages the run's records moved (Bytes / 4096).
func (r *RunResult) Pages() float64 { return float64(r.Bytes) / 4096 }

// PerPage returns Count(q) per page the run moved (Pages). O(resources).
func (r *RunResult) PerPage(q timing.Param) float64 { return r.Count(q) / r.Pages() }

// Kind returns the result of the kind called name ("write"), if any ran.
func (r *RunResult) Kind(name string) (KindResult, bool) {
	for _, k := range r.Kinds {
		if k.Kind == name {
			return k, true
		}
	}
	return KindResult{}, false
}

// Header is the result's first lines: the workload, its seed, and what it
// ran on, naming the profile that priced it.
func (r *RunResult) Header() string {
	seed := "none"
	if r.Seed != nil {
		seed = fmt.Sprint(*r.Seed)
	}
	more := "" // after the disk: its rules, and dd's source
	if r.Rules != "" {
		more = ", device rules " + r.Rules
	}
	if r.FromZero {
		more += "; each write's data read from /dev/zero first, as dd's"
	}
	if r.ToNull {
		more += "; each read's data written to /dev/null after, as dd's"
	}
	if r.LastClose {
		more += "; ends with the device's last close, as dd's"
	}
	device, disk := "device (", fmt.Sprintf("disk %s (requests) served in order", r.Disk)
	if r.Array != "" {
		device = "md array (" + r.Array + "; "
		disk = fmt.Sprintf("disks %s (requests), each serving its own in order", r.Disk)
	}
	return fmt.Sprintf("workload %s (%s), seed %s\n"+
		"model: kernel %s, %s + flusher and kswapd, queue depth %d, access %s, %s %slogical blocks of %d bytes, block size %d), %s of memory\n"+
		"timing: profile %s, %s costs (CPU events); %s%s; writers paced by balance_dirty_pages\n",
		r.Workload, r.WorkloadKind, seed, r.Kernel, plural(r.CPUs, "CPU"), r.QueueDepth, r.Access,
		scenario.FormatDDSize(r.DeviceBytes), device, r.LogicalBlockSize, r.BlockSize, scenario.FormatDDSize(r.MemoryBytes), r.Profile, r.ProfileCosts, disk, more)
}

// plural is "1 CPU" or "n CPUs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
