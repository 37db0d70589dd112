package web

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/lru"
)

// LRURequest is the bh-LRU view's form: a sequence of calls on CPU 0 of a
// machine of Kernel with a 1 GiB loop device of 512-byte logical blocks
// (Tosatti's /dev/loop0), one call a line or separated by ";":
//
//	bread B        __bread(bdev, B, block size): getblk, which looks in the LRU, and a read if needed
//	bread B-C      the same for each block from B to C
//	find B [SIZE]  __find_get_block(bdev, B, SIZE), SIZE the block size when not given
//	invalidate     invalidate_bh_lrus: every CPU's LRU emptied
//
// Each call's buffer is released (brelse) right after it, as Tosatti's
// module does.
type LRURequest struct {
	// Kernel is a kernel preset ("": 6.4, the kernel of Tosatti's test).
	Kernel string `json:"kernel"`
	Ops    string `json:"ops"`
}

// LRUSlot is one occupied slot of the LRU: the block and size of the
// buffer it holds.
type LRUSlot struct {
	Block uint64 `json:"block"`
	Size  uint32 `json:"size"`
}

// LRUStep is one call of the sequence: what it was, its outcome, the
// events it counted (bufcache.Counters' LRU events) and CPU 0's LRU after
// it, most recent first.
type LRUStep struct {
	Call    string    `json:"call"`
	Outcome string    `json:"outcome"`
	Hit     bool      `json:"hit"`
	Scanned uint64    `json:"scanned"`
	Steps   uint64    `json:"steps"`
	Evicted uint64    `json:"evicted"`
	Slots   []LRUSlot `json:"slots"`
}

// LRUResponse is the sequence's steps, the LRU's size and the device's
// block size.
type LRUResponse struct {
	Kernel    string    `json:"kernel"`
	Size      int       `json:"size"`
	BlockSize uint32    `json:"blockSize"`
	Steps     []LRUStep `json:"steps"`
}

// DefaultLRUOps is the view's first sequence: a read that installs its
// buffer, a hit, Tosatti's case of a size that is not the block size
// (which never hits, however often it is asked), fifteen more buffers
// that fill the 16 slots, a seventeenth that pushes the first out, a
// lookup deep in the LRU (the swap cascade brings it to the front) and
// an invalidation.
const DefaultLRUOps = "bread 1; find 1; find 1 512; find 1 512; bread 2-16; bread 17; find 1; find 9; invalidate; find 9"

// maxLRUCalls bounds a sequence.
const maxLRUCalls = 1000

// lruCall is one parsed call.
type lruCall struct {
	verb  string
	block uint64
	size  uint32
}

// parseLRUOps parses a sequence against block size bs. Errors name the
// call that does not parse.
func parseLRUOps(ops string, bs uint32) ([]lruCall, error) {
	var calls []lruCall
	for _, line := range strings.FieldsFunc(ops, func(r rune) bool { return r == ';' || r == '\n' }) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := fmt.Errorf("web: LRURequest.Ops: %q: want bread B, bread B-C, find B [SIZE] or invalidate", strings.TrimSpace(line))
		switch {
		case f[0] == "invalidate" && len(f) == 1:
			calls = append(calls, lruCall{verb: f[0]})
		case f[0] == "bread" && len(f) == 2:
			lo, hi, ok := strings.Cut(f[1], "-")
			a, err1 := strconv.ParseUint(lo, 10, 64)
			b, err2 := a, error(nil)
			if ok {
				b, err2 = strconv.ParseUint(hi, 10, 64)
			}
			if err1 != nil || err2 != nil || b < a || b-a >= maxLRUCalls {
				return nil, bad
			}
			for blk := a; blk <= b; blk++ {
				calls = append(calls, lruCall{verb: "bread", block: blk, size: bs})
			}
		case f[0] == "find" && (len(f) == 2 || len(f) == 3):
			blk, err := strconv.ParseUint(f[1], 10, 64)
			size := uint64(bs)
			if err == nil && len(f) == 3 {
				size, err = strconv.ParseUint(f[2], 10, 32)
			}
			if err != nil {
				return nil, bad
			}
			calls = append(calls, lruCall{verb: "find", block: blk, size: uint32(size)})
		default:
			return nil, bad
		}
		if len(calls) > maxLRUCalls {
			return nil, fmt.Errorf("web: LRURequest.Ops: more than %d calls", maxLRUCalls)
		}
	}
	if len(calls) == 0 {
		return nil, errors.New("web: LRURequest.Ops: no call")
	}
	return calls, nil
}

// LRU runs the view's sequence and returns a step per call. Errors: an
// unknown kernel, a kernel without the LRU (6.4-nolru), a sequence that
// does not parse, a read that fails (a block past the device's end).
func LRU(req LRURequest) (*LRUResponse, error) {
	name := req.Kernel
	if name == "" {
		name = "6.4"
	}
	k, err := engine.KernelByName(name)
	if err != nil {
		return nil, err
	}
	m, err := engine.Build(engine.MachineSpec{Kernel: &k, Config: bufcache.Config{CPUs: 1, OneGoroutine: true},
		Disk: engine.DiskSpec{Name: "loop0", Size: 1 << 30, Logical: 512}})
	if err != nil {
		return nil, err
	}
	if k.LRU == bufcache.LRURemoved {
		return nil, fmt.Errorf("web: kernel %s has no bh LRU (__find_get_block is __find_get_block_slow)", k.Name)
	}
	bs := m.Dev.BlockSize()
	calls, err := parseLRUOps(req.Ops, bs)
	if err != nil {
		return nil, err
	}
	out := &LRUResponse{Kernel: k.Name, Size: cmp.Or(k.LRUSize, lru.DefaultSize), BlockSize: bs}
	cpu := m.CPU(0)
	var slots []LRUSlot
	for _, c := range calls {
		before := cpu.Events()
		s, err := lruStep(m, cpu, c)
		if err != nil {
			return nil, err
		}
		ev := cpu.Events().Sub(before)
		s.Hit = ev[bufcache.EvLRUHit] > 0
		s.Scanned, s.Steps, s.Evicted = ev[bufcache.EvLRUSlot], ev[bufcache.EvLRUStep], ev[bufcache.EvLRUEvict]
		had := slices.Contains(slots, LRUSlot{Block: c.block, Size: bs})
		s.Outcome = lruOutcome(c, s, ev, bs, had)
		for _, bh := range m.LRUEntries(0) {
			s.Slots = append(s.Slots, LRUSlot{Block: bh.BlockNr(), Size: bh.Size()})
		}
		slots = s.Slots
		out.Steps = append(out.Steps, s)
	}
	return out, nil
}

// lruStep makes call c on cpu and releases the buffer it got.
func lruStep(m engine.Machine, cpu *bufcache.CPU, c lruCall) (LRUStep, error) {
	var bh *bufcache.BufferHead
	var err error
	var s LRUStep
	switch c.verb {
	case "invalidate":
		s.Call = "invalidate_bh_lrus()"
		m.InvalidateBhLRUs(cpu)
	case "bread":
		s.Call = fmt.Sprintf("__bread(bdev, %d, %d)", c.block, c.size)
		if bh, err = m.Dev.Bread(cpu, c.block, c.size); err != nil {
			return s, fmt.Errorf("web: %s: %w", s.Call, err)
		}
	case "find":
		s.Call = fmt.Sprintf("__find_get_block(bdev, %d, %d)", c.block, c.size)
		bh = m.Dev.FindGetBlock(cpu, c.block, c.size)
	}
	if bh != nil {
		bufcache.Brelse(cpu, bh)
	}
	return s, nil
}

// lruOutcome says in words what call c did, from the events it counted;
// had says whether its block's buffer was in the LRU before.
func lruOutcome(c lruCall, s LRUStep, ev bufcache.Counters, bs uint32, had bool) string {
	lookups := ev[bufcache.EvLRULookup]
	switch {
	case c.verb == "invalidate":
		return "every slot emptied (each buffer's reference dropped)"
	case s.Hit:
		return fmt.Sprintf("hit in slot %d: the buffer moves to the front", s.Scanned-1)
	}
	why := fmt.Sprintf("miss: %d lookup(s) scanned %d slots", lookups, s.Scanned)
	if c.size != bs {
		why = fmt.Sprintf("miss: the LRU compares the size asked, %d, with the buffers' %d (Tosatti's case: it never hits)", c.size, bs)
	}
	switch {
	case ev[bufcache.EvLRUInstall] == 0:
		return why + "; the slow path finds no buffer, nothing is installed"
	case had:
		return why + fmt.Sprintf("; the slow path finds the buffer, already in the LRU: the cascade moves it to the front in %d step(s)", s.Steps)
	case s.Evicted > 0:
		return why + fmt.Sprintf("; installed at the front, the swap cascade visits all %d slots and pushes the last slot's buffer out", s.Steps)
	}
	return why + fmt.Sprintf("; installed at the front, the swap cascade visits all %d slots", s.Steps)
}
