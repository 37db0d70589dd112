package md

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestLayout checks, for hand-computed cases of every level (chunk 64 KiB =
// 128 sectors, members of 2 MiB = 4096 sectors), where an array sector lives:
// the layout function, and the bytes a write through the array leaves on the
// members.
func TestLayout(t *testing.T) {
	type loc = location
	tests := []struct {
		level   Level
		members int
		sector  uint64
		want    []loc
	}{
		// raid0: chunk c on member c mod n, row c / n.
		{Raid0, 4, 0, []loc{{0, 0}}},
		{Raid0, 4, 128, []loc{{1, 0}}},
		{Raid0, 4, 3*128 + 5, []loc{{3, 5}}},
		{Raid0, 4, 4 * 128, []loc{{0, 128}}},
		{Raid0, 4, 9*128 + 7, []loc{{1, 263}}},
		{Raid0, 3, 4*128 + 1, []loc{{1, 129}}},
		// raid10 n2, 4 members: chunk c on (2c mod 4, 2c+1 mod 4) at row c/2.
		{Raid10Near2, 4, 0, []loc{{0, 0}, {1, 0}}},
		{Raid10Near2, 4, 128 + 9, []loc{{2, 9}, {3, 9}}},
		{Raid10Near2, 4, 2*128 + 3, []loc{{0, 131}, {1, 131}}},
		{Raid10Near2, 4, 5 * 128, []loc{{2, 256}, {3, 256}}},
		// raid10 n2, 3 members: the second copy of chunk 1 wraps to the next row.
		{Raid10Near2, 3, 128, []loc{{2, 0}, {0, 128}}},
		{Raid10Near2, 3, 2 * 128, []loc{{1, 128}, {2, 128}}},
		// raid10 f2, 4 members: 16 chunks per half, so the far copy is 2048
		// sectors in, on the next member.
		{Raid10Far2, 4, 0, []loc{{0, 0}, {1, 2048}}},
		{Raid10Far2, 4, 3*128 + 1, []loc{{3, 1}, {0, 2049}}},
		{Raid10Far2, 4, 5 * 128, []loc{{1, 128}, {2, 2176}}},
		// raid6, 4 members, left-symmetric:
		//   row 0: Q D0 D1 P   row 1: D0 D1 P Q   row 2: D1 P Q D0   row 3: P Q D0 D1
		{Raid6, 4, 0, []loc{{1, 0}}},
		{Raid6, 4, 128, []loc{{2, 0}}},
		{Raid6, 4, 2*128 + 4, []loc{{0, 132}}},
		{Raid6, 4, 3 * 128, []loc{{1, 128}}},
		{Raid6, 4, 4 * 128, []loc{{3, 256}}},
		{Raid6, 4, 5*128 + 127, []loc{{0, 383}}},
		{Raid6, 4, 6 * 128, []loc{{2, 384}}},
		{Raid6, 4, 7 * 128, []loc{{3, 384}}},
		{Raid6, 4, 8 * 128, []loc{{1, 512}}},
		// raid6, 5 members: row 1 has P on member 3, Q on 4, data from member 0.
		{Raid6, 5, 3 * 128, []loc{{0, 128}}},
		{Raid6, 5, 5 * 128, []loc{{2, 128}}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("level=%s/members=%d/sector=%d", tc.level, tc.members, tc.sector), func(t *testing.T) {
			a, disks := newArray(t, tc.level, tc.members, 2<<20, 64<<10)
			copies, n := a.chunkCopies(tc.sector >> 7)
			var got []loc
			for _, l := range copies[:n] {
				got = append(got, loc{l.dev, l.sector + tc.sector&127})
			}
			assert.Equal(t, tc.want, got, "layout")

			pattern := bytes.Repeat([]byte{0xa5, 0x5a}, 256)
			require.NoError(t, doIO(t, a, blk.OpWrite, tc.sector, ioOpts{data: pattern}))
			for _, l := range tc.want {
				assert.Equal(t, pattern, memberBytes(t, disks[l.dev], l.sector, len(pattern)), "member %d sector %d", l.dev, l.sector)
			}
		})
	}
}

// TestParityDevs checks the left-symmetric rotation of P and Q.
func TestParityDevs(t *testing.T) {
	tests := []struct {
		members int
		row     uint64
		p, q    int
	}{
		{4, 0, 3, 0}, {4, 1, 2, 3}, {4, 2, 1, 2}, {4, 3, 0, 1}, {4, 4, 3, 0},
		{6, 0, 5, 0}, {6, 1, 4, 5}, {6, 5, 0, 1},
	}
	for _, tc := range tests {
		a, _ := newArray(t, Raid6, tc.members, 1<<20, 64<<10)
		p, q := a.parityDevs(tc.row)
		assert.Equal(t, [2]int{tc.p, tc.q}, [2]int{p, q}, "members %d row %d", tc.members, tc.row)
	}
}

// TestSize checks each level's capacity, rounded down to whole chunks, and the
// stacked logical block size.
func TestSize(t *testing.T) {
	const chunk = 64 << 10
	tests := []struct {
		level      Level
		members    int
		memberSize uint64
		lbs        uint32
		want       uint64 // bytes
	}{
		{Raid0, 4, 2 << 20, 512, 8 << 20},
		{Raid0, 4, 2<<20 + 4096, 512, 8 << 20},
		{Raid10Near2, 4, 2 << 20, 512, 4 << 20},
		{Raid10Near2, 3, 2 << 20, 4096, 3 << 20},
		{Raid10Near2, 3, 3 * chunk, 512, 4 * chunk}, // 9 slots hold 4 whole chunks
		{Raid10Far2, 4, 2 << 20, 512, 4 << 20},
		{Raid10Far2, 4, 3 * chunk, 512, 4 * chunk}, // one chunk per half
		{Raid6, 4, 2 << 20, 512, 4 << 20},
		{Raid6, 6, 2<<20 + 8192, 4096, 8 << 20},
	}
	for _, tc := range tests {
		disks := newDisks(t, tc.members, tc.memberSize, tc.lbs)
		a, err := New(Config{Level: tc.level, ChunkSize: chunk}, devices(disks))
		require.NoError(t, err)
		assert.Equal(t, tc.want>>blk.SectorShift, a.Sectors(), "%s over %d × %d", tc.level, tc.members, tc.memberSize)
		assert.Equal(t, tc.lbs, a.LogicalBlockSize())
		assert.Equal(t, "md", a.Name())
		assert.Equal(t, tc.level, a.Level())
		assert.Equal(t, uint32(chunk), a.ChunkSize())
	}
}

// TestDivmod: the power-of-two shortcut agrees with division.
func TestDivmod(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 4, 5, 6, 8, 255, 256, 257} {
		for _, s := range []uint64{0, 1, n - 1, n, n + 1, 12345, 1 << 40, 1<<64 - 1} {
			q, r := divmod(s, n)
			assert.Equal(t, [2]uint64{s / n, s % n}, [2]uint64{q, r}, "%d / %d", s, n)
		}
	}
}

// TestOptimalIOSize: io_opt is a chunk on every member holding a different
// part of a stripe — all of raid0's and raid10 f2's, half of raid10 n2's
// when the near copies divide the members (raid10_nr_stripes: all of them
// otherwise), RAID6's data members.
func TestOptimalIOSize(t *testing.T) {
	const chunk = 64 << 10
	for _, tc := range []struct {
		level   Level
		members int
		chunks  uint32
	}{
		{Raid0, 2, 2}, {Raid0, 4, 4}, {Raid10Far2, 4, 4}, {Raid10Near2, 4, 2},
		{Raid10Near2, 3, 3}, {Raid6, 4, 2}, {Raid6, 6, 4},
	} {
		a, _ := newArray(t, tc.level, tc.members, 4<<20, chunk)
		assert.Equal(t, tc.chunks*chunk, a.OptimalIOSize(), "%s over %d members", tc.level, tc.members)
	}
}
