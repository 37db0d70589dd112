package source

import (
	"io"
	"strings"
)

// The public block-trace formats, each a column map over ColumnReader.

// MSRColumns are the MSR Cambridge traces' columns (SNIA IOTTA, "MSR
// Cambridge Traces", 2008):
//
//	Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//	128166372003061629,hm,1,Read,3718946816,4096,5689
//
// Timestamp is a Windows filetime (100 ns units since 1601), Type Read or
// Write, Offset and Size bytes; DiskNumber is the device; Hostname and
// ResponseTime are not used.
func MSRColumns() ColumnMap {
	return ColumnMap{Time: Column{Index: 0, Unit: 100}, Op: Column{Index: 3}, Offset: Column{Index: 4},
		Length: Column{Index: 5}, Device: Column{Index: 2}, CPU: NoColumn}
}

// SPCColumns are the SPC trace format's columns (Storage Performance
// Council, "SPC Trace File Format Specification" 1.0.1; the UMass Trace
// Repository's Financial and WebSearch traces):
//
//	ASU,LBA,Size,Opcode,Timestamp[,…]
//	0,20941264,8192,W,0.551706
//
// ASU (the application specific storage unit) is the device, LBA a 512-byte
// sector, Size bytes, Opcode r or w in either case, Timestamp seconds
// with a fraction; further fields are optional and not used.
func SPCColumns() ColumnMap {
	return ColumnMap{Time: Column{Index: 4, Unit: 1e9}, Op: Column{Index: 3}, Offset: Column{Index: 1, Unit: 512},
		Length: Column{Index: 2}, Device: Column{Index: 0}, CPU: NoColumn}
}

// AlibabaColumns are the columns of Alibaba Cloud's block traces
// (alibaba/block-traces, 2020):
//
//	device_id,opcode,offset,length,timestamp
//	419,W,8250941440,4096,1577808000000287
//
// opcode R or W, offset and length bytes, timestamp microseconds since
// the Unix epoch.
func AlibabaColumns() ColumnMap {
	return ColumnMap{Time: Column{Index: 4, Unit: 1e3}, Op: Column{Index: 1}, Offset: Column{Index: 2},
		Length: Column{Index: 3}, Device: Column{Index: 0}, CPU: NoColumn}
}

// DiskSimColumns are DiskSim's ASCII input trace's (DiskSim 4.0 manual,
// "ASCII" trace format): blank-separated
//
//	time devno blkno size flags
//	12.455 0 2367200 16 1
//
// time in milliseconds with a fraction, devno the device, blkno a block
// of 512 bytes, size in blocks of 512 bytes, flags bit 0 set for a read.
func DiskSimColumns() ColumnMap {
	return ColumnMap{Time: Column{Index: 0, Unit: 1e6}, Op: Column{Index: 4}, Offset: Column{Index: 2, Unit: 512},
		Length: Column{Index: 3, Unit: 512}, Device: Column{Index: 1}, CPU: NoColumn, Ops: OpDiskSimFlags, Blanks: true}
}

// NewMSRReader returns a reader of an MSR Cambridge trace (MSRColumns),
// with or without its header line.
func NewMSRReader(r io.Reader, opts ...ColumnOption) *ColumnReader {
	return newColumnReader(r, "msr", MSRColumns(), opts)
}

// NewSPCReader returns a reader of an SPC (UMass) trace (SPCColumns).
func NewSPCReader(r io.Reader, opts ...ColumnOption) *ColumnReader {
	return newColumnReader(r, "spc", SPCColumns(), opts)
}

// NewAlibabaReader returns a reader of an Alibaba block trace
// (AlibabaColumns).
func NewAlibabaReader(r io.Reader, opts ...ColumnOption) *ColumnReader {
	return newColumnReader(r, "alibaba", AlibabaColumns(), opts)
}

// NewDiskSimReader returns a reader of a DiskSim ASCII trace
// (DiskSimColumns).
func NewDiskSimReader(r io.Reader, opts ...ColumnOption) *ColumnReader {
	return newColumnReader(r, "disksim", DiskSimColumns(), opts)
}

// fioLogColumns are a fio log's columns when it has offsets.
func fioLogColumns() ColumnMap {
	return ColumnMap{Time: Column{Index: 0, Unit: 1e6}, Op: Column{Index: 2}, Offset: Column{Index: 4},
		Length: Column{Index: 3}, Device: NoColumn, CPU: NoColumn, Ops: OpFioDirection}
}

// NewFioStatLogReader returns a reader of fio's latency, bandwidth or
// IOPS log (write_lat_log, write_bw_log, write_iops_log; fio's HOWTO, "Log
// File Formats"), whose lines are
//
//	time, value, direction, block size[, offset], priority[, issue time]
//
// time in milliseconds, direction 0 (read), 1 (write) or 2 (trim), block
// size and offset in bytes. Written with log_offset=1 and without
// log_avg_msec, such a log holds one line per I/O and replays as a trace:
// six columns (seven with log_issue_time) since fio 3.18, five before
// (no priority column). A log without offsets is refused: four columns
// (fio before 3.18), or five whose fifth is a priority (0, 1 or, with
// log_prio, 0x…), naming log_offset=1; so is a windowed log (log_avg_msec:
// block size 0). The value (a latency, bandwidth or IOPS) is not used; At
// is the time stamp, when the I/O completed. An old fio's five-column log
// with offsets whose first offset is 0 or 1 reads as a new fio's with
// priorities: read it with NewColumnReader and
// "time=0:ms,op=2:fio,length=3,offset=4".
func NewFioStatLogReader(r io.Reader) *ColumnReader {
	c := newColumnReader(r, "fiolog", fioLogColumns(), nil)
	c.first = fioLogShape
	return c
}

// fioLogShape checks the first line of a fio log: one with offsets.
func fioLogShape(c *ColumnReader, n int, f []string) error {
	const fix = "fio writes offsets with log_offset=1 (and one line per I/O without log_avg_msec)"
	switch {
	case len(f) < 4:
		return c.lines.fail(n, "a fio log line has at least 4 columns (time, value, direction, block size), got %d", len(f))
	case len(f) == 4:
		return c.lines.fail(n, "a fio log without offsets (time, value, direction, block size) cannot be replayed: %s", fix)
	case len(f) == 5 && (strings.HasPrefix(f[4], "0x") || f[4] == "0" || f[4] == "1"):
		return c.lines.fail(n, "a fio log without offsets (its fifth column %q is a priority) cannot be replayed: %s; an older fio's log (before 3.18) with offsets reads with the column map time=0:ms,op=2:fio,length=3,offset=4", f[4], fix)
	case len(f) > 7:
		return c.lines.fail(n, "a fio log line of %d columns is a windowed log with maximum values (log_window_value): not one line per I/O; %s", len(f), fix)
	case f[3] == "0":
		return c.lines.fail(n, "block size 0: a windowed fio log (log_avg_msec) is not one line per I/O; %s", fix)
	}
	return nil
}
