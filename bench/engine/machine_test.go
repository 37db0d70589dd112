package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// TestBuild builds machines as the experiments do: with and without a
// kernel preset, a disk Build creates, a disk that outlives the machine,
// none; and refuses a disk the block layer refuses.
func TestBuild(t *testing.T) {
	kept, err := blk.NewMemDisk("kept", 1<<20, 512)
	require.NoError(t, err)
	k5 := MustKernel("5.10.10")
	grow := bufcache.Config{InitBlocksize: blocksize.PolicyGrow, CPUs: 3}
	for _, tc := range []struct {
		name      string
		spec      MachineSpec
		cpus      int
		noDev     bool
		size      uint64
		blockSize uint32
		err       bool
	}{
		{name: "no disk", spec: MachineSpec{Config: grow}, cpus: 3, noDev: true},
		{name: "memory disk, grow policy", spec: MachineSpec{Config: grow, Disk: DiskSpec{Name: "d", Size: 1 << 20, Logical: 512}},
			cpus: 3, size: 1 << 20, blockSize: 4096},
		// 5.10.10 leaves a 512-byte disk at 512-byte blocks (set_init_blocksize simplified).
		{name: "kernel preset over the config", spec: MachineSpec{Kernel: &k5, Config: grow, Disk: DiskSpec{Name: "d", Size: 1 << 20, Logical: 512}},
			cpus: 3, size: 1 << 20, blockSize: 512},
		{name: "existing disk", spec: MachineSpec{Config: grow, Disk: DiskSpec{Device: kept, MetadataOnly: true}},
			cpus: 3, size: 1 << 20, blockSize: 4096},
		{name: "disk not a multiple of its sector", spec: MachineSpec{Config: grow, Disk: DiskSpec{Name: "d", Size: 1000, Logical: 512}}, err: true},
		{name: "zero-sized disk", spec: MachineSpec{Config: grow, Disk: DiskSpec{Name: "d", Logical: 512}}, err: true},
		{name: "bad machine", spec: MachineSpec{Config: bufcache.Config{CPUs: -1}}, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Build(tc.spec)
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.cpus, m.NumCPU())
			if tc.noDev {
				assert.Nil(t, m.Dev)
				return
			}
			require.NotNil(t, m.Dev)
			assert.Equal(t, tc.size, m.Dev.Size())
			assert.Equal(t, tc.blockSize, m.Dev.BlockSize())
		})
	}
}
