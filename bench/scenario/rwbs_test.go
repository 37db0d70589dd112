package scenario

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseRWBS(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		want RWBS
	}{
		{"W", true, RWBS{Op: 'W'}},
		{"FWFS", true, RWBS{Op: 'W', Preflush: true, FUA: true, Sync: true}},
		{"WZ", true, RWBS{Op: 'W', Zeroes: true}},
		{"WSU", true, RWBS{Op: 'W', Sync: true, Atomic: true}},
		{"RAM", true, RWBS{Op: 'R', Ahead: true, Meta: true}},
		{"DE", true, RWBS{Op: 'D', Secure: true}},
		{"F", true, RWBS{Op: 'F'}},
		{"FF", true, RWBS{Op: 'F', Preflush: true}},
		{"FN", true, RWBS{Op: 'N', Preflush: true}},
		{"N", true, RWBS{Op: 'N'}},
		{"WB", true, RWBS{Op: 'W', Barrier: true}},
		{"ZA", true, RWBS{Op: 'Z', Zone: "A"}},
		{"ZRA", true, RWBS{Op: 'Z', Zone: "RA"}},
		{"ZR", true, RWBS{Op: 'Z', Zone: "R"}},
		{"ZF", true, RWBS{Op: 'Z', Zone: "F"}},
		{"ZOS", true, RWBS{Op: 'Z', Zone: "O", Sync: true}},
		{"", false, RWBS{}},
		{"Z", false, RWBS{}},
		{"ZX", false, RWBS{}},
		{"X", false, RWBS{}},
		{"WQ", false, RWBS{}},
		{"FX", false, RWBS{}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ParseRWBS(tt.in)
			assert.Equal(t, tt.ok, ok)
			if tt.ok {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func TestRWBSZoneWrite(t *testing.T) {
	for zone, write := range map[string]bool{"A": true, "R": true, "RA": true, "C": true, "O": false, "F": false} {
		r, ok := ParseRWBS("Z" + zone)
		if assert.True(t, ok, zone) {
			assert.Equal(t, write, r.ZoneWrite(), zone)
		}
	}
	assert.False(t, RWBS{Op: 'W'}.ZoneWrite(), "not a zone operation")
}

// rwbsString is r's canonical field: the letters ParseRWBS reads back as r.
func rwbsString(r RWBS) string {
	var b strings.Builder
	if r.Preflush {
		b.WriteByte('F')
	}
	b.WriteByte(r.Op)
	b.WriteString(r.Zone)
	for _, f := range []struct {
		on     bool
		letter string
	}{{r.Zeroes, "Z"}, {r.Secure, "E"}, {r.FUA, "F"}, {r.Ahead, "A"}, {r.Sync, "S"}, {r.Meta, "M"}, {r.Atomic, "U"}, {r.Barrier, "B"}} {
		if f.on {
			b.WriteString(f.letter)
		}
	}
	return b.String()
}

// FuzzParseRWBS checks that whatever ParseRWBS accepts is a well-formed
// field that reads back the same from its canonical letters.
func FuzzParseRWBS(f *testing.F) {
	for _, s := range []string{"W", "FWFS", "WZ", "DE", "ZRA", "ZF", "FF", "RAM", "WSU", "WB", "Z", "FZ", "FZAS"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := ParseRWBS(s)
		if !ok {
			return
		}
		assert.Contains(t, "RWDFNZ", string(r.Op))
		assert.Equal(t, r.Op == 'Z', r.Zone != "", "a zone operation, and only one, names its zone")
		assert.False(t, r.Zeroes && r.Op != 'W' || r.Secure && r.Op != 'D', "Z after W, E after D only")
		if r.Op == 'F' && r.FUA && !r.Preflush || r.Zone == "R" && r.Ahead {
			return // the two fields the format cannot tell apart (ParseRWBS)
		}
		back, ok := ParseRWBS(rwbsString(r))
		assert.True(t, ok, "%q reads back from %q", s, rwbsString(r))
		assert.Equal(t, r, back, "%q", s)
	})
}

func TestParseRWBSAllocs(t *testing.T) {
	n := testing.AllocsPerRun(100, func() {
		if _, ok := ParseRWBS("FZRAS"); !ok {
			t.Fatal("FZRAS")
		}
	})
	assert.Zero(t, n, "ParseRWBS allocates nothing")
}
