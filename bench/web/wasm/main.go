//go:build js

// Command wasm is the teaching page's WebAssembly: the model, built with
// GOOS=js GOARCH=wasm, that registers package web's views with the page
// (web.Register) and then waits for the page's calls. `bhsim web` builds
// it with the local Go toolchain (web.Build); the page loads it with Go's
// wasm_exec.js.
package main

import (
	"runtime/debug"

	"github.com/bhsim/bhsim/bench/web"
	"github.com/bhsim/bhsim/internal/gcpolicy"
)

func main() {
	// The collector's target, as bhsim's own: a dd of the first view runs
	// in about two thirds of the time it takes at Go's default of 100. No
	// heap limit: the browser bounds the page's memory.
	debug.SetGCPercent(gcpolicy.Percent)
	web.Register()
	select {}
}
