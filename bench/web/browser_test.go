//go:build !js

package web

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// update writes the views' screenshots to docs/images for the README.
var update = flag.Bool("update", false, "write the views' screenshots to docs/images/ (for the README)")

// chromiumNames are the commands a browser test looks for, in order.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// chromium returns the path of a Chromium on PATH, or "".
func chromium() string {
	for _, n := range chromiumNames {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// shared is what the browser tests of one test binary share: the page's
// WebAssembly, built once, its server, and one browser.
var shared struct {
	once    sync.Once
	err     error
	dir     string
	built   *Built
	server  *httptest.Server
	browser context.Context
	cancel  []context.CancelFunc
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	for i := len(shared.cancel) - 1; i >= 0; i-- {
		shared.cancel[i]()
	}
	if shared.server != nil {
		shared.server.Close()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// setUp builds the page, serves it on 127.0.0.1 and starts the browser,
// once per test binary.
func setUp(path string) error {
	dir, err := os.MkdirTemp("", "bhsim-web-test-")
	if err != nil {
		return err
	}
	shared.dir = dir
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if shared.built, err = Build(ctx, dir); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	shared.server = httptest.NewUnstartedServer(Handler(dir))
	shared.server.Listener.Close()
	shared.server.Listener = ln
	shared.server.Start()
	profile, err := os.MkdirTemp(dir, "chromium-profile-")
	if err != nil {
		return err
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile), chromedp.WindowSize(1500, 1100))
	browser, cancelBrowser := chromedp.NewContext(alloc)
	shared.cancel = append(shared.cancel, cancelAlloc, cancelBrowser)
	shared.browser = browser
	return chromedp.Do(browser)
}

// startOn is what tab waits for on the page of each view.
var startOn = map[string]string{"dd": `#dd-out table .mbps`, "buffers": `#buf-ring .ring`, "lru": `#lru-slots li`, "step": `#step-draw`}

// tab opens a new tab of the shared browser on the page of view (its
// fragment: "dd", "buffers", "lru" or "step"), waits for the view's first
// figures and returns the tab and the console's errors so far (more
// arrive as the test goes). It skips the test when no browser is
// installed. It marks the test parallel (t.Parallel), so that the tests'
// tabs wait side by side in the one browser: call it once, first, in a
// test that sets no environment (t.Setenv panics in a parallel test).
func tab(t *testing.T, view string) (context.Context, *consoleErrors) {
	t.Helper()
	t.Parallel()
	path := chromium()
	if path == "" {
		t.Skipf("no browser: none of %s is on PATH (Debian: apt-get install chromium; .ci/run installs it)", strings.Join(chromiumNames, ", "))
	}
	shared.once.Do(func() { shared.err = setUp(path) })
	require.NoError(t, shared.err)
	ctx, cancel := chromedp.NewContext(shared.browser)
	t.Cleanup(cancel)
	ctx, cancelTime := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelTime)
	errs := &consoleErrors{}
	require.NoError(t, chromedp.Listen(ctx, errs.listen))
	do(t, ctx, chromedp.Navigate(shared.server.URL+"/#"+view), chromedp.WaitVisible(chromedp.CSS(startOn[view])))
	return ctx, errs
}

// do runs actions in the tab.
func do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, actions...))
}

// eval evaluates a JavaScript expression in the tab.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, expr)
	return v
}

// consoleErrors collects the page's console errors and uncaught
// exceptions.
type consoleErrors struct {
	mu   sync.Mutex
	list []string
}

func (c *consoleErrors) listen(ev any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			c.list = append(c.list, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		c.list = append(c.list, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, msg))
	}
}

func (c *consoleErrors) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.list...)
}
