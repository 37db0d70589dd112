package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// InterruptError is the cause of a run's context that a signal stopped
// (Interruptible): Ctrl-C's SIGINT or a SIGTERM. Every bhsim command ends
// such a run the same way: one line on stderr, "bhsim COMMAND: interrupted
// (Ctrl-C)", and exit status Status (130 for SIGINT, 143 for SIGTERM).
type InterruptError struct {
	// Signal is the signal that came.
	Signal os.Signal
}

// Error names the signal: "interrupted (Ctrl-C)" for SIGINT.
func (e *InterruptError) Error() string {
	if e.Signal == os.Interrupt {
		return "interrupted (Ctrl-C)"
	}
	return fmt.Sprintf("stopped by %v", e.Signal)
}

// Status is the exit status of a process the signal stopped: 128 + its
// number, as a shell reports a process that the signal killed.
func (e *InterruptError) Status() int {
	if n, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

// Interruptible returns a context that the first SIGINT or SIGTERM cancels,
// with an *InterruptError as its cause, so that a run stops where it checks
// its context and cleans up (a host run removes its loop device and
// tracing instance); and a stop function that ends the handling and
// returns that cause (nil if no signal came). A second signal, for a run
// that does not stop, writes "NAME: SIGNAL again: exiting at once" on w
// and exits with the InterruptError's status. stop may be called more than
// once.
func Interruptible(w io.Writer, name string) (context.Context, func() *InterruptError) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var first *InterruptError
		select {
		case sig := <-sigc:
			first = &InterruptError{Signal: sig}
			cancel(first)
		case <-done:
			return
		}
		select {
		case sig := <-sigc:
			fmt.Fprintf(w, "%s: %v again: exiting at once\n", name, sig)
			os.Exit(first.Status())
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() *InterruptError {
		once.Do(func() {
			signal.Stop(sigc)
			close(done)
			cancel(nil)
		})
		var ie *InterruptError
		if errors.As(context.Cause(ctx), &ie) {
			return ie
		}
		return nil
	}
}
