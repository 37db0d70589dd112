// Package scenario is the contract both of bhsim's runners speak: the
// scenario language, the counters a run reports and the results a
// comparison sets side by side.
//
// A scenario (a small *.scn text, docs/scenario-language.md) describes one
// block-device workload, one operation per line: the device to create, then
// open, BLKBSZSET, pwrite, pread, fsync, close, drop caches, a full backing
// store. The same scenario runs on the model (package bench/engine,
// RunModel) and on the host's own Linux kernel (package bench/host), and each
// runner returns a [Result]: every operation's return value and errno, the
// block size each open saw, and the counters the kernel's block-layer and
// page-cache tracepoints count — bios by size, merges, requests, plugs,
// flushes, sectors, read-modify-write reads, folios by order, readahead
// windows, writeback errors. [Compare] and [CompareAll] set a model result
// beside a kernel result, counter by counter; a counter the kernel did not
// repeat over its runs ([MergeRuns]) is a range the model must fall in.
//
// The package holds:
//   - the language: [Parse], [ParseFile], [ParseDir], the typed operations
//     ([Open], [SetBlockSize], [Write], [Read], [Fsync], [Close], ...), their
//     bounds ([MaxDeviceSize], [MaxTotalIO]) and [Scenario.Format], the
//     canonical text that parses back to an equal scenario;
//   - sizes as the language and dd write them ([ParseSize], [FormatSize],
//     [ParseDDSize], [FormatDDSize]);
//   - the result contract: [Result], [OpResult], [Counters], [CounterSet],
//     their JSON form ([DecodeResult], [ReadResultFile], [ResultSchema],
//     [SchemaVersion]) and the writer's identity ([Tool]);
//   - blktrace's RWBS flags ([ParseRWBS]), which both a blkparse trace and
//     the kernel's tracepoints print.
//
// It depends on nothing but the standard library, so that the kernel runner
// can speak it without importing the model.
package scenario
