package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress draws one line on a terminal, rewritten as the tasks of a run
// advance, once the run has taken a second: each task's runs done of its
// total, the time so far and an estimate of the time left. A nil *progress
// draws nothing (stderr is not a terminal).
type progress struct {
	mu          sync.Mutex
	w           io.Writer
	name        string
	start       time.Time
	now         func() time.Time
	tasks       []string
	done, total []int
	shown       bool
}

// newProgress returns a progress line for command name's tasks on w, or nil
// when terminal is false.
func newProgress(w io.Writer, terminal bool, name string, tasks ...string) *progress {
	if !terminal {
		return nil
	}
	return &progress{w: w, name: name, start: time.Now(), now: time.Now, tasks: tasks,
		done: make([]int, len(tasks)), total: make([]int, len(tasks))}
}

// task returns the progress callback of task i, or nil for a nil progress.
func (p *progress) task(i int) func(done, total int) {
	if p == nil {
		return nil
	}
	return func(done, total int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.done[i], p.total[i] = done, total
		p.draw()
	}
}

// draw rewrites the line; p.mu is held.
func (p *progress) draw() {
	elapsed := p.now().Sub(p.start)
	if !p.shown && elapsed < time.Second {
		return
	}
	p.shown = true
	var parts []string
	done, total, known := 0, 0, true
	for i, t := range p.tasks {
		n := "?"
		if p.total[i] > 0 {
			n = fmt.Sprint(p.total[i])
		} else {
			known = false
		}
		parts = append(parts, fmt.Sprintf("%s %d/%s", t, p.done[i], n))
		done, total = done+p.done[i], total+p.total[i]
	}
	line := fmt.Sprintf("\rbhsim %s: %s, %.0f s", p.name, strings.Join(parts, ", "), elapsed.Seconds())
	if known && done > 0 && done < total {
		line += fmt.Sprintf(", about %.0f s left", elapsed.Seconds()*float64(total-done)/float64(done))
	}
	fmt.Fprint(p.w, line+"\033[K")
}

// finish ends the line, if one was drawn.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintln(p.w)
	}
}
