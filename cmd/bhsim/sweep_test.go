package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallSweep is a grid of four short runs: 16 blocks of 64 KiB.
var smallSweep = []string{"sweep", "--layout", "direct,raid6", "--blocksize", "512,grow", "--bs", "64K", "--count", "16"}

func TestSweepFormats(t *testing.T) {
	for _, tc := range []struct {
		format string
		check  func(t *testing.T, out []byte)
	}{
		{"text", func(t *testing.T, out []byte) {
			s := string(out)
			assert.Contains(t, s, "dd sweep on Helios4")
			assert.Contains(t, s, "profile helios4 (built-in costs)")
			assert.Contains(t, s, "MB/s")
			assert.Contains(t, s, "bottleneck")
			assert.Equal(t, 4+4, bytes.Count(out, []byte("\n")), "two header lines, a blank, the column names, four rows")
		}},
		{"csv", func(t *testing.T, out []byte) {
			rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
			require.NoError(t, err)
			require.Len(t, rows, 5)
			assert.Equal(t, sweepHeader, rows[0])
			assert.Equal(t, []string{"5.10.10", "512", "direct", "65536", "2", "16", "write", "512"}, rows[1][:8])
			assert.Equal(t, []string{"5.10.10", "grow", "raid6", "65536", "2", "16", "write", "4096"}, rows[4][:8])
			bios, err := strconv.ParseFloat(rows[1][9], 64)
			require.NoError(t, err)
			assert.Equal(t, 8.0, bios, "512-byte blocks: eight bios a page")
		}},
		{"json", func(t *testing.T, out []byte) {
			var doc struct {
				Scenario, Machine, Profile string
				Rows                       []sweepRow
			}
			require.NoError(t, json.Unmarshal(out, &doc))
			assert.Equal(t, "dd", doc.Scenario)
			assert.Equal(t, "helios4", doc.Machine)
			assert.Equal(t, "helios4", doc.Profile)
			require.Len(t, doc.Rows, 4)
			r := doc.Rows[1]
			assert.Equal(t, "raid6", r.Layout)
			assert.Equal(t, "512", r.Blocksize)
			assert.Equal(t, "write", r.Op)
			assert.Equal(t, uint32(512), r.BlockSize)
			assert.Positive(t, r.MBps)
			assert.NotEmpty(t, r.Bottleneck)
			assert.Equal(t, 1.0, doc.Rows[3].BiosPerPage)
			var raw map[string]any
			require.NoError(t, json.Unmarshal(out, &raw))
			row := raw["rows"].([]any)[0].(map[string]any)
			for _, k := range []string{"kernel", "blocksize", "layout", "bs", "cpus", "count", "op", "block_size", "mbps",
				"bios_per_page", "requests_per_mib", "bottleneck"} {
				assert.Contains(t, row, k)
			}
			assert.Len(t, row, 12)
		}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var out, errb bytes.Buffer
			require.Equal(t, 0, run(append(smallSweep, "--format", tc.format), &out, &errb), errb.String())
			assert.Empty(t, errb.String(), "no progress line when stderr is not a terminal")
			tc.check(t, out.Bytes())
		})
	}
}

func TestSweepMachineAndPresets(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"sweep", "--machine", "xu-yang", "--preset", "6.6,6.6-fix", "--bs", "4500K",
		"--size", "9000K", "--cpus", "4", "--format", "csv"}, &out, &errb), errb.String())
	rows, err := csv.NewReader(&out).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"6.6", "grow", "direct", "4608000", "4", "2", "write", "4096"}, rows[1][:8])
	assert.Equal(t, "6.6-fix", rows[2][0])
	slow, err := strconv.ParseFloat(rows[1][8], 64)
	require.NoError(t, err)
	fixed, err := strconv.ParseFloat(rows[2][8], 64)
	require.NoError(t, err)
	assert.Less(t, slow, fixed, "6.6 pre-faults the 2 MiB chunk: slower than with the fix")
}
