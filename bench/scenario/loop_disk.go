package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
)

// LoopDiskSchema is the schema of a loop-disk file.
const LoopDiskSchema = "bhsim-loop-disk/1"

// LoopDiskFile is the slash-separated path of the loop-disk file in a
// recording's directory, beside its results (NAME.json): the host runner's
// loop device measured in the same sitting as the kernel's times. It is in
// a subdirectory so that the directory's *.json are all results.
const LoopDiskFile = "disk/loop.json"

// LoopDiskSmall and LoopDiskLarge are the sizes of the measured requests,
// 4 KiB and 1 MiB.
const (
	LoopDiskSmall = 4 << 10
	LoopDiskLarge = 1 << 20
)

// LoopDisk is a measurement of the host runner's loop device on its own, the
// disk under every timed scenario: a private loop device over a sparse file
// on tmpfs, as the runner makes one, read and written with O_DIRECT requests
// of LoopDiskSmall and LoopDiskLarge bytes at queue depth 1, without
// tracepoints or rules. Each direction's two medians give it a latency per
// request and a transfer rate (Latency, MBps): the model's disk for the
// recording it was measured with. The times are those of the system calls
// as a program sees them, so they hold the block layer's own CPU work for
// each request as well as the loop worker's round trip and copy.
type LoopDisk struct {
	Schema string `json:"schema"`
	// Kernel and Machine are the host's uname -r and -m.
	Kernel  string `json:"kernel"`
	Machine string `json:"machine"`
	// Runs is how many fresh devices were measured; each median is over
	// them.
	Runs int `json:"runs"`
	// Read and Write are the two directions: writes go to holes of the
	// sparse backing file, reads read what the writes wrote.
	Read  LoopDiskTimes `json:"read"`
	Write LoopDiskTimes `json:"write"`
}

// LoopDiskTimes are one direction's medians: the mean time of one request
// of each size, in nanoseconds, the median over the runs.
type LoopDiskTimes struct {
	SmallNS float64 `json:"small_ns"`
	LargeNS float64 `json:"large_ns"`
}

// MBps is the direction's transfer rate in decimal MB/s: the extra bytes
// of a large request over its extra time.
func (d LoopDiskTimes) MBps() float64 {
	return (LoopDiskLarge - LoopDiskSmall) * 1e3 / (d.LargeNS - d.SmallNS)
}

// LatencyNS is the direction's time per request beyond its transfer: a
// small request's time less its bytes at MBps.
func (d LoopDiskTimes) LatencyNS() float64 {
	return d.SmallNS - LoopDiskSmall*1e3/d.MBps()
}

// check reports times that give no rate and latency: each finite and
// positive, a large request slower than a small one, the latency not
// negative.
func (d LoopDiskTimes) check(dir string) error {
	ok := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
	switch {
	case !ok(d.SmallNS) || !ok(d.LargeNS):
		return fmt.Errorf("%s times %g and %g ns: want finite and positive", dir, d.SmallNS, d.LargeNS)
	case d.LargeNS <= d.SmallNS:
		return fmt.Errorf("%s: a %d-byte request (%g ns) no slower than a %d-byte one (%g ns)", dir, LoopDiskLarge, d.LargeNS, LoopDiskSmall, d.SmallNS)
	case d.LatencyNS() < 0:
		return fmt.Errorf("%s: %g ns for %d bytes is less than their transfer at %.0f MB/s", dir, d.SmallNS, LoopDiskSmall, d.MBps())
	}
	return nil
}

// Check reports a measurement the model cannot use: another schema, no
// runs, or either direction's times giving no rate and latency.
func (l *LoopDisk) Check() error {
	if l.Schema != LoopDiskSchema {
		return fmt.Errorf("loop disk: schema %s, want %q", QuoteToken(l.Schema), LoopDiskSchema)
	}
	if l.Runs < 1 {
		return fmt.Errorf("loop disk: %d runs, want at least 1", l.Runs)
	}
	if err := l.Read.check("read"); err != nil {
		return fmt.Errorf("loop disk: %w", err)
	}
	if err := l.Write.check("write"); err != nil {
		return fmt.Errorf("loop disk: %w", err)
	}
	return nil
}

// Encode returns the measurement as indented JSON with a final newline.
func (l *LoopDisk) Encode() ([]byte, error) {
	if err := l.Check(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// MatchesResult reports a measurement that is not of the sitting the
// kernel's result r was recorded in: another kernel release or machine.
// A result that names neither matches.
func (l *LoopDisk) MatchesResult(r *Result) error {
	if (r.Kernel != "" && r.Kernel != l.Kernel) || (r.Machine != "" && r.Machine != l.Machine) {
		return fmt.Errorf("loop disk measured on %s %s, but %s was recorded on %s %s", l.Kernel, l.Machine, r.Scenario, r.Kernel, r.Machine)
	}
	return nil
}

// String describes the measurement in a line: each direction's latency and
// rate.
func (l *LoopDisk) String() string {
	return fmt.Sprintf("reads %.1f µs + %.0f MB/s, writes %.1f µs + %.0f MB/s (%s, %d runs)",
		l.Read.LatencyNS()/1e3, l.Read.MBps(), l.Write.LatencyNS()/1e3, l.Write.MBps(), l.Kernel, l.Runs)
}

// DecodeLoopDisk reads a loop-disk file. Errors: bad JSON, unknown fields,
// anything after the object, Check's.
func DecodeLoopDisk(b []byte) (*LoopDisk, error) {
	var l LoopDisk
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("loop disk: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("loop disk: data after the object at byte %d", dec.InputOffset())
	}
	if err := l.Check(); err != nil {
		return nil, err
	}
	return &l, nil
}

// ReadLoopDiskFile reads the loop-disk file name. Errors: the file's
// (wrapping os.ErrNotExist when there is none), DecodeLoopDisk's with the
// file's name.
func ReadLoopDiskFile(name string) (*LoopDisk, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return DecodeLoopDiskFile(name, b)
}

// DecodeLoopDiskFile decodes b, the contents of the loop-disk file name (a
// path for the errors). Errors: DecodeLoopDisk's with the file's name.
func DecodeLoopDiskFile(name string, b []byte) (*LoopDisk, error) {
	l, err := DecodeLoopDisk(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return l, nil
}
