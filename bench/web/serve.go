//go:build !js

package web

import (
	"bufio"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// static is the page: its HTML, style sheet and script.
//
//go:embed static
var static embed.FS

// Module is the module path of bhsim, whose source Build compiles.
const Module = "github.com/bhsim/bhsim"

// wasmPackage is the WebAssembly's main package, in the module.
const wasmPackage = "./bench/web/wasm"

// Built is a build of the page's WebAssembly: the directory that holds
// bhsim.wasm and the toolchain's wasm_exec.js that runs it, the toolchain
// and source it came from, the WebAssembly's size and the build's time.
type Built struct {
	Dir, GoVersion, Source string
	Bytes                  int64
	Took                   time.Duration
}

// Build compiles the page's WebAssembly (package bench/web/wasm, GOOS=js
// GOARCH=wasm) into dir with the Go toolchain on PATH, and copies that
// toolchain's wasm_exec.js beside it, so that the two always match. The
// source is bhsim's module as SourceDir finds it; Go's build cache keeps
// the compiled packages, so that a build after the first only links.
// Errors: no go command, no source, a failed build or copy (with the
// compiler's output).
func Build(ctx context.Context, dir string) (*Built, error) {
	start := time.Now()
	src, err := SourceDir(ctx)
	if err != nil {
		return nil, err
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("web: the page's WebAssembly is built with the Go toolchain, and no go command is on PATH: %w", err)
	}
	wasm := filepath.Join(dir, "bhsim.wasm")
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-o", wasm, wasmPackage)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("web: go build of the page's WebAssembly in %s: %w\n%s", src, err, out)
	}
	env, err := goEnv(ctx, goCmd, src, "GOROOT", "GOVERSION")
	if err != nil {
		return nil, err
	}
	if err := copyWasmExec(env["GOROOT"], filepath.Join(dir, "wasm_exec.js")); err != nil {
		return nil, err
	}
	fi, err := os.Stat(wasm)
	if err != nil {
		return nil, err
	}
	return &Built{Dir: dir, GoVersion: env["GOVERSION"], Source: src, Bytes: fi.Size(), Took: time.Since(start)}, nil
}

// goEnv returns the go command's values of the named variables.
func goEnv(ctx context.Context, goCmd, dir string, names ...string) (map[string]string, error) {
	cmd := exec.CommandContext(ctx, goCmd, append([]string{"env", "-json"}, names...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("web: go env: %w", err)
	}
	env := map[string]string{}
	if err := json.Unmarshal(out, &env); err != nil {
		return nil, fmt.Errorf("web: go env: %w", err)
	}
	return env, nil
}

// copyWasmExec copies the toolchain's wasm_exec.js (lib/wasm since Go
// 1.24, misc/wasm before) to dst.
func copyWasmExec(goroot, dst string) error {
	var errs []error
	for _, rel := range []string{"lib/wasm/wasm_exec.js", "misc/wasm/wasm_exec.js"} {
		b, err := os.ReadFile(filepath.Join(goroot, rel))
		if err == nil {
			return os.WriteFile(dst, b, 0o644)
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("web: the toolchain's wasm_exec.js: %w", errors.Join(errs...))
}

// SourceDir returns the root of bhsim's module source, to build the
// WebAssembly from: the source this binary was built from, when it is
// still where the build found it (a clone, or the module cache after go
// install); else the module the working directory is in; else, for a
// binary of a released version, that version in the module cache (go mod
// download). Errors: none of these is bhsim's source.
func SourceDir(ctx context.Context) (string, error) {
	var tried []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if root := filepath.Dir(filepath.Dir(filepath.Dir(file))); isModuleRoot(root) {
			return root, nil
		}
		tried = append(tried, "the build's "+file)
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if isModuleRoot(d) {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
		tried = append(tried, "the working directory "+wd+" and its parents")
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path == Module && strings.HasPrefix(bi.Main.Version, "v") && !strings.Contains(bi.Main.Version, "+") {
		dir, err := downloadModule(ctx, bi.Main.Version)
		if err == nil {
			return dir, nil
		}
		tried = append(tried, err.Error())
	}
	return "", fmt.Errorf("web: the page's WebAssembly is built from bhsim's source, which is not here (looked in %s): run it inside a clone of %s",
		strings.Join(tried, "; "), Module)
}

// isModuleRoot reports whether dir holds the go.mod of bhsim's module.
func isModuleRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == Module
		}
	}
	return false
}

// downloadModule returns the directory of bhsim's version in the module
// cache, downloading it if need be.
func downloadModule(ctx context.Context, version string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", Module+"@"+version).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", Module, version, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: no directory", Module, version)
	}
	return m.Dir, nil
}

// Handler serves the page: the embedded files at /, and the WebAssembly
// and wasm_exec.js from the build directory dir (Build). Nothing else is
// served; every answer is marked not to be cached, so that a page open
// across a rebuild loads the new model.
func Handler(dir string) http.Handler {
	page, _ := fs.Sub(static, "static") // static holds the directory: the embed guarantees it
	files := http.FileServerFS(page)
	mux := http.NewServeMux()
	for _, name := range []string{"bhsim.wasm", "wasm_exec.js"} {
		path := filepath.Join(dir, name)
		mux.HandleFunc("GET /"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "no-store")
			http.ServeFile(w, r, path)
		})
	}
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		files.ServeHTTP(w, r)
	})
	return mux
}

// Serve builds the page's WebAssembly into a temporary directory
// (Build), saying so on log, then serves the page on addr until ctx is
// done, and removes the directory. Errors: Build's, an address that does
// not listen, a server that fails.
func Serve(ctx context.Context, addr string, log io.Writer) error {
	dir, err := os.MkdirTemp("", "bhsim-web-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(log, "building the page's WebAssembly with the local Go toolchain (the first build compiles the model for js/wasm, tens of seconds; later ones link in about a second) …\n")
	b, err := Build(ctx, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "built %.1f MB with %s from %s in %.1f s\n", float64(b.Bytes)/1e6, b.GoVersion, b.Source, b.Took.Seconds())
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("web: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: Handler(dir), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(log, "serving the teaching page on http://%s/ (interrupt to stop)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return srv.Shutdown(shut)
	}
}
