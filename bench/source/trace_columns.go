package source

import (
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
)

// Column is where one field of a column-mapped trace is and in what unit
// its values are: column Index from 0, or, when Name is set, the column
// of that name in the trace's header line (matched in any case). Index -1
// with no Name is a field the trace does not have (NoColumn).
type Column struct {
	Index int
	Name  string
	// Unit is, for a time, the nanoseconds in one unit of its values
	// (1e9 for seconds, 100 for Windows filetime); for an offset or a
	// length, the bytes in one unit (512 for sectors). 0 is 1.
	Unit uint64
}

// NoColumn is a field the trace does not have.
var NoColumn = Column{Index: -1}

// present reports whether the trace has the field.
func (c Column) present() bool { return c.Index >= 0 || c.Name != "" }

// unit is Unit, 1 for 0.
func (c Column) unit() uint64 { return max(c.Unit, 1) }

// OpCodes says how the values of a column-mapped trace's op column read.
type OpCodes uint8

// The op codings.
const (
	// OpWords reads words in any case: read, r, rd, write, w, wr,
	// discard, trim, flush, fsync, fdatasync, sync (an fsync); and the
	// SCSI operation codes in hex (28, 88, a8, 08: a READ; 2a, 8a, aa,
	// 0a: a WRITE; 42: UNMAP, a discard; 35, 91: SYNCHRONIZE CACHE, a
	// flush), as libCacheSim's sample traces have them.
	OpWords OpCodes = iota
	// OpFioDirection reads fio's data direction: 0 read, 1 write, 2 trim.
	OpFioDirection
	// OpDiskSimFlags reads DiskSim's request flags: bit 0 set is a read,
	// clear a write.
	OpDiskSimFlags
)

// opCodeNames are the codings' names in a column spec ("op=2:fio").
var opCodeNames = [...]string{"words", "fio", "disksim"}

// ColumnMap says which column of a delimited text trace holds which field
// of a record. Time, Offset and Length default to 0 when absent (a record
// at once, at offset 0; a read, write or discard without a length is an
// error); Op absent makes every record a read (a cache trace of keys).
// Device, when present, names the device of each record: the first
// record's device is the trace's, unless ColumnDevice chooses one.
type ColumnMap struct {
	Time, Op, Offset, Length, Device, CPU Column
	// Ops is how the op column's values read.
	Ops OpCodes
	// Blanks splits lines at runs of spaces and tabs instead of at commas.
	Blanks bool
}

// columnFields are a map's fields with their names in a spec.
func (m *ColumnMap) columnFields() [6]struct {
	name string
	col  *Column
} {
	return [6]struct {
		name string
		col  *Column
	}{{"time", &m.Time}, {"op", &m.Op}, {"offset", &m.Offset}, {"length", &m.Length}, {"device", &m.Device}, {"cpu", &m.CPU}}
}

// maxColumns bounds the columns a column-mapped line may have that its
// map uses: a column past it is an error.
const maxColumns = 64

// ParseColumnMap reads a column spec: FIELD=COLUMN[:UNIT] items separated
// by commas, FIELD one of time, op, offset, length, device and cpu,
// COLUMN a column's index from 0 or a name of the trace's header line,
// UNIT for time one of ns, us, ms, s and 100ns (Windows filetime; s by
// default), for offset and length one of b (bytes, the default), sector
// (512 bytes) or a size (4K), for op one of words (the default), fio
// (0, 1, 2) and disksim (flag bit 0 = read); and sep=blank to split lines
// at blanks rather than commas. Fields not named are absent. Example:
// "time=0:us,op=1,offset=2,length=3" or "time=ts:ms,offset=lbn:sector,length=size".
// Errors name the item at fault.
func ParseColumnMap(spec string) (ColumnMap, error) {
	m := ColumnMap{Time: NoColumn, Op: NoColumn, Offset: NoColumn, Length: NoColumn, Device: NoColumn, CPU: NoColumn}
	if strings.TrimSpace(spec) == "" {
		return m, fmt.Errorf("source: an empty column spec (want FIELD=COLUMN items, e.g. time=0,op=1,offset=2,length=3)")
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(item), "=")
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		if !ok || val == "" {
			return m, fmt.Errorf("source: column spec item %q: want FIELD=COLUMN[:UNIT]", item)
		}
		if seen[key] {
			return m, fmt.Errorf("source: column spec item %q: %s given twice", item, key)
		}
		seen[key] = true
		if err := m.setItem(key, val); err != nil {
			return m, fmt.Errorf("source: column spec item %q: %w", item, err)
		}
	}
	return m, m.Validate()
}

// setItem sets the spec item key=val.
func (m *ColumnMap) setItem(key, val string) error {
	if key == "sep" {
		switch val {
		case "blank", "space", "tab":
			m.Blanks = true
		case "comma", ",":
			m.Blanks = false
		default:
			return fmt.Errorf("sep is blank or comma")
		}
		return nil
	}
	for _, f := range m.columnFields() {
		if f.name != key {
			continue
		}
		where, unit, _ := strings.Cut(val, ":")
		c := Column{Index: -1}
		if n, ok := traceUint(where); ok && n < maxColumns {
			c.Index = int(n)
		} else if _, isNum := traceUint(where); isNum {
			return fmt.Errorf("column %s is past the %dth", where, maxColumns)
		} else {
			c.Name = where
		}
		var err error
		switch key {
		case "time":
			c.Unit, err = parseTimeUnit(unit)
		case "offset", "length":
			c.Unit, err = parseByteUnit(unit)
		case "op":
			m.Ops, err = parseOpCodes(unit)
		default:
			if unit != "" {
				err = fmt.Errorf("%s takes no unit", key)
			}
		}
		*f.col = c
		return err
	}
	return fmt.Errorf("unknown field %q (want time, op, offset, length, device, cpu or sep)", key)
}

// parseTimeUnit reads a time unit: nanoseconds per unit; "" is seconds.
func parseTimeUnit(u string) (uint64, error) {
	switch strings.ToLower(u) {
	case "ns":
		return 1, nil
	case "100ns", "filetime":
		return 100, nil
	case "us", "µs", "usec":
		return 1e3, nil
	case "ms", "msec":
		return 1e6, nil
	case "s", "sec", "":
		return 1e9, nil
	}
	return 0, fmt.Errorf("time unit %q (want ns, us, ms, s or 100ns)", u)
}

// parseByteUnit reads an offset's or a length's unit: bytes per unit.
func parseByteUnit(u string) (uint64, error) {
	switch strings.ToLower(u) {
	case "", "b", "byte", "bytes":
		return 1, nil
	case "sector", "sectors", "lba":
		return 512, nil
	}
	n, err := scenario.ParseDDSize(u)
	if err != nil {
		return 0, fmt.Errorf("size unit %q (want b, sector or a size such as 4K)", u)
	}
	return n, nil
}

// parseOpCodes reads an op column's coding ("" is words).
func parseOpCodes(u string) (OpCodes, error) {
	if u == "" {
		return OpWords, nil
	}
	for i, n := range opCodeNames {
		if strings.EqualFold(u, n) {
			return OpCodes(i), nil
		}
	}
	return 0, fmt.Errorf("op coding %q (want words, fio or disksim)", u)
}

// Validate returns an error for a map whose fields share a column or
// name one past maxColumns, or that has no length column.
func (m ColumnMap) Validate() error {
	if !m.Length.present() {
		return fmt.Errorf("source: a column map needs a length column (the bytes of each record)")
	}
	fs := m.columnFields()
	for i, a := range fs {
		if a.col.Index >= maxColumns {
			return fmt.Errorf("source: the %s column %d is past the %dth", a.name, a.col.Index, maxColumns)
		}
		for _, b := range fs[i+1:] {
			if a.col.present() && (a.col.Index >= 0 && a.col.Index == b.col.Index || a.col.Name != "" && strings.EqualFold(a.col.Name, b.col.Name)) {
				return fmt.Errorf("source: the %s and %s fields are the same column", a.name, b.name)
			}
		}
	}
	if m.Ops > OpDiskSimFlags {
		return fmt.Errorf("source: op coding %d", m.Ops)
	}
	return nil
}

// named reports whether a field of the map is given by a header name.
func (m *ColumnMap) named() bool {
	for _, f := range m.columnFields() {
		if f.col.Name != "" {
			return true
		}
	}
	return false
}

// ColumnOption configures a column-mapped reader (NewColumnReader and the
// readers of public formats built on it).
type ColumnOption func(*ColumnReader)

// ColumnDevice replays only the records whose device column is dev and
// skips the others. Without it the first record's device is the trace's
// and a record of another device is an error.
func ColumnDevice(dev string) ColumnOption {
	return func(r *ColumnReader) { r.dev, r.devSet = dev, dev != "" }
}

// ColumnReader reads a delimited text trace whose columns a ColumnMap
// names, one record a line: the long tail of CSV traces (libCacheSim's
// CSV reader takes its columns the same way), and the public formats
// NewMSRReader, NewSPCReader, NewAlibabaReader, NewDiskSimReader and
// NewFioStatLogReader read. Fields are trimmed of blanks and of one pair
// of double quotes; columns the map does not use are ignored. Blank lines
// and lines starting with '#' are comments. The first line is a header
// when the map names a column by its name (then it must be), or when its
// length column is not a number and its op column, if any, not an op; a
// header is skipped. Times are decimal,
// with a fraction when their unit is coarser than a nanosecond (SPC's
// seconds "0.551706"); offsets and lengths are decimal integers. A flush
// or sync ignores its offset and length. CPU is the cpu column's, 0
// without one. The reader holds one line at a time.
type ColumnReader struct {
	lines   *traceLines
	format  string
	m       ColumnMap
	idx     [6]int // the columns of time, op, offset, length, device, cpu (-1: absent)
	need    int    // the columns a line needs: the largest index used plus one
	started bool
	dev     string
	devSet  bool
	// first checks the first data line's fields (a format's own shape),
	// and may change the columns; nil for none.
	first  func(r *ColumnReader, n int, f []string) error
	fields [maxColumns]string
}

// NewColumnReader returns a reader of the trace in r whose columns m
// names. A map that does not validate makes Next fail.
func NewColumnReader(r io.Reader, m ColumnMap, opts ...ColumnOption) *ColumnReader {
	return newColumnReader(r, "columns", m, opts)
}

func newColumnReader(r io.Reader, format string, m ColumnMap, opts []ColumnOption) *ColumnReader {
	c := &ColumnReader{lines: newTraceLines(r, format), format: format, m: m}
	c.lines.view = true // a record keeps no part of its line; the device is cloned
	for _, o := range opts {
		o(c)
	}
	if err := m.Validate(); err != nil {
		c.lines.stop(&TraceError{Format: format, Msg: strings.TrimPrefix(err.Error(), "source: ")})
	}
	c.resolve(nil)
	return c
}

// resolve sets the column indexes from the map, header names from header
// (nil: none yet), and returns the first name the header lacks.
func (c *ColumnReader) resolve(header []string) string {
	c.need = 0
	for i, f := range c.m.columnFields() {
		c.idx[i] = f.col.Index
		if f.col.Name != "" {
			c.idx[i] = -1
			for j, h := range header {
				if strings.EqualFold(strings.TrimSpace(h), f.col.Name) {
					c.idx[i] = j
				}
			}
			if c.idx[i] < 0 && header != nil {
				return f.col.Name
			}
		}
		c.need = max(c.need, c.idx[i]+1)
	}
	return ""
}

// Next returns the next record, io.EOF after the last.
func (c *ColumnReader) Next() (IO, error) {
	for {
		line, err := c.lines.next()
		if err != nil {
			return IO{}, err
		}
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		var rec IO
		ok, err := c.parse(t, &rec)
		if err != nil {
			return IO{}, c.lines.stop(err)
		}
		if ok {
			return rec, nil
		}
	}
}

// split splits line t into the reader's fields.
func (c *ColumnReader) split(t string) []string {
	var n int
	if c.m.Blanks {
		n, _ = traceFields(c.fields[:], t)
	} else {
		n, _ = csvSplit(c.fields[:], t)
	}
	return c.fields[:n]
}

// parse reads line t (not blank, not a comment): a record (ok, in rec),
// a header, a record of another device chosen away, or an error.
func (c *ColumnReader) parse(t string, rec *IO) (bool, error) {
	n := c.lines.line
	f := c.split(t)
	if !c.started {
		c.started = true
		if header, err := c.header(n, f); header || err != nil {
			return false, err
		}
		if c.first != nil {
			if err := c.first(c, n, f); err != nil {
				return false, err
			}
		}
	}
	if len(f) < c.need {
		return false, c.lines.fail(n, "%d fields, want at least %d", len(f), c.need)
	}
	if i := c.idx[4]; i >= 0 {
		switch {
		case c.dev == "" && !c.devSet:
			c.dev = strings.Clone(f[i])
		case f[i] != c.dev && c.devSet:
			return false, nil
		case f[i] != c.dev:
			return false, c.lines.fail(n, "device %q is not the trace's device %q (choose one with TraceSelect.Device)", f[i], c.dev)
		}
	}
	return c.record(n, f, rec)
}

// header reports whether fields f of line n, the first, are a header
// (and resolves the map's names from it), or returns an error.
func (c *ColumnReader) header(n int, f []string) (bool, error) {
	if c.m.named() {
		if missing := c.resolve(f); missing != "" {
			return false, c.lines.fail(n, "no column %q in the header line (its columns: %s)", missing, strings.Join(f, ","))
		}
		return true, nil
	}
	i := c.idx[3]
	if i >= len(f) {
		return false, nil
	}
	if _, isNum := traceUint(f[i]); isNum {
		return false, nil
	}
	if j := c.idx[1]; j >= 0 && j < len(f) {
		_, isOp := c.op(f[j])
		return !isOp, nil // a flush has no length, but an op
	}
	return true, nil
}

// record makes the record of fields f of line n.
func (c *ColumnReader) record(n int, f []string, rec *IO) (bool, error) {
	*rec = IO{Kind: IORead, Line: n}
	if i := c.idx[1]; i >= 0 {
		k, ok := c.op(f[i])
		if !ok {
			return false, c.lines.fail(n, "op %q is not one of %s", f[i], c.opWant())
		}
		rec.Kind = k
	}
	if i := c.idx[0]; i >= 0 {
		at, ok := traceScaled(f[i], c.m.Time.unit())
		if !ok {
			return false, c.lines.fail(n, "time %q is not a non-negative decimal number (of %s)", f[i], timeUnitName(c.m.Time.unit()))
		}
		rec.At = at
	}
	if i := c.idx[5]; i >= 0 {
		cpu, ok := traceUint(f[i])
		if !ok || cpu > MaxTraceCPU {
			return false, c.lines.fail(n, "cpu %q is not a number from 0 to %d", f[i], MaxTraceCPU)
		}
		rec.CPU = int(cpu)
	}
	if !rec.Kind.HasData() {
		return true, nil
	}
	return c.extent(n, f, rec)
}

// extent reads the offset and length of data record rec, of fields f of
// line n.
func (c *ColumnReader) extent(n int, f []string, rec *IO) (bool, error) {
	var off uint64
	if i := c.idx[2]; i >= 0 {
		v, ok := traceUint(f[i])
		u := c.m.Offset.unit()
		if !ok || v > ^uint64(0)/u {
			return false, c.lines.fail(n, "offset %q is not a whole number of %s that fits 64 bits", f[i], byteUnitName(u))
		}
		off = v * u
	}
	i := c.idx[3]
	v, ok := traceUint(f[i])
	u := c.m.Length.unit()
	if !ok || v == 0 || v > ^uint64(0)/u {
		return false, c.lines.fail(n, "length %q is not a positive whole number of %s", f[i], byteUnitName(u))
	}
	length := v * u
	if off+length < off {
		return false, c.lines.fail(n, "%d bytes at offset %d end past 2^64", length, off)
	}
	rec.Offset, rec.Length = off, length
	return true, nil
}

// op reads an op column's value.
func (c *ColumnReader) op(s string) (IOKind, bool) {
	switch c.m.Ops {
	case OpFioDirection:
		switch s {
		case "0":
			return IORead, true
		case "1":
			return IOWrite, true
		case "2":
			return IODiscard, true
		}
		return 0, false
	case OpDiskSimFlags:
		v, ok := traceUint(s)
		if !ok {
			return 0, false
		}
		if v&1 != 0 {
			return IORead, true
		}
		return IOWrite, true
	}
	return opWord(s)
}

// opWant says what the op column takes, for an error.
func (c *ColumnReader) opWant() string {
	switch c.m.Ops {
	case OpFioDirection:
		return "fio's directions 0 (read), 1 (write), 2 (trim)"
	case OpDiskSimFlags:
		return "DiskSim's flags (a number, bit 0 set for a read)"
	}
	return "read, write, r, w, discard, trim, flush, fsync or a SCSI opcode (28, 2a, ...)"
}

// opWord reads OpWords's values, in any case.
func opWord(s string) (IOKind, bool) {
	if len(s) > 9 {
		return 0, false
	}
	var b [9]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	switch string(b[:len(s)]) {
	case "read", "r", "rd", "28", "88", "a8", "08", "0x28", "0x88":
		return IORead, true
	case "write", "w", "wr", "2a", "8a", "aa", "0a", "0x2a", "0x8a":
		return IOWrite, true
	case "discard", "trim", "unmap", "42", "0x42":
		return IODiscard, true
	case "flush", "35", "91", "0x35", "0x91":
		return IOFlush, true
	case "fsync", "sync":
		return IOFsync, true
	case "fdatasync":
		return IOFdatasync, true
	}
	return 0, false
}

// timeUnitName names a time unit in nanoseconds.
func timeUnitName(u uint64) string {
	switch u {
	case 1:
		return "nanoseconds"
	case 100:
		return "100 ns (Windows filetime)"
	case 1e3:
		return "microseconds"
	case 1e6:
		return "milliseconds"
	case 1e9:
		return "seconds"
	}
	return strconv.FormatUint(u, 10) + " ns"
}

// byteUnitName names a size unit in bytes.
func byteUnitName(u uint64) string {
	switch u {
	case 1:
		return "bytes"
	case 512:
		return "512-byte sectors"
	}
	return scenario.FormatDDSize(u) + " units"
}

// pow10 are the powers of ten a uint64 holds.
var pow10 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// traceScaled reads a non-negative decimal number ("12", "0.551706") of
// units of unit nanoseconds (or bytes) into a whole count of them,
// truncating what is below one. Exact: integer arithmetic only.
func traceScaled(s string, unit uint64) (uint64, bool) {
	ip, frac, dot := strings.Cut(s, ".")
	v, ok := traceUint(ip)
	if !ok || v > ^uint64(0)/unit {
		return 0, false
	}
	r := v * unit
	if !dot {
		return r, true
	}
	if frac == "" || len(frac) >= len(pow10) {
		return 0, false
	}
	fv, ok := traceUint(frac)
	if !ok {
		return 0, false
	}
	hi, lo := bits.Mul64(fv, unit)
	q, _ := bits.Div64(hi, lo, pow10[len(frac)]) // fv < 10^len: hi < 10^len, no overflow
	if r+q < r {
		return 0, false
	}
	return r + q, true
}
