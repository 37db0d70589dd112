package md

import (
	"fmt"
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

// TestReadBalance checks raid10's read_balance (v5.10, rotating members):
// which member serves each one-chunk read, given what is in flight on the
// members (a plug holds its bios until it is flushed) and where their heads
// are. On four members, near-2 chunk c lives on pair c mod 2 (members 0,1 or
// 2,3) at row c / 2; far-2's first copy of chunk c is on member c mod 4.
func TestReadBalance(t *testing.T) {
	tests := []struct {
		name   string
		level  Level
		faulty int // a member failed first, or -1
		rounds []balanceRound
		want   []int // the member of each read of the last round
	}{
		{"n2 unplugged: each read completes first, so the first copy serves all",
			Raid10Near2, -1, []balanceRound{{false, nil, []uint64{0, 1, 2, 3, 4, 5}}},
			[]int{0, 2, 0, 2, 0, 2}},
		{"n2 one plug: a pair's second chunk goes to its idle mirror",
			Raid10Near2, -1, []balanceRound{{true, nil, []uint64{0, 1, 2, 3}}},
			[]int{0, 2, 1, 3}},
		{"n2 both mirrors busy: the equal heads (0) tie to the first copy",
			Raid10Near2, -1, []balanceRound{{true, nil, []uint64{0, 2, 4}}},
			[]int{0, 1, 0}},
		{"n2 both mirrors busy: the nearer head wins",
			// Round 1 leaves member 0's head at the end of row 4 and member
			// 1's at the end of row 5; chunk 12 starts row 6, where member 1's
			// head is.
			Raid10Near2, -1, []balanceRound{{true, nil, []uint64{8, 10}}, {true, nil, []uint64{0, 2, 12}}},
			[]int{0, 1, 1}},
		{"n2 writes in flight count: both mirrors are busy writing chunk 12",
			// Round 1 leaves the heads at the ends of rows 4 and 5; with the
			// write of row 6 in flight on both, chunk 14 (row 7) goes to the
			// nearer head, member 1's. Were the write not counted, member 0
			// would be idle and get it.
			Raid10Near2, -1, []balanceRound{{true, nil, []uint64{8, 10}}, {true, []uint64{12}, []uint64{14}}},
			[]int{1}},
		{"n2 a faulty member is skipped",
			Raid10Near2, 0, []balanceRound{{true, nil, []uint64{0, 1, 2, 3}}},
			[]int{1, 2, 1, 3}},
		{"f2 one plug: always the first copy, busy or not",
			Raid10Far2, -1, []balanceRound{{true, nil, []uint64{0, 1, 2, 3, 4, 5, 6, 7}}},
			[]int{0, 1, 2, 3, 0, 1, 2, 3}},
		{"f2 a faulty member: its chunks are read from the next member's far copy",
			Raid10Far2, 1, []balanceRound{{true, nil, []uint64{0, 1, 2}}},
			[]int{0, 2, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, queues, _ := newQueueArray(t, tc.level, 4, 1<<20, balanceChunk, 0)
			if tc.faulty >= 0 {
				require.NoError(t, a.SetFaulty(tc.faulty))
			}
			var got []int
			for i, r := range tc.rounds {
				got = balanceRun(t, a, queues, r)
				require.Len(t, got, len(r.reads), "round %d", i)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// balanceRun submits round r to a, whose members are queues, and returns
// the member each read went to (block_bio_queue on the member, at the sector
// of a copy of the chunk there), or -1.
func balanceRun(t *testing.T, a *Array, queues []*blk.Queue, r balanceRound) []int {
	t.Helper()
	const sectors = balanceChunk >> blk.SectorShift
	reads := make([]map[uint64]bool, len(queues)) // member read bios' sectors
	for d, q := range queues {
		reads[d] = map[uint64]bool{}
		q.SetTracer(blk.TraceFunc(func(e blk.TraceEvent) {
			if e.Kind == blk.TraceBioQueue && e.Op == blk.OpRead {
				reads[d][e.Sector] = true
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
		require.NoError(t, plug.Finish())
	}
	log.checkOnce(t)
	got := make([]int, len(r.reads))
	for i, c := range r.reads {
		got[i] = -1
		copies, n := a.chunkCopies(c)
		for _, l := range copies[:n] {
			if reads[l.dev][l.sector] {
				require.Equal(t, -1, got[i], "chunk %d read from two members", c)
				got[i] = l.dev
			}
		}
	}
	return got
}

// TestReadBalanceSpreadsAStream: a sequential read in windows of two chunks a
// pair (readahead's window, under one plug each) is served by all four
// members of a near-2 array, each reading half its pair's chunks, with the
// data intact; a far-2 array reads only first copies.
func TestReadBalanceSpreadsAStream(t *testing.T) {
	for _, level := range []Level{Raid10Near2, Raid10Far2} {
		t.Run(level.String(), func(t *testing.T) {
			a, queues, _ := newQueueArray(t, level, 4, 1<<20, balanceChunk, 0)
			const window = 4 * balanceChunk
			data := make([]byte, 16*window)
			for i := range data {
				data[i] = byte(i/4096) ^ byte(i)
			}
			require.NoError(t, doIO(t, a, blk.OpWrite, 0, ioOpts{data: data}))
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
				want := uint64(len(data) / 4)
				assert.Equal(t, want, read, fmt.Sprintf("member %d reads a quarter", d))
			}
		})
	}
}
