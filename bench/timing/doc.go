// Package timing turns the events the model counts into simulated time: the
// second of bhsim's two clocks.
//
// # Profiles
//
// A [Profile] is a table of primitive costs of one machine: what one
// occurrence of each bufcache event costs in nanoseconds (a buffer head
// allocated, a ring step, an index level, a bio), plus the layers beneath the
// buffer cache (a blk-mq request, md's per-bio work, a RAID6 stripe) and the
// measuring harness's cost per timed call, each with the source of its
// figure. Simulated time is the dot product of the counts with the costs, so
// it is the same on every machine that runs the model. The built-in profiles
// ([Profiles]) are the machines the four threads were measured on: an x86
// server ([X86Server]), the Helios4 NAS ([Helios4]), an i.MX8-class arm64
// board ([IMX8Board]) and a 2017 x86 desktop ([X86Desktop2017]). A profile
// reads and writes itself as JSON ([ProfileSchema]), so that a user can keep
// one as a file.
//
// # The timing model of streaming runs
//
// A streaming workload such as dd keeps every part of the machine busy at
// once: the writer's CPU copies into the page cache while the flusher's CPU
// writes back, md's threads handle stripes, interrupts complete bios and each
// disk serves its requests. The timing model is the textbook one for such a
// pipeline, the operational (bottleneck) analysis of queueing networks:
//
//  1. Each resource r — a CPU, an md thread, a disk — has a service demand
//     D_r: the time it is busy for the whole run ([Load], [Profile.BusyNS]).
//     For a CPU it is the dot product of the events it counted with the
//     profile's costs; for a disk, the sum of its requests' service times.
//  2. The throughput X of a run that moves B bytes cannot exceed B / D_r for
//     any r (the utilisation law: a resource is busy X·D_r/B of the time, at
//     most 100 %). A station of m identical servers can reach m, so work that
//     can run on any of the machine's CPUs — all CPU demand together — gives
//     a bound of m·B / ΣD ([AllCPUs]).
//  3. The model's run time is the largest of these demands, T = max_r D_r / m_r,
//     and X = B / T: the busiest resource sets the pace ([Profile.Bottleneck]).
//
// The bound is exact when the stages overlap perfectly, as they do in a long
// sequential stream with enough buffering between them (the dirty page limit,
// the plug, the disk's queue): each stage then works at the bottleneck's pace
// and waits for nothing else. It is optimistic when a stage must wait for
// another (a synchronous read, a small queue depth, lock contention), and when
// two resources take turns on one physical CPU beyond what the all-CPU bound
// counts. Reports show each resource's demand ([Profile.DescribeLoads]) so a
// reader can see how close to the bound the others run.
//
// A run whose stages cannot overlap for part of it — a dd writes alone
// until its dirty pages reach the background threshold, and its close
// writes back what is left — is not priced here but run on the engine's
// clock (bench/engine), which places every call, pass and request in
// time; the bound stays what its report shows beside the clock's time, and
// a calibration fits such runs through [Observation.Clock].
//
// # Memory contention
//
// The plain bound treats the memory bus as one more resource, independent of
// the CPUs. It is not: a CPU that copies moves its bytes at the bus's pace,
// and kernel code that walks buffer heads and bios the data streams have
// pushed out of the caches waits for DRAM on every miss. A profile with a
// memory-stall share k (ParamMemStall) says so: a CPU's streams (copies,
// clears, parity) and k of the rest of its demand wait at the memory
// controller, and take 1 / (1 − ρ) as long when the bus is busy a share ρ of
// the run (the M/M/1 queue's waiting time); ρ is the bus's demand over the
// run's time, so the run's time is a fixed point, which [Profile.Contended]
// solves in closed form. [Profile.Bottleneck] and [Profile.DescribeLoads]
// use it; with k = 0 (the x86 and i.MX8 profiles) they are the plain bound.
// The model's clock (package bench/engine) keeps the same contention as a
// run goes: each CPU's work stretched by [Stretched] at the bus's load so
// far, which in a run of steady loads tends to Contended's fixed point.
// On the Helios4 (2 × Cortex-A9, a 32-bit DDR3 bus) it is what lets one fit
// of the bus's cost to the 4096-byte rows predict the 512-byte rows, and it
// moves that fit near its prior; calibration then solves a nonlinear least
// squares problem (Gauss–Newton after the linear start), as it does for runs
// in phases.
//
// # Calibration
//
// [Calibrate] fits the costs a [Fit] names to the published cells it names,
// by least squares on relative errors (QR, gonum), re-deriving which resource
// binds each cell until that no longer changes, and refuses as many
// parameters as cells. Its report labels every cell: fitted, fitted (shared
// run) when the cell's simulated value comes from the same run as a fitted
// cell, input when it echoes a model input taken from the table, or
// predicted — only the last is a prediction. [CrossValidate] gives each
// fitted cell's leave-one-out error, the honest summary of a fit.
package timing
