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
// two), as raid0_run, raid10_run and raid5_run set it in v5.10 and
// blk_apply_bdi_limits in v6.18.
func TestReadaheadWindowFromIOOpt(t *testing.T) {
	const chunk = 512 << 10
	disks := func(t *testing.T) []blk.Device {
		var devs []blk.Device
		for i := range 4 {
			mem, err := blk.NewMemDisk(fmt.Sprintf("sd%c", 'a'+i), 64<<20, 512)
			require.NoError(t, err)
			q, err := blk.NewQueue("", mem, blk.Null{}, blk.DefaultLimits(512, 4096))
			require.NoError(t, err)
			devs = append(devs, q)
		}
		return devs
	}
	for _, tc := range []struct {
		name   string
		level  md.Level // ignored for "disk"
		raKB   uint32
		wantKB uint64
	}{
		{"disk", 0, 0, 128},
		{"disk", 0, 4096, 4096},
		{"raid0", md.Raid0, 0, 4096},
		{"raid10f2", md.Raid10Far2, 0, 4096},
		{"raid10n2", md.Raid10Near2, 0, 2048},
		{"raid6", md.Raid6, 0, 2048},
		{"raid6", md.Raid6, 64, 64},
	} {
		t.Run(fmt.Sprintf("%s/read_ahead_kb=%d", tc.name, tc.raKB), func(t *testing.T) {
			devs := disks(t)
			dev := devs[0]
			if tc.name != "disk" {
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
