package source

import (
	"fmt"
	"io"
	"strings"

	"github.com/bhsim/bhsim/bench/scenario"
)

// ScenarioReader reads a scenario (docs/scenario-language.md) as a trace:
// each pwrite call is an IOWrite and each pread call an IORead (a line with
// repeat=N gives N records at OFF, OFF+stride, …), fsync is IOFsync and
// fdatasync IOFdatasync, whatever the descriptor. The other operations —
// open, close, blkbszset, blkbszget, dropcaches, readonly, backing — are
// not I/O and give no record (a runner that needs them runs the scenario
// itself), and neither does a pwrite or pread of 0 bytes. CPU and At are 0: a scenario runs on one thread, each call when
// the last returned. Line is the operation's line for a scenario read from
// text, 0 for one built in Go. The reader expands repeats as it goes, so
// its memory is the scenario's, not the expansion's.
type ScenarioReader struct {
	s     *scenario.Scenario
	lines []int // line of each op, or nil
	op    int   // the next op
	call  int   // the next call of op
}

// NewScenarioReader returns a reader of s's I/O. The scenario must be
// valid: the error is s.Validate's.
func NewScenarioReader(s *scenario.Scenario) (*ScenarioReader, error) {
	if s == nil {
		return nil, &TraceError{Format: "scenario", Msg: "no scenario"}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &ScenarioReader{s: s}, nil
}

// NewScenarioTextReader parses a scenario text (file names it in errors, as
// for Parse) and returns a reader of its I/O whose records carry their
// operations' lines. The error is Parse's, a *ParseError naming the line.
func NewScenarioTextReader(file, text string) (*ScenarioReader, error) {
	s, err := scenario.Parse(file, text)
	if err != nil {
		return nil, err
	}
	lines := scenarioOpLines(text)
	if len(lines) != len(s.Ops) { // cannot happen for a text Parse accepted
		lines = nil
	}
	return &ScenarioReader{s: s, lines: lines}, nil
}

// Scenario is the scenario read; its Device is the trace's device.
func (r *ScenarioReader) Scenario() *scenario.Scenario { return r.s }

// scenarioOpLines returns the line of each operation of a text Parse
// accepted, by Parse's rules: comment lines before the device line are the
// pins, "#" starts a comment, blank lines, the device line and report lines
// are not operations.
func scenarioOpLines(text string) []int {
	var lines []int
	seenDevice := false
	for i, raw := range strings.Split(text, "\n") {
		t := strings.TrimSpace(raw)
		if !seenDevice && strings.HasPrefix(t, "#") {
			continue
		}
		if j := strings.IndexByte(t, '#'); j >= 0 {
			t = strings.TrimSpace(t[:j])
		}
		if t == "" {
			continue
		}
		verb, _, _ := strings.Cut(strings.Fields(t)[0]+" ", " ")
		switch verb {
		case "report":
		case "device":
			seenDevice = true
		default:
			lines = append(lines, i+1)
		}
	}
	return lines
}

// Next returns the next record, io.EOF after the last.
func (r *ScenarioReader) Next() (IO, error) {
	for r.op < len(r.s.Ops) {
		op := r.s.Ops[r.op]
		line := 0
		if r.lines != nil {
			line = r.lines[r.op]
		}
		var kind IOKind
		var off, length, stride int64
		var calls int
		switch o := op.(type) {
		case scenario.Write:
			kind, off, length, stride, calls = IOWrite, o.Off, o.Len, o.Step(), o.Calls()
		case scenario.Read:
			kind, off, length, stride, calls = IORead, o.Off, o.Len, o.Step(), o.Calls()
		case scenario.Fsync:
			kind, calls = IOFsync, 1
		case scenario.Fdatasync:
			kind, calls = IOFdatasync, 1
		}
		if kind == 0 || r.call >= calls || kind.HasData() && length == 0 {
			r.op++
			r.call = 0
			continue
		}
		i := int64(r.call)
		r.call++
		rec := IO{Kind: kind, Line: line}
		if kind.HasData() {
			o := off + i*stride
			if o < 0 || length <= 0 || o+length < o {
				return IO{}, &TraceError{Line: line, Format: "scenario", Msg: fmt.Sprintf("op %d: call %d at offset %d of %d bytes is not a valid I/O", r.op+1, i+1, o, length)}
			}
			rec.Offset, rec.Length = uint64(o), uint64(length)
		}
		return rec, nil
	}
	return IO{}, io.EOF
}
