package md

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestRaid6TornStripe shows what a power cut in the middle of a stripe write
// means for raid6: the RAID write hole.
//
// A four-member raid6 with 16 KiB chunks holds, in stripe row 0, data chunk D0
// on member 1, D1 on member 2, P on member 3 and Q on member 0. Version A of
// the row is written and completes; then version B overwrites the whole row.
// raid5d writes each stripe's data units before its P and Q, and the member
// bios of the row's four stripes merge in the member queues, so B reaches the
// disks as four requests, in this order: D0 (member 1), D1 (member 2), P
// (member 3), Q (member 0). A power cut can fall between any two.
//
// Reading the row after the cut looks fine whatever the cut: raid6 reads data
// chunks directly and never checks parity, so it returns A, B, or A in one
// chunk and B in the other. But where the data and the parity no longer
// match, the stripe is torn, and that shows only when a member is lost
// later: the missing chunk is rebuilt from data and parity of different
// versions and comes back as neither A nor B — garbage, silently. The model
// keeps a prefix of the request order, so within a stripe it tears only one
// way, new data with old parity; independent member disks, each with its own
// write cache, can also keep the new parity and lose the new data — the
// reverse, built here with PowerLog.CutPerDisk. md's answer to the hole is a
// resync after an unclean shutdown (which recomputes parity from the data,
// so a lost member must not be lost before it ends), a write-intent bitmap to
// make that resync short, and the raid5 journal or PPL to close the hole; the
// model has none of them.
func TestRaid6TornStripe(t *testing.T) {
	const (
		chunk      = 16 << 10
		memberSize = 256 << 10
	)
	log := blk.NewPowerLog()
	var queues []blk.Device
	for i := range 4 {
		disk, err := blk.NewMemDisk(fmt.Sprintf("sd%c", 'a'+i), memberSize, 512)
		require.NoError(t, err)
		q, err := log.NewQueue("", disk, blk.Null{}, blk.DefaultLimits(512, 4096))
		require.NoError(t, err)
		queues = append(queues, q)
	}
	a, err := New(Config{Level: Raid6, ChunkSize: chunk}, queues)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(11, 12))
	verA, verB := fill(rng, 2*chunk), fill(rng, 2*chunk)
	require.NoError(t, doIO(t, a, blk.OpWrite, 0, ioOpts{data: verA}))
	afterA := log.Writes()
	require.NoError(t, doIO(t, a, blk.OpWrite, 0, ioOpts{data: verB}))
	reqs := log.Requests()[afterA:]
	require.Len(t, reqs, 4, "B is one request per member")
	var order []int
	for _, r := range reqs {
		order = append(order, r.Disk)
		assert.Equal(t, [2]uint64{0, chunk >> blk.SectorShift}, [2]uint64{r.Sector, r.Sectors})
	}
	require.Equal(t, []int{1, 2, 3, 0}, order, "D0, D1, P, Q")

	d0A, d1A, d0B, d1B := verA[:chunk], verA[chunk:], verB[:chunk], verB[chunk:]
	xor := func(x, y, z []byte) []byte {
		out := make([]byte, len(x))
		for i := range out {
			out[i] = x[i] ^ y[i] ^ z[i]
		}
		return out
	}
	tests := []struct {
		name     string
		keep     []int  // write requests kept per member (A's request plus B's, if kept)
		read     []byte // what the row reads back with every member working
		lose     int    // the member lost after the cut
		rebuilt  []byte // what the lost member's chunk reads back as
		consists bool   // P matches the data
	}{
		{"cut before B: A whole", []int{1, 1, 1, 1}, verA, 1, d0A, true},
		{"cut after D0", []int{1, 2, 1, 1}, append(d0B[:chunk:chunk], d1A...), 2,
			xor(d0A, d1A, d0B), false}, // D1 from P_A ⊕ D0_B: neither version
		{"cut after D0 and D1: new data, old parity", []int{1, 2, 2, 1}, verB, 1,
			xor(d0A, d1A, d1B), false}, // D0 from P_A ⊕ D1_B
		{"cut after P: Q still old", []int{1, 2, 2, 2}, verB, 1, d0B, true}, // P alone rebuilds one chunk
		{"reverse: new parity, old data", []int{2, 1, 1, 2}, verA, 2,
			xor(d0B, d1B, d0A), false}, // D1 from P_B ⊕ D0_A
		{"B whole", []int{2, 2, 2, 2}, verB, 1, d0B, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			disks, err := log.CutPerDisk(tc.keep)
			require.NoError(t, err)
			b, err := New(Config{Level: Raid6, ChunkSize: chunk}, devices(disks))
			require.NoError(t, err)
			got := make([]byte, 2*chunk)
			require.NoError(t, doIO(t, b, blk.OpRead, 0, ioOpts{data: got}))
			assert.Equal(t, tc.read, got, "read with every member")
			p := memberBytes(t, disks[3], 0, chunk)
			d0, d1 := memberBytes(t, disks[1], 0, chunk), memberBytes(t, disks[2], 0, chunk)
			assert.Equal(t, tc.consists, assert.ObjectsAreEqual(xor(d0, d1, make([]byte, chunk)), p), "P = D0 ⊕ D1")

			require.NoError(t, b.SetFaulty(tc.lose))
			lost := got[:chunk]
			if tc.lose == 2 {
				lost = got[chunk:]
			}
			require.NoError(t, doIO(t, b, blk.OpRead, 0, ioOpts{data: got}))
			assert.Equal(t, tc.rebuilt, lost, "member %d rebuilt", tc.lose)
			if !tc.consists {
				assert.NotEqual(t, d0A, lost)
				assert.NotEqual(t, d0B, lost)
				assert.NotEqual(t, d1A, lost)
				assert.NotEqual(t, d1B, lost)
			}
		})
	}
	// The cuts at request boundaries of the global order are the cases above
	// but the reverse.
	for i, keep := range [][]int{{1, 1, 1, 1}, {1, 2, 1, 1}, {1, 2, 2, 1}, {1, 2, 2, 2}, {2, 2, 2, 2}} {
		global, err := log.CutAt(afterA + i)
		require.NoError(t, err)
		each, err := log.CutPerDisk(keep)
		require.NoError(t, err)
		for d := range global {
			assert.Equal(t, memberBytes(t, each[d], 0, chunk), memberBytes(t, global[d], 0, chunk), "cut %d member %d", afterA+i, d)
		}
	}
}
