//go:build js

// Command wasm is the teaching page's WebAssembly: the model, built with
// GOOS=js GOARCH=wasm, that registers package web's views with the page
// (web.Register) and then waits for the page's calls. `bhsim web` builds
// it with the local Go toolchain (web.Build); the page loads it with Go's
// wasm_exec.js.
package main

import "github.com/bhsim/bhsim/bench/web"

func main() {
	web.Register()
	select {}
}
