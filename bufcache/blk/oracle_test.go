package blk

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dataBio returns a bio of the given op carrying data, spread over vectors of
// random length (whole logical blocks) on random or contiguous frames.
func dataBio(rng *rand.Rand, c *completions, id int, op Op, sector uint64, data []byte, lbs uint32) *Bio {
	b := c.bio(id, op, sector)
	pfn := rng.Uint64N(1 << 20)
	for len(data) > 0 {
		n := min(uint32(len(data)), lbs*(1+rng.Uint32N(4)))
		b.AddPage(data[:n], n, pfn, 0)
		if rng.IntN(2) == 0 {
			pfn += uint64(n+4095) / 4096
		} else {
			pfn = rng.Uint64N(1 << 20)
		}
		data = data[n:]
	}
	return b
}

func TestDataOracle(t *testing.T) {
	const seed = 20210126
	t.Logf("seed %d", seed)
	for _, acct := range []SegmentAccounting{SegmentsPerBio, SegmentsCoalesced} {
		t.Run(acct.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(acct)))
			const size = 4 << 20
			lim := limits(acct)
			lim.MaxSectors = 64 // small requests, so that splits happen too
			qs := []*Queue{newQueue(t, "sda", size, Null{}, lim), newQueue(t, "sdb", size, Null{}, lim)}
			flat := [][]byte{make([]byte, size), make([]byte, size)}
			c := newCompletions()
			var p Plug
			p.Start()
			id := 0
			var next [2]uint64 // where each disk's last write ended
			for range 1000 {
				d := rng.IntN(2)
				n := 512 * (1 + rng.IntN(100))
				sector := rng.Uint64N(size>>SectorShift - 512)
				if rng.IntN(3) > 0 && next[d]+uint64(n>>SectorShift) <= size>>SectorShift {
					sector = next[d] // mostly sequential runs
				}
				next[d] = sector + uint64(n>>SectorShift)
				data := make([]byte, n)
				seedByte, stride := byte(rng.Uint32()), byte(rng.Uint32()|1)
				for i := range data {
					data[i] = seedByte + byte(i)*stride
				}
				copy(flat[d][sector<<SectorShift:], data)
				SubmitBio(&p, qs[d], dataBio(rng, c, id, OpWrite, sector, data, 512))
				id++
				if rng.IntN(50) == 0 {
					p.Flush()
				}
			}
			require.NoError(t, p.Finish())
			require.Len(t, c.order, id)
			for i, q := range qs {
				got := make([]byte, size)
				_, err := q.store.ReadAt(got, 0)
				require.NoError(t, err)
				assert.Equal(t, flat[i], got, "disk %s", q.Name())
				assert.NotZero(t, q.Stats().Write.Merges)
				assert.NotZero(t, q.Stats().Write.Splits)
			}

			// Read back through plugged reads.
			p.Start()
			bufs := map[int][]byte{}
			want := map[int][]byte{}
			for range 300 {
				d := rng.IntN(2)
				sector := rng.Uint64N(size>>SectorShift - 512)
				n := 512 * (1 + rng.IntN(64))
				buf := make([]byte, n)
				bufs[id], want[id] = buf, flat[d][sector<<SectorShift:sector<<SectorShift+uint64(n)]
				SubmitBio(&p, qs[d], dataBio(rng, c, id, OpRead, sector, buf, 512))
				id++
			}
			require.NoError(t, p.Finish())
			for k, buf := range bufs {
				require.NoError(t, c.errs[k])
				assert.Equal(t, want[k], buf, "read %d", k)
			}
		})
	}
}

func TestMemDiskStatsThroughQueue(t *testing.T) {
	// The store counts each bio once, when its last part is served, and
	// every sector of every part.
	q := newQueue(t, "sda", 16<<20, Null{}, DefaultLimits(512, 4096))
	c := newCompletions()
	big := c.bio(0, OpWrite, 0)
	big.AddPage(nil, 3<<20, 100, 0) // split into 3 parts at 1280 KiB
	q.Submit(big)
	small := c.pageBio(1, OpRead, 0, 4096, 1, 0)
	q.Submit(small)
	assert.Equal(t, DiskStats{Reads: 1, Writes: 1, SectorsRead: 8, SectorsWrite: 6144}, q.store.Stats())
	assert.Equal(t, uint64(2), q.Stats().Write.Splits)
	assert.Equal(t, uint64(3), q.Stats().Write.Requests)
}
