package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReproduceCommand(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		status   int
		stdout   string
		stderrRe string
	}{
		{"no command", nil, 2, "", "usage"},
		{"unknown command", []string{"frobnicate"}, 2, "", "valid: reproduce"},
		{"unknown thread", []string{"reproduce", "nope"}, 2, "", "valid: blocksize, iomap, lru"},
		{"unknown format", []string{"reproduce", "--format", "xml"}, 2, "", "valid: text, json"},
		{"unknown profile", []string{"reproduce", "--profile", "vax"}, 2, "", "x86-server"},
		{"bad flag", []string{"reproduce", "--nope"}, 2, "", "flags"},
		{"text", []string{"reproduce", "lru"}, 0, "__find_get_block_slow", ""},
		{"flags after names, repeated name", []string{"reproduce", "lru", "--profile", "x86-server", "lru"}, 0, "== lru", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			assert.Equal(t, tc.status, run(tc.args, &out, &errb))
			assert.Contains(t, out.String(), tc.stdout)
			assert.Contains(t, errb.String(), tc.stderrRe)
			if tc.status == 2 {
				assert.Equal(t, 1, bytes.Count(errb.Bytes(), []byte("\n")), "one line")
			}
		})
	}
}

func TestReproduceJSON(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"reproduce", "--format", "json", "lru"}, &out, &errb), errb.String())
	var doc struct {
		Tables []struct {
			ID    string `json:"id"`
			Unit  string `json:"unit"`
			Cells []struct {
				Row       string  `json:"row"`
				Column    string  `json:"column"`
				Published float64 `json:"published"`
				Simulated float64 `json:"simulated"`
				Fitted    bool    `json:"fitted"`
			} `json:"cells"`
		} `json:"tables"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	require.Len(t, doc.Tables, 1)
	assert.Equal(t, "lru-tosatti", doc.Tables[0].ID)
	require.Len(t, doc.Tables[0].Cells, 2)
	assert.Equal(t, 68.0, doc.Tables[0].Cells[0].Published)
	assert.True(t, doc.Tables[0].Cells[0].Fitted)
	assert.Equal(t, 114.0, doc.Tables[0].Cells[1].Published)
	assert.False(t, doc.Tables[0].Cells[1].Fitted)
}
