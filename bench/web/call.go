package web

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/bhsim/bhsim/bench/timing"
	"github.com/bhsim/bhsim/bench/workload"
)

// Presets is what the page's forms offer: the kernel presets, the dd
// machines, layouts and block sizes, the built-in profiles, and the LRU
// view's first sequence.
type Presets struct {
	Kernels    []string `json:"kernels"`
	Machines   []string `json:"machines"`
	Layouts    []string `json:"layouts"`
	BlockSizes []string `json:"blockSizes"`
	Profiles   []string `json:"profiles"`
	LRUOps     string   `json:"lruOps"`
}

// PresetsOf returns the forms' choices. O(presets).
func PresetsOf() Presets {
	p := Presets{Kernels: kernelNames(), LRUOps: DefaultLRUOps,
		BlockSizes: []string{"512", "1024", "2048", "4096", "8192", "16384", "32768", "65536"}}
	for _, m := range workload.DDMachines() {
		p.Machines = append(p.Machines, m.Name)
	}
	for _, l := range workload.Layouts() {
		p.Layouts = append(p.Layouts, l.String())
	}
	for _, pr := range timing.Profiles() {
		p.Profiles = append(p.Profiles, pr.Name)
	}
	return p
}

// views are Call's functions, by name: each decodes its request from
// JSON and returns its response.
var views = map[string]func(ctx context.Context, req []byte) (any, error){
	"presets": func(context.Context, []byte) (any, error) { return PresetsOf(), nil },
	"dd": func(ctx context.Context, b []byte) (any, error) {
		var r DDRequest
		return decodeThen(b, &r, func() (any, error) { return DD(ctx, r) })
	},
	"buffers": func(_ context.Context, b []byte) (any, error) {
		var r BuffersRequest
		return decodeThen(b, &r, func() (any, error) { return Buffers(r) })
	},
	"lru": func(_ context.Context, b []byte) (any, error) {
		var r LRURequest
		return decodeThen(b, &r, func() (any, error) { return LRU(r) })
	},
	"step": func(ctx context.Context, b []byte) (any, error) {
		var r StepRequest
		return decodeThen(b, &r, func() (any, error) { return Step(ctx, r) })
	},
}

// decodeThen decodes b into r, refusing unknown fields, then calls run.
func decodeThen(b []byte, r any, run func() (any, error)) (any, error) {
	if len(b) > 0 {
		if err := json.Unmarshal(b, r); err != nil {
			return nil, fmt.Errorf("web: request: %w", err)
		}
	}
	return run()
}

// Answer is what Call returns, as JSON: the view's response, or the error
// that stopped it.
type Answer struct {
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Call runs the view called name ("presets", "dd", "buffers", "lru",
// "step") on the JSON request req and returns an Answer as JSON: the
// page's one entry into the model. An unknown view, a request that does
// not decode and the view's error come back as Answer.Error.
func Call(ctx context.Context, name, req string) string {
	var a Answer
	if v, ok := views[name]; !ok {
		var names []string
		for n := range views {
			names = append(names, n)
		}
		sort.Strings(names)
		a.Error = fmt.Sprintf("web: unknown view %q (valid: %v)", name, names)
	} else if res, err := v(ctx, []byte(req)); err != nil {
		a.Error = err.Error()
	} else {
		a.Result = res
	}
	b, err := json.Marshal(a)
	if err != nil {
		b, _ = json.Marshal(Answer{Error: err.Error()})
	}
	return string(b)
}
