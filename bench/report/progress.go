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
// an estimate of the time left. Made by NewProgressLines, for a log or a
// pipe, it writes the same line, plain and ended by a newline, after a
// second and then at most every LineEvery. A nil *Progress draws nothing.
// Safe for concurrent use.
type Progress struct {
	mu          sync.Mutex
	w           io.Writer
	name        string
	start       time.Time
	now         func() time.Time
	tasks       []string
	done, total []int
	shown       bool
	lines       bool      // plain lines (NewProgressLines)
	last        time.Time // when the last plain line was written
}

// ProgressOn returns the progress of the run called name's tasks on w: a
// line redrawn on a terminal (NewProgress), else plain lines every few
// seconds (NewProgressLines).
func ProgressOn(w io.Writer, name string, tasks ...string) *Progress {
	if IsTerminal(w) {
		return NewProgress(w, name, tasks...)
	}
	return NewProgressLines(w, name, tasks...)
}

// IsTerminal reports whether w is a character device (a terminal). O(1).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// LineEvery is how often, at most, a Progress of plain lines writes one.
const LineEvery = 5 * time.Second

// NewProgressLines returns a progress of plain lines on w, for a writer
// that is not a terminal (a log file, a pipe, a batch job's stderr): the
// line NewProgress draws, after a second and then at most every LineEvery,
// each ended by a newline.
func NewProgressLines(w io.Writer, name string, tasks ...string) *Progress {
	p := NewProgress(w, name, tasks...)
	p.lines = true
	return p
}

// NewProgress returns a progress line on w for the run called name ("bhsim
// reproduce") of the named tasks, starting its clock now.
func NewProgress(w io.Writer, name string, tasks ...string) *Progress {
	return &Progress{w: w, name: name, start: time.Now(), now: time.Now, tasks: tasks,
		done: make([]int, len(tasks)), total: make([]int, len(tasks))}
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
	now := p.now()
	elapsed := now.Sub(p.start)
	if !p.shown && elapsed < time.Second || p.lines && p.shown && now.Sub(p.last) < LineEvery {
		return
	}
	p.shown, p.last = true, now
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
	line := fmt.Sprintf("%s: %s, %.0f s", p.name, strings.Join(parts, ", "), elapsed.Seconds())
	if known && done > 0 && done < total {
		line += fmt.Sprintf(", about %.0f s left", elapsed.Seconds()*float64(total-done)/float64(done))
	}
	if p.lines {
		fmt.Fprintln(p.w, line)
		return
	}
	fmt.Fprint(p.w, "\r"+line+"\033[K")
}

// Finish ends the line with a newline, if one was drawn; a nil Progress,
// or one of plain lines, does nothing.
func (p *Progress) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown && !p.lines {
		fmt.Fprintln(p.w)
	}
}
