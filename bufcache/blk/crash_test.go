package blk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// image returns the whole contents of d.
func image(t testing.TB, d *MemDisk) []byte {
	t.Helper()
	p := make([]byte, d.Sectors()<<SectorShift)
	_, err := d.ReadAt(p, 0)
	require.NoError(t, err)
	return p
}

// plugWrite is one write of a crash test's workload: n sectors at sector,
// submitted through the plug, which is finished after it when flush is set.
type plugWrite struct {
	sector, n uint64
	flush     bool
}

// runPowerWorkload makes a queue recorded in a fresh PowerLog over a disk
// that already holds base, runs ws through a plug with traced dispatch, and
// returns the log, the queue and the oracle of every write's data.
func runPowerWorkload(t testing.TB, model Model, lim Limits, base []byte, ws []plugWrite) (*PowerLog, *Queue) {
	t.Helper()
	disk, err := NewMemDisk("sda", uint64(len(base)), lim.LogicalBlockSize)
	require.NoError(t, err)
	var b Bio
	b.Reset(OpWrite, 0)
	b.AddVec(base, uint32(len(base)))
	b.EndIO = func(*Bio) {}
	disk.Submit(&b) // what the disk held before the recording
	require.NoError(t, b.Err)
	log := NewPowerLog()
	q, err := log.NewQueue("", disk, model, lim)
	require.NoError(t, err)
	q.EnableTrace(4*len(ws) + 16) // room for split bios
	var p Plug
	for i, w := range ws {
		if !p.Active() {
			p.Start()
		}
		bio := &Bio{}
		bio.Reset(OpWrite, w.sector)
		bio.AddPage(pattern(i+1, int(w.n<<SectorShift)), uint32(w.n<<SectorShift), uint64(i), 0)
		bio.EndIO = func(b *Bio) { require.NoError(t, b.Err) }
		SubmitBio(&p, q, bio)
		if w.flush {
			require.NoError(t, p.Finish())
		}
	}
	if p.Active() {
		require.NoError(t, p.Finish())
	}
	return log, q
}

// TestPowerLogCuts checks every cut point of a plugged workload (back merges,
// two flushes, an overwrite of earlier sectors) against two independent
// sources: the queue's trace, which says what each dispatched request
// covered, and the disk itself. Cut 0 leaves what the disk held before the
// recording; the last cut leaves the disk as it is; each cut k+1 differs from
// cut k only inside request k's sectors, and holds there what the disk held
// after the run wherever no later request wrote.
func TestPowerLogCuts(t *testing.T) {
	base := pattern(99, 64<<SectorShift)
	ws := []plugWrite{
		{0, 8, false}, {8, 8, false}, {16, 4, true}, // one request of 20 sectors
		{40, 8, false}, {32, 8, false}, {48, 1, true}, // the third merges into the first: two requests
		{4, 8, true}, // overwrites two earlier requests' sectors
	}
	log, q := runPowerWorkload(t, Null{}, DefaultLimits(512, 4096), base, ws)
	trace := q.Trace()
	require.Len(t, trace, 4)
	require.Equal(t, len(trace), log.Writes())
	assert.Zero(t, log.Reads())
	reqs := log.Requests()
	final := image(t, q.store)
	prev := base
	for k := 0; k <= log.Writes(); k++ {
		disks, err := log.CutAt(k)
		require.NoError(t, err)
		require.Len(t, disks, 1)
		assert.Equal(t, "sda", disks[0].Name())
		assert.Equal(t, q.Sectors(), disks[0].Sectors())
		img := image(t, disks[0])
		if k == 0 {
			assert.Empty(t, diffBytes(base, img), "cut 0")
			continue
		}
		e := trace[k-1]
		w := reqs[k-1]
		assert.Equal(t, [2]uint64{e.Sector, e.Sectors}, [2]uint64{w.Sector, w.Sectors}, "request %d", k-1)
		lo, hi := e.Sector<<SectorShift, (e.Sector+e.Sectors)<<SectorShift
		assert.Empty(t, diffBytes(prev[:lo], img[:lo]), "cut %d before request %d", k, k-1)
		assert.Empty(t, diffBytes(prev[hi:], img[hi:]), "cut %d after request %d", k, k-1)
		for s := e.Sector; s < e.Sector+e.Sectors; s++ {
			later := false
			for _, f := range trace[k:] {
				later = later || s >= f.Sector && s < f.Sector+f.Sectors
			}
			if !later {
				assert.Empty(t, diffBytes(final[s<<SectorShift:][:512], img[s<<SectorShift:][:512]), "cut %d sector %d", k, s)
			}
		}
		prev = img
	}
	assert.Empty(t, diffBytes(final, prev), "the last cut is the disk")
	for _, k := range []int{-1, log.Writes() + 1} {
		_, err := log.CutAt(k)
		assert.ErrorIs(t, err, ErrNoCutPoint)
	}
}

// TestPowerLogPerDisk checks cuts of two disks that keep their own prefixes,
// and the errors of counts that do not fit.
func TestPowerLogPerDisk(t *testing.T) {
	log := NewPowerLog()
	var queues [2]*Queue
	for i := range queues {
		disk, err := NewMemDisk(string(rune('a'+i)), 16<<SectorShift, 512)
		require.NoError(t, err)
		queues[i], err = log.NewQueue("", disk, Null{}, DefaultLimits(512, 4096))
		require.NoError(t, err)
	}
	write := func(q *Queue, sector uint64, v byte) {
		var b Bio
		b.Reset(OpWrite, sector)
		b.AddVec([]byte{v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, 511: v}, 512)
		b.EndIO = func(*Bio) {}
		q.Submit(&b)
	}
	write(queues[0], 0, 1) // global order: a0 b0 a1 b1
	write(queues[1], 0, 2)
	write(queues[0], 0, 3)
	write(queues[1], 1, 4)
	sector0 := func(d *MemDisk, s int64) byte {
		p := make([]byte, 1)
		_, err := d.ReadAt(p, s<<SectorShift)
		require.NoError(t, err)
		return p[0]
	}
	for _, tc := range []struct {
		keep []int
		want [2][2]byte // disk, sector 0 and 1
	}{
		{[]int{0, 0}, [2][2]byte{{0, 0}, {0, 0}}},
		{[]int{2, 0}, [2][2]byte{{3, 0}, {0, 0}}}, // not a prefix of the global order
		{[]int{1, 2}, [2][2]byte{{1, 0}, {2, 4}}},
	} {
		disks, err := log.CutPerDisk(tc.keep)
		require.NoError(t, err)
		for d := range disks {
			assert.Equal(t, tc.want[d], [2]byte{sector0(disks[d], 0), sector0(disks[d], 1)}, "keep %v disk %d", tc.keep, d)
		}
	}
	for _, keep := range [][]int{{1}, {3, 0}, {0, -1}} {
		_, err := log.CutPerDisk(keep)
		assert.ErrorIs(t, err, ErrNoCutPoint, "%v", keep)
	}
	_, err := log.NewQueue("", nil, Null{}, DefaultLimits(512, 4096))
	assert.ErrorIs(t, err, ErrInvalidConfig)
	disk, err := NewMemDisk("x", 4096, 512)
	require.NoError(t, err)
	_, err = log.NewQueue("", disk, nil, DefaultLimits(512, 4096))
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = log.NewQueue("", disk, HDD{}, DefaultLimits(512, 4096))
	assert.ErrorIs(t, err, ErrInvalidConfig, "the model is still validated")
}

// TestPowerLogTiming checks that recording changes nothing the queue reports:
// the same workload on an HDD that serves several streams gives the same
// counters, busy time and trace with and without the log.
func TestPowerLogTiming(t *testing.T) {
	ws := []plugWrite{{0, 8, true}, {100, 8, true}, {8, 8, true}, {108, 8, true}, {16, 64, true}}
	base := make([]byte, 256<<SectorShift)
	_, recorded := runPowerWorkload(t, WD8003FFBX(), DefaultLimits(512, 4096), base, ws)
	disk, err := NewMemDisk("sda", uint64(len(base)), 512)
	require.NoError(t, err)
	plain, err := NewQueue("", disk, WD8003FFBX(), DefaultLimits(512, 4096))
	require.NoError(t, err)
	plain.EnableTrace(len(ws))
	for i, w := range ws {
		var b Bio
		b.Reset(OpWrite, w.sector)
		b.AddPage(pattern(i+1, int(w.n<<SectorShift)), uint32(w.n<<SectorShift), uint64(i), 0)
		b.EndIO = func(*Bio) {}
		plain.Submit(&b)
	}
	assert.Equal(t, plain.Stats(), recorded.Stats())
	assert.Equal(t, plain.Trace(), recorded.Trace())
}

// TestPowerLogRandomCut checks that a seeded cut is reproducible, stays within
// the cut points and reaches both ends over many seeds.
func TestPowerLogRandomCut(t *testing.T) {
	ws := []plugWrite{{0, 1, true}, {1, 1, true}, {2, 1, true}}
	log, _ := runPowerWorkload(t, Null{}, DefaultLimits(512, 4096), make([]byte, 8<<SectorShift), ws)
	seen := map[int]bool{}
	for seed := range uint64(200) {
		k := log.RandomCut(seed)
		require.Equal(t, k, log.RandomCut(seed))
		require.GreaterOrEqual(t, k, 0)
		require.LessOrEqual(t, k, log.Writes())
		seen[k] = true
	}
	assert.Len(t, seen, log.Writes()+1)
}

// FuzzPowerLog runs a fuzzed plugged workload and checks every cut point as
// TestPowerLogCuts does: request k's sectors match the trace, a cut changes
// only them, and the last cut is the disk.
func FuzzPowerLog(f *testing.F) {
	f.Add([]byte{0, 8, 0, 8, 8, 1, 40, 4, 1, 2, 30, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var ws []plugWrite
		for i := 0; i+2 < len(ops) && len(ws) < 64; i += 3 {
			s := uint64(ops[i]) % 64
			ws = append(ws, plugWrite{s, 1 + uint64(ops[i+1])%min(16, 64-s), ops[i+2]&1 != 0})
		}
		lim := DefaultLimits(512, 512)
		lim.MaxSectors = 8 // a 16-sector bio is split: a cut can keep part of it
		log, q := runPowerWorkload(t, Null{}, lim, pattern(7, 64<<SectorShift), ws)
		trace := q.Trace()
		require.Len(t, log.Requests(), log.Writes())
		require.Len(t, trace, log.Writes())
		prev := pattern(7, 64<<SectorShift)
		for k := 1; k <= log.Writes(); k++ {
			disks, err := log.CutAt(k)
			require.NoError(t, err)
			img := image(t, disks[0])
			e := trace[k-1]
			lo, hi := e.Sector<<SectorShift, (e.Sector+e.Sectors)<<SectorShift
			require.Empty(t, diffBytes(prev[:lo], img[:lo]))
			require.Empty(t, diffBytes(prev[hi:], img[hi:]))
			prev = img
		}
		require.Empty(t, diffBytes(image(t, q.store), prev))
	})
}
