//go:build linux

package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bhsim/bhsim/bench/scenario"
)

// Check reports what the host runner lacks here, nil when it can run: root
// (CAP_SYS_ADMIN for loop devices and mounts), the loop driver's
// /dev/loop-control and tracefs.
func Check() error {
	if uid := os.Geteuid(); uid != 0 {
		return fmt.Errorf("host: needs root for loop devices, mounts and tracing (running as uid %d)", uid)
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		return fmt.Errorf("host: no loop devices: %w (load the loop module)", err)
	}
	fs, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return fmt.Errorf("host: cannot tell whether tracefs exists: %w", err)
	}
	if !strings.Contains(string(fs), "\ttracefs\n") {
		return errors.New("host: no tracefs in /proc/filesystems (a kernel without CONFIG_TRACING)")
	}
	return nil
}

// Run runs the scenario on the host kernel opts.Runs times, each on a fresh
// loop device, and returns the merged result (counters as min/max over the
// runs). See the package documentation for what a run does and cleans up.
// It fails, naming what is missing, without root, loop devices or tracefs.
func Run(ctx context.Context, s *scenario.Scenario, opts Options) (*scenario.Result, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	opts, err := opts.withDefaults(s)
	if err != nil {
		return nil, err
	}
	if err := CheckBounds(s); err != nil {
		return nil, err
	}
	if opts.TraceBufferKB == 0 {
		opts.TraceBufferKB = TraceBufferFor(s)
	}
	if err := Check(); err != nil {
		return nil, err
	}
	if throttled(s.Device.Rules) {
		if err := CheckThrottle(); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	var runs []*scenario.Result
	for i := 0; i < opts.Runs; i++ {
		r, err := runPasses(ctx, s, opts)
		if err != nil {
			if opts.Runs > 1 {
				return nil, fmt.Errorf("%s: run %d of %d: %w", s.Name, i+1, opts.Runs, err)
			}
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		runs = append(runs, r)
	}
	return scenario.MergeRuns(runs)
}

// runOnce is one pass of a run on a fresh device with s's rules, on a
// locked OS thread: the counting pass, with the tracing instance, or with
// untraced the timing pass, without one, which keeps the operations' wall
// time and the scenario's.
func runOnce(parent context.Context, s *scenario.Scenario, opts Options, untraced bool) (*scenario.Result, error) {
	var res *scenario.Result
	err := inEnv(parent, opts.Timeout, untraced, !opts.NoSignalHandler, s.Device.Size, s.Device.SectorSize(), func(ctx context.Context, e *env) error {
		if err := e.applyRules(s.Device.Rules); err != nil {
			return err
		}
		e.idleLimit = time.Second + RulesTime(s)
		r := scenario.NewResult(s, scenario.RunnerKernel)
		header(r, e)
		var att *attribution
		if !untraced {
			f, err := e.traceFilter()
			if err != nil {
				return err
			}
			if err := e.startTracing(f, opts.TraceBufferKB); err != nil {
				return err
			}
			isWrite := func(op int) bool { _, ok := s.Ops[op-1].(scenario.Write); return ok }
			att = newAttribution(f, len(s.Ops), isWrite)
		}
		statDir := fmt.Sprintf("/sys/block/loop%d", e.loop)
		for i, op := range s.Ops {
			if err := e.runOp(ctx, r, i, op, statDir, opts); err != nil {
				return err
			}
		}
		if untraced {
			r.Wall = totalWall(r)
		} else if err := e.countEvents(r, att, opts.TraceDump); err != nil {
			return err
		}
		r.Finish()
		res = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// inEnv sets up a fresh private environment (a loop device of size bytes
// and sector-byte sectors over a sparse file on a private tmpfs; untraced:
// no tracing instance or markers) and calls run with it, on one locked OS
// thread, with a context that ends after timeout or with parent. With
// signals, SIGINT and SIGTERM clean up and exit (exitOnSignal). The
// environment is cleaned up on every return, also when setup fails half
// way; a clean-up error joins run's. Errors: setup's, run's, clean-up's.
func inEnv(parent context.Context, timeout time.Duration, untraced, signals bool, size int64, sector int, run func(ctx context.Context, e *env) error) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()

	e := newEnv()
	e.untraced = untraced
	stop := make(chan struct{})
	defer close(stop)
	if signals {
		sigc := e.exitOnSignal(cancel, stop)
		defer signal.Stop(sigc)
	}
	defer func() { err = errors.Join(err, e.cleanup()) }()
	if err := e.setup(ctx, size, sector); err != nil {
		return err
	}
	return run(ctx, e)
}

// countEvents stops tracing and adds each operation's traced events to
// its counters.
func (e *env) countEvents(res *scenario.Result, att *attribution, dump io.Writer) error {
	if err := e.stopTracing(att, dump); err != nil {
		return err
	}
	if att.begins != len(res.Ops) {
		return fmt.Errorf("host: the trace holds %d of the %d begin markers", att.begins, len(res.Ops))
	}
	for i := range res.Ops {
		var cs scenario.CounterSet
		cs.AddAll(res.Ops[i].Counters)
		cs.AddAll(att.ops[i].Counters())
		res.Ops[i].Counters = cs.Counters()
	}
	return nil
}

// exitOnSignal makes SIGINT and SIGTERM, until stop is closed, cancel the
// run, wait (at most 3 s) for its clean-up or clean up itself, and exit
// with 128 + the signal's number. It returns the signal channel, for
// signal.Stop.
func (e *env) exitOnSignal(cancel context.CancelFunc, stop <-chan struct{}) chan os.Signal {
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-sigc:
			cancel()
			select {
			case <-e.done:
			case <-time.After(3 * time.Second):
				_ = e.cleanup()
			}
			fmt.Fprintf(os.Stderr, "host: %v: cleaned up, exiting\n", sig)
			code := 1
			if n, ok := sig.(syscall.Signal); ok {
				code = 128 + int(n)
			}
			os.Exit(code)
		case <-stop:
		}
	}()
	return sigc
}

// traceFilter is the tracing filter of the set-up device: the loop
// device's numbers and inode, the backing file's device and the runner's
// thread.
func (e *env) traceFilter() (filter, error) {
	var bst unix.Stat_t
	if err := unix.Stat(e.backing, &bst); err != nil {
		return filter{}, fmt.Errorf("host: stat backing file: %w", err)
	}
	return filter{
		major: e.major, minor: e.minor,
		bdevIno:    kernelDev(e.major, e.minor),
		backingDev: fmt.Sprintf("%d:%d", unix.Major(bst.Dev), unix.Minor(bst.Dev)),
		tid:        unix.Gettid(),
	}, nil
}

// runOp runs op, the scenario's operation i, and fills res.Ops[i]: its
// result and CPU time per call, and for an fsync or fdatasync res.Fsyncs;
// in the counting pass between its trace markers and with the device's
// stat counters it moved (statDir: the loop device's sysfs directory), in
// the timing pass with its wall time. Either way the runner then waits
// for the device to go idle, outside the operation's time, so that both
// passes start each operation from the same state.
func (e *env) runOp(ctx context.Context, res *scenario.Result, i int, op scenario.Op, statDir string, opts Options) error {
	k := i + 1
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("host: before op %d (%s): %w", k, op, err)
	}
	if opts.BeforeOp != nil {
		if err := opts.BeforeOp(k); err != nil {
			return fmt.Errorf("host: op %d (%s): %w", k, op, err)
		}
	}
	var before scenario.DiskStat
	if !e.untraced {
		var err error
		if before, err = readStat(statDir); err != nil {
			return err
		}
		if err := e.mark("begin", k); err != nil {
			return err
		}
	}
	or := &res.Ops[i]
	c := clock{whole: e.untraced}
	switch op.(type) {
	case scenario.Write, scenario.Read:
	default:
		c.single = true
	}
	if err := e.exec(ctx, op, or, &c); err != nil {
		return fmt.Errorf("host: op %d (%s): %w", k, op, err)
	}
	c.stop()
	if c.cpu.N > 0 {
		or.CPU = &c.cpu
		if e.untraced {
			or.Wall = scenario.SpanOf(c.wall)
		}
	}
	if err := e.waitIdle(statDir); err != nil {
		return err
	}
	switch op.(type) {
	case scenario.Fsync, scenario.Fdatasync:
		res.Fsyncs = append(res.Fsyncs, scenario.FsyncResult{Op: k, FD: op.Descriptor(), Errno: or.Errno})
	}
	if e.untraced {
		return nil
	}
	if err := e.mark("end", k); err != nil {
		return err
	}
	after, err := readStat(statDir)
	if err != nil {
		return err
	}
	var cs scenario.CounterSet
	scenario.CountStat(&cs, before, after)
	or.Counters = cs.Counters()
	return nil
}

// header fills the result's kernel, machine and queue limits.
func header(r *scenario.Result, e *env) {
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		r.Kernel = unix.ByteSliceToString(u.Release[:])
		r.Machine = unix.ByteSliceToString(u.Machine[:])
	}
	r.PageSize = os.Getpagesize()
	r.Queue = queueLimits(fmt.Sprintf("/sys/block/loop%d", e.loop))
}

func queueLimits(dir string) *scenario.QueueLimits {
	q := filepath.Join(dir, "queue")
	num := func(name string) int {
		s, _ := readSys(filepath.Join(q, name))
		n, _ := strconv.Atoi(s)
		return n
	}
	str := func(name string) string { s, _ := readSys(filepath.Join(q, name)); return s }
	sched := activeScheduler(str("scheduler"))
	dio, _ := readSys(filepath.Join(dir, "loop", "dio"))
	return &scenario.QueueLimits{
		LogicalBlockSize:  num("logical_block_size"),
		PhysicalBlockSize: num("physical_block_size"),
		MinimumIOSize:     num("minimum_io_size"),
		OptimalIOSize:     num("optimal_io_size"),
		MaxSectorsKB:      num("max_sectors_kb"),
		MaxHWSectorsKB:    num("max_hw_sectors_kb"),
		MaxSegments:       num("max_segments"),
		MaxSegmentSize:    num("max_segment_size"),
		Scheduler:         sched,
		NrRequests:        num("nr_requests"),
		Rotational:        num("rotational") == 1,
		WriteCache:        str("write_cache"),
		FUA:               num("fua") == 1,
		ReadAheadKB:       num("read_ahead_kb"),
		NoMerges:          num("nomerges"),
		DirectIO:          dio == "1",
	}
}

// readStat reads /sys/block/DEV/stat (Documentation/block/stat.rst): the
// fields the counters keep are 0-2 (read I/Os, merges, sectors), 4-6 (the
// same for writes) and 15 (flush I/Os, 0 on a kernel that lacks the field).
func readStat(dir string) (scenario.DiskStat, error) {
	s, err := readSys(filepath.Join(dir, "stat"))
	if err != nil {
		return scenario.DiskStat{}, fmt.Errorf("host: %w", err)
	}
	var f [17]uint64
	for i, w := range strings.Fields(s) {
		n, err := strconv.ParseUint(w, 10, 64)
		if err != nil {
			return scenario.DiskStat{}, fmt.Errorf("host: %s/stat: %q", dir, s)
		}
		if i < len(f) {
			f[i] = n
		}
	}
	return scenario.DiskStat{ReadIOs: f[0], ReadMerges: f[1], ReadSectors: f[2],
		WriteIOs: f[4], WriteMerges: f[5], WriteSectors: f[6], FlushIOs: f[15]}, nil
}

// waitIdle waits until the device has no request in flight and, under
// throttle rules, blk-throttle holds none of its bios (which count as in
// flight nowhere, and fire block_bio_queue only when it lets them go): at
// most idleLimit, a second plus what the rules can add (RulesTime). Under
// rules, a device still busy then is an error: the next operation would be
// timed and counted with this one's I/O.
func (e *env) waitIdle(dir string) error {
	for deadline := time.Now().Add(max(e.idleLimit, time.Second)); time.Now().Before(deadline); {
		s, err := readSys(filepath.Join(dir, "inflight"))
		if err != nil {
			return nil
		}
		if f := strings.Fields(s); len(f) == 2 && f[0] == "0" && f[1] == "0" {
			st, err := readStat(dir)
			if err != nil {
				return err
			}
			held, err := e.heldBytes(st)
			if err != nil || !held {
				return err
			}
		}
		time.Sleep(time.Millisecond)
	}
	if e.throttled {
		return fmt.Errorf("host: the device was still busy %v after the operation (blk-throttle holding bios, or requests in flight)", max(e.idleLimit, time.Second))
	}
	return nil
}

func errnoName(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		if n := unix.ErrnoName(errno); n != "" {
			return n
		}
		return "errno " + strconv.Itoa(int(errno))
	}
	return err.Error()
}

// exec runs one operation, filling its result and timing its calls on m. Failing system calls are
// results (errno); only the runner's own failures are errors.
func (e *env) exec(ctx context.Context, op scenario.Op, or *scenario.OpResult, m *clock) error {
	fd, haveFD := e.fds[op.Descriptor()]
	if _, isOpen := op.(scenario.Open); !isOpen && op.Descriptor() != "" && !haveFD {
		// The scenario validated: the fd is only missing if open failed.
		or.Errno = "EBADF"
		return nil
	}
	switch o := op.(type) {
	case scenario.Open:
		e.execOpen(o, or, m)
	case scenario.Close:
		_ = timed(or, m, func() error { return unix.Close(fd) })
		delete(e.fds, o.FD)
	case scenario.SetBlockSize:
		if timed(or, m, func() error { return unix.IoctlSetPointerInt(fd, unix.BLKBSZSET, int(o.Size)) }) == nil {
			noteBlockSize(fd, or)
		}
	case scenario.GetBlockSize:
		var n int
		if timed(or, m, func() (err error) { n, err = unix.IoctlGetInt(fd, unix.BLKBSZGET); return err }) == nil {
			or.BlockSize = n
		}
	case scenario.Write:
		return execWrite(ctx, fd, o, or, m)
	case scenario.Read:
		return execRead(ctx, fd, o, or, m)
	case scenario.Fsync:
		_ = timed(or, m, func() error { return unix.Fsync(fd) })
	case scenario.Fdatasync:
		_ = timed(or, m, func() error { return unix.Fdatasync(fd) })
	case scenario.DropCaches:
		_ = timed(or, m, func() error { return flushBuffers(fd) })
	case scenario.ReadOnly:
		v := 0
		if o.On {
			v = 1
		}
		_ = timed(or, m, func() error { return unix.IoctlSetPointerInt(fd, unix.BLKROSET, v) })
	case scenario.BackingFull:
		or.Calls = 1
		return e.backingFull(o.Size)
	default:
		return fmt.Errorf("unknown operation %T", op)
	}
	return nil
}

// noteBlockSize records fd's block size (BLKBSZGET) in the result, when
// the ioctl answers.
func noteBlockSize(fd int, or *scenario.OpResult) {
	if n, err := unix.IoctlGetInt(fd, unix.BLKBSZGET); err == nil {
		or.BlockSize = n
	}
}

// execOpen runs an Open: open(2) of the loop device in o's mode (O_EXCL with
// Excl, always O_CLOEXEC), keeping the descriptor under o's name and
// recording its block size.
func (e *env) execOpen(o scenario.Open, or *scenario.OpResult, m *clock) {
	flags := []int{unix.O_RDONLY, unix.O_WRONLY, unix.O_RDWR}[o.Mode] | unix.O_CLOEXEC
	if o.Excl {
		flags |= unix.O_EXCL
	}
	var nfd int
	if timed(or, m, func() (err error) { nfd, err = unix.Open(e.devPath, flags, 0); return err }) == nil {
		e.fds[o.FD] = nfd
		noteBlockSize(nfd, or)
	}
}

// execWrite runs a Write on fd: its pwrite(2) calls of o.Len bytes of
// o.Fill, one Step apart, until one fails; the bytes written add up. Only
// a cancelled ctx is an error.
func execWrite(ctx context.Context, fd int, o scenario.Write, or *scenario.OpResult, m *clock) error {
	buf := make([]byte, o.Len)
	for i := range buf {
		buf[i] = o.Fill
	}
	for i := 0; i < o.Calls(); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var n int
		err := timed(or, m, func() (err error) { n, err = unix.Pwrite(fd, buf, o.Off+int64(i)*o.Step()); return err })
		or.Bytes += int64(max(n, 0))
		if err != nil {
			break
		}
	}
	m.stop()
	return nil
}

// execRead runs a Read on fd: its pread(2) calls of o.Len bytes, one Step
// apart, until one fails; the bytes read add up and the data read is
// summarised. Only a cancelled ctx is an error.
func execRead(ctx context.Context, fd int, o scenario.Read, or *scenario.OpResult, m *clock) error {
	// Each call reads straight into its place in data, touched first, so
	// that nothing but the loop runs between calls: at most MaxTotalIO.
	data := make([]byte, o.Len*int64(o.Calls()))
	for i := 0; i < len(data); i += os.Getpagesize() {
		data[i] = 0
	}
	var got int64
	for i := 0; i < o.Calls(); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var n int
		buf := data[got : got+o.Len]
		err := timed(or, m, func() (err error) { n, err = unix.Pread(fd, buf, o.Off+int64(i)*o.Step()); return err })
		if n > 0 {
			got += int64(n)
		}
		if err != nil {
			break
		}
	}
	m.stop() // before the summary, which is the runner's work
	or.Bytes = got
	or.Data = scenario.DataSummary(data[:got])
	return nil
}

// flushBuffers is the BLKFLSBUF ioctl on fd: the kernel writes back and
// drops the device's buffers.
func flushBuffers(fd int) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.BLKFLSBUF, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
