// Package bhsim is the module's root. It holds the timed corpus, so that
// the tools can read it wherever they run: testdata/timed, scenarios on
// loop devices of known speed (blk-throttle rules on the device line) with
// their results recorded on Linux 6.18 (kernel/6.18/NAME.json, five runs
// each, elapsed times from a pass without tracepoints, and disk/loop.json,
// the loop device measured in the same sitting), x86-host.json, the host
// calibration of the machine that recorded them, and calibration.json,
// what that calibration measured (`bhsim calibrate --recorded` fits it to
// x86-host.json again). The model's
// packages are bufcache, bufcache/blk, lru, blocksize and iomap; the
// experiments and tools are under bench and cmd (see README.md).
package bhsim

import "embed"

// TimedCorpus is testdata/timed: its *.scn scenarios, kernel/6.18/*.json
// recordings (with disk/loop.json when recorded with one) and
// x86-host.json, at those paths under "testdata/timed".
//
//go:embed testdata/timed/*.scn testdata/timed/x86-host.json testdata/timed/kernel/6.18
var TimedCorpus embed.FS
