package source

import (
	"path/filepath"
	"strings"
)

// DetectTraceFormat tells a trace's format from its first bytes (its
// first 64 KiB, as OpenTrace reads them), "" when it cannot. It skips
// blank lines, '#' comments and the "Input file sda.blktrace.0 added"
// lines blkparse prints first, then looks at the first line left:
//
//   - "fio version …": a fio iolog (TraceFio);
//   - blkparse's event shape ("8,0 3 1 0.000000000 697 Q …"), or only
//     "Input file" lines: blkparse (TraceBlkparse);
//   - first word "device": a scenario (TraceScenario);
//   - comma-separated fields: by their shape (detectCSV): bhsim's CSV
//     (an op word first, or the header op,…), MSR Cambridge, SPC, Alibaba,
//     a fio log, or a header naming columns (TraceColumns);
//   - five blank-separated numbers, the first with a fraction or not:
//     DiskSim ASCII (TraceDiskSim).
//
// O(len(head)).
func DetectTraceFormat(head []byte) TraceFormat {
	s := string(head)
	inputLines := false
	for len(s) > 0 {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		t := strings.TrimSpace(line)
		switch {
		case t == "" || t[0] == '#':
			continue
		case blkparseInputLine(t):
			inputLines = true
			continue
		}
		return detectLine(t)
	}
	if inputLines {
		return TraceBlkparse
	}
	return ""
}

// detectLine tells the format from its first significant line t.
func detectLine(t string) TraceFormat {
	if strings.HasPrefix(t, "fio version ") {
		return TraceFio
	}
	var fields [8]string
	n, _ := traceFields(fields[:], t)
	if n >= 6 && strings.Contains(fields[0], ",") {
		_, okDev := blkparseDev(fields[0])
		_, okCPU := traceUint(fields[1])
		_, okTime := traceSeconds(fields[3])
		if okDev && okCPU && okTime {
			return TraceBlkparse
		}
	}
	if fields[0] == "device" {
		return TraceScenario
	}
	if strings.Contains(t, ",") {
		return detectCSV(t)
	}
	if n == 5 && isDecimal(fields[0]) && allUint(fields[1:5]) {
		return TraceDiskSim
	}
	return ""
}

// detectCSV tells a comma-separated format from its first line t: a
// header or a record. A line none recognises is bhsim's CSV, whose reader
// names what is wrong with it.
func detectCSV(t string) TraceFormat {
	var fields [16]string
	n, _ := csvSplit(fields[:], t)
	f := fields[:n]
	if k, ok := opWord(f[0]); ok && k != 0 && !isDecimal(f[0]) {
		return TraceCSV // bhsim's: an op first
	}
	if strings.EqualFold(f[0], "op") || allCSVColumns(f) {
		return TraceCSV // bhsim's header, in any order
	}
	if sameNames(f, "Timestamp", "Hostname", "DiskNumber", "Type", "Offset", "Size", "ResponseTime") {
		return TraceMSR
	}
	if sameNames(f, "device_id", "opcode", "offset", "length", "timestamp") {
		return TraceAlibaba
	}
	if !isDecimal(f[0]) {
		if _, ok := HeaderColumnMap(f); ok {
			return TraceColumns
		}
		return TraceCSV
	}
	switch {
	case n == 7 && allUint(f[:1]) && allUint(f[2:3]) && isReadWrite(f[3]) && allUint(f[4:7]):
		return TraceMSR
	case n >= 5 && allUint(f[:3]) && isReadWrite(f[3]) && len(f[3]) == 1 && isDecimal(f[4]):
		return TraceSPC
	case n == 5 && allUint(f[:1]) && isReadWrite(f[1]) && len(f[1]) == 1 && allUint(f[2:5]):
		return TraceAlibaba
	case n >= 4 && allUint(f[:4]) && (f[2] == "0" || f[2] == "1" || f[2] == "2"):
		return TraceFioLog
	}
	return TraceCSV
}

// allCSVColumns reports whether every field is one of CSVHeader's names.
func allCSVColumns(f []string) bool {
	for _, name := range f {
		found := false
		for _, c := range csvColumns {
			found = found || strings.EqualFold(name, c)
		}
		if !found {
			return false
		}
	}
	return true
}

// sameNames reports whether header fields f are want, in any case.
func sameNames(f []string, want ...string) bool {
	if len(f) != len(want) {
		return false
	}
	for i, w := range want {
		if !strings.EqualFold(f[i], w) {
			return false
		}
	}
	return true
}

// isReadWrite reports whether s is a read or write in OpWords's words
// (Read, W, r, …), not a SCSI code.
func isReadWrite(s string) bool {
	k, ok := opWord(s)
	return ok && (k == IORead || k == IOWrite) && !isDecimal(s) && len(s) <= 5
}

// isDecimal reports whether s is digits with at most one '.' among them.
func isDecimal(s string) bool {
	ip, frac, dot := strings.Cut(s, ".")
	_, ok := traceUint(ip)
	if dot {
		_, okf := traceUint(frac)
		return ok && okf
	}
	return ok
}

// allUint reports whether every field is decimal digits.
func allUint(f []string) bool {
	for _, s := range f {
		if _, ok := traceUint(s); !ok {
			return false
		}
	}
	return true
}

// headerNames map a header's column names (lower case) to a field of a
// column map and its unit: the names libCacheSim's, MQSim's and the
// public traces' headers use.
var headerNames = map[string]struct {
	field string
	unit  uint64
}{
	"time": {"time", 1e9}, "timestamp": {"time", 1e9}, "ts": {"time", 1e9}, "clock_time": {"time", 1e9},
	"time_ns": {"time", 1}, "time_us": {"time", 1e3}, "time_ms": {"time", 1e6}, "time_s": {"time", 1e9},
	"timestamp_ns": {"time", 1}, "timestamp_us": {"time", 1e3}, "timestamp_ms": {"time", 1e6},
	"op": {"op", 0}, "opcode": {"op", 0}, "op_type": {"op", 0}, "type": {"op", 0}, "rw": {"op", 0},
	"io_type": {"op", 0}, "iotype": {"op", 0}, "operation": {"op", 0},
	"offset": {"offset", 1}, "address": {"offset", 1}, "byte_offset": {"offset", 1}, "offset_bytes": {"offset", 1},
	"lba": {"offset", 512}, "lbn": {"offset", 512}, "sector": {"offset", 512}, "blkno": {"offset", 512},
	"size": {"length", 1}, "length": {"length", 1}, "len": {"length", 1}, "bytes": {"length", 1},
	"obj_size": {"length", 1}, "io_size": {"length", 1}, "request_size": {"length", 1}, "size_bytes": {"length", 1},
	"sectors": {"length", 512}, "nsectors": {"length", 512},
	"device": {"device", 0}, "device_id": {"device", 0}, "dev": {"device", 0}, "disk": {"device", 0},
	"disknumber": {"device", 0}, "volume": {"device", 0}, "volume_id": {"device", 0}, "asu": {"device", 0},
	"cpu": {"cpu", 0},
}

// HeaderColumnMap makes the column map a header line names (its fields
// f, each a column's name): the columns whose names it knows (time,
// timestamp, ts — seconds, or with a unit suffix such as time_us —; op,
// opcode, type, rw; offset, address — bytes —, lba, lbn, sector —
// 512-byte sectors —; size, length, len, bytes, obj_size; sectors;
// device, device_id, disk, volume, asu; cpu), each field from the first
// column that names it. ok is false unless it finds an offset and a
// length, the least a record needs. O(len(f)).
func HeaderColumnMap(f []string) (m ColumnMap, ok bool) {
	m = ColumnMap{Time: NoColumn, Op: NoColumn, Offset: NoColumn, Length: NoColumn, Device: NoColumn, CPU: NoColumn}
	for i, name := range f {
		h, known := headerNames[strings.ToLower(strings.TrimSpace(name))]
		if !known {
			continue
		}
		for _, fl := range m.columnFields() {
			if fl.name == h.field && !fl.col.present() {
				*fl.col = Column{Index: i, Unit: h.unit}
			}
		}
	}
	return m, m.Offset.present() && m.Length.present()
}

// traceFormatByExt guesses a format from a file name's extension (a .gz,
// .bz2 or .zst after it is looked through).
func traceFormatByExt(name string) TraceFormat {
	ext := strings.ToLower(filepath.Ext(name))
	switch ext {
	case ".gz", ".bz2", ".zst", ".zstd":
		return traceFormatByExt(strings.TrimSuffix(name, filepath.Ext(name)))
	case ".scn":
		return TraceScenario
	case ".csv":
		return TraceCSV
	case ".iolog":
		return TraceFio
	case ".blkparse":
		return TraceBlkparse
	case ".spc":
		return TraceSPC
	case ".disksim":
		return TraceDiskSim
	}
	return ""
}
