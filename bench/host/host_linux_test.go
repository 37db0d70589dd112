//go:build linux

package host

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/bhsim/bhsim/bench/scenario"
)

var update = flag.Bool("update", false, "re-record testdata/kernel/6.18 from the live kernel (with BHSIM_KERNEL=1, as root)")

// needKernel skips unless BHSIM_KERNEL=1 and the host runner can run here.
func needKernel(t *testing.T) {
	t.Helper()
	if os.Getenv("BHSIM_KERNEL") != "1" {
		t.Skip("set BHSIM_KERNEL=1 to run scenarios on the host kernel (needs root, loop devices and tracefs)")
	}
	if err := Check(); err != nil {
		t.Skipf("BHSIM_KERNEL=1 but the host runner cannot run: %v", err)
	}
}

// assertNoLeftovers checks that nothing of process pid's runs remains: no
// loop device backed by its files, no mount, no tracing instance.
func assertNoLeftovers(t *testing.T, pid int) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, unix.Mount("bhsim-test-tracefs", dir, "tracefs", 0, ""))
	defer func() { require.NoError(t, unix.Unmount(dir, 0)) }()
	loops, mounts, instances, err := leftovers(pid, dir)
	require.NoError(t, err)
	assert.Empty(t, loops, "loop devices still bound to the run's backing files")
	assert.Empty(t, mounts, "mounts left")
	assert.Empty(t, instances, "tracing instances left")
	tmp, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-*", namePrefix, pid)))
	assert.Empty(t, tmp, "private directories left")
}

const smoke = `# smoke test
device size=16M sector=512
open a rdwr
pwrite a off=0 len=4K repeat=4 fill=0xab
fsync a
pread a off=0 len=4K
open b rdonly
blkbszget b
close b
close a
`

func TestRunSmoke(t *testing.T) {
	needKernel(t)
	s, err := scenario.Parse("smoke.scn", smoke)
	require.NoError(t, err)
	r, err := Run(context.Background(), s, Options{Runs: 2})
	require.NoError(t, err)
	assertNoLeftovers(t, os.Getpid())
	assert.Equal(t, 2, r.Runs)
	assert.Equal(t, scenario.RunnerKernel, r.Runner)
	require.NotNil(t, r.Queue)
	assert.Equal(t, 512, r.Queue.LogicalBlockSize)
	assert.NotEmpty(t, r.Kernel)
	assert.Equal(t, 4096, r.Ops[0].BlockSize)
	assert.Equal(t, int64(16384), r.Ops[1].Bytes)
	assert.Equal(t, 4, r.Ops[1].Calls)
	require.NotNil(t, r.Ops[1].CPU)
	assert.Equal(t, 8, r.Ops[1].CPU.N, "4 calls in each of 2 runs")
	assert.Equal(t, uint64(4), r.Ops[2].Counters.Value("bio.write"))
	assert.Equal(t, uint64(32), r.Ops[2].Counters.Value("sectors.written"))
	assert.Equal(t, r.Ops[2].Counters.Value("sectors.written"), r.Ops[2].Counters.Value("stat.write.sectors"), "trace and sysfs agree")
	assert.Equal(t, uint64(0), r.Ops[1].Counters.Value("bio.write"), "a buffered pwrite submits nothing")
	assert.Equal(t, "0xab*4096", r.Ops[3].Data)
	assert.Equal(t, []scenario.FsyncResult{{Op: 3, FD: "a"}}, r.Fsyncs)
	var sum int64
	for _, o := range r.Ops {
		require.NotNil(t, o.Wall, "%s: timed in the untraced pass", o.Op)
		assert.Positive(t, o.Wall.MinNs, o.Op)
		assert.LessOrEqual(t, o.Wall.MinNs, o.Wall.MaxNs, o.Op)
		sum += o.Wall.MinNs
	}
	require.NotNil(t, r.Wall)
	assert.GreaterOrEqual(t, r.Wall.MaxNs, sum, "the total's longest run is no shorter than the ops' shortest")
}

// TestCleanupAfterInjectedFailure fails, then panics, in the middle of a
// scenario with descriptors open and dirty pages cached, and checks that
// nothing is left either way.
func TestCleanupAfterInjectedFailure(t *testing.T) {
	needKernel(t)
	s, err := scenario.Parse("smoke.scn", smoke)
	require.NoError(t, err)
	errInjected := errors.New("injected")
	_, err = Run(context.Background(), s, Options{BeforeOp: func(k int) error {
		if k == 7 {
			return errInjected
		}
		return nil
	}})
	require.ErrorIs(t, err, errInjected)
	assert.Contains(t, err.Error(), "op 7 (close b)")
	assertNoLeftovers(t, os.Getpid())

	func() {
		defer func() { assert.Equal(t, "injected panic", recover()) }()
		_, _ = Run(context.Background(), s, Options{BeforeOp: func(k int) error {
			if k == 3 {
				panic("injected panic")
			}
			return nil
		}})
	}()
	assertNoLeftovers(t, os.Getpid())

	ctx, cancel := context.WithCancel(context.Background())
	_, err = Run(ctx, s, Options{BeforeOp: func(k int) error {
		if k == 2 {
			cancel()
		}
		return nil
	}})
	require.ErrorIs(t, err, context.Canceled)
	assertNoLeftovers(t, os.Getpid())
}

// smokeRuled is the smoke scenario on a throttled device, which a killed
// run leaves with its blkio rules.
var smokeRuled = strings.Replace(smoke, "sector=512", "sector=512 wbps=16M riops=1000 sched=mq-deadline", 1)

// signalSelfMidRun is a test's child process: it runs scenario text
// and sends itself sig before the fourth operation, then waits for the
// signal to end it (exit status 3 or 4 if something else does).
func signalSelfMidRun(text string, sig syscall.Signal) {
	s, err := scenario.Parse("smoke.scn", text)
	if err != nil {
		os.Exit(3)
	}
	_, _ = Run(context.Background(), s, Options{BeforeOp: func(k int) error {
		if k == 3 {
			_ = syscall.Kill(os.Getpid(), sig)
			select {}
		}
		return nil
	}})
	os.Exit(4) // not reached: the signal ends the process
}

// runFailingChild runs this test binary's test name in a child process with
// env set to 1 and returns how it ended (it must fail), its output and its
// process id.
func runFailingChild(t *testing.T, name, env string) (*exec.ExitError, []byte, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$")
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "output: %s", out)
	return ee, out, cmd.Process.Pid
}

// TestSignalCleansUp runs a scenario in a child process that sends itself
// SIGINT mid-run: the child must exit with 130 and leave nothing behind.
func TestSignalCleansUp(t *testing.T) {
	if os.Getenv("BHSIM_HOST_SIGNAL_CHILD") == "1" {
		signalSelfMidRun(smokeRuled, syscall.SIGINT) // the handler cleans up and exits
	}
	needKernel(t)
	ee, out, pid := runFailingChild(t, "TestSignalCleansUp", "BHSIM_HOST_SIGNAL_CHILD")
	assert.Equal(t, 130, ee.ExitCode(), "output: %s", out)
	assert.Contains(t, string(out), "cleaned up, exiting")
	assertNoLeftovers(t, pid)
}

// TestRecordedResults runs every corpus scenario once on the live kernel and
// compares it with its recorded result (within the recorded ranges); with
// -update it re-records them (three runs each) instead.
func TestRecordedResults(t *testing.T) {
	needKernel(t)
	scenarios, err := scenario.ParseDir(scenarioDir)
	require.NoError(t, err)
	var u unix.Utsname
	require.NoError(t, unix.Uname(&u))
	release := unix.ByteSliceToString(u.Release[:])
	if !strings.HasPrefix(release, "6.18") && !*update {
		t.Skipf("the recorded results are of Linux 6.18; this kernel is %s", release)
	}
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			golden := filepath.Join(kernelDir, s.Name+".json")
			if *update {
				r, err := Run(context.Background(), s, Options{Runs: 3})
				require.NoError(t, err)
				b, err := r.Encode()
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(golden, b, 0o644))
				return
			}
			want, err := scenario.ReadResultFile(golden)
			require.NoError(t, err)
			got, err := Run(context.Background(), s, Options{})
			if errors.Is(err, scenario.ErrRuleUnavailable) {
				t.Skipf("this kernel cannot run the scenario as recorded: %v", err)
			}
			require.NoError(t, err)
			c := scenario.Compare(got, want)
			sum := c.Summary()
			// Counters outside the recorded range are reported, not failed:
			// the kernel may vary beyond three runs (see docs/host-kernel.md).
			if sum.Equal != sum.Total {
				t.Logf("%s", c)
			}
			assert.Equal(t, sum.ResultRows, sum.ResultsEqual, "errno, block sizes and data must repeat:\n%s", c)
		})
	}
	assertNoLeftovers(t, os.Getpid())
}

// TestCleanStaleAfterKill runs a throttled scenario in a child process
// that kills itself with SIGKILL mid-run, which no handler sees: its loop
// device with its blkio rules, mounts and tracing instance stay behind
// until CleanStale removes them, the rules first.
func TestCleanStaleAfterKill(t *testing.T) {
	if os.Getenv("BHSIM_HOST_KILL_CHILD") == "1" {
		signalSelfMidRun(smokeRuled, syscall.SIGKILL)
	}
	needKernel(t)
	if err := CheckThrottle(); err != nil {
		t.Skipf("the host cannot apply throttle rules: %v", err)
	}
	ee, out, pid := runFailingChild(t, "TestCleanStaleAfterKill", "BHSIM_HOST_KILL_CHILD")
	ws, ok := ee.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the child died of SIGKILL: %v, output: %s", ee, out)
	left, err := Leftovers(pid)
	require.NoError(t, err)
	require.NotEmpty(t, left, "a killed run leaves its device behind")
	rules := 0
	for _, l := range left {
		if strings.HasPrefix(l, "blkio.throttle.") {
			rules++
		}
	}
	assert.Equal(t, 2, rules, "its wbps and riops rules: %v", left)
	removed, err := CleanStale()
	require.NoError(t, err)
	// A tracing instance is named under each caller's own tracefs mount.
	base := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			out = append(out, filepath.Base(p))
		}
		return out
	}
	for _, l := range left {
		if strings.HasPrefix(l, "/dev/loop") || strings.HasPrefix(l, "blkio.throttle.") || strings.Contains(l, "/instances/") {
			assert.Contains(t, base(removed), filepath.Base(l), "CleanStale reports what it removed")
		}
	}
	assertNoLeftovers(t, pid)
}
