package scenario

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeviceRulesParse(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Rules
		// canon is the canonical device line, "" when it is line itself.
		canon string
	}{
		{"device size=64M sector=512", Rules{}, ""},
		{"device size=64M sector=512 wbps=20M", Rules{WriteBPS: 20 << 20}, ""},
		{"device size=64M sector=512 wiops=500 rbps=1M", Rules{WriteIOPS: 500, ReadBPS: 1 << 20}, "device size=64M sector=512 rbps=1M wiops=500"},
		{"device size=64M sector=4096 riops=100 sched=bfq wbt=off", Rules{ReadIOPS: 100, Scheduler: "bfq", WBT: WBTOff}, ""},
		{"device size=64M sector=512 wbt=2ms max_bytes=8M strict_limit=1", Rules{WBT: 2 * time.Millisecond, MaxBytes: 8 << 20, StrictLimit: true},
			"device size=64M sector=512 wbt=2000us max_bytes=8M strict_limit=1"},
		{"device size=64M sector=512 strict_limit=0 sched=mq-deadline", Rules{Scheduler: "mq-deadline"}, "device size=64M sector=512 sched=mq-deadline"},
	} {
		t.Run(tc.line, func(t *testing.T) {
			s, err := Parse("t.scn", tc.line+"\nopen a rdwr\npwrite a off=0 len=1M\nclose a\n")
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.Device.Rules)
			canon := tc.canon
			if canon == "" {
				canon = tc.line
			}
			assert.Equal(t, canon, s.Device.String())
			again, err := Parse("t.scn", s.Format())
			require.NoError(t, err)
			assert.Equal(t, s.Device, again.Device)
			assert.Equal(t, tc.want.Any(), s.Device.Rules.Any())
		})
	}
}

func TestDeviceRulesErrors(t *testing.T) {
	body := "\nopen a rdwr\npwrite a off=0 len=32M\nclose a\n"
	for _, tc := range []struct{ line, want string }{
		{"device size=64M wbps=1K", "wbps=1K is below the bound of 64K per second"},
		{"device size=64M wbps=64K", "wbps=64K would take the scenario's 32M of I/O past 5m0s"},
		{"device size=64M riops=5", "riops=5 is below the bound of 10 bios per second"},
		{"device size=64M wiops=10", "wiops=10 would take the scenario's 32M of I/O in 512-byte bios past 5m0s"},
		{"device size=64M wiops=-3", "wiops=-3: want a count of bios per second"},
		{"device size=64M wiops=many", "wiops=many: want a count of bios per second"},
		{"device size=64M sched=cfq", "sched=cfq: want one of none, mq-deadline, kyber, bfq"},
		{"device size=64M wbt=2", "wbt=2: want off or a latency in whole microseconds"},
		{"device size=64M wbt=1500ns", "wbt=1500ns: want off or a latency in whole microseconds"},
		{"device size=64M wbt=2s", "wbt=2s is not off or a latency of at most 1s"},
		{"device size=64M strict_limit=yes", "strict_limit=yes: want 0 or 1"},
		{"device size=64M max_bytes=lots", "max_bytes:"},
		{"device size=64M wbps=1M wbps=2M", "key \"wbps\" given twice"},
	} {
		t.Run(tc.line, func(t *testing.T) {
			_, err := Parse("t.scn", tc.line+body)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, 1, pe.Line)
		})
	}
}

func TestDeviceRulesValidateGoBuilt(t *testing.T) {
	s := &Scenario{Name: "g", Device: Device{Size: 64 << 20, Rules: Rules{WriteBPS: 100}},
		Ops: []Op{Open{FD: "a", Mode: ReadWriteMode}, Close{FD: "a"}}}
	err := s.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "wbps=100 is below the bound")
	s.Device.Rules = Rules{WriteBPS: 1 << 20, WBT: -2}
	require.Error(t, s.Validate())
	s.Device.Rules.WBT = WBTOff
	assert.NoError(t, s.Validate())
}

func FuzzDeviceLine(f *testing.F) {
	for _, s := range []string{"wbps=20M wiops=500", "sched=kyber wbt=750us", "max_bytes=1M strict_limit=1 rbps=64K riops=10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rules string) {
		s, err := Parse("f.scn", "device size=64M sector=512 "+rules+"\nopen a rdwr\npread a off=0 len=64K\nclose a\n")
		if err != nil {
			return
		}
		again, err := Parse("f.scn", s.Format())
		require.NoError(t, err, "canonical text %q", s.Format())
		assert.Equal(t, s.Device, again.Device)
	})
}

// TestParseRules: a trace's or a generator's device rules, as a device
// line writes them, with the same refusals that need no I/O.
func TestParseRules(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rules
		err  string
	}{
		{"", Rules{}, ""},
		{"wbps=8M max_bytes=4M strict_limit=1", Rules{WriteBPS: 8 << 20, MaxBytes: 4 << 20, StrictLimit: true}, ""},
		{"  riops=200   sched=kyber wbt=off ", Rules{ReadIOPS: 200, Scheduler: "kyber", WBT: WBTOff}, ""},
		{"size=1M", Rules{}, "unknown key"},
		{"wbps=8M wbps=4M", Rules{}, "given twice"},
		{"wbps=1K", Rules{}, "below the bound"},
		{"wiops=1", Rules{}, "below the bound"},
		{"sched=cfq", Rules{}, "want one of"},
		{"strict_limit=2", Rules{}, "want 0 or 1"},
		{"wbps", Rules{}, "want key=value"},
	} {
		r, err := ParseRules(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, r, tc.in)
	}
}
