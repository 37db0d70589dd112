package enum

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type color uint8

const (
	red color = iota
	green
	blue
)

var errUnknownColor = errors.New("paint: unknown color")

var colorNames = New[color]("color", []string{red: "red", green: "green", blue: "blue"}...).WithError(errUnknownColor)

func TestNamesString(t *testing.T) {
	assert.Equal(t, "red", colorNames.String(red))
	assert.Equal(t, "blue", colorNames.String(blue))
	assert.Equal(t, "color(7)", colorNames.String(7))
	assert.True(t, colorNames.Valid(blue))
	assert.False(t, colorNames.Valid(3))
	assert.Equal(t, []color{red, green, blue}, colorNames.Values())
	assert.Equal(t, "red, green, blue", colorNames.List())
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = colorNames.String(green) }))
}

func TestNamesParse(t *testing.T) {
	for _, c := range colorNames.Values() {
		got, err := colorNames.Parse(colorNames.String(c))
		require.NoError(t, err)
		assert.Equal(t, c, got)
	}
	for _, s := range []string{"", "Red", "red ", "color(0)", "purple"} {
		_, err := colorNames.Parse(s)
		require.ErrorIs(t, err, errUnknownColor, "%q", s)
		assert.Equal(t, `paint: unknown color "`+s+`" (valid: red, green, blue)`, err.Error())
		_, ok := colorNames.Lookup(s)
		assert.False(t, ok)
	}
	v, ok := colorNames.Lookup("green")
	assert.True(t, ok)
	assert.Equal(t, green, v)
}

func TestNamesWithoutSentinel(t *testing.T) {
	names := New[color]("color", "red")
	_, err := names.Parse("blue")
	assert.EqualError(t, err, `unknown color "blue" (valid: red)`)
	assert.Nil(t, errors.Unwrap(err))
	assert.NotSame(t, colorNames, colorNames.WithError(nil), "WithError copies")
}

func TestNamesSigned(t *testing.T) {
	type param int
	names := New[param]("param", "a", "b")
	assert.Equal(t, "param(-1)", names.String(-1))
	assert.False(t, names.Valid(-1))
	assert.Equal(t, "b", names.String(1))
}

func TestNamesRejectsBadTables(t *testing.T) {
	assert.Panics(t, func() { New[color]("color", "red", "red") }, "repeated")
	assert.Panics(t, func() { New[color]("color", []string{red: "red", blue: "blue"}...) }, "a gap")
	assert.Panics(t, func() { NewFlags[uint8]("a", "b", "c", "d", "e", "f", "g", "h", "i") }, "9 bits in a uint8")
	assert.NotPanics(t, func() { NewFlags[uint8]("a", "b", "c", "d", "e", "f", "g", "h") })
}

type state uint16

var stateNames = NewFlags[state]("up", "dirty", "lock")

func TestFlagsString(t *testing.T) {
	tests := []struct {
		v    state
		want string
	}{
		{0, "0"},
		{1, "up"},
		{1 | 4, "up|lock"},
		{2 | 0x300, "dirty|0x300"},
		{0x8000, "0x8000"},
		{0xffff, "up|dirty|lock|0xfff8"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, stateNames.String(tc.v), "%#x", uint16(tc.v))
	}
	full := NewFlags[uint8]("a", "b", "c", "d", "e", "f", "g", "h")
	assert.Equal(t, "a|b|c|d|e|f|g|h", full.String(0xff), "every bit named")
}

// BenchmarkString measures naming a value, as a metric name or a log line
// does.
func BenchmarkString(b *testing.B) {
	var sink string
	for b.Loop() {
		sink = colorNames.String(green)
	}
	_ = sink
}

func TestFind(t *testing.T) {
	type item struct{ n string }
	items := []item{{"a"}, {"b"}}
	got, err := Find("pkg", "thing", items, func(i item) string { return i.n }, "b")
	require.NoError(t, err)
	assert.Equal(t, item{"b"}, got)
	_, err = Find("pkg", "thing", items, func(i item) string { return i.n }, "c")
	assert.EqualError(t, err, `pkg: unknown thing "c" (valid: a, b)`)
}
