//go:build unix

package report

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInterruptible sends this process SIGINT and SIGTERM while a run is
// interruptible: its context is cancelled with the signal as cause, stop
// returns it, and the status is 128 + the signal's number. Without a
// signal stop returns nil. A stray signal is caught by a handler the test
// installs first, so that none can end the test binary.
func TestInterruptible(t *testing.T) {
	guard := make(chan os.Signal, 4)
	signal.Notify(guard, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(guard)
	for _, tt := range []struct {
		name   string
		sig    syscall.Signal
		msg    string
		status int
	}{
		{"none", 0, "", 0},
		{"Ctrl-C", syscall.SIGINT, "interrupted (Ctrl-C)", 130},
		{"SIGTERM", syscall.SIGTERM, "stopped by terminated", 143},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, stop := Interruptible(io.Discard, "bhsim test")
			if tt.sig == 0 {
				assert.NoError(t, ctx.Err())
				assert.Nil(t, stop())
				assert.Error(t, ctx.Err(), "stop releases the context")
				return
			}
			require.NoError(t, syscall.Kill(os.Getpid(), tt.sig))
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the signal did not cancel the context")
			}
			ie := stop()
			require.NotNil(t, ie)
			assert.Equal(t, tt.msg, ie.Error())
			assert.Equal(t, tt.status, ie.Status())
			assert.Equal(t, ie, context.Cause(ctx))
			assert.Equal(t, ie, stop(), "stop may be called again")
		})
	}
}
