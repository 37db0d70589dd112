package workload

import (
	"errors"

	"github.com/bhsim/bhsim/bufcache/blk/md"
	"github.com/bhsim/bhsim/internal/enum"
)

// Layout is a device column of the Helios4 table: one disk, or an md array
// over the first partition of each of the four disks.
type Layout uint8

// The layouts of the Helios4 table's columns.
const (
	LayoutDirect Layout = iota
	LayoutRaid0
	LayoutRaid10F2
	LayoutRaid10N2
	LayoutRaid6
	numLayouts
)

// layoutNames names the layouts for String and ParseLayout.
var layoutNames = enum.New[Layout]("layout", "direct", "raid0", "raid10f2", "raid10n2", "raid6").WithError(errUnknownLayout)

// errUnknownLayout is ParseLayout's error.
var errUnknownLayout = errors.New("workload: unknown layout")
var layoutColumns = [numLayouts]string{"Direct", "RAID0", "RAID10 f2", "RAID10 n2", "RAID6"}
var layoutLevels = [numLayouts]md.Level{LayoutRaid0: md.Raid0, LayoutRaid10F2: md.Raid10Far2,
	LayoutRaid10N2: md.Raid10Near2, LayoutRaid6: md.Raid6}

// String returns the layout's short name ("raid10f2"), as benchmarks and the
// command line spell it.
func (l Layout) String() string { return layoutNames.String(l) }

// Column returns the layout's column label in the Helios4 table ("RAID10 f2").
func (l Layout) Column() string { return layoutColumns[l] }

// Layouts returns every layout in the table's column order.
func Layouts() []Layout { return layoutNames.Values() }

// ParseLayout returns the layout whose String is s; the error names the
// valid ones.
func ParseLayout(s string) (Layout, error) { return layoutNames.Parse(s) }
