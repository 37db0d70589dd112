//go:build linux

package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bhsim/bhsim/bench/scenario"
)

// namePrefix starts the private directory's and the tracing instance's
// names; the process id follows, so CleanStale can tell a dead run's leftovers.
const namePrefix = "bhsim-host-"

// instancePrefix starts the tracing instance's name: bhsim-PID-RANDOM.
const instancePrefix = "bhsim-"

// env is one run's private resources. Every field that names a resource is
// set as soon as the resource exists, so cleanup undoes exactly what setup
// did, however far it got.
type env struct {
	dir      string // private directory
	tmpDir   string // tmpfs mount point, when mounted
	traceDir string // tracefs mount point, when mounted
	backing  string // backing file path
	loop     int    // loop device index, -1 when none was added
	bound    bool   // LOOP_CONFIGURE succeeded
	devPath  string // /dev/loopN
	major    uint32
	minor    uint32
	instance string // tracing instance directory, when created
	bufferKB int    // the tracing instance's buffer per CPU, in KiB
	marker   *os.File
	fds      map[string]int // the scenario's open descriptors
	undo     []setting      // what undoes each applied device rule, in order applied
	// throttled reports whether blk-throttle rules are on the device;
	// throttleBase is what blk-throttle had seen of it then (read, write
	// bytes), idleLimit how long waitIdle waits.
	throttled    bool
	throttleBase [2]uint64
	statBase     scenario.DiskStat // the device's stat when throttleBase was read
	idleLimit    time.Duration
	untraced     bool // the timing pass: no tracing instance, no markers

	once sync.Once
	done chan struct{}
	err  error
}

func newEnv() *env { return &env{loop: -1, fds: map[string]int{}, done: make(chan struct{})} }

func randomHex() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// setup creates the private directory, mounts, backing file and loop device.
func (e *env) setup(ctx context.Context, size int64, sector int) error {
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-*", namePrefix, os.Getpid()))
	if err != nil {
		return fmt.Errorf("host: private directory: %w", err)
	}
	e.dir = dir
	tmp, trace := filepath.Join(dir, "tmp"), filepath.Join(dir, "tracefs")
	for _, d := range []string{tmp, trace} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("host: %w", err)
		}
	}
	// Room for the device, the one-page ballast and slack for tmpfs's rounding.
	tmpSize := size + 2<<20
	if err := unix.Mount("bhsim-host", tmp, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, fmt.Sprintf("size=%d,mode=0700", tmpSize)); err != nil {
		return fmt.Errorf("host: mount a private tmpfs on %s: %w", tmp, err)
	}
	e.tmpDir = tmp
	if err := unix.Mount("bhsim-tracefs", trace, "tracefs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("host: mount a private tracefs on %s: %w (is tracefs enabled in this kernel?)", trace, err)
	}
	e.traceDir = trace
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "ballast"), make([]byte, os.Getpagesize()), 0o600); err != nil {
		return fmt.Errorf("host: ballast file: %w", err)
	}
	e.backing = filepath.Join(tmp, "backing")
	bf, err := os.OpenFile(e.backing, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("host: backing file: %w", err)
	}
	defer bf.Close()
	if err := bf.Truncate(size); err != nil {
		return fmt.Errorf("host: backing file: %w", err)
	}
	return e.addLoop(ctx, bf, sector)
}

// addLoop adds a loop device of the runner's own and binds the backing file.
func (e *env) addLoop(ctx context.Context, backing *os.File, sector int) error {
	ctl, err := unix.Open("/dev/loop-control", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("host: /dev/loop-control: %w (is the loop driver loaded?)", err)
	}
	defer unix.Close(ctl)
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		// LOOP_CTL_ADD with a negative index takes the lowest free index.
		r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(ctl), unix.LOOP_CTL_ADD, ^uintptr(0))
		if errno != 0 {
			return fmt.Errorf("host: LOOP_CTL_ADD: %w", errno)
		}
		e.loop = int(r)
		e.devPath = "/dev/loop" + strconv.Itoa(e.loop)
		err := e.bind(backing, sector)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || attempt >= 5 {
			return err
		}
		// Someone else bound the device between our add and configure: it
		// is theirs now; leave it and add another.
		e.loop = -1
	}
}

func (e *env) bind(backing *os.File, sector int) error {
	var fd int
	var err error
	for deadline := time.Now().Add(3 * time.Second); ; {
		fd, err = unix.Open(e.devPath, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err == nil || !errors.Is(err, unix.ENOENT) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // devtmpfs creates the node
	}
	if err != nil {
		return fmt.Errorf("host: open %s: %w", e.devPath, err)
	}
	// Close the configuring descriptor before the scenario: its opens are then
	// the device's only ones.
	defer unix.Close(fd)
	cfg := unix.LoopConfig{Fd: uint32(backing.Fd()), Size: uint32(sector)}
	copy(cfg.Info.File_name[:], e.backing)
	if err := unix.IoctlLoopConfigure(fd, &cfg); err != nil {
		return fmt.Errorf("host: LOOP_CONFIGURE %s: %w", e.devPath, err)
	}
	e.bound = true
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("host: stat %s: %w", e.devPath, err)
	}
	e.major, e.minor = unix.Major(st.Rdev), unix.Minor(st.Rdev)
	return nil
}

// cleanup undoes setup once, whoever calls it first (the run, its deferred
// recovery or the signal handler); later calls wait for the first and return
// its error.
func (e *env) cleanup() error {
	e.once.Do(func() {
		defer close(e.done)
		// The rules go first: the throttle rules before the scenario's
		// descriptors, whose last close writes the device back, and before
		// the device, so that no bio stays held.
		errs := []error{e.undoRules()}
		for name, fd := range e.fds {
			_ = unix.Close(fd) // the scenario's own descriptors; errors are not ours
			delete(e.fds, name)
		}
		if e.marker != nil {
			_ = e.marker.Close()
		}
		if e.bound {
			errs = append(errs, e.detach())
		}
		if e.loop >= 0 {
			errs = append(errs, e.removeLoop())
		}
		if e.instance != "" {
			errs = append(errs, retryBusy(func() error { return unix.Rmdir(e.instance) }, "remove tracing instance "+e.instance))
		}
		for _, m := range []*string{&e.traceDir, &e.tmpDir} {
			if *m != "" {
				if err := unmount(*m); err != nil {
					errs = append(errs, err)
					continue
				}
				if err := os.Remove(*m); err != nil {
					errs = append(errs, fmt.Errorf("host: %w", err))
				}
				*m = ""
			}
		}
		if e.dir != "" {
			// Remove only what setup made, never recursively: a mount that
			// would not go must not be emptied.
			for _, d := range []string{filepath.Join(e.dir, "tmp"), filepath.Join(e.dir, "tracefs")} {
				if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, fmt.Errorf("host: %w", err))
				}
			}
			if err := os.Remove(e.dir); err != nil {
				errs = append(errs, fmt.Errorf("host: %w", err))
			}
		}
		e.err = errors.Join(errs...)
	})
	<-e.done
	return e.err
}

// detach clears the loop device's backing file and waits until sysfs shows
// it gone.
func (e *env) detach() error {
	fd, err := unix.Open(e.devPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("host: open %s to detach it: %w", e.devPath, err)
	}
	err = unix.IoctlSetInt(fd, unix.LOOP_CLR_FD, 0)
	// With this descriptor the only opener, the kernel detaches on its close.
	_ = unix.Close(fd)
	if err != nil && !errors.Is(err, unix.ENXIO) {
		return fmt.Errorf("host: LOOP_CLR_FD %s: %w", e.devPath, err)
	}
	backing := fmt.Sprintf("/sys/block/loop%d/loop/backing_file", e.loop)
	for deadline := time.Now().Add(5 * time.Second); ; {
		if _, err := os.Stat(backing); errors.Is(err, os.ErrNotExist) {
			e.bound = false
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("host: %s still bound 5 s after LOOP_CLR_FD", e.devPath)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *env) removeLoop() error {
	ctl, err := unix.Open("/dev/loop-control", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("host: /dev/loop-control: %w", err)
	}
	defer unix.Close(ctl)
	err = retryBusy(func() error {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(ctl), unix.LOOP_CTL_REMOVE, uintptr(e.loop))
		if errno != 0 {
			return errno
		}
		return nil
	}, "LOOP_CTL_REMOVE "+e.devPath)
	if err == nil || errors.Is(err, unix.ENODEV) {
		e.loop = -1
		return nil
	}
	return err
}

// retryBusy retries f for up to five seconds while it fails with EBUSY.
func retryBusy(f func() error, what string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("host: %s: %w", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func unmount(dir string) error {
	err := retryBusy(func() error { return unix.Unmount(dir, 0) }, "unmount "+dir)
	if err == nil {
		return nil
	}
	if derr := unix.Unmount(dir, unix.MNT_DETACH); derr == nil {
		return nil
	}
	return err
}

// backingFull remounts the private tmpfs with size= what it uses, so the
// backing file cannot grow any more; or, with size set, with room for size
// bytes of the backing file beside the ballast page (what it uses, when
// that is more: the store is then full).
func (e *env) backingFull(size int64) error {
	for attempt := 0; ; attempt++ {
		var st unix.Statfs_t
		if err := unix.Statfs(e.tmpDir, &st); err != nil {
			return fmt.Errorf("host: statfs %s: %w", e.tmpDir, err)
		}
		used := (st.Blocks - st.Bfree) * uint64(st.Bsize)
		if size > 0 {
			used = max(used, uint64(size)+uint64(os.Getpagesize()))
		}
		err := unix.Mount("bhsim-host", e.tmpDir, "tmpfs", unix.MS_REMOUNT|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, fmt.Sprintf("size=%d", used))
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EINVAL) || attempt >= 3 {
			return fmt.Errorf("host: remount %s with size=%d: %w", e.tmpDir, used, err)
		}
	}
}

// readSys reads a sysfs file's trimmed text.
func readSys(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
