package main

import (
	"context"
	"io"
	"os"
	"os/signal"

	"github.com/bhsim/bhsim/bench/web"
)

// webCmd implements `bhsim web`: the teaching page, until interrupted.
func webCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("web")
	addr := fs.String("addr", "127.0.0.1:8080", "the `HOST:PORT` to serve the page on (loopback by default)")
	pos, err := parseArgs(fs, "[--addr HOST:PORT]\n\nServes the teaching page (block size, a page's buffers, the bh LRU, step and\nquiz: the model in the browser) until interrupted, once it has built the page's\nWebAssembly from bhsim's source with the local Go toolchain.", args, stdout)
	if err == nil && len(pos) > 0 {
		err = usagef("unexpected argument %q (web takes --addr only)", pos[0])
	}
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return web.Serve(ctx, *addr, stderr)
}
