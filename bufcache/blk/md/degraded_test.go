package md

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestRecoverData checks the raid6 recovery arithmetic against stripes whose
// P and Q genSyndrome computed: every pattern of up to two lost members (data
// units, P, Q) gives back the lost data units exactly, and three lost, or two
// data units with P or Q gone, are refused without touching anything.
func TestRecoverData(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for nd := 2; nd <= 6; nd++ {
		data := make([][]byte, nd)
		for k := range data {
			data[k] = fill(rng, 64)
		}
		p, q := make([]byte, 64), make([]byte, 64)
		genSyndrome(p, q, data)
		// Members 0..nd-1 are the data units, nd is P, nd+1 is Q.
		for lostA := 0; lostA < nd+2; lostA++ {
			for lostB := lostA; lostB < nd+2; lostB++ {
				lost := []int{lostA}
				if lostB != lostA {
					lost = append(lost, lostB)
				}
				t.Run(fmt.Sprintf("data=%d/lost=%v", nd, lost), func(t *testing.T) {
					got := make([][]byte, nd)
					var miss []int
					for k := range got {
						got[k] = slices.Clone(data[k])
						if slices.Contains(lost, k) {
							miss = append(miss, k)
							clear(got[k]) // the lost unit's contents are unknown
						}
					}
					gp, gq := p, q
					if slices.Contains(lost, nd) {
						gp = nil
					}
					if slices.Contains(lost, nd+1) {
						gq = nil
					}
					require.True(t, recoverData(got, gp, gq, miss))
					assert.Equal(t, data, got)
				})
			}
		}
		t.Run(fmt.Sprintf("data=%d/unsolvable", nd), func(t *testing.T) {
			got := [][]byte{make([]byte, 64), make([]byte, 64)}
			got = append(got, data[2:]...)
			before := slices.Clone(got[0])
			assert.False(t, recoverData(got, nil, q, []int{0, 1}), "two data units and P")
			assert.False(t, recoverData(got, p, nil, []int{0, 1}), "two data units and Q")
			assert.False(t, recoverData(got, nil, nil, []int{0}), "a data unit, P and Q")
			if nd >= 3 {
				assert.False(t, recoverData(got, p, q, []int{0, 1, 2}), "three data units")
			}
			assert.Equal(t, before, got[0])
		})
	}
}

// TestSetFaulty checks which members each level lets fail: raid0 none, raid10
// all but the last copy of any chunk (enough()), raid6 any.
func TestSetFaulty(t *testing.T) {
	tests := []struct {
		level   Level
		members int
		fail    []int
		want    []error // per fail
		failed  []int
	}{
		{Raid0, 4, []int{0}, []error{ErrNoRedundancy}, nil},
		{Raid10Near2, 4, []int{-1, 4}, []error{ErrNoMember, ErrNoMember}, nil},
		// Pairs (0,1) and (2,3).
		{Raid10Near2, 4, []int{0, 1, 2, 3, 0}, []error{nil, ErrLastCopy, nil, ErrLastCopy, nil}, []int{0, 2}},
		// Three members: copies on (0,1), (2,0), (1,2): one member only.
		{Raid10Near2, 3, []int{1, 0, 2}, []error{nil, ErrLastCopy, ErrLastCopy}, []int{1}},
		// Far-2 pairs each member with the next: (0,1), (1,2), (2,3), (3,0).
		{Raid10Far2, 4, []int{0, 1, 3, 2}, []error{nil, ErrLastCopy, ErrLastCopy, nil}, []int{0, 2}},
		// raid6 fails any member; past two the array has lost data.
		{Raid6, 4, []int{3, 1, 3, 0}, []error{nil, nil, nil, nil}, []int{0, 1, 3}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%d/%v", tc.level, tc.members, tc.fail), func(t *testing.T) {
			a, _ := newArray(t, tc.level, tc.members, 1<<20, 64<<10)
			for i, dev := range tc.fail {
				err := a.SetFaulty(dev)
				if tc.want[i] == nil {
					assert.NoError(t, err, "member %d", dev)
				} else {
					assert.ErrorIs(t, err, tc.want[i], "member %d", dev)
				}
			}
			assert.Equal(t, tc.failed, a.Failed())
			assert.Equal(t, len(tc.failed), a.Degraded())
		})
	}
}

// faultyMembers returns FaultyDevices over n fresh MemDisks (seeded from seed),
// and the disks.
func faultyMembers(t testing.TB, n int, size uint64, seed uint64) ([]*blk.FaultyDevice, []*blk.MemDisk) {
	t.Helper()
	disks := newDisks(t, n, size, 512)
	fds := make([]*blk.FaultyDevice, n)
	for i, d := range disks {
		f, err := blk.NewFaultyDevice(d, seed+uint64(i))
		require.NoError(t, err)
		fds[i] = f
	}
	return fds, disks
}

// dies makes every later bio to f fail: a member that is gone.
func dies(t testing.TB, f *blk.FaultyDevice) {
	t.Helper()
	require.NoError(t, f.FailSectors(blk.OpRead, 0, f.Sectors()))
	require.NoError(t, f.FailSectors(blk.OpWrite, 0, f.Sectors()))
}

// degradedCase is one failure story for TestDegradedOracle: what to do to the
// members before the run (at op 0) and at op 100, and which members end up
// faulty.
type degradedCase struct {
	name       string
	level      Level
	members    int
	start, mid func(t testing.TB, a *Array, fds []*blk.FaultyDevice)
	failed     []int
}

// TestDegradedOracle runs random writes and reads (sizes in 512-byte steps,
// inside and across chunks, plugged or not) against raid10 and raid6 arrays
// whose members fail in different ways — marked faulty beforehand, dying in the
// middle of the run, failing reads at random, failing one write — and checks
// what the array promises: every bio succeeds and completes once, every read
// returns what the oracle (a flat byte array) holds, the failed members are
// the ones that failed, and the members still working hold every copy (raid10)
// or enough to rebuild everything: a raid6 that lost one member is read back
// again after a second is failed by hand, which checks every parity unit the
// degraded writes computed.
func TestDegradedOracle(t *testing.T) {
	seed := *seedFlag
	t.Logf("seed %d (rerun with -md.seed=%d)", seed, seed)
	setFaulty := func(devs ...int) func(testing.TB, *Array, []*blk.FaultyDevice) {
		return func(t testing.TB, a *Array, _ []*blk.FaultyDevice) {
			for _, d := range devs {
				require.NoError(t, a.SetFaulty(d))
			}
		}
	}
	die := func(dev int) func(testing.TB, *Array, []*blk.FaultyDevice) {
		return func(t testing.TB, _ *Array, fds []*blk.FaultyDevice) { dies(t, fds[dev]) }
	}
	readErrors := func(dev int) func(testing.TB, *Array, []*blk.FaultyDevice) {
		return func(t testing.TB, _ *Array, fds []*blk.FaultyDevice) {
			require.NoError(t, fds[dev].FailRate(blk.OpRead, 0.5))
		}
	}
	writeError := func(dev int, n uint64) func(testing.TB, *Array, []*blk.FaultyDevice) {
		return func(t testing.TB, _ *Array, fds []*blk.FaultyDevice) {
			require.NoError(t, fds[dev].FailNth(blk.OpWrite, n))
		}
	}
	var cases []degradedCase
	for _, level := range []Level{Raid10Near2, Raid10Far2, Raid6} {
		cases = append(cases,
			degradedCase{"faulty-before", level, 4, setFaulty(0), nil, []int{0}},
			degradedCase{"dies-mid-run", level, 4, nil, die(2), []int{2}},
			degradedCase{"read-errors", level, 4, readErrors(0), nil, []int{0}},
			degradedCase{"one-write-error", level, 4, writeError(3, 40), nil, []int{3}},
		)
	}
	cases = append(cases,
		degradedCase{"two-faulty-before", Raid6, 5, setFaulty(0, 3), nil, []int{0, 3}},
		degradedCase{"faulty-then-dies", Raid6, 4, setFaulty(0), die(3), []int{0, 3}},
		degradedCase{"two-die-mid-run", Raid6, 6, nil, func(t testing.TB, _ *Array, fds []*blk.FaultyDevice) {
			dies(t, fds[1])
			dies(t, fds[4])
		}, []int{1, 4}},
		degradedCase{"raid10-two-mirrors-lose-one-each", Raid10Near2, 4, die(0), die(3), []int{0, 3}},
	)
	for _, tc := range cases {
		for _, plugged := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%s/plugged=%t", tc.level, tc.name, plugged), func(t *testing.T) {
				t.Parallel()
				degradedRun(t, seed, tc, plugged)
			})
		}
	}
}

// degradedRun is one TestDegradedOracle case.
func degradedRun(t *testing.T, seed uint64, tc degradedCase, plugged bool) {
	const (
		memberSize = 1 << 20
		chunk      = 16 << 10
	)
	rng := rand.New(rand.NewPCG(seed, uint64(tc.level)<<8|uint64(tc.members)))
	fds, disks := faultyMembers(t, tc.members, memberSize, seed)
	a, err := New(Config{Level: tc.level, ChunkSize: chunk, Name: "md0"}, devices(fds))
	require.NoError(t, err)
	size := a.Sectors() << blk.SectorShift
	oracle := make([]byte, size)
	if tc.start != nil {
		tc.start(t, a, fds)
	}
	io := &oracleIO{t: t, d: a, rng: rng, oracle: oracle, plugged: plugged, flushOneIn: 4}
	finish, read := io.finish, io.read
	for i := range 200 {
		if i == 100 && tc.mid != nil {
			finish()
			tc.mid(t, a, fds)
		}
		off := rng.Uint64N(size>>9) << 9
		n := min(size-off, (1+rng.Uint64N(3*chunk>>9))<<9)
		if i%4 == 3 {
			read(off, n)
			continue
		}
		io.write(off, n)
	}
	finish()
	io.log.checkOnce(t)
	assert.Equal(t, tc.failed, a.Failed())
	assert.NotZero(t, a.Stats().MemberErrors+a.Stats().DegradedReads, "the failure was met")
	require.Zero(t, stripesInUse(a))
	read(0, size)
	checkSurvivors(t, a, disks, oracle)
	if tc.level == Raid6 && a.Degraded() < maxRaid6Lost {
		for d := range tc.members {
			if !slices.Contains(a.Failed(), d) {
				require.NoError(t, a.SetFaulty(d))
				break
			}
		}
		read(0, size) // rebuilt from the parity the degraded writes computed
	}
}

// checkSurvivors checks that every copy of every raid10 chunk on a working
// member holds the oracle's bytes, and that every raid6 data chunk on a
// working member does.
func checkSurvivors(t testing.TB, a *Array, disks []*blk.MemDisk, oracle []byte) {
	t.Helper()
	chunk := int(a.ChunkSize())
	for c := range uint64(len(oracle) / chunk) {
		copies, n := a.chunkCopies(c)
		for _, l := range copies[:n] {
			if a.faulty(l.dev) {
				continue
			}
			if !assert.Equal(t, oracle[int(c)*chunk:][:chunk], memberBytes(t, disks[l.dev], l.sector, chunk), "chunk %d on member %d", c, l.dev) {
				return
			}
		}
	}
}

// TestDegradedRaid0 checks that raid0 has nothing to go on with: a member's
// error fails the bio with that error, the member stays in the array, and the
// other members' data is still served.
func TestDegradedRaid0(t *testing.T) {
	fds, _ := faultyMembers(t, 4, 1<<20, 1)
	a, err := New(Config{Level: Raid0, ChunkSize: 16 << 10}, devices(fds))
	require.NoError(t, err)
	data := fill(rand.New(rand.NewPCG(1, 2)), 64<<10) // chunks 0-3, one per member
	require.NoError(t, doIO(t, a, blk.OpWrite, 0, ioOpts{data: data}))
	dies(t, fds[2])
	err = doIO(t, a, blk.OpWrite, 0, ioOpts{data: make([]byte, 64<<10)})
	assert.ErrorIs(t, err, blk.ErrIO)
	assert.ErrorIs(t, err, blk.ErrInjected)
	got := make([]byte, 16<<10)
	assert.ErrorIs(t, doIO(t, a, blk.OpRead, 32<<10>>9, ioOpts{data: got}), blk.ErrInjected, "chunk 2 is lost")
	for _, c := range []uint64{0, 1, 3} { // chunk 3 was overwritten by the failed write: members 0, 1, 3 took it
		require.NoError(t, doIO(t, a, blk.OpRead, c*32, ioOpts{data: got}))
		assert.Equal(t, make([]byte, 16<<10), got, "chunk %d holds the failed write's zeros", c)
	}
	assert.Empty(t, a.Failed())
	assert.Equal(t, uint64(2), a.Stats().MemberErrors)
}

// TestDegradedDataLost checks the errors when redundancy runs out: a raid6
// with three members gone fails reads and writes with ErrDataLost and leaves
// no stripe_head behind; a raid10 whose last copy of a chunk fails passes the
// member's error on and keeps that member.
func TestDegradedDataLost(t *testing.T) {
	t.Run("raid6", func(t *testing.T) {
		a, _ := newArray(t, Raid6, 4, 1<<20, 16<<10)
		require.NoError(t, doIO(t, a, blk.OpWrite, 0, ioOpts{data: make([]byte, 64<<10)}))
		for _, d := range []int{0, 1, 2} {
			require.NoError(t, a.SetFaulty(d))
		}
		for _, op := range []blk.Op{blk.OpRead, blk.OpWrite} {
			err := doIO(t, a, op, 0, ioOpts{data: make([]byte, 32<<10)})
			assert.ErrorIs(t, err, ErrDataLost, "%s", op)
			assert.ErrorIs(t, err, blk.ErrIO, "%s", op)
		}
		assert.Zero(t, stripesInUse(a))
	})
	t.Run("raid6 third member fails during a write", func(t *testing.T) {
		fds, _ := faultyMembers(t, 4, 1<<20, 1)
		a, err := New(Config{Level: Raid6, ChunkSize: 16 << 10}, devices(fds))
		require.NoError(t, err)
		require.NoError(t, a.SetFaulty(0))
		require.NoError(t, a.SetFaulty(1))
		dies(t, fds[2])
		err = doIO(t, a, blk.OpWrite, 0, ioOpts{data: make([]byte, 32<<10)})
		assert.ErrorIs(t, err, ErrDataLost)
		assert.Equal(t, []int{0, 1, 2}, a.Failed())
		assert.Zero(t, stripesInUse(a))
	})
	t.Run("raid10", func(t *testing.T) {
		fds, _ := faultyMembers(t, 4, 1<<20, 1)
		a, err := New(Config{Level: Raid10Near2, ChunkSize: 16 << 10}, devices(fds))
		require.NoError(t, err)
		require.NoError(t, a.SetFaulty(0))
		dies(t, fds[1]) // chunk 0's last copy
		for _, op := range []blk.Op{blk.OpRead, blk.OpWrite} {
			err := doIO(t, a, op, 0, ioOpts{data: make([]byte, 4096)})
			assert.ErrorIs(t, err, blk.ErrInjected, "%s", op)
		}
		assert.Equal(t, []int{0}, a.Failed())
		assert.NoError(t, doIO(t, a, blk.OpRead, 32, ioOpts{data: make([]byte, 4096)}), "chunk 1 lives on members 2 and 3")
	})
}

// TestDegradedRebuildRetry checks a raid6 rebuild whose own reads fail: a
// read of D0 on faulty member 1 is rebuilt from members 0, 2 and 3; the read
// of member 2 fails, so member 2 is failed too and D0 is rebuilt again from P
// and Q alone (two data units lost), still returning what was written.
func TestDegradedRebuildRetry(t *testing.T) {
	fds, _ := faultyMembers(t, 4, 1<<20, 1)
	a, err := New(Config{Level: Raid6, ChunkSize: 16 << 10}, devices(fds))
	require.NoError(t, err)
	data := fill(rand.New(rand.NewPCG(3, 4)), 32<<10) // row 0: D0 on member 1, D1 on member 2
	require.NoError(t, doIO(t, a, blk.OpWrite, 0, ioOpts{data: data}))
	require.NoError(t, a.SetFaulty(1))
	require.NoError(t, fds[2].FailNth(blk.OpRead, 1))
	got := make([]byte, 8<<10)
	require.NoError(t, doIO(t, a, blk.OpRead, 8, ioOpts{data: got})) // D0's units 1 and 2
	assert.Equal(t, data[4<<10:12<<10], got)
	assert.Equal(t, []int{1, 2}, a.Failed())
	st := a.Stats()
	assert.Equal(t, uint64(1), st.MemberErrors)
	assert.Equal(t, uint64(1), st.DegradedReads)
	assert.Equal(t, uint64(4*4+3+2), st.MemberBios, "the write (four stripes), three rebuild reads, two more")
}

// TestDegradedConcurrent has four goroutines write and read their own stripe
// rows of a raid10 and a raid6 array, plugged and not, while one of them
// kills a member halfway: every bio succeeds, every read matches that
// goroutine's oracle, the dead member is marked faulty once, and the whole
// array reads back right at the end. Run it with -race.
func TestDegradedConcurrent(t *testing.T) {
	const (
		workers = 4
		chunk   = 8 << 10
	)
	for _, level := range []Level{Raid10Near2, Raid6} {
		t.Run(level.String(), func(t *testing.T) {
			fds, _ := faultyMembers(t, 6, 512<<10, 9)
			a, err := New(Config{Level: level, ChunkSize: chunk}, devices(fds))
			require.NoError(t, err)
			rowBytes := uint64(chunk) * 3 // raid10 of 6: 3 chunks a row; raid6 of 6: 4 data chunks
			if level == Raid6 {
				rowBytes = chunk * 4
			}
			size := a.Sectors() << blk.SectorShift
			rows := size / rowBytes
			oracle := make([]byte, size)
			done := make(chan struct{}, workers)
			for w := range uint64(workers) {
				go func() {
					defer func() { done <- struct{}{} }()
					rng := rand.New(rand.NewPCG(w, 77))
					var plug blk.Plug
					for i := range 120 {
						if w == 0 && i == 60 { // member 4 dies
							f := fds[4]
							if err := errors.Join(f.FailSectors(blk.OpRead, 0, f.Sectors()), f.FailSectors(blk.OpWrite, 0, f.Sectors())); err != nil {
								t.Error(err)
								return
							}
						}
						row := w + workers*rng.Uint64N(rows/workers)
						off := row*rowBytes + rng.Uint64N(rowBytes>>9)<<9
						n := min(row*rowBytes+rowBytes-off, (1+rng.Uint64N(32))<<9)
						op, data := blk.OpWrite, fill(rng, int(n))
						if i%3 == 2 {
							op, data = blk.OpRead, make([]byte, n)
						} else {
							copy(oracle[off:], data) // this goroutine's rows only
						}
						b := makeBio(op, off>>blk.SectorShift, ioOpts{data: data, rng: rng})
						calls := 0
						b.EndIO = func(*blk.Bio) { calls++ }
						plug.Start()
						blk.SubmitBio(&plug, a, b)
						err := plug.Finish()
						if err != nil || b.Err != nil || calls != 1 || !slices.Equal(oracle[off:off+n], data) {
							t.Errorf("worker %d: %s at %d: %v, %v, %d completions", w, op, off, err, b.Err, calls)
							return
						}
					}
				}()
			}
			for range workers {
				<-done
			}
			assert.Equal(t, []int{4}, a.Failed())
			got := make([]byte, size)
			require.NoError(t, doIO(t, a, blk.OpRead, 0, ioOpts{data: got}))
			assert.True(t, slices.Equal(oracle, got), "the whole array")
			assert.Zero(t, stripesInUse(a))
		})
	}
}

// TestDegradedMetadataOnly checks that degraded reads and writes of
// metadata-only bios issue the same member bios as bios with data and move
// nothing.
func TestDegradedMetadataOnly(t *testing.T) {
	for _, level := range []Level{Raid10Near2, Raid10Far2, Raid6} {
		t.Run(level.String(), func(t *testing.T) {
			var stats [2]Stats
			for i, meta := range []bool{false, true} {
				a, disks := newArray(t, level, 4, 1<<20, 16<<10)
				require.NoError(t, a.SetFaulty(0)) // holds first copies: reads are degraded
				for _, op := range []blk.Op{blk.OpWrite, blk.OpRead} {
					o := ioOpts{data: make([]byte, 40<<10)}
					if meta {
						o = ioOpts{size: 40 << 10}
					}
					require.NoError(t, doIO(t, a, op, 8, o))
				}
				stats[i] = a.Stats()
				if meta {
					for _, d := range disks {
						assert.Zero(t, d.StoredBytes())
					}
				}
			}
			assert.Equal(t, stats[0], stats[1])
			assert.NotZero(t, stats[0].DegradedReads)
		})
	}
}

// FuzzDegraded drives raid10 and raid6 arrays with a fuzzed sequence of reads,
// writes and member deaths (never more than the level survives: one member of
// a raid10 mirror pair, two raid6 members) and checks that every bio completes
// once without error and every read matches the oracle.
func FuzzDegraded(f *testing.F) {
	f.Add(uint8(0), []byte{0, 0, 8, 1, 3, 9, 2, 0, 200, 4, 1, 7})
	f.Add(uint8(2), []byte{3, 0, 0, 1, 250, 255, 2, 10, 10, 3, 1, 0, 0, 5, 5})
	f.Add(uint8(1), []byte{3, 1, 1, 0, 0, 64, 1, 0, 64})
	f.Fuzz(func(t *testing.T, lvl uint8, ops []byte) {
		level := []Level{Raid10Near2, Raid10Far2, Raid6}[lvl%3]
		const chunk = 8 << 10
		fds, _ := faultyMembers(t, 5, 256<<10, uint64(lvl))
		a, err := New(Config{Level: level, ChunkSize: chunk}, devices(fds))
		require.NoError(t, err)
		size := a.Sectors() << blk.SectorShift
		oracle := make([]byte, size)
		var dead []int
		canDie := func(d int) bool {
			if slices.Contains(dead, d) {
				return false
			}
			if level == Raid6 {
				return len(dead) < maxRaid6Lost
			}
			for c := range uint64(5) { // both copies of no chunk may die
				copies, _ := a.chunkCopies(c)
				if copies[0].dev == d && slices.Contains(dead, copies[1].dev) || copies[1].dev == d && slices.Contains(dead, copies[0].dev) {
					return false
				}
			}
			return true
		}
		for i := 0; i+2 < len(ops); i += 3 {
			kind, x, y := ops[i]%4, uint64(ops[i+1]), uint64(ops[i+2])
			off := x * (size >> blk.SectorShift) / 256 << blk.SectorShift
			n := min(size-off, (1+y%64)*512)
			switch kind {
			case 0, 1:
				data := make([]byte, n)
				for j := range data {
					data[j] = byte(i + j*int(x+1))
				}
				require.NoError(t, doIO(t, a, blk.OpWrite, off>>blk.SectorShift, ioOpts{data: data}))
				copy(oracle[off:], data)
			case 2:
				got := make([]byte, n)
				require.NoError(t, doIO(t, a, blk.OpRead, off>>blk.SectorShift, ioOpts{data: got}))
				require.Equal(t, oracle[off:off+n], got)
			case 3:
				if d := int(x % 5); canDie(d) {
					dies(t, fds[d])
					dead = append(dead, d)
				}
			}
		}
		got := make([]byte, size)
		require.NoError(t, doIO(t, a, blk.OpRead, 0, ioOpts{data: got}))
		require.Equal(t, oracle, got)
		require.Zero(t, stripesInUse(a))
	})
}
