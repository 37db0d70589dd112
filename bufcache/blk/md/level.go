package md

import "github.com/bhsim/bhsim/internal/enum"

// Level selects the md personality and its layout (mdadm --level and --layout).
type Level uint8

const (
	// Raid0 is striping without redundancy (drivers/md/raid0.c).
	Raid0 Level = iota
	// Raid10Near2 is raid10 with layout n2, mdadm's default: both copies of a
	// chunk on adjacent members at the same offset (drivers/md/raid10.c).
	Raid10Near2
	// Raid10Far2 is raid10 with layout f2: a raid0-like copy over the first half
	// of every member and a second copy, shifted by one member, in the second half.
	Raid10Far2
	// Raid6 is striping with two parity chunks per row, P (xor) and Q
	// (Reed–Solomon), rotated left-symmetric (drivers/md/raid5.c, level 6).
	Raid6
)

// levelNames are the names String prints and ParseLevel accepts, by Level.
var levelNames = enum.New[Level]("level", []string{
	Raid0:       "raid0",
	Raid10Near2: "raid10n2",
	Raid10Far2:  "raid10f2",
	Raid6:       "raid6",
}...).WithError(ErrBadLevel)

// String returns "raid0", "raid10n2", "raid10f2" or "raid6" ("level(N)" for an
// invalid value).
func (l Level) String() string { return levelNames.String(l) }

// ParseLevel returns the Level String names s. Errors: ErrBadLevel, with the
// valid choices in the message. Complexity O(number of levels).
func ParseLevel(s string) (Level, error) { return levelNames.Parse(s) }

// minMembers is the smallest member count the level accepts.
func (l Level) minMembers() int {
	if l == Raid6 {
		return 4
	}
	return 2
}
