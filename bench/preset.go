package bench

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/blocksize"
	"github.com/bhsim/bhsim/bufcache"
)

// Preset is a kernel as a row of a published table names it: the variants of
// the model that differ between those kernels, bundled.
type Preset struct {
	// Name is the row's label in the thread ("5.10.10+revert").
	Name string
	// Description says which kernel it is and what is and is not modelled of
	// what differs.
	Description string
	// Blocksize is the set_init_blocksize policy.
	Blocksize blocksize.Policy
}

// notModelled is what differs between the Helios4 thread's kernels besides the
// block-size policy and is not part of the model.
const notModelled = "Other changes between these kernels (block-layer and md " +
	"optimisations Maxim credits for the higher RAID and read figures of 5.10.10, " +
	"scheduler and driver changes) are not modelled."

// Presets returns the kernels of the set_init_blocksize revert thread (seed
// 000, the Helios4 table's rows).
func Presets() []Preset {
	return []Preset{
		{Name: "9011495c9466", Blocksize: blocksize.PolicyGrow,
			Description: "the parent of the faulty commit (v5.9 merge window): set_init_blocksize grows the block size. " + notModelled},
		{Name: "5ff9f19231a0", Blocksize: blocksize.PolicyLogical,
			Description: "\"block: simplify set_init_blocksize\" (Christoph Hellwig, v5.9): block size = logical block size. " + notModelled},
		{Name: "5.10.10", Blocksize: blocksize.PolicyLogical,
			Description: "5.10.10, still with the simplified policy. " + notModelled},
		{Name: "5.10.10+revert", Blocksize: blocksize.PolicyGrow,
			Description: "5.10.10 with Maxim Mikityanskiy's revert (mainline 8dc932d3e8af, v5.11-rc6; stable 5.10.13). " + notModelled},
	}
}

// PresetByName returns the preset called name; the error names the valid ones.
func PresetByName(name string) (Preset, error) {
	var names []string
	for _, p := range Presets() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Preset{}, fmt.Errorf("bench: unknown kernel preset %q (valid: %s)", name, strings.Join(names, ", "))
}

// Apply sets the preset's variants in cfg and returns it.
func (p Preset) Apply(cfg bufcache.Config) bufcache.Config {
	cfg.Blocksize = p.Blocksize
	return cfg
}
