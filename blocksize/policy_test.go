package blocksize_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/blocksize"
)

// wd8003ffbx is the WD Red Pro 8 TB capacity of the set_init_blocksize thread (a smartctl dump):
// 4096 × 1,953,506,646 bytes.
const wd8003ffbx = 8_001_563_222_016

func TestPolicyString(t *testing.T) {
	assert.Equal(t, "grow", blocksize.PolicyGrow.String())
	assert.Equal(t, "logical", blocksize.PolicyLogical.String())
	assert.Equal(t, "Policy(2)", blocksize.Policy(2).String())
	assert.Equal(t, "Policy(255)", blocksize.Policy(255).String())
}

func TestPolicies(t *testing.T) {
	ps := blocksize.Policies()
	assert.Equal(t, []blocksize.Policy{blocksize.PolicyGrow, blocksize.PolicyLogical}, ps)
	ps[0] = blocksize.PolicyLogical
	assert.Equal(t, blocksize.PolicyGrow, blocksize.Policies()[0], "Policies must return a fresh slice")
}

func TestParsePolicy(t *testing.T) {
	for _, p := range blocksize.Policies() {
		got, err := blocksize.ParsePolicy(p.String())
		require.NoError(t, err)
		assert.Equal(t, p, got)
	}
	for _, s := range []string{"", "Grow", "grow ", "simplified", "Policy(2)"} {
		_, err := blocksize.ParsePolicy(s)
		require.ErrorIs(t, err, blocksize.ErrUnknownPolicy, "%q", s)
		assert.Contains(t, err.Error(), fmt.Sprintf("%q", s))
		assert.Contains(t, err.Error(), "grow, logical")
	}
}

// oracleGrow is the PolicyGrow result written as the brief states it: the
// largest power of two p with logical <= p <= pageSize dividing the device
// size, taking the size rounded down to whole logical blocks (the kernel's
// loop never looks at lower bits).
func oracleGrow(deviceBytes uint64, logical, pageSize uint32) uint32 {
	whole := deviceBytes - deviceBytes%uint64(logical)
	best := logical
	for p := uint64(logical); p <= uint64(pageSize); p *= 2 {
		if whole%p == 0 {
			best = uint32(p)
		}
	}
	return best
}

func TestInitBlocksizeTable(t *testing.T) {
	tests := []struct {
		name              string
		deviceBytes       uint64
		logical, pageSize uint32
		grow, logicalWant uint32
	}{
		{"WD8003FFBX", wd8003ffbx, 512, 4096, 4096, 512},
		// 1953506646 = 2 × 976753323: the disk divides by 8 KiB but not 16 KiB.
		{"WD8003FFBX 16K pages", wd8003ffbx, 512, 16384, 8192, 512},
		{"WD8003FFBX 64K pages", wd8003ffbx, 512, 65536, 8192, 512},
		{"odd KiB partition", 1_000_001 * 1024, 512, 4096, 1024, 512},
		{"odd sectors", 1_000_001 * 512, 512, 4096, 512, 512},
		{"2 KiB multiple", 3 * 2048, 512, 4096, 2048, 512},
		{"size unknown", 0, 512, 4096, 4096, 512},
		{"size unknown 64K", 0, 1024, 65536, 65536, 1024},
		{"4Kn disk", 4096 * 1001, 4096, 4096, 4096, 4096},
		{"4Kn on 64K pages", 4096 * 1001, 4096, 65536, 4096, 4096},
		{"64K multiple", 65536 * 3, 512, 65536, 65536, 512},
		{"trailing partial sector ignored", 4096*5 + 100, 512, 4096, 4096, 512},
		{"trailing partial logical block ignored", 4096*5 + 1024, 2048, 4096, 4096, 2048},
		{"smaller than one logical block", 100, 512, 4096, 4096, 512},
		{"largest size", math.MaxUint64, 512, 4096, 512, 512},
		{"top bit only", 1 << 63, 512, 65536, 65536, 512},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := blocksize.PolicyGrow.InitBlocksize(tt.deviceBytes, tt.logical, tt.pageSize)
			require.NoError(t, err)
			assert.Equal(t, tt.grow, got, "grow")
			assert.Equal(t, oracleGrow(tt.deviceBytes, tt.logical, tt.pageSize), got, "oracle")
			got, err = blocksize.PolicyLogical.InitBlocksize(tt.deviceBytes, tt.logical, tt.pageSize)
			require.NoError(t, err)
			assert.Equal(t, tt.logicalWant, got, "logical")
		})
	}
}

func TestInitBlocksizeSweep(t *testing.T) {
	for _, pageSize := range []uint32{4096, 16384, 65536} {
		for logical := uint32(512); logical <= pageSize; logical *= 2 {
			t.Run(fmt.Sprintf("page=%d/logical=%d", pageSize, logical), func(t *testing.T) {
				for n := uint64(0); n < 4096; n++ {
					for _, size := range []uint64{n * 512, n*512 + 1, n * 4096 * 1021, 1<<40 + n*512} {
						got, err := blocksize.PolicyGrow.InitBlocksize(size, logical, pageSize)
						require.NoError(t, err)
						require.Equal(t, oracleGrow(size, logical, pageSize), got, "size %d", size)
					}
				}
			})
		}
	}
}

func TestInitBlocksizeErrors(t *testing.T) {
	tests := []struct {
		name              string
		p                 blocksize.Policy
		logical, pageSize uint32
		op                string
		wantErr           error
	}{
		{"page not pow2", blocksize.PolicyGrow, 512, 5000, "PAGE_SIZE", blocksize.ErrBadPageSize},
		{"page too small", blocksize.PolicyLogical, 512, 2048, "PAGE_SIZE", blocksize.ErrBadPageSize},
		{"page too big", blocksize.PolicyGrow, 512, 1 << 17, "PAGE_SIZE", blocksize.ErrBadPageSize},
		{"bad page checked first", blocksize.PolicyGrow, 1000, 1000, "PAGE_SIZE", blocksize.ErrBadPageSize},
		{"logical not pow2", blocksize.PolicyGrow, 520, 4096, "logical_block_size", blocksize.ErrNotPowerOfTwo},
		{"logical zero", blocksize.PolicyLogical, 0, 4096, "logical_block_size", blocksize.ErrNotPowerOfTwo},
		{"logical too small", blocksize.PolicyGrow, 256, 4096, "logical_block_size", blocksize.ErrBelowMinimum},
		{"logical above page", blocksize.PolicyLogical, 8192, 4096, "logical_block_size", blocksize.ErrAbovePageSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.p.InitBlocksize(wd8003ffbx, tt.logical, tt.pageSize)
			requireSizeError(t, err, tt.op, tt.wantErr)
			assert.Zero(t, got)
		})
	}

	got, err := blocksize.Policy(7).InitBlocksize(wd8003ffbx, 512, 4096)
	require.ErrorIs(t, err, blocksize.ErrUnknownPolicy)
	assert.Contains(t, err.Error(), "Policy(7)")
	assert.Zero(t, got)
}

// FuzzInitBlocksize runs both policies on arbitrary inputs (which must give a
// *SizeError or a valid block size matching the oracle) and on the same
// inputs mapped to valid ones (which must succeed).
func FuzzInitBlocksize(f *testing.F) {
	f.Add(uint64(wd8003ffbx), uint32(512), uint32(4096))
	f.Add(uint64(1_000_001*1024), uint32(512), uint32(4096))
	f.Add(uint64(0), uint32(4096), uint32(65536))
	f.Add(uint64(math.MaxUint64), uint32(512), uint32(16384))
	f.Add(uint64(12345), uint32(1000), uint32(3000))
	f.Add(uint64(1<<63), uint32(8192), uint32(4096))
	f.Fuzz(func(t *testing.T, deviceBytes uint64, logical, pageSize uint32) {
		checkInitBlocksize(t, deviceBytes, logical, pageSize)

		pageShift := 12 + pageSize%5              // 4 KiB .. 64 KiB
		logicalShift := 9 + logical%(pageShift-8) // 512 .. PAGE_SIZE
		vl, vp := uint32(1)<<logicalShift, uint32(1)<<pageShift
		require.NoError(t, blocksize.ValidateLogical(vl, vp))
		checkInitBlocksize(t, deviceBytes, vl, vp)
	})
}

// checkInitBlocksize checks both policies' answers for one input.
func checkInitBlocksize(t *testing.T, deviceBytes uint64, logical, pageSize uint32) {
	t.Helper()
	wantErr := blocksize.ValidatePageSize(pageSize)
	if wantErr == nil {
		wantErr = blocksize.ValidateLogical(logical, pageSize)
	}
	grow, errG := blocksize.PolicyGrow.InitBlocksize(deviceBytes, logical, pageSize)
	lg, errL := blocksize.PolicyLogical.InitBlocksize(deviceBytes, logical, pageSize)
	if wantErr != nil {
		require.Error(t, errG)
		require.Error(t, errL)
		assert.Equal(t, wantErr.Error(), errG.Error())
		assert.Equal(t, wantErr.Error(), errL.Error())
		return
	}
	require.NoError(t, errG)
	require.NoError(t, errL)
	assert.Equal(t, logical, lg)
	assert.Equal(t, oracleGrow(deviceBytes, logical, pageSize), grow)
	assert.GreaterOrEqual(t, grow, lg)
	// Whatever set_init_blocksize picks, set_blocksize must accept it.
	assert.NoError(t, blocksize.ValidateBlocksize(grow, logical, pageSize))
	assert.NoError(t, blocksize.ValidateBlocksize(lg, logical, pageSize))
}
