package scenario

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = `# Pins: fsync of 1 MiB written as 4 KiB pwrites at 512-byte blocks
# submits one bio per buffer.
#
# A second paragraph.

device size=64M sector=512   # the device
open a rdwr
blkbszset a 512
blkbszget a
pwrite a off=0 len=4K repeat=256 fill=0xab
pwrite a off=4608 len=100 repeat=3 stride=8K fill=7
fsync a
open b rdonly excl
pread b off=0 len=1M
fdatasync b
dropcaches b
readonly a on
readonly a off
backing full
close b
close a
report bio.write* rq.*
report sectors.written
`

func TestParseSample(t *testing.T) {
	s, err := Parse("sample.scn", sample)
	require.NoError(t, err)
	assert.Equal(t, "sample", s.Name)
	assert.Equal(t, "Pins: fsync of 1 MiB written as 4 KiB pwrites at 512-byte blocks\nsubmits one bio per buffer.\n\nA second paragraph.", s.Pins)
	assert.Equal(t, Device{Size: 64 << 20, Sector: 512}, s.Device)
	want := []Op{
		Open{FD: "a", Mode: ReadWriteMode},
		SetBlockSize{FD: "a", Size: 512},
		GetBlockSize{FD: "a"},
		Write{FD: "a", Off: 0, Len: 4096, Repeat: 256, Fill: 0xab},
		Write{FD: "a", Off: 4608, Len: 100, Repeat: 3, Stride: 8192, Fill: 7},
		Fsync{FD: "a"},
		Open{FD: "b", Mode: ReadOnlyMode, Excl: true},
		Read{FD: "b", Off: 0, Len: 1 << 20},
		Fdatasync{FD: "b"},
		DropCaches{FD: "b"},
		ReadOnly{FD: "a", On: true},
		ReadOnly{FD: "a", On: false},
		BackingFull{},
		Close{FD: "b"},
		Close{FD: "a"},
	}
	assert.Equal(t, want, s.Ops)
	assert.Equal(t, []string{"bio.write*", "rq.*", "sectors.written"}, s.Report)
	assert.Equal(t, int64(1<<20+300+1<<20), s.TotalIO())
	require.NoError(t, s.Validate())

	text := s.Format()
	assert.Equal(t, `# Pins: fsync of 1 MiB written as 4 KiB pwrites at 512-byte blocks
# submits one bio per buffer.
#
# A second paragraph.
device size=64M sector=512
open a rdwr
blkbszset a 512
blkbszget a
pwrite a off=0 len=4K repeat=256 fill=0xab
pwrite a off=4608 len=100 repeat=3 stride=8K fill=0x07
fsync a
open b rdonly excl
pread b off=0 len=1M
fdatasync b
dropcaches b
readonly a on
readonly a off
backing full
close b
close a
report bio.write* rq.* sectors.written
`, text)
	again, err := Parse("sample.scn", text)
	require.NoError(t, err)
	assert.Equal(t, s, again)
}

func TestParseErrors(t *testing.T) {
	const dev = "device size=1M\n"
	tests := []struct {
		name, text, want string
	}{
		{"empty", "", "t.scn:1: no device line (device size=64M sector=512)"},
		{"only comments", "# x\n", "t.scn:1: no device line"},
		{"op before device", "open a rdwr\n", "t.scn:1: open: the first line must be the device"},
		{"two devices", dev + dev, "t.scn:2: device: a scenario has one device line"},
		{"unknown verb", dev + "pwirte a off=0 len=1\n", `t.scn:2: unknown operation "pwirte" (want one of backing, blkbszget`},
		{"unknown fd", dev + "open a rdwr\n# c\n\npwrite b off=0 len=4K\n", `t.scn:5: pwrite: unknown fd "b" (open it first)`},
		{"fd closed", dev + "open a rdwr\nclose a\nfsync a\n", `t.scn:4: fsync: unknown fd "a" (open it first)`},
		{"reopen", dev + "open a rdwr\nopen a rdonly\n", `t.scn:3: open: fd "a" is already open`},
		{"bad mode", dev + "open a rw\n", `t.scn:2: open: unknown mode "rw"`},
		{"bad flag", dev + "open a rdwr sync\n", `t.scn:2: open: unknown flag "sync"`},
		{"bad fd name", dev + "open A rdwr\n", `t.scn:2: open: descriptor name "A"`},
		{"keyword fd", dev + "open on rdwr\n", `t.scn:2: open: descriptor name "on" is a keyword`},
		{"long fd", dev + "open " + strings.Repeat("a", 33) + " rdwr\n", "longer than 32 bytes"},
		{"size zero", "device size=0\n", "t.scn:1: device: size must be positive"},
		{"size missing", "device sector=512\n", "t.scn:1: device: missing size="},
		{"device too big", "device size=2T\n", "t.scn:1: device: size=2T is over the bound of 1T"},
		{"device one sector too big", "device size=1099511628288\n", "t.scn:1: device: size=1099511628288 is over the bound of 1T"},
		{"bad sector", "device size=1M sector=8K\n", "t.scn:1: device: sector=8192"},
		{"huge sector", "device size=1M sector=8G\n", "t.scn:1: device: sector=8G"},
		{"unaligned size", "device size=1000 sector=512\n", "t.scn:1: device: size=1000 is not a multiple of the sector size 512"},
		{"bad size", "device size=4k\n", `t.scn:1: device: size: bad size "4k"`},
		{"overflow", "device size=99999999999999999999G\n", `size "99999999999999999999G" is too large`},
		{"unknown key", dev + "open a rdwr\npwrite a off=0 len=1 fil=1\n", `t.scn:3: pwrite: unknown key "fil"`},
		{"dup key", dev + "open a rdwr\npwrite a off=0 off=1 len=1\n", `t.scn:3: pwrite: key "off" given twice`},
		{"no len", dev + "open a rdwr\npread a off=0\n", `t.scn:3: pread: missing len=`},
		{"no value", dev + "open a rdwr\npread a off= len=1\n", `t.scn:3: pread: want key=value, got "off="`},
		{"fill on read", dev + "open a rdwr\npread a off=0 len=1 fill=1\n", `t.scn:3: pread: unknown key "fill"`},
		{"bad fill", dev + "open a rdwr\npwrite a off=0 len=1 fill=256\n", "fill=256: want a byte"},
		{"repeat zero", dev + "open a rdwr\npwrite a off=0 len=1 repeat=0\n", "repeat=0: want a count"},
		{"stride zero", dev + "open a rdwr\npwrite a off=0 len=4K repeat=4 stride=0\n", "stride=0: want at least 1"},
		{"stride zero of a read", dev + "open a rdwr\npread a off=0 len=4K stride=0K\n", "stride=0K: want at least 1"},
		{"len too big", dev + "open a rdwr\npwrite a off=0 len=257M\n", "len=269484032 is out of range"},
		{"off too big", dev + "open a rdwr\npwrite a off=2048G len=1\n", "off=2199023255552 is out of range"},
		{"total too big", dev + "open a rdwr\npwrite a off=0 len=1M repeat=200\npread a off=0 len=1M repeat=100\n", "t.scn:4: pread: the scenario's pwrite and pread calls move more than 256M"},
		{"blkbszset args", dev + "open a rdwr\nblkbszset a\n", "want: blkbszset FD SIZE"},
		{"blkbszset huge", dev + "open a rdwr\nblkbszset a 2G\n", "size=2147483648 is out of range"},
		{"readonly arg", dev + "open a rdwr\nreadonly a yes\n", "want: readonly FD on|off"},
		{"backing arg", dev + "backing empty\n", "t.scn:2: backing: want: backing full, or backing size=SIZE"},
		{"backing twice", dev + "backing full\nbacking full\n", "t.scn:3: backing: the backing store is already full"},
		{"backing size after full", dev + "backing full\nbacking size=8M\n", "t.scn:3: backing: the backing store is already full"},
		{"backing full after size", dev + "backing size=8M\nbacking full\n", "t.scn:3: backing: the backing store is already limited (backing size=8M): a scenario has one backing line"},
		{"backing size zero", dev + "backing size=0\n", "t.scn:2: backing: size=0: want a positive size"},
		{"backing size unaligned", dev + "backing size=1000\n", "t.scn:2: backing: size=1000 is not a multiple of the backing store's page, 4096"},
		{"backing size huge", dev + "backing size=2T\n", "t.scn:2: backing: size=2199023255552 is out of range [0, 1T]"},
		{"backing size bad", dev + "backing size=8m\n", `t.scn:2: backing: size: bad size "8m"`},
		{"backing other key", dev + "backing size=8M full\n", "want: backing full, or backing size=SIZE"},
		{"close args", dev + "open a rdwr\nclose a b\n", "t.scn:3: close: want one descriptor name, got 2 words"},
		{"report empty", dev + "report\n", "t.scn:2: report: name at least one counter pattern"},
		{"report bad", dev + "report bio/[x\n", `t.scn:2: report: counter pattern "bio/[x"`},
		{"report of no counter", dev + "report bios.*\n", `t.scn:2: report: counter pattern "bios.*": no counter's name starts with "bios" (they start with bio, buffer,`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.scn", tt.text)
			require.Error(t, err)
			var pe *ParseError
			assert.ErrorAs(t, err, &pe)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestValidateGoBuilt(t *testing.T) {
	s := &Scenario{
		Name:   "built",
		Device: Device{Size: 1 << 20},
		Ops: []Op{
			Open{FD: "a", Mode: ReadWriteMode},
			Write{FD: "a", Len: 4096, Repeat: 4},
			Fsync{FD: "b"},
		},
	}
	err := s.Validate()
	require.Error(t, err)
	assert.Equal(t, `built: op 3: fsync: unknown fd "b" (open it first)`, err.Error())

	tests := []struct {
		name string
		s    Scenario
		want string
	}{
		{"no device", Scenario{}, "op 0: device: size must be positive"},
		{"nil op", Scenario{Device: Device{Size: 512}, Ops: []Op{nil}}, "op 1: nil operation"},
		{"bad mode", Scenario{Device: Device{Size: 512}, Ops: []Op{Open{FD: "a", Mode: 7}}}, "op 1: open: unknown mode 7"},
		{"negative len", Scenario{Device: Device{Size: 512}, Ops: []Op{Open{FD: "a"}, Read{FD: "a", Len: -1}}}, "op 2: pread: len=-1 is out of range"},
		{"negative size", Scenario{Device: Device{Size: 512}, Ops: []Op{Open{FD: "a"}, SetBlockSize{FD: "a", Size: -1}}}, "op 2: blkbszset: size=-1"},
		{"bad pattern", Scenario{Device: Device{Size: 512}, Report: []string{"a b"}}, `op 0: report: counter pattern "a b"`},
		{"negative backing", Scenario{Device: Device{Size: 512}, Ops: []Op{BackingFull{Size: -4096}}}, "op 1: backing: size=-4096 is out of range"},
		{"unaligned backing", Scenario{Device: Device{Size: 512}, Ops: []Op{BackingFull{Size: 512}}}, "op 1: backing: size=512 is not a multiple"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestGoBuiltFormatRoundTrip(t *testing.T) {
	s := &Scenario{
		Name:   "built",
		Pins:   "what it pins",
		Device: Device{Size: 3 << 20, Sector: 4096},
		Ops: []Op{
			Open{FD: "w", Mode: WriteOnlyMode},
			SetBlockSize{FD: "w", Size: 1536},
			Write{FD: "w", Off: 512, Len: 4608, Repeat: 2, Stride: 1 << 20, Fill: 0xff},
			BackingFull{Size: 8 << 20},
			Close{FD: "w"},
		},
		Report: []string{"bio.*"},
	}
	require.NoError(t, s.Validate())
	got, err := Parse("built.scn", s.Format())
	require.NoError(t, err)
	assert.Equal(t, s, got)
	assert.Contains(t, s.Format(), "pwrite w off=512 len=4608 repeat=2 stride=1M fill=0xff\nbacking size=8M\n")
}

func TestSizes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"4096", 4096, true}, {"4K", 4096, true}, {"1M", 1 << 20, true},
		{"1G", 1 << 30, true}, {"007", 7, true}, {"", 0, false}, {"K", 0, false},
		{"-1", 0, false}, {"1.5K", 0, false}, {"4KiB", 0, false}, {"0x10", 0, false},
		{"4611686018427387904", 0, false}, {"4294967296G", 0, false},
		{"1T", 1 << 40, true}, {"4194303T", 4194303 << 40, true}, {"4194304T", 0, false}, {"1t", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if !tt.ok {
			assert.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
	for _, n := range []int64{0, 1, 512, 1536, 4096, 4608, 1 << 20, 3 << 30, 1<<62 - 1} {
		back, err := ParseSize(FormatSize(n))
		require.NoError(t, err)
		assert.Equal(t, n, back, FormatSize(n))
	}
	assert.Equal(t, "1536", FormatSize(1536))
	assert.Equal(t, "64K", FormatSize(65536))
	assert.Equal(t, "1T", FormatSize(1<<40))
	assert.Equal(t, "1025G", FormatSize(1025<<30))
}

func TestModeString(t *testing.T) {
	assert.Equal(t, "rdwr", ReadWriteMode.String())
	assert.Equal(t, "Mode(9)", Mode(9).String())
}

// FuzzParse checks that Parse never panics and that every scenario it
// accepts survives a round trip through Format unchanged.
// TestParseLongTokens puts a 10 MB word where each error echoes one: the
// message repeats its first bytes, an ellipsis and its length, not the
// word.
func TestParseLongTokens(t *testing.T) {
	const dev = "device size=1M\n"
	long := strings.Repeat("x", 10<<20)
	for _, tt := range []struct{ name, text, want string }{
		{"verb", dev + long + " a\n", `unknown operation "xxxxxxxx`},
		{"fd", dev + "open " + long + " rdwr\n", "descriptor name \"xxxx"},
		{"unknown fd", dev + "fsync a" + long + "\n", "descriptor name \"ax"},
		{"mode", dev + "open a " + long + "\n", `unknown mode "xxx`},
		{"flag", dev + "open a rdwr " + long + "\n", `unknown flag "xxx`},
		{"key=value", dev + "open a rdwr\npwrite a " + long + "\n", `want key=value, got "xxx`},
		{"key", dev + "open a rdwr\npwrite a " + long + "=1\n", `unknown key "xxx`},
		{"size", "device size=" + long + "\n", `bad size "xxx`},
		{"huge number", "device size=" + strings.Repeat("9", 10<<20) + "\n", `size "999`},
		{"sector", "device size=1M sector=" + long + "\n", `bad size "xxx`},
		{"fill", dev + "open a rdwr\npwrite a off=0 len=1 fill=" + long + "\n", "fill=xxx"},
		{"repeat", dev + "open a rdwr\npwrite a off=0 len=1 repeat=" + long + "\n", "repeat=xxx"},
		{"pattern", dev + "report " + long + "\n", `counter pattern "xxx`},
		{"pattern chars", dev + "report bio." + long + "/\n", `counter pattern "bio.xxx`},
		{"blkbszset", dev + "open a rdwr\nblkbszset a " + long + "\n", `bad size "xxx`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.scn", tt.text)
			require.Error(t, err)
			msg := err.Error()
			assert.Less(t, len(msg), 400, "the error repeats a bounded excerpt")
			assert.Contains(t, msg, tt.want)
			assert.Regexp(t, `…"? \(1048\d{4} bytes\)`, msg, "with an ellipsis and the word's length")
		})
	}
}

// TestQuoteToken checks the cut: at most MaxEchoedToken bytes are quoted
// whole, a longer word is cut at a character's boundary.
func TestQuoteToken(t *testing.T) {
	for _, tt := range []struct{ in, want, echo string }{
		{"abc", `"abc"`, "abc"},
		{strings.Repeat("a", MaxEchoedToken), strconv.Quote(strings.Repeat("a", MaxEchoedToken)), strings.Repeat("a", MaxEchoedToken)},
		{strings.Repeat("a", MaxEchoedToken+1), `"` + strings.Repeat("a", 48) + `…" (65 bytes)`, strings.Repeat("a", 48) + "… (65 bytes)"},
		{strings.Repeat("é", 40), `"` + strings.Repeat("é", 24) + `…" (80 bytes)`, strings.Repeat("é", 24) + "… (80 bytes)"},
		{"a" + strings.Repeat("é", 40), `"a` + strings.Repeat("é", 23) + `…" (81 bytes)`, "a" + strings.Repeat("é", 23) + "… (81 bytes)"},
		{strings.Repeat("\xff", 70), `"` + strings.Repeat(`\xff`, 12) + `…" (70 bytes)`, strings.Repeat("\xff", 48) + "… (70 bytes)"},
		{strings.Repeat("\xb0", 63), `"` + strings.Repeat(`\xb0`, 12) + `…" (63 bytes)`, strings.Repeat("\xb0", 63)},
		{strings.Repeat("\n", 40), `"` + strings.Repeat(`\n`, 24) + `…" (40 bytes)`, strings.Repeat("\n", 40)},
	} {
		assert.Equal(t, tt.want, QuoteToken(tt.in))
		assert.Equal(t, tt.echo, echoToken(tt.in))
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Add("device size=1M\n")
	f.Add("# x\n#\n#  y \ndevice size=4K sector=4096\nopen a rdonly\npread a off=0 len=4K repeat=2 stride=0\n")
	f.Add("device size=1M\nopen a rdwr\npwrite a off=1 len=1 stride=1 repeat=1 fill=0x00\nreport *\n")
	f.Add("device size=1T sector=4096\nbacking size=8M\n")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse("fuzz.scn", text)
		if err != nil {
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.Positive(t, pe.Line)
			require.Less(t, len(pe.Msg), 400, "an error echoes bounded excerpts of the input")
			return
		}
		require.NoError(t, s.Validate())
		out := s.Format()
		again, err := Parse("fuzz.scn", out)
		require.NoError(t, err, "canonical text:\n%s", out)
		require.Equal(t, s, again, "canonical text:\n%s", out)
		require.Equal(t, out, again.Format())
	})
}
