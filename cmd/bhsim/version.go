package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// toolInfo is the binary's identity, as every versioned output carries it.
type toolInfo struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

// tool returns this binary's identity from its build information: the
// module version ("(devel)" when built from a checkout) and the VCS
// revision the go command stamped, if any.
func tool() toolInfo {
	t := toolInfo{Name: "bhsim", Version: "(unknown)", Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return t
	}
	t.Version = bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			t.Revision = s.Value
		case "vcs.modified":
			t.Modified = s.Value == "true"
		}
	}
	return t
}

// version implements `bhsim version`.
func version(args []string, stdout, _ io.Writer) error {
	fs := newFlags("version")
	format, check := formatFlag(fs, "text", "json")
	if pos, err := parseArgs(fs, "[--format text|json]\n\nPrints the module version and VCS revision of this binary.", args, stdout); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if err := check(); err != nil {
		return err
	}
	t := tool()
	if *format == "json" {
		return writeJSON(stdout, t)
	}
	rev := t.Revision
	if rev == "" {
		rev = "unknown"
	}
	if t.Modified {
		rev += ", modified"
	}
	_, err := fmt.Fprintf(stdout, "bhsim %s (revision %s) %s %s/%s\n", t.Version, rev, t.Go, runtime.GOOS, runtime.GOARCH)
	return err
}
