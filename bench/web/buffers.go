package web

import (
	"fmt"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/iomap"
)

// BuffersRequest is the buffers view's form: a write(2) of Length bytes
// at Offset of a block device of 1 GiB under Kernel at BlockSize, then
// fsync(2), which writes the folio back.
type BuffersRequest struct {
	// Kernel is a kernel preset ("": 5.10.10, the Helios4 thread's,
	// whose block-device writes go through buffer heads).
	Kernel string `json:"kernel"`
	// BlockSize is the device's block size: 512 to 4096 (a disk of that
	// logical block size), or 8192 to 65536 (set_blocksize after the
	// open; 6.18 only). 0 means 512.
	BlockSize uint32 `json:"blockSize"`
	// Offset and Length are the write's, within the first folio: 0 and 0
	// mean the whole first page.
	Offset uint64 `json:"offset"`
	Length uint64 `json:"length"`
}

// BufferView is one buffer_head of the folio's ring: its block
// (b_blocknr; -1 while unmapped), its offset in the folio and size, and
// its state bits, as names and as the step mode's letters (U uptodate,
// D dirty, M mapped, then L locked, W async write, R async read).
type BufferView struct {
	Block   int64    `json:"block"`
	Offset  uint32   `json:"offset"`
	Size    uint32   `json:"size"`
	State   []string `json:"state"`
	Letters string   `json:"letters"`
}

// FolioView is the folio at the start of the device: whether it is in
// the page cache, its pages, its flags and its ring of buffers.
type FolioView struct {
	Cached  bool         `json:"cached"`
	Pages   uint64       `json:"pages"`
	Flags   []string     `json:"flags"`
	Buffers []BufferView `json:"buffers"`
}

// BioView is a bio the block layer queued (block_bio_queue): its
// direction, first sector and sectors, and the request it joined (an
// index into BufferFrame.Requests; -1 before it joined one).
type BioView struct {
	Op      string `json:"op"`
	Sector  uint64 `json:"sector"`
	Sectors uint64 `json:"sectors"`
	Request int    `json:"request"`
}

// RequestView is a request the plug built from bios: its range, the
// bios it carries, and whether the driver issued and completed it.
type RequestView struct {
	Op        string `json:"op"`
	Sector    uint64 `json:"sector"`
	Sectors   uint64 `json:"sectors"`
	Bios      int    `json:"bios"`
	Issued    bool   `json:"issued"`
	Completed bool   `json:"completed"`
}

// BufferFrame is the folio, its buffers and the block layer's bios and
// requests at one event: a tracepoint of the page cache or the block
// layer, or the end of a system call. Phase is "open", "write", "fsync"
// or "done".
type BufferFrame struct {
	Phase    string        `json:"phase"`
	Event    string        `json:"event"`
	Note     string        `json:"note"`
	Folio    FolioView     `json:"folio"`
	Bios     []BioView     `json:"bios"`
	Requests []RequestView `json:"requests"`
}

// BuffersResponse is the frames of the write and its writeback, and the
// device the model opened.
type BuffersResponse struct {
	Kernel    string        `json:"kernel"`
	BlockSize uint32        `json:"blockSize"`
	Frames    []BufferFrame `json:"frames"`
}

// bufferTracer takes a frame at each page-cache and block-layer event of
// the run. The model calls it synchronously on the one goroutine that
// drives the machine (bufcache.Config.OneGoroutine), so that the folio
// may be looked at while the event is reported.
type bufferTracer struct {
	dev    *bufcache.BlockDevice
	phase  string
	frames []BufferFrame
	bios   []BioView
	reqs   []RequestView
}

// Trace takes a frame at a page-cache event (bufcache.Tracer).
func (t *bufferTracer) Trace(e bufcache.TraceEvent) {
	note := map[bufcache.TraceKind]string{
		bufcache.TraceFolioAdd:    "a folio of order %[2]d enters the page cache at index %[1]d",
		bufcache.TraceBufferDirty: "mark_buffer_dirty on the buffer of block %[1]d (the tracepoint fires first: the next frame shows the bit)",
		bufcache.TraceFolioDirty:  "the folio at index %[1]d goes from clean to dirty",
		bufcache.TraceFolioRemove: "the folio at index %[1]d leaves the page cache",
	}[e.Kind]
	if note == "" {
		note = e.Kind.String()
	}
	t.frame(e.Kind.String(), fmt.Sprintf(note, e.Index, e.Order))
}

// block takes a frame at a block-layer event (blk.Tracer), keeping the
// bios and the requests they make.
func (t *bufferTracer) block(e blk.TraceEvent) {
	op := map[blk.Op]string{blk.OpRead: "read", blk.OpWrite: "write", blk.OpFlush: "flush"}[e.Op]
	sectors := e.Bytes >> blk.SectorShift
	var note string
	switch e.Kind {
	case blk.TraceBioQueue:
		t.bios = append(t.bios, BioView{Op: op, Sector: e.Sector, Sectors: sectors, Request: -1})
		note = fmt.Sprintf("submit_bio: a %s bio of sectors %d+%d, one buffer's", op, e.Sector, sectors)
	case blk.TraceGetRq:
		t.reqs = append(t.reqs, RequestView{Op: op, Sector: e.Sector, Sectors: sectors, Bios: 1})
		t.join(len(t.reqs) - 1)
		note = fmt.Sprintf("a new request for the bio at sector %d", e.Sector)
	case blk.TraceBioBackmerge, blk.TraceBioFrontmerge:
		for i := range t.reqs {
			r := &t.reqs[i]
			if r.Issued || r.Op != op || (r.Sector+r.Sectors != e.Sector && e.Sector+sectors != r.Sector) {
				continue
			}
			r.Sector, r.Sectors, r.Bios = min(r.Sector, e.Sector), r.Sectors+sectors, r.Bios+1
			t.join(i)
			note = fmt.Sprintf("the plug merges the bio at sector %d into request %d (%d bios)", e.Sector, i+1, r.Bios)
			break
		}
	case blk.TraceRqIssue, blk.TraceRqComplete:
		for i := range t.reqs {
			if r := &t.reqs[i]; r.Sector == e.Sector && r.Op == op {
				if e.Kind == blk.TraceRqIssue {
					r.Issued = true
					note = fmt.Sprintf("request %d goes to the disk: %d sectors from %d, %d bios", i+1, r.Sectors, r.Sector, r.Bios)
				} else {
					r.Completed = true
					note = fmt.Sprintf("the disk completes request %d; its bios end next", i+1)
				}
			}
		}
	case blk.TracePlug:
		note = "blk_start_plug's plug takes its first request"
	case blk.TraceUnplug:
		note = fmt.Sprintf("the plug is flushed: %d request(s) to the queue", e.Count)
	}
	if note == "" {
		note = e.Kind.String()
	}
	t.frame(e.Kind.String(), note)
}

// join makes the last bio without a request part of request i.
func (t *bufferTracer) join(i int) {
	for j := len(t.bios) - 1; j >= 0; j-- {
		if t.bios[j].Request < 0 {
			t.bios[j].Request = i
			return
		}
	}
}

// frame records the state now.
func (t *bufferTracer) frame(event, note string) {
	t.frames = append(t.frames, BufferFrame{Phase: t.phase, Event: event, Note: note, Folio: folioView(t.dev),
		Bios: append([]BioView(nil), t.bios...), Requests: append([]RequestView(nil), t.reqs...)})
}

// folioView is the device's first folio as it is now.
func folioView(d *bufcache.BlockDevice) FolioView {
	f := d.PeekFolio(0)
	if f == nil {
		return FolioView{}
	}
	v := FolioView{Cached: true, Pages: f.NrPages()}
	for _, x := range []struct {
		f    bufcache.FolioFlag
		name string
	}{{bufcache.FolioLocked, "locked"}, {bufcache.FolioUptodate, "uptodate"}, {bufcache.FolioDirty, "dirty"},
		{bufcache.FolioWriteback, "writeback"}, {bufcache.FolioPrivate, "private"}} {
		if f.Has(x.f) {
			v.Flags = append(v.Flags, x.name)
		}
	}
	head := f.Buffers()
	for bh := head; bh != nil; {
		v.Buffers = append(v.Buffers, bufferView(bh))
		if bh = bh.Next(); bh == head || len(v.Buffers) == maxRing {
			break
		}
	}
	return v
}

// maxRing bounds the buffers a frame shows (a 4 KiB page of 512-byte
// blocks has 8; a 64 KiB folio of them would have 128).
const maxRing = 128

// bhBits are the state bits the view shows, with their letters.
var bhBits = []struct {
	s      bufcache.BHState
	name   string
	letter byte
}{{bufcache.BHUptodate, "uptodate", 'U'}, {bufcache.BHDirty, "dirty", 'D'}, {bufcache.BHMapped, "mapped", 'M'},
	{bufcache.BHLock, "locked", 'L'}, {bufcache.BHAsyncWrite, "async_write", 'W'}, {bufcache.BHAsyncRead, "async_read", 'R'}}

// bufferView is bh as the view shows it.
func bufferView(bh *bufcache.BufferHead) BufferView {
	v := BufferView{Block: -1, Offset: bh.Offset(), Size: bh.Size()}
	if bh.Has(bufcache.BHMapped) {
		v.Block = int64(bh.BlockNr())
	}
	letters := []byte("---")
	for i, b := range bhBits {
		if !bh.Has(b.s) {
			continue
		}
		v.State = append(v.State, b.name)
		if i < 3 {
			letters[i] = b.letter
		} else {
			letters = append(letters, b.letter)
		}
	}
	v.Letters = string(letters)
	return v
}

// buffersDevice is the size of the view's device.
const buffersDevice = 1 << 30

// Buffers runs the view's write(2) and fsync(2) on a one-CPU machine of the
// request's kernel and returns a frame at every event. Errors: an unknown
// kernel, a block size the kernel refuses, a write outside the first
// folio, a failed write or sync.
func Buffers(req BuffersRequest) (*BuffersResponse, error) {
	name := req.Kernel
	if name == "" {
		name = "5.10.10"
	}
	k, err := engine.KernelByName(name)
	if err != nil {
		return nil, err
	}
	size := max(req.BlockSize, 512)
	logical := min(size, 4096)
	store, err := blk.NewMemDisk("sda", buffersDevice, logical)
	if err != nil {
		return nil, err
	}
	lim := blk.DefaultLimits(logical, 4096)
	lim.Version = k.Block
	q, err := blk.NewQueue("sda", store, blk.Null{}, lim)
	if err != nil {
		return nil, err
	}
	// A disk of the block size's logical blocks under the logical policy,
	// as bhsim sweep --blocksize has it: the grow policy would hide it.
	k.InitBlocksize = blocksize.PolicyLogical
	m, err := engine.Build(engine.MachineSpec{Kernel: &k, Config: bufcache.Config{CPUs: 1, OneGoroutine: true}, Disk: engine.DiskSpec{Device: q}})
	if err != nil {
		return nil, err
	}
	return runBuffers(m, q, k, size, req)
}

// runBuffers runs the view's system calls on machine m, whose device is
// queue q's, under kernel k, with frames from both tracers.
func runBuffers(m engine.Machine, q *blk.Queue, k engine.Kernel, size uint32, req BuffersRequest) (*BuffersResponse, error) {
	cpu := m.CPU(0)
	t := &bufferTracer{dev: m.Dev, phase: "open"}
	f, err := m.Dev.Open(cpu, bufcache.OWrOnly)
	if err != nil {
		return nil, err
	}
	if size > 4096 {
		if err := m.Dev.SetBlocksize(cpu, size); err != nil {
			return nil, fmt.Errorf("web: kernel %s: %w", k.Name, err)
		}
	}
	off, n := req.Offset, req.Length
	if n == 0 {
		off, n = 0, uint64(m.PageSize())
	}
	folio := max(uint64(m.Dev.BlockSize()), uint64(m.PageSize()))
	if off+n > folio || off+n < off {
		return nil, fmt.Errorf("web: BuffersRequest: a write of %d bytes at %d leaves the first folio (%d bytes)", n, off, folio)
	}
	m.Dev.SetTracer(t)
	q.SetTracer(blk.TraceFunc(t.block))
	t.frame("open", fmt.Sprintf("open(2) of the device: block size %d, the folio not yet cached", m.Dev.BlockSize()))
	t.phase = "write"
	buf := bufcache.NewUserBuf(make([]byte, n), 0, m.PageSize())
	it, err := buf.Iter(0, n)
	if err != nil {
		return nil, err
	}
	if _, err := iomap.BlkdevWrite(cpu, m.Dev, off, it, k.Write); err != nil {
		return nil, err
	}
	t.frame("write returns", fmt.Sprintf("write(2) of %d bytes at %d returns: the data is in the page cache, dirty", n, off))
	t.phase, t.bios, t.reqs = "fsync", nil, nil
	if err := f.Fsync(cpu); err != nil {
		return nil, err
	}
	t.phase = "done"
	t.frame("fsync returns", "fsync(2) returns: every bio has ended, the buffers are clean and unlocked")
	return &BuffersResponse{Kernel: k.Name, BlockSize: m.Dev.BlockSize(), Frames: t.frames}, nil
}
