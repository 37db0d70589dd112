package timing

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProfileJSONRoundTrip writes every built-in profile and reads it back
// bit for bit.
func TestProfileJSONRoundTrip(t *testing.T) {
	for _, p := range Profiles() {
		b, err := json.Marshal(p)
		require.NoError(t, err)
		var back Profile
		require.NoError(t, json.Unmarshal(b, &back), p.Name)
		assert.Equal(t, *p, back, p.Name)
		path := filepath.Join(t.TempDir(), p.Name+".json")
		require.NoError(t, os.WriteFile(path, b, 0o644))
		loaded, err := LoadProfile(path)
		require.NoError(t, err)
		assert.Equal(t, p.NS, loaded.NS)
	}
}

func TestProfileJSONErrors(t *testing.T) {
	good, err := json.Marshal(X86Server())
	require.NoError(t, err)
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"schema", ProfileSchema, "bhsim-profile/9", "schema"},
		{"unknown parameter", `"param":"timer"`, `"param":"warp-drive"`, "unknown parameter"},
		{"repeated parameter", `"param":"requests"`, `"param":"timer"`, "given twice"},
		{"negative cost", `"ns":25,`, `"ns":-1,`, "want nanoseconds from 0 to 1e15"},
		{"unknown field", `"name":`, `"colour":"red","name":`, "unknown field"},
		{"no name", `"name":"x86-server"`, `"name":""`, "no name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(string(good), tc.from, tc.to, 1)
			require.NotEqual(t, string(good), bad, "the edit applies")
			var p Profile
			assert.ErrorContains(t, json.Unmarshal([]byte(bad), &p), tc.want)
		})
	}
	var j profileJSON
	require.NoError(t, json.Unmarshal(good, &j))
	j.Costs = j.Costs[1:]
	short, err := json.Marshal(j)
	require.NoError(t, err)
	var p Profile
	assert.ErrorContains(t, json.Unmarshal(short, &p), "no cost for bh-allocs")
	_, err = LoadProfile(filepath.Join(t.TempDir(), "missing.json"))
	assert.Error(t, err)
}

func TestSetCost(t *testing.T) {
	p := X86Server()
	require.NoError(t, p.SetCost("timer", 30, "set on the command line"))
	assert.Equal(t, 30.0, p.NS[ParamTimer])
	assert.Contains(t, p.Source[ParamTimer], "set on the command line (was 25 ns: estimate")
	assert.ErrorContains(t, p.SetCost("nope", 1, ""), "unknown parameter")
	assert.ErrorContains(t, p.SetCost("timer", math.NaN(), ""), "want nanoseconds from 0 to 1e15")
	assert.ErrorContains(t, p.SetCost("timer", -2, ""), "want nanoseconds from 0 to 1e15")
	assert.ErrorContains(t, p.SetCost("timer", 1e308, ""), "cost 1e+308 ns: want nanoseconds from 0 to 1e15")
}

// TestProfileJSONOlderFile reads a profile file written before the later
// parameters existed: each of them is priced 0, as that file's model priced
// it, and every other cost is the file's.
func TestProfileJSONOlderFile(t *testing.T) {
	p := X86Server()
	good, err := json.Marshal(p)
	require.NoError(t, err)
	var j profileJSON
	require.NoError(t, json.Unmarshal(good, &j))
	var kept []costJSON
	for _, c := range j.Costs {
		q, err := ParseParam(c.Param)
		require.NoError(t, err)
		if !laterParams[q] {
			kept = append(kept, c)
		}
	}
	require.Len(t, kept, len(j.Costs)-len(laterParams))
	j.Costs = kept
	old, err := json.Marshal(j)
	require.NoError(t, err)
	var back Profile
	require.NoError(t, json.Unmarshal(old, &back))
	for i := range NumParams {
		if laterParams[Param(i)] {
			assert.Zero(t, back.NS[i], "%s, unknown to the file", Param(i))
		} else {
			assert.Equal(t, p.NS[i], back.NS[i], Param(i).String())
		}
	}
}
