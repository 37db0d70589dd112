package enum_test

import (
	"errors"
	"fmt"

	"github.com/bhsim/bhsim/internal/enum"
)

// Layout is an enumeration as a package declares one.
type Layout uint8

const (
	LayoutDirect Layout = iota
	LayoutRaid0
)

// ErrUnknownLayout is the sentinel ParseLayout's errors wrap.
var ErrUnknownLayout = errors.New("bench: unknown layout")

// layoutNames keeps the names beside the constants (a keyed slice literal).
var layoutNames = enum.New[Layout]("layout", []string{LayoutDirect: "direct", LayoutRaid0: "raid0"}...).
	WithError(ErrUnknownLayout)

func (l Layout) String() string { return layoutNames.String(l) }

func ParseLayout(s string) (Layout, error) { return layoutNames.Parse(s) }

func Example() {
	fmt.Println(LayoutRaid0, Layout(9))
	l, err := ParseLayout("raid0")
	fmt.Println(l == LayoutRaid0, err)
	_, err = ParseLayout("raid5")
	fmt.Println(err)
	fmt.Println(errors.Is(err, ErrUnknownLayout))
	// Output:
	// raid0 layout(9)
	// true <nil>
	// bench: unknown layout "raid5" (valid: direct, raid0)
	// true
}

// Flags are a flag set as a package declares one.
type Flags uint16

// flagNames names bit 1<<i with the i-th name.
var flagNames = enum.NewFlags[Flags]("new", "dirty")

func ExampleFlags() {
	fmt.Println(flagNames.String(0), flagNames.String(3), flagNames.String(1|0x100))
	// Output: 0 new|dirty new|0x100
}
