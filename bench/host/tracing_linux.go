//go:build linux

package host

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// traceEvent is one event the instance enables and the kernel-side filter it
// gets; required events must exist.
type traceEvent struct {
	path     string // "block/block_bio_queue"
	filter   string // "dev", "ino", "i_ino" or "pid"
	required bool
}

var traceEvents = []traceEvent{
	{"block/block_bio_queue", "dev", true},
	{"block/block_bio_backmerge", "dev", false},
	{"block/block_bio_frontmerge", "dev", false},
	{"block/block_getrq", "dev", false},
	{"block/block_split", "dev", false},
	{"block/block_rq_merge", "dev", false},
	{"block/block_rq_insert", "dev", false},
	{"block/block_rq_issue", "dev", true},
	{"block/block_rq_complete", "dev", true},
	{"block/block_dirty_buffer", "dev", false},
	{"block/block_plug", "pid", false},
	{"block/block_unplug", "pid", false},
	{"filemap/mm_filemap_add_to_page_cache", "i_ino", true},
	{"filemap/mm_filemap_delete_from_page_cache", "i_ino", true},
	{"filemap/filemap_set_wb_err", "i_ino", false},
	{"filemap/file_check_and_advance_wb_err", "i_ino", false},
	{"readahead/page_cache_sync_ra", "i_ino", false},
	{"readahead/page_cache_async_ra", "i_ino", false},
	{"readahead/page_cache_ra_order", "i_ino", false},
	{"readahead/page_cache_ra_unbounded", "i_ino", false},
	{"writeback/writeback_dirty_folio", "ino", false},
}

// kernelDev is a dev_t as the kernel holds it: major << 20 | minor.
func kernelDev(major, minor uint32) uint64 { return uint64(major)<<20 | uint64(minor) }

// startTracing creates the private instance, enables the events with their
// filters and opens the marker. Tracing is on when it returns.
func (e *env) startTracing(f filter, bufferKB int) error {
	inst := filepath.Join(e.traceDir, "instances", fmt.Sprintf("%s%d-%s", instancePrefix, os.Getpid(), randomHex()))
	if err := os.Mkdir(inst, 0o700); err != nil {
		return fmt.Errorf("host: create tracing instance: %w", err)
	}
	e.instance = inst
	write := func(name, value string) error {
		if err := os.WriteFile(filepath.Join(inst, name), []byte(value), 0); err != nil {
			return fmt.Errorf("host: tracing instance %s: %w", name, err)
		}
		return nil
	}
	if err := write("tracing_on", "0"); err != nil {
		return err
	}
	if err := write("buffer_size_kb", strconv.Itoa(bufferKB)); err != nil {
		return err
	}
	e.bufferKB = bufferKB
	clock := "global"
	if b, err := os.ReadFile(filepath.Join(inst, "trace_clock")); err == nil && bytes.Contains(b, []byte("mono ")) {
		clock = "mono"
	}
	if err := write("trace_clock", clock); err != nil {
		return err
	}
	dev := kernelDev(f.major, f.minor)
	for _, ev := range traceEvents {
		dir := filepath.Join(inst, "events", ev.path)
		if _, err := os.Stat(dir); err != nil {
			if ev.required {
				return fmt.Errorf("host: this kernel has no tracepoint %s: %w", ev.path, err)
			}
			continue
		}
		var expr string
		switch ev.filter {
		case "dev":
			expr = fmt.Sprintf("dev == %d", dev)
		case "pid":
			expr = fmt.Sprintf("common_pid == %d", f.tid)
		default:
			expr = fmt.Sprintf("%s == %d", ev.filter, f.bdevIno)
		}
		if err := write(filepath.Join("events", ev.path, "filter"), expr); err != nil {
			return err
		}
		if err := write(filepath.Join("events", ev.path, "enable"), "1"); err != nil {
			return err
		}
	}
	if err := write("trace", ""); err != nil {
		return err
	}
	m, err := os.OpenFile(filepath.Join(inst, "trace_marker"), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("host: tracing instance trace_marker: %w", err)
	}
	e.marker = m
	return write("tracing_on", "1")
}

func (e *env) mark(what string, op int) error {
	if _, err := fmt.Fprintf(e.marker, "%s%s %d", markerPrefix, what, op); err != nil {
		return fmt.Errorf("host: trace_marker: %w", err)
	}
	return nil
}

var entriesRE = regexp.MustCompile(`entries-in-buffer/entries-written: (\d+)/(\d+)`)

// stopTracing turns tracing off and feeds the trace to a; it fails when the
// buffer lost events.
func (e *env) stopTracing(a *attribution, dump io.Writer) error {
	if err := os.WriteFile(filepath.Join(e.instance, "tracing_on"), []byte("0"), 0); err != nil {
		return fmt.Errorf("host: tracing instance tracing_on: %w", err)
	}
	f, err := os.Open(filepath.Join(e.instance, "trace"))
	if err != nil {
		return fmt.Errorf("host: tracing instance trace: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	checked := false
	for sc.Scan() {
		line := sc.Text()
		if dump != nil {
			if _, err := io.WriteString(dump, line+"\n"); err != nil {
				return fmt.Errorf("host: trace dump: %w", err)
			}
		}
		if strings.HasPrefix(line, "#") {
			if m := entriesRE.FindStringSubmatch(line); m != nil {
				checked = true
				if m[1] != m[2] {
					return lostEvents(e.bufferKB, m[1], m[2])
				}
			}
			continue
		}
		a.line(line)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("host: reading the trace: %w", err)
	}
	if !checked {
		return errors.New("host: the trace has no entries-in-buffer header; cannot tell whether events were lost")
	}
	return nil
}
