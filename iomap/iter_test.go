package iomap

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache"
)

// step is one round of a scripted iteration: what Begin returns, what the
// caller processes, what End returns.
type step struct {
	m        IOMap
	beginErr error
	n        uint64
	perr     error
	endErr   error
}

// call records an Ops call: Begin(pos, length) or End(pos, length, written).
type call struct{ pos, length, written uint64 }

// scriptOps plays a script of steps and records the calls.
type scriptOps struct {
	steps        []step
	begins, ends []call
	nBegin       int
}

func (s *scriptOps) Begin(_ *bufcache.CPU, _ *bufcache.BlockDevice, pos, length uint64, flags IterFlags) (IOMap, error) {
	if flags != IterWrite {
		return IOMap{}, errors.New("unexpected flags")
	}
	st := s.steps[s.nBegin]
	s.nBegin++
	s.begins = append(s.begins, call{pos, length, 0})
	return st.m, st.beginErr
}

func (s *scriptOps) End(_ *bufcache.CPU, _ *bufcache.BlockDevice, pos, length, written uint64, _ IterFlags, _ IOMap) error {
	s.ends = append(s.ends, call{pos, length, written})
	return s.steps[s.nBegin-1].endErr
}

func TestIter(t *testing.T) {
	var (
		errWork  = errors.New("work failed")
		errBegin = errors.New("begin failed")
		errEnd   = errors.New("end failed")
		all      = IOMap{Offset: 0, Length: 1 << 20, Type: Mapped}
		ext      = func(off uint64) IOMap { return IOMap{Offset: off, Length: 4096, Addr: off, Type: Mapped} }
	)
	for _, tc := range []struct {
		name       string
		pos, len   uint64
		steps      []step
		wantBegins []call
		wantEnds   []call
		wantPos    uint64
		wantErr    error
		warnings   uint64
	}{
		{name: "one mapping serves the whole range", len: 10000,
			steps:      []step{{m: all, n: 10000}},
			wantBegins: []call{{0, 10000, 0}}, wantEnds: []call{{0, 10000, 10000}}, wantPos: 10000},
		{name: "advance by what was processed, mapping by mapping", len: 10000,
			steps:      []step{{m: ext(0), n: 4096}, {m: ext(4096), n: 4096}, {m: ext(8192), n: 1808}},
			wantBegins: []call{{0, 10000, 0}, {4096, 5904, 0}, {8192, 1808, 0}},
			wantEnds:   []call{{0, 4096, 4096}, {4096, 4096, 4096}, {8192, 1808, 1808}}, wantPos: 10000},
		{name: "partial progress asks for the rest", pos: 100, len: 5000,
			steps:      []step{{m: all, n: 300}, {m: all, n: 4700}},
			wantBegins: []call{{100, 5000, 0}, {400, 4700, 0}},
			wantEnds:   []call{{100, 5000, 300}, {400, 4700, 4700}}, wantPos: 5100},
		{name: "no progress stops without error", len: 10000,
			steps:      []step{{m: ext(0), n: 4096}, {m: ext(4096), n: 0}},
			wantBegins: []call{{0, 10000, 0}, {4096, 5904, 0}},
			wantEnds:   []call{{0, 4096, 4096}, {4096, 4096, 0}}, wantPos: 4096},
		{name: "a processing error ends the iteration", len: 10000,
			steps:      []step{{m: ext(0), n: 4096}, {m: ext(4096), perr: errWork}},
			wantBegins: []call{{0, 10000, 0}, {4096, 5904, 0}},
			wantEnds:   []call{{0, 4096, 4096}, {4096, 4096, 0}}, wantPos: 4096, wantErr: errWork},
		{name: "progress then error reports the progress", len: 8192,
			steps:      []step{{m: ext(0), n: 100, perr: errWork}, {m: ext(0), n: 3996}, {m: ext(4096), n: 4096}},
			wantBegins: []call{{0, 8192, 0}, {100, 8092, 0}, {4096, 4096, 0}},
			wantEnds:   []call{{0, 4096, 100}, {100, 3996, 3996}, {4096, 4096, 4096}}, wantPos: 8192},
		{name: "a Begin error ends the iteration without End", len: 10000,
			steps:      []step{{m: ext(0), n: 4096}, {beginErr: errBegin}},
			wantBegins: []call{{0, 10000, 0}, {4096, 5904, 0}},
			wantEnds:   []call{{0, 4096, 4096}}, wantPos: 4096, wantErr: errBegin},
		{name: "an End error with nothing processed propagates", len: 10000,
			steps:      []step{{m: ext(0), n: 0, endErr: errEnd}},
			wantBegins: []call{{0, 10000, 0}}, wantEnds: []call{{0, 4096, 0}}, wantErr: errEnd},
		{name: "an End error after progress is ignored", len: 8192,
			steps:      []step{{m: ext(0), n: 4096, endErr: errEnd}, {m: ext(4096), n: 4096}},
			wantBegins: []call{{0, 8192, 0}, {4096, 4096, 0}},
			wantEnds:   []call{{0, 4096, 4096}, {4096, 4096, 4096}}, wantPos: 8192},
		{name: "the processing error wins over End's", len: 10000,
			steps:      []step{{m: ext(0), perr: errWork, endErr: errEnd}},
			wantBegins: []call{{0, 10000, 0}}, wantEnds: []call{{0, 4096, 0}}, wantErr: errWork},
		{name: "more processed than offered is a WARN and -EIO", len: 10000,
			steps:      []step{{m: ext(0), n: 5000}},
			wantBegins: []call{{0, 10000, 0}}, wantEnds: []call{{0, 4096, 5000}}, wantErr: bufcache.ErrIO, warnings: 1},
		{name: "an empty mapping is invalid", len: 10000,
			steps:      []step{{m: IOMap{Type: Mapped}}},
			wantBegins: []call{{0, 10000, 0}}, wantErr: ErrInvalidMapping},
		{name: "a mapping past pos is a WARN, and still processed", len: 4096,
			steps:      []step{{m: ext(8192), n: 4096}},
			wantBegins: []call{{0, 4096, 0}}, wantEnds: []call{{0, 4096, 4096}}, wantPos: 4096, warnings: 1},
		{name: "a mapping ending at pos is a WARN and offers everything", pos: 4096, len: 100,
			steps:      []step{{m: ext(0), n: 0}},
			wantBegins: []call{{4096, 100, 0}}, wantEnds: []call{{4096, 0, 0}}, wantPos: 4096, warnings: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := bufcache.NewMachine(bufcache.Config{})
			require.NoError(t, err)
			cpu := m.CPU(0)
			ops := &scriptOps{steps: tc.steps}
			it := NewIter(cpu, nil, ops, tc.pos, tc.len, IterWrite)
			rounds := 0
			for it.Next() {
				require.Less(t, rounds, len(tc.steps), "more rounds than scripted")
				assert.Equal(t, tc.steps[rounds].m, it.Map())
				st := tc.steps[rounds]
				it.SetProcessed(st.n, st.perr)
				rounds++
			}
			assert.False(t, it.Next(), "a finished iteration stays finished")
			assert.Equal(t, tc.wantBegins, ops.begins, "Begin calls (pos, length)")
			assert.Equal(t, tc.wantEnds, ops.ends, "End calls (pos, length, written)")
			assert.Equal(t, tc.wantPos, it.Pos())
			assert.Equal(t, tc.pos+tc.len-tc.wantPos, it.Len())
			if tc.wantErr != nil {
				assert.ErrorIs(t, it.Err(), tc.wantErr)
			} else {
				assert.NoError(t, it.Err())
			}
			ev := cpu.Events()
			assert.Equal(t, uint64(len(tc.wantBegins)), ev[bufcache.EvIomapBegin])
			assert.Equal(t, tc.warnings, ev[bufcache.EvWarning])
		})
	}
}

func TestIterLength(t *testing.T) {
	for _, tc := range []struct {
		name          string
		pos, len      uint64
		m             IOMap
		want          uint64
		beyondMapping bool
	}{
		{"bounded by the range", 100, 50, IOMap{Offset: 0, Length: 4096}, 50, false},
		{"bounded by the mapping", 100, 5000, IOMap{Offset: 0, Length: 4096}, 3996, false},
		{"mapping ends at pos", 4096, 50, IOMap{Offset: 0, Length: 4096}, 0, false},
		{"mapping ends before pos: unsigned, so the whole range", 5000, 50, IOMap{Offset: 0, Length: 4096}, 50, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it := Iter{pos: tc.pos, len: tc.len, iomap: tc.m}
			assert.Equal(t, tc.want, it.Length())
			assert.Equal(t, tc.beyondMapping, tc.pos+it.Length() > tc.m.Offset+tc.m.Length)
		})
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Mapped.String(), "mapped"},
		{Inline.String(), "inline"},
		{Type(9).String(), "type(9)"},
		{Flags(0).String(), "0"},
		{(FNew | FBufferHead).String(), "new|buffer_head"},
		{(FDirty | Flags(1<<12)).String(), "dirty|0x1000"},
		{IOMap{Offset: 4096, Length: 8192, Addr: 4096, Type: Mapped, Flags: FBufferHead}.String(), "mapped [4096, +8192) at 4096 flags=buffer_head"},
		{PathIomap.String(), "iomap"},
		{EOFRaw.String(), "raw"},
	} {
		assert.Equal(t, tc.want, tc.got)
	}
}
