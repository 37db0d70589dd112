package timing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/bhsim/bhsim/bufcache"
)

// ProfileSchema names the JSON form of a Profile (MarshalJSON): a version
// that changes when the form does.
const ProfileSchema = "bhsim-profile/1"

// profileJSON is a Profile's JSON form: every cost with its unit and source,
// by parameter name.
type profileJSON struct {
	Schema      string     `json:"schema"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Costs       []costJSON `json:"costs"`
}

// costJSON is one cost of a profileJSON.
type costJSON struct {
	Param  string  `json:"param"`
	NS     float64 `json:"ns"`
	Source string  `json:"source"`
}

// MarshalJSON renders p with ProfileSchema, every parameter in Param order.
func (p *Profile) MarshalJSON() ([]byte, error) {
	j := profileJSON{Schema: ProfileSchema, Name: p.Name, Description: p.Description}
	for i := range NumParams {
		j.Costs = append(j.Costs, costJSON{Param: Param(i).String(), NS: p.NS[i], Source: p.Source[i]})
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the form MarshalJSON writes. Errors: another schema, a
// missing name, an unknown, repeated or missing parameter, a negative or
// non-finite cost, a memory-stall share outside [0, 1). A file that lacks
// only parameters added after files were first written (laterParams) reads
// with each of them 0, as it was fitted.
func (p *Profile) UnmarshalJSON(b []byte) error {
	var j profileJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("timing: profile: %w", err)
	}
	if j.Schema != ProfileSchema {
		return fmt.Errorf("timing: profile: schema %q, want %q", j.Schema, ProfileSchema)
	}
	if j.Name == "" {
		return fmt.Errorf("timing: profile: no name")
	}
	var q Profile
	q.Name, q.Description = j.Name, j.Description
	seen := make([]bool, NumParams)
	for _, c := range j.Costs {
		param, err := ParseParam(c.Param)
		if err != nil {
			return fmt.Errorf("timing: profile %s: %w", j.Name, err)
		}
		if seen[param] {
			return fmt.Errorf("timing: profile %s: %s given twice", j.Name, c.Param)
		}
		if err := checkCost(param, c.NS); err != nil {
			return fmt.Errorf("timing: profile %s: %s: %w", j.Name, c.Param, err)
		}
		seen[param] = true
		q.Set(param, c.NS, c.Source)
	}
	for i, ok := range seen {
		if !ok && !laterParams[Param(i)] {
			return fmt.Errorf("timing: profile %s: no cost for %s (a profile file lists every parameter, as `bhsim profile show` writes it)", j.Name, Param(i))
		}
	}
	*p = q
	return nil
}

// laterParams are the parameters added after profile files were first
// written: a file without one is from before it existed, and prices it 0 as
// it was fitted — an idle-bus model (ParamMemStall), nothing for the events
// of a file's open and release or of a read or write call's fixed part, or
// for the runner's tracepoints.
var laterParams = map[Param]bool{ParamMemStall: true, Ev(bufcache.EvFileOpen): true, Ev(bufcache.EvFileRelease): true,
	Ev(bufcache.EvRWCall): true, ParamTracepoint: true}

// checkCost refuses a cost no machine has, and a memory-stall share
// outside [0, 1).
func checkCost(q Param, ns float64) error {
	if q == ParamMemStall {
		if !(ns >= 0 && ns < 1) {
			return fmt.Errorf("share %v: want a fraction ≥ 0 and < 1", ns)
		}
		return nil
	}
	if !(ns >= 0) || ns > 1e15 {
		return fmt.Errorf("cost %v ns: want nanoseconds from 0 to 1e15", ns)
	}
	return nil
}

// LoadProfile reads a profile file in the form MarshalJSON writes. Errors:
// the file's, and UnmarshalJSON's.
func LoadProfile(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// SetCost sets the cost of the parameter called name to ns, its source
// saying why; the previous figure goes into the source. Errors: an unknown
// parameter (naming the extra ones), a negative or non-finite cost.
func (p *Profile) SetCost(name string, ns float64, why string) error {
	param, err := ParseParam(name)
	if err != nil {
		return err
	}
	if err := checkCost(param, ns); err != nil {
		return fmt.Errorf("timing: %s: %w", name, err)
	}
	p.Set(param, ns, fmt.Sprintf("%s (was %.4g %s: %s)", why, p.NS[param], param.Unit(), p.Source[param]))
	return nil
}
