package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ParseError is a bad line of a scenario text: File:Line: Verb: Msg, as in
// `scenario.scn:7: pwrite: unknown fd "b" (open it first)`. A scenario built
// in Go and refused by Validate has Line 0 and Op set to the operation's
// index (counted from 1; 0 is the device).
type ParseError struct {
	File string // file name as given to Parse
	Line int    // line number from 1; 0 for a Go-built scenario
	Op   int    // operation number from 1 (0: the device or the whole scenario) when Line is 0
	Verb string // the operation's verb, "" when the line has none
	Msg  string
}

// Error prints the position, the verb and the message.
func (e *ParseError) Error() string {
	var b strings.Builder
	switch {
	case e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		fmt.Fprintf(&b, "%s: op %d: ", e.File, e.Op)
	default:
		fmt.Fprintf(&b, "op %d: ", e.Op)
	}
	if e.Verb != "" {
		b.WriteString(e.Verb + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ParseFile reads and parses one scenario file; the scenario's Name is the
// file's base name without its extension.
func ParseFile(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(filepath.Base(path), string(data))
	if err != nil {
		return nil, err
	}
	s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return s, nil
}

// ParseDir parses every *.scn file of a directory, in name order.
func ParseDir(dir string) ([]*Scenario, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.scn"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []*Scenario
	for _, p := range paths {
		s, err := ParseFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Parse reads a scenario text (see docs/scenario-language.md). file names the
// text in errors; the returned scenario's Name is file without its extension.
// Every error is a *ParseError naming the line. Parse never panics.
func Parse(file, text string) (*Scenario, error) {
	s := &Scenario{Name: strings.TrimSuffix(file, filepath.Ext(file))}
	c := newChecker()
	var pins []string
	seenDevice, deviceLine := false, 0
	for i, raw := range strings.Split(text, "\n") {
		line := i + 1
		trimmed := strings.TrimSpace(raw)
		if !seenDevice && strings.HasPrefix(trimmed, "#") {
			p := strings.TrimPrefix(trimmed, "#")
			p = strings.TrimPrefix(p, " ")
			pins = append(pins, strings.TrimRight(p, " \t\r\v\f"))
			continue
		}
		if j := strings.IndexByte(trimmed, '#'); j >= 0 {
			trimmed = strings.TrimSpace(trimmed[:j])
		}
		if trimmed == "" {
			continue
		}
		fields := strings.Fields(trimmed)
		verb := fields[0]
		fail := func(msg string, args ...any) error {
			v := verb
			if _, ok := parsers[verb]; !ok {
				v = ""
			}
			return &ParseError{File: file, Line: line, Verb: v, Msg: fmt.Sprintf(msg, args...)}
		}
		if verb == "report" {
			if len(fields) == 1 {
				return nil, fail("name at least one counter pattern (report bio.* rq.write)")
			}
			for _, p := range fields[1:] {
				if err := checkPattern(p); err != nil {
					return nil, fail("%v", err)
				}
			}
			s.Report = append(s.Report, fields[1:]...)
			continue
		}
		parse, ok := parsers[verb]
		if !ok {
			return nil, fail("unknown operation %s (want one of %s)", QuoteToken(verb), strings.Join(verbs(), ", "))
		}
		if verb == "device" {
			d, err := parseDevice(fields[1:])
			if err != nil {
				return nil, fail("%v", err)
			}
			if seenDevice {
				return nil, fail("a scenario has one device line, and it is the first")
			}
			if err := c.device(d); err != nil {
				return nil, fail("%v", err)
			}
			s.Device = d
			seenDevice, deviceLine = true, line
			continue
		}
		if !seenDevice {
			return nil, fail("the first line must be the device (device size=64M sector=512)")
		}
		op, err := parse(fields[1:])
		if err != nil {
			return nil, fail("%v", err)
		}
		if err := c.op(op); err != nil {
			return nil, fail("%v", err)
		}
		s.Ops = append(s.Ops, op)
	}
	if !seenDevice {
		return nil, &ParseError{File: file, Line: 1, Msg: "no device line (device size=64M sector=512)"}
	}
	if err := s.Device.Rules.check(c.totalIO, s.Device.SectorSize()); err != nil {
		return nil, &ParseError{File: file, Line: deviceLine, Verb: "device", Msg: err.Error()}
	}
	s.Pins = strings.Trim(strings.Join(pins, "\n"), "\n")
	return s, nil
}

// Validate checks a scenario built in Go by the rules Parse applies to a
// text: a device within the bounds, descriptors opened before use and not
// opened twice, sizes within bounds, valid report patterns. Errors are
// *ParseError with the operation's number.
func (s *Scenario) Validate() error {
	c := newChecker()
	if err := c.device(s.Device); err != nil {
		return &ParseError{File: s.Name, Verb: "device", Msg: err.Error()}
	}
	for i, op := range s.Ops {
		if op == nil {
			return &ParseError{File: s.Name, Op: i + 1, Msg: "nil operation"}
		}
		if err := checkFields(op); err != nil {
			return &ParseError{File: s.Name, Op: i + 1, Verb: op.Verb(), Msg: err.Error()}
		}
		if err := c.op(op); err != nil {
			return &ParseError{File: s.Name, Op: i + 1, Verb: op.Verb(), Msg: err.Error()}
		}
	}
	for _, p := range s.Report {
		if err := checkPattern(p); err != nil {
			return &ParseError{File: s.Name, Verb: "report", Msg: err.Error()}
		}
	}
	if err := s.Device.Rules.check(c.totalIO, s.Device.SectorSize()); err != nil {
		return &ParseError{File: s.Name, Verb: "device", Msg: err.Error()}
	}
	return nil
}

// checker applies the rules that span lines: descriptors, totals, counts.
type checker struct {
	open    map[string]bool
	totalIO int64
	ops     int
	backing *BackingFull // the backing line, once given
}

func newChecker() *checker { return &checker{open: map[string]bool{}} }

func (c *checker) device(d Device) error {
	switch d.Sector {
	case 0, 512, 1024, 2048, 4096:
	default:
		return fmt.Errorf("sector=%d: the logical block size is 512, 1024, 2048 or 4096", d.Sector)
	}
	switch {
	case d.Size <= 0:
		return errors.New("size must be positive")
	case d.Size > MaxDeviceSize:
		return fmt.Errorf("size=%s is over the bound of %s", FormatSize(d.Size), FormatSize(MaxDeviceSize))
	case d.Size%int64(d.SectorSize()) != 0:
		return fmt.Errorf("size=%s is not a multiple of the sector size %d", FormatSize(d.Size), d.SectorSize())
	}
	return nil
}

func (c *checker) op(op Op) error {
	c.ops++
	if c.ops > MaxOps {
		return fmt.Errorf("more than %d operations", MaxOps)
	}
	fd := op.Descriptor()
	switch o := op.(type) {
	case Open:
		if c.open[fd] {
			return fmt.Errorf("fd %s is already open (close it first, or pick another name)", QuoteToken(fd))
		}
		c.open[fd] = true
		return nil
	case BackingFull:
		switch {
		case c.backing == nil:
		case c.backing.Size == 0:
			return errors.New("the backing store is already full")
		default:
			return fmt.Errorf("the backing store is already limited (%s): a scenario has one backing line", c.backing)
		}
		c.backing = &o
		return nil
	case Write:
		if err := c.io(o.Len, o.Calls()); err != nil {
			return err
		}
	case Read:
		if err := c.io(o.Len, o.Calls()); err != nil {
			return err
		}
	}
	if !c.open[fd] {
		return fmt.Errorf("unknown fd %s (open it first)", QuoteToken(fd))
	}
	if _, ok := op.(Close); ok {
		delete(c.open, fd)
	}
	return nil
}

func (c *checker) io(length int64, n int) error {
	c.totalIO += mulSat(length, int64(n))
	if c.totalIO > MaxTotalIO {
		return fmt.Errorf("the scenario's pwrite and pread calls move more than %s in total", FormatSize(MaxTotalIO))
	}
	return nil
}

// checkFields checks the bounds of one operation's own fields, as the parser
// does while reading them.
func checkFields(op Op) error {
	if fd := op.Descriptor(); op.Verb() != "backing" {
		if err := checkFD(fd); err != nil {
			return err
		}
	}
	switch o := op.(type) {
	case Open:
		if o.Mode < ReadOnlyMode || o.Mode > ReadWriteMode {
			return fmt.Errorf("unknown mode %d", int(o.Mode))
		}
	case SetBlockSize:
		return checkRange("size", o.Size, 0, 1<<31-1)
	case BackingFull:
		if err := checkRange("size", o.Size, 0, MaxDeviceSize); err != nil {
			return err
		}
		if o.Size%BackingPageSize != 0 {
			return fmt.Errorf("size=%s is not a multiple of the backing store's page, %d", FormatSize(o.Size), BackingPageSize)
		}
	case Write:
		return checkIO(o.Off, o.Len, o.Repeat, o.Stride)
	case Read:
		return checkIO(o.Off, o.Len, o.Repeat, o.Stride)
	}
	return nil
}

func checkIO(off, length int64, repeat int, stride int64) error {
	if err := checkRange("off", off, 0, MaxOffset); err != nil {
		return err
	}
	if err := checkRange("len", length, 0, MaxTotalIO); err != nil {
		return err
	}
	if err := checkRange("repeat", int64(repeat), 0, MaxRepeat); err != nil {
		return err
	}
	return checkRange("stride", stride, 0, MaxOffset)
}

func checkRange(key string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s=%d is out of range [%s, %s]", key, v, FormatSize(lo), FormatSize(hi))
	}
	return nil
}

func checkFD(fd string) error {
	if fd == "" {
		return errors.New("missing descriptor name")
	}
	if len(fd) > MaxFDNameLen {
		return fmt.Errorf("descriptor name %s is longer than %d bytes", QuoteToken(fd), MaxFDNameLen)
	}
	for i, r := range fd {
		ok := r >= 'a' && r <= 'z' || i > 0 && (r >= '0' && r <= '9' || r == '_')
		if !ok {
			return fmt.Errorf("descriptor name %s: use a lower-case letter, then letters, digits or _", QuoteToken(fd))
		}
	}
	switch fd {
	case "on", "off", "full":
		return fmt.Errorf("descriptor name %s is a keyword", QuoteToken(fd))
	}
	return nil
}

func checkPattern(p string) error {
	for _, r := range p {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._=*?-", r)
		if !ok {
			return fmt.Errorf("counter pattern %s: use letters, digits, . _ = - and the wildcards * ?", QuoteToken(p))
		}
	}
	family, _, _ := strings.Cut(p, ".")
	if !strings.ContainsAny(family, "*?") && !slices.Contains(counterRoots, family) {
		return fmt.Errorf("counter pattern %s: no counter's name starts with %s (they start with %s)", QuoteToken(p), QuoteToken(family), strings.Join(counterRoots, ", "))
	}
	return nil
}

// parsers reads one line's arguments (the words after the verb).
var parsers = map[string]func(args []string) (Op, error){
	"device": nil, // handled by Parse
	"open":   parseOpen,
	"close":  fdOnly(func(fd string) Op { return Close{FD: fd} }),
	"blkbszset": func(args []string) (Op, error) {
		if len(args) != 2 {
			return nil, errors.New("want: blkbszset FD SIZE")
		}
		if err := checkFD(args[0]); err != nil {
			return nil, err
		}
		n, err := ParseSize(args[1])
		if err != nil {
			return nil, err
		}
		op := SetBlockSize{FD: args[0], Size: n}
		return op, checkFields(op)
	},
	"blkbszget":  fdOnly(func(fd string) Op { return GetBlockSize{FD: fd} }),
	"pwrite":     parseWrite,
	"pread":      parseRead,
	"fsync":      fdOnly(func(fd string) Op { return Fsync{FD: fd} }),
	"fdatasync":  fdOnly(func(fd string) Op { return Fdatasync{FD: fd} }),
	"dropcaches": fdOnly(func(fd string) Op { return DropCaches{FD: fd} }),
	"readonly": func(args []string) (Op, error) {
		if len(args) != 2 || (args[1] != "on" && args[1] != "off") {
			return nil, errors.New("want: readonly FD on|off")
		}
		if err := checkFD(args[0]); err != nil {
			return nil, err
		}
		return ReadOnly{FD: args[0], On: args[1] == "on"}, nil
	},
	"backing": func(args []string) (Op, error) {
		if len(args) == 1 && args[0] == "full" {
			return BackingFull{}, nil
		}
		if len(args) != 1 || !strings.HasPrefix(args[0], "size=") {
			return nil, errors.New("want: backing full, or backing size=SIZE")
		}
		kv, err := keyValues(args, "size")
		if err != nil {
			return nil, err
		}
		n, err := ParseSize(kv["size"])
		if err != nil {
			return nil, fmt.Errorf("size: %w", err)
		}
		if n == 0 {
			return nil, errors.New("size=0: want a positive size (backing full freezes the store where it is)")
		}
		op := BackingFull{Size: n}
		return op, checkFields(op)
	},
	"report": nil, // handled by Parse
}

func verbs() []string {
	out := make([]string, 0, len(parsers))
	for v := range parsers {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func fdOnly(mk func(fd string) Op) func([]string) (Op, error) {
	return func(args []string) (Op, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("want one descriptor name, got %d words", len(args))
		}
		if err := checkFD(args[0]); err != nil {
			return nil, err
		}
		return mk(args[0]), nil
	}
}

func parseOpen(args []string) (Op, error) {
	if len(args) < 2 || len(args) > 3 {
		return nil, errors.New("want: open FD rdonly|wronly|rdwr [excl]")
	}
	if err := checkFD(args[0]); err != nil {
		return nil, err
	}
	o := Open{FD: args[0]}
	switch args[1] {
	case "rdonly":
		o.Mode = ReadOnlyMode
	case "wronly":
		o.Mode = WriteOnlyMode
	case "rdwr":
		o.Mode = ReadWriteMode
	default:
		return nil, fmt.Errorf("unknown mode %s (want rdonly, wronly or rdwr)", QuoteToken(args[1]))
	}
	if len(args) == 3 {
		if args[2] != "excl" {
			return nil, fmt.Errorf("unknown flag %s (want excl)", QuoteToken(args[2]))
		}
		o.Excl = true
	}
	return o, nil
}

func parseDevice(args []string) (Device, error) {
	kv, err := keyValues(args, append([]string{"size", "sector"}, ruleKeys...)...)
	if err != nil {
		return Device{}, err
	}
	var d Device
	if d.Rules, err = parseRules(kv); err != nil {
		return Device{}, err
	}
	if v, ok := kv["size"]; ok {
		if d.Size, err = ParseSize(v); err != nil {
			return Device{}, fmt.Errorf("size: %w", err)
		}
	} else {
		return Device{}, errors.New("missing size= (device size=64M sector=512)")
	}
	d.Sector = 512
	if v, ok := kv["sector"]; ok {
		n, err := ParseSize(v)
		if err != nil {
			return Device{}, fmt.Errorf("sector: %w", err)
		}
		if n == 0 || n > 1<<20 {
			return Device{}, fmt.Errorf("sector=%s: the logical block size is 512, 1024, 2048 or 4096", echoToken(v))
		}
		d.Sector = int(n)
	}
	return d, nil
}

type ioArgs struct {
	fd          string
	off, length int64
	repeat      int
	stride      int64
	fill        byte
}

func parseIO(verb string, args []string, keys ...string) (ioArgs, error) {
	var a ioArgs
	if len(args) == 0 {
		return a, fmt.Errorf("want: %s FD off=OFF len=LEN [repeat=N] [stride=S]", verb)
	}
	a.fd = args[0]
	if err := checkFD(a.fd); err != nil {
		return a, err
	}
	kv, err := keyValues(args[1:], keys...)
	if err != nil {
		return a, err
	}
	for _, k := range []string{"off", "len"} {
		if _, ok := kv[k]; !ok {
			return a, fmt.Errorf("missing %s= (%s %s off=0 len=4K)", k, verb, a.fd)
		}
	}
	sizes := map[string]*int64{"off": &a.off, "len": &a.length, "stride": &a.stride}
	for k, p := range sizes {
		if v, ok := kv[k]; ok {
			if *p, err = ParseSize(v); err != nil {
				return a, fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	if v, ok := kv["stride"]; ok && a.stride == 0 {
		return a, fmt.Errorf("stride=%s: want at least 1 (the default is len=; to repeat one place, give the line again)", echoToken(v))
	}
	if v, ok := kv["repeat"]; ok {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 || n > MaxRepeat {
			return a, fmt.Errorf("repeat=%s: want a count from 1 to %d", echoToken(v), MaxRepeat)
		}
		a.repeat = int(n)
	}
	if v, ok := kv["fill"]; ok {
		n, err := strconv.ParseUint(v, 0, 8)
		if err != nil {
			return a, fmt.Errorf("fill=%s: want a byte, 0 to 255 or 0x00 to 0xff", echoToken(v))
		}
		a.fill = byte(n)
	}
	if a.repeat == 1 {
		a.repeat = 0
	}
	if a.stride == a.length {
		a.stride = 0
	}
	return a, checkIO(a.off, a.length, a.repeat, a.stride)
}

func parseWrite(args []string) (Op, error) {
	a, err := parseIO("pwrite", args, "off", "len", "repeat", "stride", "fill")
	if err != nil {
		return nil, err
	}
	return Write{FD: a.fd, Off: a.off, Len: a.length, Repeat: a.repeat, Stride: a.stride, Fill: a.fill}, nil
}

func parseRead(args []string) (Op, error) {
	a, err := parseIO("pread", args, "off", "len", "repeat", "stride")
	if err != nil {
		return nil, err
	}
	return Read{FD: a.fd, Off: a.off, Len: a.length, Repeat: a.repeat, Stride: a.stride}, nil
}

// keyValues reads key=value words, refusing unknown and repeated keys.
func keyValues(args []string, keys ...string) (map[string]string, error) {
	kv := map[string]string{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || v == "" {
			return nil, fmt.Errorf("want key=value, got %s", QuoteToken(a))
		}
		known := false
		for _, want := range keys {
			known = known || k == want
		}
		if !known {
			return nil, fmt.Errorf("unknown key %s (want %s)", QuoteToken(k), strings.Join(keys, ", "))
		}
		if _, dup := kv[k]; dup {
			return nil, fmt.Errorf("key %s given twice", QuoteToken(k))
		}
		kv[k] = v
	}
	return kv, nil
}

// ParseSize reads a byte count: decimal digits with an optional suffix K, M,
// G or T (powers of 1024): "4096", "4K", "1M", "1T". Values of 2^62 and
// more are refused.
func ParseSize(s string) (int64, error) {
	shift := uint(0)
	digits := s
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K':
			shift, digits = 10, s[:n-1]
		case 'M':
			shift, digits = 20, s[:n-1]
		case 'G':
			shift, digits = 30, s[:n-1]
		case 'T':
			shift, digits = 40, s[:n-1]
		}
	}
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, fmt.Errorf("bad size %s (want digits with an optional K, M, G or T: 4096, 4K, 1M)", QuoteToken(s))
	}
	n, err := strconv.ParseUint(digits, 10, 62)
	if err != nil || n > (1<<62-1)>>shift {
		return 0, fmt.Errorf("size %s is too large", QuoteToken(s))
	}
	return int64(n << shift), nil
}
