package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// Bounds of the scenario language, which Parse and Validate enforce for
// every runner. They follow the model's memory: its device is sparse and
// costs nothing until written, so a device may be as large as a real one;
// a scenario run keeps the data of every page it writes or reads (page
// cache and the disk's store), so the bytes moved bound its memory (a
// 256 MiB scenario peaks near 1 GiB of RSS, in 3 s). The host runner has
// tighter bounds of its own (bench/host.CheckBounds: its tmpfs holds the
// device in memory), which it refuses with a *BoundError.
const (
	// MaxDeviceSize is the largest device a scenario may create: 1 TiB.
	MaxDeviceSize = 1 << 40
	// MaxTotalIO is the largest number of bytes all pwrite and pread calls of a
	// scenario may move together (length × repeat, summed): 256 MiB.
	MaxTotalIO = 256 << 20
	// MaxRepeat is the largest repeat count of one pwrite or pread line.
	MaxRepeat = 1 << 20
	// MaxOffset bounds every byte offset and stride (2^40, the end of the
	// largest device), so that offset + length × repeat never overflows.
	MaxOffset = 1 << 40
	// MaxOps is the largest number of operation lines in one scenario.
	MaxOps = 10000
	// MaxFDNameLen is the longest descriptor name.
	MaxFDNameLen = 32
)

// Scenario is one block-device workload: the device it creates, the operations
// run on it in order, and the counters a comparison looks at. Its canonical
// text is Format's output; Parse(name, s.Format()) gives back a scenario equal
// to s. The zero Scenario is not valid (it has no device); Validate says why.
type Scenario struct {
	// Name identifies the scenario, usually its file name without ".scn". It is
	// not part of the text.
	Name string
	// Pins is the scenario's leading comment: what kernel behaviour it pins.
	// Lines are separated by "\n"; none has trailing blanks, and the text has
	// no leading or trailing empty line.
	Pins string
	// Device is the device the scenario creates, its first line.
	Device Device
	// Ops are the operations in order.
	Ops []Op
	// Report names the counters that comparisons look at, as patterns
	// (path.Match syntax: "bio.write*", "rq.*"). Empty means every counter.
	Report []string
}

// Device is a scenario's block device: `device size=64M sector=512`, with
// optional Rules after the sector (`wbps=20M`, see Rules).
type Device struct {
	// Size is the device size in bytes: a multiple of Sector, at most
	// MaxDeviceSize.
	Size int64
	// Sector is the logical block (sector) size in bytes: 512, 1024, 2048 or
	// 4096. Zero in a Go-built scenario means 512.
	Sector int
	// Rules are the device's speed and throttles (none by default).
	Rules Rules
}

// SectorSize is the device's logical block size, 512 when Sector is zero.
func (d Device) SectorSize() int {
	if d.Sector == 0 {
		return 512
	}
	return d.Sector
}

// Op is one operation of a scenario. The concrete types are Open, Close,
// SetBlockSize, GetBlockSize, Write, Read, Fsync, Fdatasync, DropCaches,
// ReadOnly and BackingFull; String gives the operation's canonical line.
type Op interface {
	fmt.Stringer
	// Verb is the line's first word ("open", "pwrite", ...).
	Verb() string
	// Descriptor is the descriptor name the operation uses, "" for none.
	Descriptor() string
	op()
}

// Mode is how Open opens the device.
type Mode int

// The open modes: O_RDONLY, O_WRONLY, O_RDWR.
const (
	ReadOnlyMode Mode = iota
	WriteOnlyMode
	ReadWriteMode
)

var modeNames = [...]string{"rdonly", "wronly", "rdwr"}

// String is the mode's word in the scenario language.
func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return "Mode(" + strconv.Itoa(int(m)) + ")"
	}
	return modeNames[m]
}

// Open opens the device as descriptor FD: `open a rdwr [excl]`. The runner
// records the block size (BLKBSZGET) right after a successful open.
type Open struct {
	FD   string
	Mode Mode
	// Excl adds O_EXCL: an exclusive open of the block device.
	Excl bool
}

// Close closes descriptor FD: `close a`. The last close of the device is
// the kernel's last release of the block device.
type Close struct{ FD string }

// SetBlockSize is the BLKBSZSET ioctl on FD: `blkbszset a 1024`. Size may be
// any value, including ones the kernel refuses (0, 1536, 128K).
type SetBlockSize struct {
	FD   string
	Size int64
}

// GetBlockSize is the BLKBSZGET ioctl on FD: `blkbszget a`.
type GetBlockSize struct{ FD string }

// Write is Repeat pwrite(2) calls on FD of Len bytes each, the i-th at
// Off + i×Stride, every byte equal to Fill:
// `pwrite a off=0 len=4K repeat=256 stride=4K fill=0xab`.
type Write struct {
	FD  string
	Off int64
	Len int64
	// Repeat is the number of calls; 0 means 1.
	Repeat int
	// Stride is the distance between two calls' offsets; 0 means Len.
	Stride int64
	// Fill is the byte written.
	Fill byte
}

// Read is Repeat pread(2) calls on FD of Len bytes each, the i-th at
// Off + i×Stride: `pread a off=0 len=1M`. The runner summarises the bytes read.
type Read struct {
	FD     string
	Off    int64
	Len    int64
	Repeat int   // number of calls; 0 means 1
	Stride int64 // distance between calls' offsets; 0 means Len
}

// Fsync is fsync(2) on FD: `fsync a`.
type Fsync struct{ FD string }

// Fdatasync is fdatasync(2) on FD: `fdatasync a`.
type Fdatasync struct{ FD string }

// DropCaches drops the device's clean page cache through FD: `dropcaches a`.
// It is device-local: the host runs the BLKFLSBUF ioctl on FD (sync the
// device, then invalidate its clean pages), never /proc/sys/vm/drop_caches.
type DropCaches struct{ FD string }

// ReadOnly is the BLKROSET ioctl on FD: `readonly a on` or `readonly a off`.
type ReadOnly struct {
	FD string
	On bool
}

// BackingFull limits the device's backing store from this line on: with
// Size 0 (`backing full`) it is full, the backing file can no longer grow,
// so a write to a block never written before fails in the backing store;
// with Size set (`backing size=8M`) it holds at most Size bytes, and a
// write that would take it past them fails the same way (at once, when it
// already holds more). Size is a multiple of BackingPageSize.
type BackingFull struct{ Size int64 }

// BackingPageSize is the unit of a backing store's size (`backing
// size=`): the page of the tmpfs file behind the host's loop device, and of
// the model's disk store (blk.BackingPageSize).
const BackingPageSize = 4096

// BoundError is a scenario that a runner refuses for a bound of its own,
// beyond the language's: the host runner's device and I/O bounds
// (bench/host.CheckBounds). It is a refusal, not a failure of the run.
type BoundError struct {
	// Runner is the runner that refuses ("host").
	Runner string
	// What is the bounded quantity ("device size", "pwrite and pread
	// bytes"); Value the scenario's and Bound the runner's.
	What         string
	Value, Bound int64
	// Why says why the runner has the bound, and who takes more.
	Why string
}

// Error names the quantity, both values and why.
func (e *BoundError) Error() string {
	return fmt.Sprintf("%s runner: %s of %s is over its bound of %s (%s)", e.Runner, e.What, FormatSize(e.Value), FormatSize(e.Bound), e.Why)
}

func (Open) op()         {}
func (Close) op()        {}
func (SetBlockSize) op() {}
func (GetBlockSize) op() {}
func (Write) op()        {}
func (Read) op()         {}
func (Fsync) op()        {}
func (Fdatasync) op()    {}
func (DropCaches) op()   {}
func (ReadOnly) op()     {}
func (BackingFull) op()  {}

// Verb is "open".
func (Open) Verb() string { return "open" }

// Verb is "close".
func (Close) Verb() string { return "close" }

// Verb is "blkbszset".
func (SetBlockSize) Verb() string { return "blkbszset" }

// Verb is "blkbszget".
func (GetBlockSize) Verb() string { return "blkbszget" }

// Verb is "pwrite".
func (Write) Verb() string { return "pwrite" }

// Verb is "pread".
func (Read) Verb() string { return "pread" }

// Verb is "fsync".
func (Fsync) Verb() string { return "fsync" }

// Verb is "fdatasync".
func (Fdatasync) Verb() string { return "fdatasync" }

// Verb is "dropcaches".
func (DropCaches) Verb() string { return "dropcaches" }

// Verb is "readonly".
func (ReadOnly) Verb() string { return "readonly" }

// Verb is "backing".
func (BackingFull) Verb() string { return "backing" }

// Descriptor is the descriptor opened.
func (o Open) Descriptor() string { return o.FD }

// Descriptor is the descriptor closed.
func (o Close) Descriptor() string { return o.FD }

// Descriptor is the descriptor of the ioctl.
func (o SetBlockSize) Descriptor() string { return o.FD }

// Descriptor is the descriptor of the ioctl.
func (o GetBlockSize) Descriptor() string { return o.FD }

// Descriptor is the descriptor written.
func (o Write) Descriptor() string { return o.FD }

// Descriptor is the descriptor read.
func (o Read) Descriptor() string { return o.FD }

// Descriptor is the descriptor synced.
func (o Fsync) Descriptor() string { return o.FD }

// Descriptor is the descriptor synced.
func (o Fdatasync) Descriptor() string { return o.FD }

// Descriptor is the descriptor of the ioctl.
func (o DropCaches) Descriptor() string { return o.FD }

// Descriptor is the descriptor of the ioctl.
func (o ReadOnly) Descriptor() string { return o.FD }

// Descriptor is "": the backing store has no descriptor.
func (BackingFull) Descriptor() string { return "" }

// Calls is the number of pwrite calls: Repeat, or 1 when Repeat is 0.
func (o Write) Calls() int { return calls(o.Repeat) }

// Step is the distance between two calls' offsets: Stride, or Len when
// Stride is 0.
func (o Write) Step() int64 { return step(o.Stride, o.Len) }

// Calls is the number of pread calls: Repeat, or 1 when Repeat is 0.
func (o Read) Calls() int { return calls(o.Repeat) }

// Step is the distance between two calls' offsets: Stride, or Len when
// Stride is 0.
func (o Read) Step() int64 { return step(o.Stride, o.Len) }

func calls(repeat int) int {
	if repeat <= 0 {
		return 1
	}
	return repeat
}

func step(stride, length int64) int64 {
	if stride == 0 {
		return length
	}
	return stride
}

// String is the canonical line.
func (o Open) String() string {
	s := "open " + o.FD + " " + o.Mode.String()
	if o.Excl {
		s += " excl"
	}
	return s
}

// String is the canonical line.
func (o Close) String() string { return "close " + o.FD }

// String is the canonical line.
func (o SetBlockSize) String() string { return "blkbszset " + o.FD + " " + FormatSize(o.Size) }

// String is the canonical line.
func (o GetBlockSize) String() string { return "blkbszget " + o.FD }

// String is the canonical line.
func (o Write) String() string {
	s := ioLine("pwrite", o.FD, o.Off, o.Len, o.Repeat, o.Stride)
	if o.Fill != 0 {
		s += fmt.Sprintf(" fill=0x%02x", o.Fill)
	}
	return s
}

// String is the canonical line.
func (o Read) String() string { return ioLine("pread", o.FD, o.Off, o.Len, o.Repeat, o.Stride) }

func ioLine(verb, fd string, off, length int64, repeat int, stride int64) string {
	var b strings.Builder
	b.WriteString(verb + " " + fd + " off=" + FormatSize(off) + " len=" + FormatSize(length))
	if repeat > 1 {
		b.WriteString(" repeat=" + strconv.Itoa(repeat))
	}
	if stride != 0 && stride != length {
		b.WriteString(" stride=" + FormatSize(stride))
	}
	return b.String()
}

// String is the canonical line.
func (o Fsync) String() string { return "fsync " + o.FD }

// String is the canonical line.
func (o Fdatasync) String() string { return "fdatasync " + o.FD }

// String is the canonical line.
func (o DropCaches) String() string { return "dropcaches " + o.FD }

// String is the canonical line.
func (o ReadOnly) String() string {
	if o.On {
		return "readonly " + o.FD + " on"
	}
	return "readonly " + o.FD + " off"
}

// String is the canonical line.
func (o BackingFull) String() string {
	if o.Size != 0 {
		return "backing size=" + FormatSize(o.Size)
	}
	return "backing full"
}

// String is the canonical device line.
func (d Device) String() string {
	return "device size=" + FormatSize(d.Size) + " sector=" + strconv.Itoa(d.SectorSize()) + d.Rules.String()
}

// FormatSize prints n with the largest of the suffixes G, M and K (powers of
// 1024) that divides it exactly: 4096 is "4K", 4608 is "4608", 0 is "0".
func FormatSize(n int64) string {
	if n != 0 {
		for _, u := range []struct {
			suffix string
			shift  uint
		}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
			if n%(1<<u.shift) == 0 {
				return strconv.FormatInt(n>>u.shift, 10) + u.suffix
			}
		}
	}
	return strconv.FormatInt(n, 10)
}

// TotalIO is the number of bytes all pwrite and pread calls move, Len ×
// calls summed over the operations (saturating at MaxInt64).
func (s *Scenario) TotalIO() int64 {
	var total int64
	for _, op := range s.Ops {
		var n int64
		switch o := op.(type) {
		case Write:
			n = mulSat(o.Len, int64(o.Calls()))
		case Read:
			n = mulSat(o.Len, int64(o.Calls()))
		}
		if total > (1<<63-1)-n {
			return 1<<63 - 1
		}
		total += n
	}
	return total
}

func mulSat(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > (1<<63-1)/b {
		return 1<<63 - 1
	}
	return a * b
}
