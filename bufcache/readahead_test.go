package bufcache

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bufcache/blk"
	"github.com/bhsim/bhsim/bufcache/blk/md"
)

// TestReadaheadWindowFromIOOpt: a device's readahead window is twice its
// io_opt and at least 128 KiB unless read_ahead_kb is set — 128 KiB for a
// disk that reports none, two stripes of 512 KiB chunks on four members
// for md (raid0 and raid10 f2: four chunks a stripe; raid10 n2 and RAID6:
// two), as blk_queue_io_opt sets it in v5.10 and blk_apply_bdi_limits in
// v6.18 — and, on a v6.18 queue, twice max_sectors for a rotational disk
// that reports none: 2560 KiB at the default 1280, 8192 KiB at 4096, as this
// machine's rotational virtio disk shows.
func TestReadaheadWindowFromIOOpt(t *testing.T) {
	const chunk = 512 << 10
	disks := func(t *testing.T, model blk.Model, version blk.Version, maxKB uint32) []blk.Device {
		var devs []blk.Device
		for i := range 4 {
			mem, err := blk.NewMemDisk(fmt.Sprintf("sd%c", 'a'+i), 64<<20, 512)
			require.NoError(t, err)
			lim := blk.DefaultLimits(512, 4096)
			lim.Version = version
			if maxKB != 0 {
				lim.MaxSectors = maxKB * 2
			}
			q, err := blk.NewQueue("", mem, model, lim)
			require.NoError(t, err)
			devs = append(devs, q)
		}
		return devs
	}
	hdd := blk.WD8003FFBX()
	for _, tc := range []struct {
		name    string
		level   md.Level // ignored for a disk
		model   blk.Model
		version blk.Version
		maxKB   uint32 // max_sectors_kb, 0 for the default 1280
		raKB    uint32
		wantKB  uint64
	}{
		{"disk", 0, blk.Null{}, blk.Version510, 0, 0, 128},
		{"disk", 0, blk.Null{}, blk.Version618, 0, 0, 128},
		{"disk", 0, blk.Null{}, blk.Version510, 0, 4096, 4096},
		{"hdd", 0, hdd, blk.Version510, 0, 0, 128},
		{"hdd", 0, hdd, blk.Version618, 0, 0, 2560},
		{"hdd", 0, hdd, blk.Version618, 4096, 0, 8192},
		{"hdd", 0, hdd, blk.Version618, 0, 512, 512},
		{"raid0", md.Raid0, hdd, blk.Version618, 0, 0, 4096},
		{"raid0", md.Raid0, blk.Null{}, blk.Version510, 0, 0, 4096},
		{"raid10f2", md.Raid10Far2, blk.Null{}, blk.Version510, 0, 0, 4096},
		{"raid10n2", md.Raid10Near2, blk.Null{}, blk.Version510, 0, 0, 2048},
		{"raid6", md.Raid6, blk.Null{}, blk.Version510, 0, 0, 2048},
		{"raid6", md.Raid6, blk.Null{}, blk.Version510, 0, 64, 64},
	} {
		t.Run(fmt.Sprintf("%s/%s/max_sectors_kb=%d/read_ahead_kb=%d", tc.name, tc.version, tc.maxKB, tc.raKB), func(t *testing.T) {
			devs := disks(t, tc.model, tc.version, tc.maxKB)
			dev := devs[0]
			if tc.name != "disk" && tc.name != "hdd" {
				a, err := md.New(md.Config{Level: tc.level, ChunkSize: chunk}, devs)
				require.NoError(t, err)
				dev = a
			}
			m, err := NewMachine(Config{})
			require.NoError(t, err)
			d, err := m.Open(dev, DeviceOptions{ReadAheadKB: tc.raKB})
			require.NoError(t, err)
			assert.Equal(t, tc.wantKB<<10/4096, d.raPages)
		})
	}
}
