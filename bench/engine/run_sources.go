package engine

import (
	"fmt"
	"runtime"

	"github.com/bhsim/bhsim/bench/scenario"
	"github.com/bhsim/bhsim/bench/source"
)

// GenWorkload is generator g as a workload: its device, CPUs, queue depth
// and seed; Records counts its reads and writes when g sets Count (syncs
// come on top). Errors: g does not validate (a *GenError).
func GenWorkload(g source.Generator) (Workload, error) {
	if err := g.Validate(); err != nil {
		return Workload{}, err
	}
	n := g.Normalize()
	return Workload{Name: n.String(), Kind: "gen", DeviceSize: n.DeviceSize, CPUs: n.CPUs, QueueDepth: n.QueueDepth,
		Seed: n.Seed, Seeded: true, Records: n.Count, Open: func() (source.IOReader, error) { return source.NewGenerator(n) }}, nil
}

// ScenarioWorkload is scenario s's reads, writes and syncs as a workload
// on s's device (ScenarioReader): one CPU, one operation at a time, after
// its lines before the first I/O (Workload.Setup: the block size it sets
// holds for the records). The other lines among the I/O (open, close,
// dropcaches, readonly, backing) give no record and change nothing.
// The device's rules come with it (Workload.Rules). Errors: s does not
// validate; a blkbszset after the first I/O (a workload runs at one block
// size; RunModel runs such a scenario).
func ScenarioWorkload(s *scenario.Scenario) (Workload, error) {
	if err := s.Validate(); err != nil {
		return Workload{}, err
	}
	first := -1
	for i, op := range s.Ops {
		switch op.(type) {
		case scenario.Write, scenario.Read, scenario.Fsync, scenario.Fdatasync:
			if first < 0 {
				first = i
			}
		case scenario.SetBlockSize:
			if first >= 0 {
				return Workload{}, fmt.Errorf("scenario %s: op %d (%s) changes the block size after the first I/O (op %d, %s): a workload runs at one block size, set before its records (RunModel runs the scenario itself)",
					s.Name, i+1, op, first+1, s.Ops[first])
			}
		}
	}
	if first < 0 {
		first = len(s.Ops)
	}
	return Workload{Name: s.Name, Kind: "scenario", DeviceSize: uint64(s.Device.Size), LogicalBlockSize: uint32(s.Device.SectorSize()),
		CPUs: 1, Setup: s.Ops[:first], Rules: s.Device.Rules, Open: func() (source.IOReader, error) { return source.NewScenarioReader(s) }}, nil
}

// TraceDevice is the device a trace replays on: its size (0: the trace's
// extent, rounded up to a MiB) and logical block size (0: 512).
type TraceDevice struct {
	Size             uint64
	LogicalBlockSize uint32
	// Select chooses the device, file or action of a trace that holds
	// several (OpenTraceSelect).
	Select source.TraceSelect
	// OnePass reads a trace file as a stream is read, in Run's one pass
	// (Workload.Streamed), without a first pass for its CPUs, its records
	// and its extent: the run starts at once and parses as it simulates,
	// so that it takes about the longer of the two rather than their sum
	// and holds no record. It needs Size; the run's CPUs are then
	// RunOptions.CPUs (else 1), Records is 0 (its progress estimates the
	// total from the bytes of the file read: source.Trace.Consumed),
	// a bad record is reported when the run reaches it, a choice (Select)
	// that matches nothing gets Run's plain "no records" error, and a
	// miss-ratio curve, which reruns the workload, refuses it. The results
	// are a two-pass run's with the same CPUs. Each Open reopens the file.
	OnePass bool
}

// TraceWorkload is the trace file at path (any format OpenTrace reads) as
// a workload on device dev. A scenario trace replays on its own device.
// Otherwise TraceWorkload reads the trace once to its end (streaming, in
// memory independent of its length) for its CPUs (the workload's default:
// the largest CPU number plus one), its records, and when dev.Size is 0
// its extent. It keeps the records in memory then, about 8 bytes each
// (heldRecords), when they fit maxHeldBytes, so that Run does not read the
// trace again. A trace that cannot be opened again (standard input, "-", a
// pipe or a FIFO) is not read ahead but in Run's one pass
// (Workload.Streamed), and needs dev.Size; dev.OnePass reads a file the
// same way. Each pass parses the trace in a goroutine of its own
// (source.Prefetch), on another CPU than the one that sums or simulates
// its records; the first pass over a large plain CSV file reads its parts
// at once instead, a goroutine each on up to GOMAXPROCS CPUs
// (source.OpenTraceParts), each parsing and summing its own. Errors:
// OpenTraceSelect's, a bad record (naming its line), a trace with no
// record (or none of dev.Select's choice: ErrNoRecords), a stream without
// dev.Size, a device size that is not a multiple of its logical block
// size.
func TraceWorkload(path string, dev TraceDevice) (Workload, error) {
	n := runtime.GOMAXPROCS(0)
	if dev.OnePass {
		n = 1
	}
	parts, err := source.OpenTraceParts(path, dev.Select, n)
	if err != nil {
		return Workload{}, err
	}
	defer func() {
		for _, p := range parts {
			if p != nil {
				p.Close()
			}
		}
	}()
	t := parts[0]
	w := Workload{Name: path, Kind: "trace (" + string(t.Format) + ")", DeviceSize: dev.Size,
		LogicalBlockSize: dev.LogicalBlockSize, CPUs: 1,
		Open: func() (source.IOReader, error) {
			t, err := source.OpenTraceSelect(path, dev.Select)
			if err != nil {
				return nil, err
			}
			return source.Prefetch(t), nil
		}}
	if s := t.Scenario; s != nil {
		sw, err := ScenarioWorkload(s)
		sw.Name, sw.Kind = w.Name, w.Kind
		return sw, err
	}
	lbs := uint64(max(dev.LogicalBlockSize, 512))
	if !t.Reopenable || dev.OnePass {
		return streamedWorkload(&parts[0], w, lbs)
	}
	format := t.Format
	sum, held, err := summarizeParts(parts, maxHeldBytes)
	parts = nil // summarizeParts closed them
	if err != nil {
		return Workload{}, err
	}
	if held != nil {
		w.Open = func() (source.IOReader, error) { return &heldReader{held: held}, nil }
	}
	if sum.Records == 0 {
		msg := "no records: an empty workload has nothing to simulate"
		switch sel := dev.Select; {
		case sel.Action != 0 && sel.Device != "":
			msg = fmt.Sprintf("no %c events of device %s (the trace's devices are the first column of its lines, the actions the sixth)", sel.Action, sel.Device)
		case sel.Action != 0:
			msg = fmt.Sprintf("no %c events (the trace's actions are the sixth column of its lines)", sel.Action)
		case sel.Device != "":
			msg = fmt.Sprintf("no records of device %s (the trace's devices are the first column of its lines)", sel.Device)
			if format != source.TraceBlkparse {
				msg = fmt.Sprintf("no records of device %s (the trace's devices are the values of its device column; docs/traces.md names each format's)", sel.Device)
			}
		case sel.File != "":
			msg = fmt.Sprintf("no records of file %s (the trace's files are named by its add lines)", sel.File)
		}
		return Workload{}, &source.TraceError{File: path, Msg: msg, Err: source.ErrNoRecords}
	}
	w.CPUs, w.Records = max(sum.CPUs, 1), sum.Records
	if dev.Size == 0 {
		const mib = 1 << 20
		w.DeviceSize = max((sum.End+mib-1)/mib*mib, mib)
	}
	if w.DeviceSize%lbs != 0 {
		return Workload{}, fmt.Errorf("%w: a device of %d bytes is not a multiple of its %d-byte logical blocks", ErrRunOptions, w.DeviceSize, lbs)
	}
	return w, nil
}

// streamedWorkload is trace t, which cannot be opened again (standard
// input, a pipe, a FIFO) or is to be read once (TraceDevice.OnePass), as
// workload w read in the one pass Run makes: its device size must be given
// (it cannot come from a first pass), and its CPUs are the run's
// (Workload.Streamed). A stream is taken over (*tp is set to nil) and
// given to the first Open; a file is left to the caller to close, and
// w.Open reopens it.
func streamedWorkload(tp **source.Trace, w Workload, lbs uint64) (Workload, error) {
	t := *tp
	if w.DeviceSize == 0 {
		msg := "is read in one pass (standard input, a pipe or a FIFO), so its device size cannot come from a first pass over it: give the device's size (TraceDevice.Size)"
		if t.Reopenable {
			msg = "is to be read in one pass (TraceDevice.OnePass), so its device size cannot come from a first pass over it: give the device's size (TraceDevice.Size)"
		}
		return Workload{}, &source.TraceError{File: t.Name, Msg: msg}
	}
	if w.DeviceSize%lbs != 0 {
		return Workload{}, fmt.Errorf("%w: a device of %d bytes is not a multiple of its %d-byte logical blocks", ErrRunOptions, w.DeviceSize, lbs)
	}
	w.CPUs, w.Streamed = 0, true
	if t.Reopenable {
		return w, nil
	}
	*tp = nil
	w.Open = func() (source.IOReader, error) {
		if t == nil {
			return nil, fmt.Errorf("%w: %s is read in one pass, and it was read already", ErrRunOptions, w.Name)
		}
		r := t
		t = nil
		return source.Prefetch(r), nil
	}
	return w, nil
}
