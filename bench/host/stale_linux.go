//go:build linux

package host

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// stalePID finds the process id in a name made by a run: bhsim-host-PID-…
// (directories, backing files) or bhsim-PID-… (tracing instances).
var stalePID = regexp.MustCompile(`(?:^|/)bhsim-(?:host-)?(\d+)-[^/]*`)

// deadOwner reports whether name was made by a run whose process is gone.
func deadOwner(name string) bool {
	m := stalePID.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	pid, err := strconv.Atoi(m[1])
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	return errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}

// leftovers lists what runs of process pid (0: any dead process) hold now:
// bound loop devices whose backing file is in a private directory, mounts
// under one, and tracing instances (seen through the given tracefs mount,
// "" to skip them).
func leftovers(pid int, tracefs string) (loops []int, mounts, instances []string, err error) {
	match := func(name string) bool {
		if pid == 0 {
			return deadOwner(name)
		}
		return strings.Contains(name, fmt.Sprintf("bhsim-host-%d-", pid)) || strings.HasPrefix(filepath.Base(name), fmt.Sprintf("bhsim-%d-", pid))
	}
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if match(strings.TrimSpace(string(b))) {
			n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(filepath.Dir(f))), "loop"))
			if err == nil {
				loops = append(loops, n)
			}
		}
	}
	mf, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, nil, nil, err
	}
	defer mf.Close()
	sc := bufio.NewScanner(mf)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 4 && strings.Contains(f[4], "/"+namePrefix) && match(f[4]) {
			mounts = append(mounts, f[4])
		}
	}
	if tracefs != "" {
		ents, _ := os.ReadDir(filepath.Join(tracefs, "instances"))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), instancePrefix) && match(e.Name()) {
				instances = append(instances, filepath.Join(tracefs, "instances", e.Name()))
			}
		}
	}
	return loops, mounts, instances, sc.Err()
}

// privateTracefs checks that the runner can run here and mounts a tracefs
// of its own on a fresh private directory named for purpose; done unmounts
// and removes it.
func privateTracefs(purpose string) (dir string, done func(), err error) {
	if err := Check(); err != nil {
		return "", nil, err
	}
	if dir, err = os.MkdirTemp("", fmt.Sprintf("%s%d-%s-*", namePrefix, os.Getpid(), purpose)); err != nil {
		return "", nil, err
	}
	if err := unix.Mount("bhsim-tracefs", dir, "tracefs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		_ = os.Remove(dir)
		return "", nil, fmt.Errorf("host: mount tracefs: %w", err)
	}
	return dir, func() { _ = unmount(dir); _ = os.Remove(dir) }, nil
}

// Leftovers lists what the runs of process pid left on the host: loop
// devices bound to their backing files, the blkio root group's throttle
// rules on those devices ("FILE MAJ:MIN VALUE"), mounts, tracing instances
// and private directories. Empty after every run that returned, whatever its
// outcome; tests of the runner's callers check it. Needs what Run needs.
func Leftovers(pid int) ([]string, error) {
	dir, done, err := privateTracefs("check")
	if err != nil {
		return nil, err
	}
	defer done()
	loops, mounts, instances, err := leftovers(pid, dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range loops {
		out = append(out, "/dev/loop"+strconv.Itoa(n))
		major, minor, err := loopDevNum(n)
		if err != nil {
			return nil, err
		}
		rules, err := throttleRulesOf(major, minor)
		if err != nil {
			return nil, err
		}
		out = append(out, rules...)
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-*", namePrefix, pid)))
	for _, d := range append(append(mounts, instances...), dirs...) {
		if filepath.Base(d) != filepath.Base(dir) { // this check's own tracefs
			out = append(out, d)
		}
	}
	return out, nil
}

// CleanStale removes what runs of dead processes left behind (a run killed
// with SIGKILL cannot clean up): the blkio root group's throttle rules on
// their loop devices (written "MAJ:MIN 0" before the device goes, so that
// no bio stays held), the loop devices, tracing instances, mounts and
// private directories. It returns what it removed. The devices' queue and
// bdi settings go with the devices.
func CleanStale() ([]string, error) {
	dir, unmountDir, err := privateTracefs("stale")
	if err != nil {
		return nil, err
	}
	defer unmountDir()
	loops, mounts, instances, err := leftovers(0, dir)
	if err != nil {
		return nil, err
	}
	var done []string
	var errs []error
	for _, n := range loops {
		major, minor, err := loopDevNum(n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cleared, err := clearThrottleRules(major, minor)
		done = append(done, cleared...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		e := &env{loop: n, bound: true, devPath: "/dev/loop" + strconv.Itoa(n)}
		if err := e.detach(); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, e.removeLoop())
		done = append(done, e.devPath)
	}
	for _, inst := range instances {
		if err := unix.Rmdir(inst); err != nil {
			errs = append(errs, fmt.Errorf("host: remove %s: %w", inst, err))
			continue
		}
		done = append(done, inst)
	}
	for _, m := range mounts {
		if err := unmount(m); err != nil {
			errs = append(errs, err)
			continue
		}
		_ = os.Remove(m)
		_ = os.Remove(filepath.Dir(m))
		done = append(done, m)
	}
	return done, errors.Join(errs...)
}
