package report

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress draws one line on a terminal, rewritten (a carriage return, the
// line, an erase to its end) as the tasks of a run advance, once the run has
// taken a second: each task's units done of its total, the time so far and
// an estimate of the time left. A nil *Progress draws nothing, so that a
// caller whose output is not a terminal passes nil. Safe for concurrent
// use.
type Progress struct {
	mu          sync.Mutex
	w           io.Writer
	name        string
	start       time.Time
	now         func() time.Time
	tasks       []string
	done, total []int
	shown       bool
}

// NewProgress returns a progress line on w for the run called name ("bhsim
// reproduce") of the named tasks, starting its clock now.
func NewProgress(w io.Writer, name string, tasks ...string) *Progress {
	return &Progress{w: w, name: name, start: time.Now(), now: time.Now, tasks: tasks,
		done: make([]int, len(tasks)), total: make([]int, len(tasks))}
}

// IsTerminal reports whether w is a character device (a terminal), where a
// progress line may be drawn: an *os.File whose mode says so.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// NewTerminalProgress returns NewProgress(w, name, tasks...) when w is a
// terminal (IsTerminal), else nil, which draws nothing: a run in a pipe
// stays quiet.
func NewTerminalProgress(w io.Writer, name string, tasks ...string) *Progress {
	if !IsTerminal(w) {
		return nil
	}
	return NewProgress(w, name, tasks...)
}

// Task returns the progress callback of task i (done of total units; a
// total of 0 is unknown), or nil for a nil Progress. Preconditions: i is
// below the number of tasks. Each call redraws the line: O(tasks).
func (p *Progress) Task(i int) func(done, total int) {
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
func (p *Progress) draw() {
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
	line := fmt.Sprintf("\r%s: %s, %.0f s", p.name, strings.Join(parts, ", "), elapsed.Seconds())
	if known && done > 0 && done < total {
		line += fmt.Sprintf(", about %.0f s left", elapsed.Seconds()*float64(total-done)/float64(done))
	}
	fmt.Fprint(p.w, line+"\033[K")
}

// Finish ends the line with a newline, if one was drawn; a nil Progress
// does nothing.
func (p *Progress) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintln(p.w)
	}
}
