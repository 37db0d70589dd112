package md

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestArraySectorInvertsTheMapping holds ArraySector to the forward map
// (chunkCopies): every copy of every chunk, at several offsets, maps back
// to its array sector, on every level and on odd and even member counts;
// a RAID6 row's P and Q, the tail past the last whole chunk and a member
// the array does not have map to nothing.
func TestArraySectorInvertsTheMapping(t *testing.T) {
	for _, tc := range []struct {
		level   Level
		members int
	}{{Raid0, 2}, {Raid0, 3}, {Raid0, 4}, {Raid10Near2, 2}, {Raid10Near2, 3}, {Raid10Near2, 4},
		{Raid10Far2, 2}, {Raid10Far2, 3}, {Raid10Far2, 4}, {Raid6, 4}, {Raid6, 5}, {Raid6, 6}} {
		t.Run(tc.level.String()+"/"+string(rune('0'+tc.members)), func(t *testing.T) {
			const chunk = 4096
			devs := make([]blk.Device, tc.members)
			for i := range devs {
				d, err := blk.NewMemDisk("m", 40*chunk+1024, 512) // a tail past the last whole chunk
				require.NoError(t, err)
				devs[i] = d
			}
			a, err := New(Config{Level: tc.level, ChunkSize: chunk}, devs)
			require.NoError(t, err)
			chunkSectors := uint64(chunk >> blk.SectorShift)
			data := map[[2]uint64]bool{} // member and sector holding data
			for c := range a.Sectors() / chunkSectors {
				copies, n := a.chunkCopies(c)
				for _, l := range copies[:n] {
					for _, off := range []uint64{0, 1, chunkSectors - 1} {
						got, ok := a.ArraySector(l.dev, l.sector+off)
						require.True(t, ok, "chunk %d on member %d at %d", c, l.dev, l.sector+off)
						assert.Equal(t, c*chunkSectors+off, got, "chunk %d on member %d at %d", c, l.dev, l.sector+off)
					}
					data[[2]uint64{uint64(l.dev), l.sector}] = true
				}
			}
			for dev := range tc.members {
				for row := range a.rowChunks {
					at := a.rowSector(row)
					if _, ok := a.ArraySector(dev, at); !data[[2]uint64{uint64(dev), at}] {
						assert.False(t, ok, "member %d at %d holds no data", dev, at)
					}
				}
				_, ok := a.ArraySector(dev, 40*chunkSectors)
				assert.False(t, ok, "the tail past the last whole chunk")
			}
			_, ok := a.ArraySector(tc.members, 0)
			assert.False(t, ok, "no such member")
			_, ok = a.ArraySector(-1, 0)
			assert.False(t, ok, "no such member")
		})
	}
}
