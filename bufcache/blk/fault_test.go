package blk

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultIO is one bio of a fault test: op on sectors [sector, sector+sectors).
type faultIO struct {
	op      Op
	sector  uint64
	sectors uint64
}

// pattern returns n bytes that differ with seed.
func pattern(seed, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(seed*31 + i*7 + 1)
	}
	return p
}

// runFaultIOs submits ios to f one by one, without a plug, each a fresh bio
// whose write data is pattern(i, …), and keeps oracle up to date with what
// the medium must hold: a failed write changes nothing. It returns each bio's
// error and checks that each completed exactly once, and that every read that
// succeeded returned the oracle's bytes.
func runFaultIOs(t *testing.T, f *FaultyDevice, ios []faultIO, oracle []byte) []error {
	t.Helper()
	errs := make([]error, len(ios))
	for i, io := range ios {
		n := int(io.sectors << SectorShift)
		data := pattern(i, n)
		if io.op == OpRead {
			data = make([]byte, n)
		}
		var b Bio
		b.Reset(io.op, io.sector)
		b.AddVec(data, uint32(n))
		calls := 0
		b.EndIO = func(*Bio) { calls++ }
		f.Submit(&b)
		require.Equal(t, 1, calls, "bio %d completions", i)
		errs[i] = b.Err
		off := io.sector << SectorShift
		switch {
		case b.Err != nil:
		case io.op == OpWrite:
			copy(oracle[off:], data)
		default:
			assert.Equal(t, oracle[off:off+uint64(n)], data, "read %d", i)
		}
	}
	return errs
}

// TestFaultyDeviceRules checks each rule on its own and together: which bios
// fail, with which error and cause, and that the medium keeps its old contents
// where a write failed (checked against a flat byte array, and by reading the
// MemDisk beneath).
func TestFaultyDeviceRules(t *testing.T) {
	w := func(s, n uint64) faultIO { return faultIO{OpWrite, s, n} }
	r := func(s, n uint64) faultIO { return faultIO{OpRead, s, n} }
	tests := []struct {
		name    string
		setup   func(*FaultyDevice) error
		ios     []faultIO
		failed  []int // indices of the bios that fail
		causes  []FaultCause
		sentry  error  // every failure wraps it
		wantStr string // the first failure's message contains it
	}{
		{"nothing fails", func(*FaultyDevice) error { return nil },
			[]faultIO{w(0, 8), r(0, 8), w(8, 1)}, nil, nil, nil, ""},
		{"write range fails overlapping writes only", func(f *FaultyDevice) error { return f.FailSectors(OpWrite, 16, 24) },
			[]faultIO{w(8, 8), w(15, 2), w(23, 1), w(24, 8), r(16, 8)}, []int{1, 2}, []FaultCause{CauseSectors, CauseSectors}, ErrInjected, "write sectors [15, 17) on sda (sectors, write bio 2, seed 5)"},
		{"read range", func(f *FaultyDevice) error { return f.FailSectors(OpRead, 0, 1) },
			[]faultIO{w(0, 8), r(0, 8), r(1, 7)}, []int{1}, []FaultCause{CauseSectors}, ErrInjected, "read sectors [0, 8)"},
		{"third write fails once", func(f *FaultyDevice) error { return f.FailNth(OpWrite, 3) },
			[]faultIO{w(0, 1), r(0, 1), w(1, 1), w(2, 1), w(3, 1)}, []int{3}, []FaultCause{CauseNth}, ErrInjected, "nth, write bio 3"},
		{"nth used up by a range failure", func(f *FaultyDevice) error {
			return errors.Join(f.FailNth(OpRead, 2), f.FailSectors(OpRead, 0, 8))
		}, []faultIO{r(8, 1), r(0, 1), r(8, 1)}, []int{1}, []FaultCause{CauseSectors}, ErrInjected, ""},
		{"rate 1 fails every read", func(f *FaultyDevice) error { return f.FailRate(OpRead, 1) },
			[]faultIO{w(0, 1), r(0, 1), r(4, 4)}, []int{1, 2}, []FaultCause{CauseRandom, CauseRandom}, ErrInjected, "random"},
		{"read-only fails writes, not reads", func(f *FaultyDevice) error { f.SetReadOnly(true); return nil },
			[]faultIO{w(0, 1), r(0, 1)}, []int{0}, []FaultCause{CauseReadOnly}, ErrReadOnly, "write sectors [0, 1) on sda"},
		{"healed", func(f *FaultyDevice) error {
			err := errors.Join(f.FailSectors(OpWrite, 0, 64), f.FailNth(OpWrite, 1), f.FailRate(OpRead, 1))
			f.SetReadOnly(true)
			f.Heal()
			return err
		}, []faultIO{w(0, 8), r(0, 8)}, nil, nil, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			disk, err := NewMemDisk("sda", 64<<SectorShift, 512)
			require.NoError(t, err)
			f, err := NewFaultyDevice(disk, 5)
			require.NoError(t, err)
			require.NoError(t, tc.setup(f))
			oracle := make([]byte, 64<<SectorShift)
			errs := runFaultIOs(t, f, tc.ios, oracle)
			var failed []int
			for i, err := range errs {
				if err != nil {
					failed = append(failed, i)
					assert.ErrorIs(t, err, ErrIO)
					assert.ErrorIs(t, err, tc.sentry)
					if len(failed) == 1 {
						assert.ErrorContains(t, err, tc.wantStr)
					}
				}
			}
			assert.Equal(t, tc.failed, failed)
			faults := f.Faults()
			require.Len(t, faults, len(tc.failed))
			var st FaultStats
			for i, x := range faults {
				io := tc.ios[tc.failed[i]]
				assert.Equal(t, tc.causes[i], x.Cause)
				assert.Equal(t, uint64(tc.failed[i]+1), x.Seq)
				assert.Equal(t, faultIO{x.Op, x.Sector, x.Sectors}, io)
				if x.Op == OpRead {
					st.FailedReads++
				} else {
					st.FailedWrites++
				}
			}
			for _, io := range tc.ios {
				if io.op == OpRead {
					st.Reads++
				} else {
					st.Writes++
				}
			}
			assert.Equal(t, st, f.Stats())
			got := make([]byte, len(oracle))
			_, err = disk.ReadAt(got, 0)
			require.NoError(t, err)
			assert.Empty(t, diffBytes(oracle, got), "the medium")
		})
	}
}

// TestFaultyDeviceConfig checks the rules' argument checks and the
// constructor's, and that a bio CheckBio refuses is failed with its error and
// not counted.
func TestFaultyDeviceConfig(t *testing.T) {
	_, err := NewFaultyDevice(nil, 1)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	disk, err := NewMemDisk("sda", 64<<SectorShift, 4096)
	require.NoError(t, err)
	f, err := NewFaultyDevice(disk, 1)
	require.NoError(t, err)
	assert.Equal(t, "sda", f.Name())
	assert.Equal(t, uint64(64), f.Sectors())
	assert.Equal(t, uint32(4096), f.LogicalBlockSize())
	assert.Equal(t, Device(disk), f.Inner())
	assert.Equal(t, uint64(1), f.Seed())
	for name, err := range map[string]error{
		"op":          f.FailSectors(Op(9), 0, 8),
		"empty range": f.FailSectors(OpRead, 8, 8),
		"past end":    f.FailSectors(OpRead, 0, 65),
		"nth op":      f.FailNth(Op(2), 1),
		"nth zero":    f.FailNth(OpWrite, 0),
		"rate op":     f.FailRate(Op(3), 0.5),
		"rate < 0":    f.FailRate(OpRead, -0.1),
		"rate > 1":    f.FailRate(OpRead, 1.5),
		"rate NaN":    f.FailRate(OpRead, nan()),
	} {
		assert.ErrorIs(t, err, ErrInvalidConfig, name)
	}
	var b Bio
	b.Reset(OpWrite, 1) // not on a 4096-byte block
	b.AddVec(make([]byte, 4096), 4096)
	calls := 0
	b.EndIO = func(*Bio) { calls++ }
	f.Submit(&b)
	assert.Equal(t, 1, calls)
	assert.ErrorIs(t, b.Err, ErrMisaligned)
	assert.Zero(t, f.Stats())
	b.Reset(OpWrite, 0)
	b.AddVec(nil, 4096)
	b.EndIO = func(*Bio) {}
	f.Submit(&b)
	assert.ErrorIs(t, f.FailNth(OpWrite, 1), ErrInvalidConfig, "bio 1 is past")
	assert.Equal(t, "random", CauseRandom.String())
	assert.Equal(t, "cause(9)", FaultCause(9).String())
}

// nan returns a NaN without a constant expression.
func nan() float64 {
	z := 0.0
	return z / z
}

// TestFaultyDeviceRandom checks that random failures depend only on the seed
// and the order of bios — the same seed fails the same bios — and fail about
// the fraction asked for.
func TestFaultyDeviceRandom(t *testing.T) {
	run := func(seed uint64) []Fault {
		disk, err := NewMemDisk("sda", 1<<20, 512)
		require.NoError(t, err)
		f, err := NewFaultyDevice(disk, seed)
		require.NoError(t, err)
		require.NoError(t, f.FailRate(OpWrite, 0.25))
		require.NoError(t, f.FailRate(OpRead, 0.5))
		for i := range 4000 {
			var b Bio
			b.Reset(Op(i%2), uint64(i%2048))
			b.AddVec(nil, 512)
			b.EndIO = func(*Bio) {}
			f.Submit(&b)
		}
		st := f.Stats()
		assert.InDelta(t, 500, st.FailedWrites, 100, "seed %d", seed)
		assert.InDelta(t, 1000, st.FailedReads, 100, "seed %d", seed)
		return f.Faults()
	}
	a, b, c := run(42), run(42), run(43)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
}

// TestFaultyDeviceOverQueue shows what plugging and merging do with a failed
// bio: eight sequential 512-byte writes are plugged over a Queue; the fourth
// fails at once, before the plug is finished, and never reaches the queue, so
// the seven others make two requests — sectors 0-2 and 4-7 — instead of one,
// and sector 3 keeps its old contents. Without a fault the same stream is one
// request.
func TestFaultyDeviceOverQueue(t *testing.T) {
	for _, failNth := range []uint64{0, 4} {
		t.Run(fmt.Sprintf("fail=%d", failNth), func(t *testing.T) {
			q := newQueue(t, "sda", 1<<20, Null{}, DefaultLimits(512, 512))
			q.EnableTrace(8)
			f, err := NewFaultyDevice(q, 1)
			require.NoError(t, err)
			if failNth > 0 {
				require.NoError(t, f.FailNth(OpWrite, failNth))
			}
			c := newCompletions()
			var p Plug
			p.Start()
			for i := range 8 {
				b := c.bio(i, OpWrite, uint64(i))
				b.AddPage(bytes.Repeat([]byte{byte(i + 1)}, 512), 512, 100, uint32(i)*512)
				SubmitBio(&p, f, b)
			}
			require.NoError(t, p.Finish())
			want := []reqShape{{0, 8, 8, 8}}
			if failNth > 0 {
				assert.Equal(t, 3, c.order[0], "the failed bio completes first")
				assert.ErrorIs(t, c.errs[3], ErrInjected)
				want = []reqShape{{0, 3, 3, 3}, {4, 4, 4, 4}}
			}
			assert.Equal(t, want, shapes(q))
			for i := range 8 {
				assert.Equal(t, 1, c.count[i])
				got := make([]byte, 512)
				_, err := q.store.ReadAt(got, int64(i)*512)
				require.NoError(t, err)
				if uint64(i+1) == failNth {
					assert.Equal(t, make([]byte, 512), got, "sector %d keeps its old contents", i)
				} else {
					assert.Equal(t, bytes.Repeat([]byte{byte(i + 1)}, 512), got, "sector %d", i)
				}
			}
		})
	}
}

// FuzzFaultyDevice submits a fuzzed sequence of reads and writes, some
// plugged, to a FaultyDevice over a Queue with fuzzed rules, and checks that
// every bio completes exactly once, that the bios that failed are exactly the
// ones Faults lists, and that the medium holds what the writes that succeeded
// wrote (a flat byte array).
func FuzzFaultyDevice(f *testing.F) {
	f.Add(uint64(1), uint8(3), uint8(10), uint8(20), []byte{0, 1, 2, 1, 5, 9, 0, 30, 3, 1, 2, 2})
	f.Add(uint64(7), uint8(0), uint8(0), uint8(255), []byte{1, 0, 0, 0, 0, 0, 0, 1, 1})
	f.Fuzz(func(t *testing.T, seed uint64, nth, rangeStart, rate uint8, ops []byte) {
		const sectors = 64
		q := newQueue(t, "sda", sectors<<SectorShift, Null{}, DefaultLimits(512, 512))
		fd, err := NewFaultyDevice(q, seed)
		require.NoError(t, err)
		if nth > 0 {
			require.NoError(t, fd.FailNth(OpWrite, uint64(nth)))
		}
		start := uint64(rangeStart) % sectors
		require.NoError(t, fd.FailSectors(Op(rangeStart%2), start, min(start+4, sectors)))
		require.NoError(t, fd.FailRate(OpRead, float64(rate)/512))
		oracle := make([]byte, sectors<<SectorShift)
		type sub struct {
			b     *Bio
			op    Op
			calls int
			data  []byte
		}
		var subs []*sub
		var p Plug
		var plugged [sectors]bool // sectors written by bios waiting in the plug
		finish := func() {
			if p.Active() {
				require.NoError(t, p.Finish())
			}
			clear(plugged[:])
		}
		for i := 0; i+2 < len(ops); i += 3 {
			op := Op(ops[i] % 2)
			s := uint64(ops[i+1]) % sectors
			n := 1 + uint64(ops[i+2])%min(8, sectors-s)
			// Reads see only what was written, and two plugged writes of one
			// sector may reach the disk in either order (a back merge into an
			// older request): finish the plug first.
			if op == OpRead || slices.Contains(plugged[s:s+n], true) {
				finish()
			}
			if ops[i]&2 != 0 && !p.Active() {
				p.Start()
			}
			if op == OpWrite && p.Active() {
				for j := s; j < s+n; j++ {
					plugged[j] = true
				}
			}
			x := &sub{op: op, data: pattern(i, int(n<<SectorShift))}
			if op == OpRead {
				x.data = make([]byte, n<<SectorShift)
			}
			x.b = &Bio{}
			x.b.Reset(op, s)
			x.b.AddVec(x.data, uint32(len(x.data)))
			x.b.EndIO = func(*Bio) { x.calls++ }
			subs = append(subs, x)
			SubmitBio(&p, fd, x.b)
			if ops[i]&4 != 0 {
				finish()
			}
		}
		finish()
		failedSeq := map[uint64]bool{}
		for _, x := range fd.Faults() {
			failedSeq[x.Seq] = true
		}
		for i, x := range subs {
			require.Equal(t, 1, x.calls, "bio %d", i)
			require.Equal(t, failedSeq[uint64(i+1)], x.b.Err != nil, "bio %d: %v", i, x.b.Err)
			if x.op == OpWrite && x.b.Err == nil {
				copy(oracle[x.b.Sector<<SectorShift:], x.data)
			}
		}
		got := make([]byte, len(oracle))
		_, err = q.store.ReadAt(got, 0)
		require.NoError(t, err)
		require.Empty(t, diffBytes(oracle, got))
	})
}

// diffBytes returns "" if want and got are equal, else where they first
// differ: a short message in place of a dump of two large arrays.
func diffBytes(want, got []byte) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d bytes, want %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Sprintf("byte %d (sector %d) is %#x, want %#x", i, i>>SectorShift, got[i], want[i])
		}
	}
	return ""
}
