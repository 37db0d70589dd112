//go:build linux

package host

import (
	"context"
	"fmt"
	"io"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bhsim/bhsim/bench/scenario"
)

// Loop-disk measurement: how many requests of each size one run makes, on
// separate regions of a 64 MiB device (the small ones in the first 16 MiB,
// the large ones after), so that every write fills a hole.
const (
	loopDiskSmallRequests = 4096
	loopDiskLargeRequests = 32
	loopDiskDeviceSize    = 64 << 20
)

// MeasureLoopDisk measures the runner's loop device on its own (see
// scenario.LoopDisk): runs fresh devices (at least 1), each written and then
// read with O_DIRECT requests of 4 KiB (4,096 of them) and 1 MiB (32), one at
// a time, timed with CLOCK_MONOTONIC; the result holds each direction's
// median over the runs of the mean time per request. Each device is the
// runner's own and is removed on every exit path, as a run's (SIGKILL:
// CleanStale). About 0.2 s a run. Errors: Check's, a failed setup, request or
// clean-up, ctx done.
func MeasureLoopDisk(ctx context.Context, runs int) (*scenario.LoopDisk, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	runs = max(runs, 1)
	var rs, rl, ws, wl []float64
	for range runs {
		t, err := measureLoopDiskOnce(ctx)
		if err != nil {
			return nil, err
		}
		rs, rl, ws, wl = append(rs, t.Read.SmallNS), append(rl, t.Read.LargeNS), append(ws, t.Write.SmallNS), append(wl, t.Write.LargeNS)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return nil, fmt.Errorf("host: uname: %w", err)
	}
	l := &scenario.LoopDisk{Schema: scenario.LoopDiskSchema, Kernel: unix.ByteSliceToString(u.Release[:]),
		Machine: unix.ByteSliceToString(u.Machine[:]), Runs: runs,
		Read:  scenario.LoopDiskTimes{SmallNS: median(rs), LargeNS: median(rl)},
		Write: scenario.LoopDiskTimes{SmallNS: median(ws), LargeNS: median(wl)}}
	if err := l.Check(); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	return l, nil
}

// measureLoopDiskOnce measures one fresh device: the writes, then the reads
// of what they wrote.
func measureLoopDiskOnce(parent context.Context) (t scenario.LoopDisk, err error) {
	err = inEnv(parent, time.Minute, true, true, loopDiskDeviceSize, 512, func(ctx context.Context, e *env) error {
		return measureLoopDevice(ctx, e.devPath, &t)
	})
	return t, err
}

// measureLoopDevice times the requests on the device at devPath into t.
func measureLoopDevice(ctx context.Context, devPath string, t *scenario.LoopDisk) error {
	fd, err := unix.Open(devPath, unix.O_RDWR|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("host: loop disk: open %s with O_DIRECT: %w", devPath, err)
	}
	defer unix.Close(fd)
	buf, err := unix.Mmap(-1, 0, scenario.LoopDiskLarge, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return fmt.Errorf("host: loop disk: a page-aligned buffer: %w", err)
	}
	defer unix.Munmap(buf)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	const largeAt = loopDiskSmallRequests * scenario.LoopDiskSmall
	for _, m := range []struct {
		ns          *float64
		write       bool
		size, count int
		at          int64
	}{
		{&t.Write.SmallNS, true, scenario.LoopDiskSmall, loopDiskSmallRequests, 0},
		{&t.Write.LargeNS, true, scenario.LoopDiskLarge, loopDiskLargeRequests, largeAt},
		{&t.Read.SmallNS, false, scenario.LoopDiskSmall, loopDiskSmallRequests, 0},
		{&t.Read.LargeNS, false, scenario.LoopDiskLarge, loopDiskLargeRequests, largeAt},
	} {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := buf[:m.size]
		start := time.Now()
		for i := range m.count {
			off := m.at + int64(i*m.size)
			var n int
			var err error
			if m.write {
				n, err = unix.Pwrite(fd, b, off)
			} else {
				n, err = unix.Pread(fd, b, off)
			}
			if err == nil && n != m.size {
				err = io.ErrShortWrite
				if !m.write {
					err = io.ErrUnexpectedEOF
				}
			}
			if err != nil {
				return fmt.Errorf("host: loop disk: %d bytes at %d: %d done: %w", m.size, off, n, err)
			}
		}
		*m.ns = float64(time.Since(start).Nanoseconds()) / float64(m.count)
	}
	return nil
}
