package md

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// balanceChunk is the chunk of the read-balancing tests' arrays.
const balanceChunk = 16 << 10

// balanceRound is one plug's worth of I/O in TestReadBalance: metadata-only
// bios of one chunk each, submitted under one plug (or none) and completed by
// its flush.
type balanceRound struct {
	plugged bool
	writes  []uint64 // array chunks written, first
	reads   []uint64 // array chunks read, then
}

// TestReadBalance checks raid10's read_balance (v5.10): which member serves
// each one-chunk read, given what is in flight on the members (a plug holds
// its bios until it is flushed), where their heads are and whether they
// rotate. On four members, near-2 chunk c lives on pair c mod 2 (members 0,1
// or 2,3) at row c / 2 (32 sectors a row); far-2's first copy of chunk c is
// on member c mod 4, its second on the next member's second half.
func TestReadBalance(t *testing.T) {
	const rot, ssd = true, false
	tests := []struct {
		name       string
		level      Level
		rotational bool
		faulty     int // a member failed first, or -1
		rounds     []balanceRound
		want       []int // the member of each read of the last round
	}{
		{"n2 unplugged: each read completes first, so the first copy serves all",
			Raid10Near2, rot, -1, []balanceRound{{false, nil, []uint64{0, 1, 2, 3, 4, 5}}},
			[]int{0, 2, 0, 2, 0, 2}},
		{"n2 one plug: a pair's second chunk goes to its idle mirror",
			Raid10Near2, rot, -1, []balanceRound{{true, nil, []uint64{0, 1, 2, 3}}},
			[]int{0, 2, 1, 3}},
		{"n2 both mirrors busy: the equal heads (0) tie to the first copy",
			Raid10Near2, rot, -1, []balanceRound{{true, nil, []uint64{0, 2, 4}}},
			[]int{0, 1, 0}},
		{"n2 both mirrors busy: the nearer head wins",
			// Round 1 leaves member 0's head at the end of row 4 and member
			// 1's at the end of row 5; chunk 12 starts row 6, where member 1's
			// head is.
			Raid10Near2, rot, -1, []balanceRound{{true, nil, []uint64{8, 10}}, {true, nil, []uint64{0, 2, 12}}},
			[]int{0, 1, 1}},
		{"n2 a busy member whose head is where the read starts ties with an idle one, and comes first",
			// Round 2's write of row 0 ends both heads at sector 32, where
			// chunk 2 (row 1) starts: member 0, busy with chunk 0, is at
			// distance 0 like idle member 1. Heads moved by the write's
			// completion, to its end: were they left at rows 4 and 5, or put
			// at the write's start, member 1 would get chunk 2.
			Raid10Near2, rot, -1, []balanceRound{{true, nil, []uint64{8, 10}}, {false, []uint64{0}, nil}, {true, nil, []uint64{0, 2, 12}}},
			[]int{0, 0, 1}},
		{"n2 writes in flight count: both mirrors are busy writing chunk 12",
			// Round 1 leaves the heads at the ends of rows 4 and 5; with the
			// write of row 6 in flight on both, chunk 14 (row 7) goes to the
			// nearer head, member 1's. Were the write not counted, member 0
			// would be idle and get it.
			Raid10Near2, rot, -1, []balanceRound{{true, nil, []uint64{8, 10}}, {true, []uint64{12}, []uint64{14}}},
			[]int{1}},
		{"n2 a faulty member is skipped",
			Raid10Near2, rot, 0, []balanceRound{{true, nil, []uint64{0, 1, 2, 3}}},
			[]int{1, 2, 1, 3}},
		{"n2 non-rotational: the fewest in flight, heads ignored",
			// Rotating, the second read of chunk 0 would stay on member 0:
			// busy, but its head (0) is where the read starts.
			Raid10Near2, ssd, -1, []balanceRound{{true, nil, []uint64{0, 0, 0}}},
			[]int{0, 1, 0}},
		{"f2 one plug: always the first copy, busy or not",
			// Chunk 4 is on member 0 again, busy with chunk 0, while its far
			// copy's member 1 is idle before chunk 1 comes: still member 0.
			Raid10Far2, rot, -1, []balanceRound{{true, nil, []uint64{0, 4, 1, 2, 3, 5, 6, 7}}},
			[]int{0, 0, 1, 2, 3, 1, 2, 3}},
		{"f2 a faulty member: its chunks are read from the next member's far copy",
			Raid10Far2, rot, 1, []balanceRound{{true, nil, []uint64{0, 1, 2}}},
			[]int{0, 2, 2}},
		{"f2 non-rotational: the fewest in flight, the far copy if need be",
			Raid10Far2, ssd, -1, []balanceRound{{true, nil, []uint64{0, 4}}},
			[]int{0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, queues := balanceArray(t, tc.level, tc.rotational)
			if tc.faulty >= 0 {
				require.NoError(t, a.SetFaulty(tc.faulty))
			}
			var got []int
			for i, r := range tc.rounds {
				got = balanceRun(t, a, queues, r)
				require.Len(t, got, len(r.reads), "round %d", i)
			}
			assert.Equal(t, tc.want, got)
			assert.Zero(t, a.Stats().MemberErrors, "no member was asked for what it could not do")
		})
	}
}

// balanceArray builds a level array of 4 members of 1 MiB with balanceChunk
// chunks over queues timed as the Helios4's disks (rotational) or taking no
// time and saying they do not rotate (an SSD's flag, blk.Null's timing).
func balanceArray(t *testing.T, level Level, rotational bool) (*Array, []*blk.Queue) {
	t.Helper()
	var model blk.Model = blk.Null{}
	if rotational {
		model = blk.WD8003FFBX()
	}
	queues := make([]*blk.Queue, 4)
	for i, d := range newDisks(t, 4, 1<<20, 512) {
		q, err := blk.NewQueue("", d, model, blk.DefaultLimits(512, 4096))
		require.NoError(t, err)
		require.Equal(t, rotational, q.Rotational())
		queues[i] = q
	}
	a, err := New(Config{Level: level, ChunkSize: balanceChunk, Name: "md0"}, devices(queues))
	require.NoError(t, err)
	return a, queues
}

// balanceRun submits round r to a, whose members are queues, and returns
// the member each read went to: the member of the i-th read bio the members
// queued (block_bio_queue), which must be at the sector of the i-th read's
// chunk on that member.
func balanceRun(t *testing.T, a *Array, queues []*blk.Queue, r balanceRound) []int {
	t.Helper()
	const sectors = balanceChunk >> blk.SectorShift
	type memberRead struct {
		dev    int
		sector uint64
	}
	var reads []memberRead // in the order the members queued them
	issued := 0            // member requests issued
	for d, q := range queues {
		q.SetTracer(blk.TraceFunc(func(e blk.TraceEvent) {
			switch {
			case e.Kind == blk.TraceBioQueue && e.Op == blk.OpRead:
				reads = append(reads, memberRead{d, e.Sector})
			case e.Kind == blk.TraceRqIssue:
				issued++
			}
		}))
	}
	var plug blk.Plug
	if r.plugged {
		plug.Start()
	}
	var log bioLog
	for _, c := range r.writes {
		blk.SubmitBio(&plug, a, log.bio(blk.OpWrite, c*sectors, nil, balanceChunk, 0))
	}
	for _, c := range r.reads {
		blk.SubmitBio(&plug, a, log.bio(blk.OpRead, c*sectors, nil, balanceChunk, 0))
	}
	if r.plugged {
		// Everything, a read steered off a faulty member included, waited
		// in the plug: nothing went around it, as recovery's resubmission
		// would.
		assert.Zero(t, issued, "requests issued before the plug's flush")
		require.NoError(t, plug.Finish())
	}
	log.checkOnce(t)
	require.Len(t, reads, len(r.reads), "one member read per chunk read")
	got := make([]int, len(r.reads))
	for i, c := range r.reads {
		got[i] = reads[i].dev
		copies, n := a.chunkCopies(c)
		assert.True(t, slices.Contains(copies[:n], location{reads[i].dev, reads[i].sector}),
			"read %d (chunk %d) went to member %d sector %d, no copy of it", i, c, reads[i].dev, reads[i].sector)
	}
	return got
}

// TestReadBalanceSpreadsAStream: a sequential read in windows of two chunks a
// pair (readahead's window, under one plug each) over rotating members is
// served by all four members of a near-2 array, each reading a quarter (half
// its pair's chunks), and of a far-2 array from the first copies only, in the
// first half of each member; the data is intact.
func TestReadBalanceSpreadsAStream(t *testing.T) {
	for _, level := range []Level{Raid10Near2, Raid10Far2} {
		t.Run(level.String(), func(t *testing.T) {
			a, queues := balanceArray(t, level, true)
			const window = 4 * balanceChunk
			data := make([]byte, 16*window)
			for i := range data {
				data[i] = byte(i/4096) ^ byte(i)
			}
			require.NoError(t, doIO(t, a, blk.OpWrite, 0, ioOpts{data: data}))
			var farReads int // member reads in a member's second half
			half := a.rowSector(a.rowChunks)
			for _, q := range queues {
				q.SetTracer(blk.TraceFunc(func(e blk.TraceEvent) {
					if e.Kind == blk.TraceBioQueue && e.Op == blk.OpRead && e.Sector >= half {
						farReads++
					}
				}))
			}
			got := make([]byte, len(data))
			var log bioLog
			for off := 0; off < len(got); off += window {
				var plug blk.Plug
				plug.Start()
				b := log.bio(blk.OpRead, uint64(off)>>blk.SectorShift, got[off:off+window], 0, blk.NoPFN)
				blk.SubmitBio(&plug, a, b)
				require.NoError(t, plug.Finish())
			}
			log.checkOnce(t)
			assert.Equal(t, data, got, "what was written is read back")
			for d, q := range queues {
				read := q.Stats().Read.Sectors << blk.SectorShift
				assert.Equal(t, uint64(len(data)/4), read, fmt.Sprintf("member %d reads a quarter", d))
			}
			if level == Raid10Far2 {
				assert.Zero(t, farReads, "far-2 reads the first copies")
			}
		})
	}
}
