package threads

import (
	"os"
	"testing"

	"github.com/bhsim/bhsim/internal/gcpolicy"
)

// TestMain runs the package's tests with the garbage collector set as
// cmd/bhsim sets it (gcpolicy.Apply): the full-size reproductions hold
// simulated page caches, large heaps of pointers that every cycle marks,
// and at Go's default they spend about a sixth of their time collecting.
// It changes no simulated figure.
func TestMain(m *testing.M) {
	gcpolicy.Apply()
	os.Exit(m.Run())
}
