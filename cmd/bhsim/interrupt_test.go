//go:build unix

package main

import (
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestInterrupt sends this process Ctrl-C's SIGINT while each long-running
// command runs: every one exits 130 with one line on stderr saying so. A
// handler the test installs first catches a signal that comes between
// commands, so that none can end the test binary. Each command runs for
// about 0.2 s.
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("sends the test process SIGINT: not under -short")
	}
	guard := make(chan os.Signal, 4)
	signal.Notify(guard, os.Interrupt)
	defer signal.Stop(guard)
	for _, args := range [][]string{
		{"run", "--gen", "random:dev=64M,n=100000000"},
		{"sweep", "--count", "100000"},
		{"explain", "write-page", "--count", "100000"},
		{"reproduce", "alloc"},
	} {
		t.Run(args[0], func(t *testing.T) {
			type result struct {
				status      int
				out, stderr string
			}
			done := make(chan result, 1)
			go func() {
				status, out, errs := bhsim(args...)
				done <- result{status, out, errs}
			}()
			time.Sleep(200 * time.Millisecond)
			assert.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
			r := <-done
			assert.Equal(t, 130, r.status, r.stderr)
			assert.Equal(t, "bhsim "+args[0]+": interrupted (Ctrl-C)\n", r.stderr)
			assert.Empty(t, strings.TrimSpace(r.out))
		})
	}
}
