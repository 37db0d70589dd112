package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/source"
)

// StepRequest is the step view's form: `bhsim run --step -s SEED` (and
// with Quiz, `--quiz`), on Kernel ("": 6.18, run's default).
type StepRequest struct {
	Seed   uint64 `json:"seed"`
	Kernel string `json:"kernel"`
	Quiz   bool   `json:"quiz"`
}

// StepBuffer is one buffer of a step block's page line: its block ("-"
// while unmapped) and state letters, as the step mode prints them.
type StepBuffer struct {
	Block   string `json:"block"`
	Letters string `json:"letters"`
}

// StepPage is a page line of a block ("page 11: folio 11+1 pages,
// uptodate dirty; buffers [11 UDM]"), with its buffers picked out.
type StepPage struct {
	Line    string       `json:"line"`
	Buffers []StepBuffer `json:"buffers"`
}

// StepBlock is one operation's block of the step mode's output: its
// lines as run --step prints them (Text; with Quiz, Answers is the same
// block as --quiz --show prints it, Text as --quiz does), and the
// pages and LRU slots picked out of them for the drawing.
type StepBlock struct {
	Title   string     `json:"title"`
	Text    string     `json:"text"`
	Answers string     `json:"answers,omitempty"`
	Pages   []StepPage `json:"pages"`
	LRU     []string   `json:"lru"`
}

// StepResponse is the run's header and its blocks.
type StepResponse struct {
	Header  string      `json:"header"`
	Blocks  []StepBlock `json:"blocks"`
	Command string      `json:"command"`
}

// StepText returns what `bhsim run --step -s SEED [--kernel K]` prints
// for the request, with Quiz what --quiz prints and with show too what
// --quiz --show prints (less the CLI's closing line of a quiz): the fresh
// problem engine.FreshStepProblem with the seed, run by engine.Run in
// step mode with run's defaults. Errors: an unknown kernel, a failed run.
func StepText(ctx context.Context, req StepRequest, show bool) (string, error) {
	g, err := source.ParseGenerator(engine.FreshStepProblem)
	if err != nil {
		return "", err
	}
	w, err := engine.GenWorkload(g.WithSeed(req.Seed))
	if err != nil {
		return "", err
	}
	w.LogicalBlockSize = 512 // run's --lbs default
	name := req.Kernel
	if name == "" {
		name = "6.18"
	}
	k, err := engine.KernelByName(name)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	_, err = engine.Run(ctx, w, engine.RunOptions{Kernel: k, Step: &engine.StepOptions{W: &out, Quiz: req.Quiz, Show: req.Quiz && show}})
	return out.String(), err
}

// Step runs the view's problem and splits the step mode's output into its
// header and blocks; with Quiz it runs the quiz and its answer key. Errors:
// StepText's, and output of another shape than the step mode's.
func Step(ctx context.Context, req StepRequest) (*StepResponse, error) {
	text, err := StepText(ctx, req, false)
	if err != nil {
		return nil, err
	}
	out, err := splitSteps(text)
	if err != nil {
		return nil, err
	}
	out.Command = fmt.Sprintf("bhsim run --step -s %d", req.Seed)
	if req.Kernel != "" && req.Kernel != "6.18" { // run's default
		out.Command += " --kernel " + req.Kernel
	}
	if !req.Quiz {
		return out, nil
	}
	out.Command = strings.Replace(out.Command, "--step", "--step --quiz", 1)
	text, err = StepText(ctx, req, true)
	if err != nil {
		return nil, err
	}
	answers, err := splitSteps(text)
	if err != nil {
		return nil, err
	}
	if len(answers.Blocks) != len(out.Blocks) {
		return nil, errors.New("web: the quiz and its answers have different blocks")
	}
	for i := range out.Blocks {
		out.Blocks[i].Answers = answers.Blocks[i].Text
	}
	return out, nil
}

// splitSteps splits step mode's output: a header, a blank line, then one
// block per operation, each ending in a blank line.
func splitSteps(text string) (*StepResponse, error) {
	parts := strings.Split(strings.TrimRight(text, "\n"), "\n\n")
	if len(parts) < 2 {
		return nil, errors.New("web: step mode printed no block")
	}
	out := &StepResponse{Header: parts[0]}
	for _, p := range parts[1:] {
		lines := strings.Split(p, "\n")
		b := StepBlock{Title: lines[0], Text: p}
		for _, l := range lines[1:] {
			l = strings.TrimSpace(l)
			switch {
			case strings.HasPrefix(l, "page "):
				b.Pages = append(b.Pages, stepPage(l))
			case strings.HasPrefix(l, "LRU "):
				b.LRU = lruSlots.FindAllString(l, -1)
			}
		}
		out.Blocks = append(out.Blocks, b)
	}
	return out, nil
}

// stepBuffer matches a buffer of a page line, "[11 UDM]" or "[- U--L]";
// lruSlots a slot of an LRU line, "[11]".
var (
	stepBuffer = regexp.MustCompile(`\[(-|\d+) ([A-Z-]+)\]`)
	lruSlots   = regexp.MustCompile(`\[\d+\]`)
)

// stepPage picks the buffers out of a page line.
func stepPage(line string) StepPage {
	p := StepPage{Line: line}
	if _, ring, ok := strings.Cut(line, "buffers "); ok {
		for _, m := range stepBuffer.FindAllStringSubmatch(ring, -1) {
			p.Buffers = append(p.Buffers, StepBuffer{Block: m[1], Letters: m[2]})
		}
	}
	return p
}
