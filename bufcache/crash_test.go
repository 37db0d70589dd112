package bufcache

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// crashWrite is one buffered write of the crash workload.
type crashWrite struct {
	pos, n uint64
}

// TestCrashEveryCutPoint runs a small write-then-sync workload through
// bufcache on a request queue over a MemDisk — writes, sync, overwrites
// (some of partial blocks), sync, writes never synced — with the queue's
// requests recorded in a PowerLog, then cuts the power at every request
// boundary and checks what survives against what the model promises:
//
//   - at or after the request that completed a sync, everything written
//     before that sync is on the disk, byte for byte;
//   - between two syncs, every block holds either its contents at the earlier
//     sync or at the later one, whole: a request is kept whole or not at all,
//     and a block's bio is never split;
//   - the page cache is gone: a fresh machine opened on the surviving disk
//     reads back exactly the surviving bytes;
//   - the data written after the last sync is lost at every cut.
//
// It runs for 4 KiB and 512-byte blocks, with the default queue limits and
// with limits so small (two 512-byte segments, or one page, per request) that
// every page is its own request or is cut in four: then with 512-byte blocks
// a cut can keep part of a page — whole blocks, not whole pages. The log at
// the end is the teacher's view: how much written data each cut loses.
func TestCrashEveryCutPoint(t *testing.T) {
	const size = 64 << 10
	steps := [][]crashWrite{
		{{0, 12 << 10}, {20<<10 + 100, 600}},                // then sync 1
		{{4 << 10, 4 << 10}, {40 << 10, 8 << 10}, {0, 100}}, // then sync 2
		{{8 << 10, 2 << 10}},                                // never synced
	}
	small := blk.DefaultLimits(512, 512)
	small.MaxSectors, small.MaxSegments = 8, 2
	for _, bs := range []uint32{4096, 512} {
		for _, lim := range []struct {
			name string
			l    blk.Limits
		}{{"default", blk.DefaultLimits(512, 4096)}, {"small", small}} {
			t.Run(fmt.Sprintf("bs=%d/limits=%s", bs, lim.name), func(t *testing.T) {
				base := randomBytes(10, size)
				mem, err := blk.NewMemDisk("sda", size, 512)
				require.NoError(t, err)
				var b blk.Bio
				b.Reset(blk.OpWrite, 0)
				b.AddVec(base, size)
				b.EndIO = func(*blk.Bio) {}
				mem.Submit(&b)
				log := blk.NewPowerLog()
				q, err := log.NewQueue("", mem, blk.Null{}, lim.l)
				require.NoError(t, err)
				m, err := NewMachine(Config{Check: true})
				require.NoError(t, err)
				d, err := m.Open(q, DeviceOptions{})
				require.NoError(t, err)
				cpu := m.CPU(0)
				require.NoError(t, d.SetBlocksize(cpu, bs))

				// versions[i] is what the application wrote up to sync i
				// (versions[0]: the disk before), marks[i] the number of
				// write requests completed when sync i returned.
				versions, marks := [][]byte{base}, []int{0}
				app := slices.Clone(base)
				for i, step := range steps {
					for j, w := range step {
						data := randomBytes(uint64(100*i+j), int(w.n))
						_, err := d.Write(cpu, w.pos, userIter(t, data))
						require.NoError(t, err)
						copy(app[w.pos:], data)
					}
					if i < 2 {
						require.NoError(t, d.SyncBlockdev(cpu))
						versions, marks = append(versions, slices.Clone(app)), append(marks, log.Writes())
					}
				}
				require.Equal(t, marks[2], log.Writes(), "nothing after the last sync reached the disk")
				tornPages := 0
				var report []string
				for k := 0; k <= log.Writes(); k++ {
					disks, err := log.CutAt(k)
					require.NoError(t, err)
					img := make([]byte, size)
					_, err = disks[0].ReadAt(img, 0)
					require.NoError(t, err)
					s := 0 // the last sync completed before the cut
					for s+1 < len(marks) && marks[s+1] <= k {
						s++
					}
					if k == marks[s] {
						require.Empty(t, diffBytes(versions[s], img), "cut %d: everything synced by sync %d", k, s)
					}
					next := versions[min(s+1, len(versions)-1)]
					for off := 0; off < size; off += int(bs) {
						blkImg := img[off : off+int(bs)]
						require.True(t, slices.Equal(blkImg, versions[s][off:off+int(bs)]) || slices.Equal(blkImg, next[off:off+int(bs)]),
							"cut %d (after sync %d): block at %d is neither version, whole", k, s, off)
					}
					for off := 0; off < size; off += 4096 {
						old := slices.Equal(img[off:off+4096], versions[s][off:off+4096])
						nw := slices.Equal(img[off:off+4096], next[off:off+4096])
						if !old && !nw {
							tornPages++
						}
					}

					fresh, err := NewMachine(Config{Check: true})
					require.NoError(t, err)
					d2, err := fresh.Open(disks[0], DeviceOptions{})
					require.NoError(t, err)
					got := make([]byte, size)
					_, err = d2.Read(fresh.CPU(0), 0, got)
					require.NoError(t, err)
					require.Empty(t, diffBytes(img, got), "cut %d: read back through a fresh machine", k)

					lost := 0
					for i := range img {
						if img[i] != app[i] {
							lost++
						}
					}
					if k == marks[2] {
						unsynced := 0
						for i := range app {
							if app[i] != versions[2][i] {
								unsynced++
							}
						}
						assert.Equal(t, unsynced, lost, "the last cut loses exactly what was never synced")
					}
					report = append(report, fmt.Sprintf("cut %d (sync %d done): %d bytes lost", k, s, lost))
				}
				t.Logf("%d write requests, %d reads; %d cut points with a page torn at a block boundary", log.Writes(), log.Reads(), tornPages)
				for _, line := range report {
					t.Log(line)
				}
				if bs == 512 && lim.name == "small" {
					assert.NotZero(t, tornPages, "512-byte blocks in requests of two: a cut keeps part of a page")
				}
				if bs == 4096 {
					assert.Zero(t, tornPages, "a 4 KiB block is a page: never torn")
				}
				seed := uint64(bs)
				k := log.RandomCut(seed)
				t.Logf("random cut (seed %d): %d", seed, k)
				assert.Equal(t, k, log.RandomCut(seed))
			})
		}
	}
}
