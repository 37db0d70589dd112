// Package source turns the traces people have and seeded generators into
// one thing: a stream of I/O records ([IO], read with an [IOReader]) that
// package bench/engine replays on the model.
//
// Every source yields the same record: a read, write, fsync, fdatasync,
// flush or discard at a byte offset and length, on a CPU, at a time, with
// the request flags a trace carries (sync, FUA, metadata, readahead).
//
//   - Traces ([OpenTrace], [NewTrace], docs/traces.md): blkparse text
//     ([NewBlkparseReader]; one device, file and action chosen with
//     [TraceSelect]), fio iologs v2 and v3 ([NewFioLogReader]), bhsim's own
//     CSV ([NewCSVReader], written by [WriteCSV]), a scenario's pwrite,
//     pread and fsync lines ([NewScenarioReader]), and the public
//     datasets' formats as column maps over one reader ([ColumnReader]):
//     MSR Cambridge ([NewMSRReader]), SPC/UMass ([NewSPCReader]), Alibaba
//     ([NewAlibabaReader]), DiskSim ASCII ([NewDiskSimReader]), fio's
//     latency logs with offsets ([NewFioStatLogReader]) and any CSV whose
//     columns a [ColumnMap] or its header names ([NewColumnReader],
//     [HeaderColumnMap]). [DetectTraceFormat] tells the format from a
//     file's first lines; [OpenTrace] reads standard input ("-"), pipes
//     and gzip, bzip2 or zstd files ([DetectCompression]). A bad line is a
//     [*TraceError] naming the file, line and format.
//   - Generators ([ParseGenerator], [NewGenerator]): sequential, random,
//     zipfian and hot/cold streams over a device, with size distributions
//     ([SizeDist]), CPUs and queue depth, each from a seed it prints, so the
//     same spec always gives the same stream.
//   - [SummarizeTrace] counts a stream without running it; [ReadAll] and
//     [SliceReader] move records between memory and readers.
//
// Readers hold one record at a time: a trace of any length streams in
// constant memory.
package source
