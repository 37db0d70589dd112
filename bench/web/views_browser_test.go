//go:build !js

package web

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBrowserLoadsWithoutErrors(t *testing.T) {
	ctx, errs := tab(t, "dd")
	loaded, first := eval[float64](t, ctx, `bhsimTimings.loaded`), eval[float64](t, ctx, `bhsimTimings.firstView`)
	t.Logf("WebAssembly %.1f MB (%s); model loaded %.0f ms after the script started, first view's figures at %.0f ms (beside the other browser tests' tabs)",
		float64(shared.built.Bytes)/1e6, shared.built.GoVersion, loaded, first)
	assert.LessOrEqual(t, shared.built.Bytes, int64(15e6), "the WebAssembly is at most 15 MB")
	assert.Positive(t, first)
	assert.Contains(t, eval[string](t, ctx, `document.querySelector('#status').textContent`), "Ran dd in")
	assert.Empty(t, errs.all(), "the page logs no error")
}

// pageCells returns the page's dd figures, "kernel/blocksize" → the
// row's bios/page, requests/MiB, MB/s and bottleneck cells (or its
// refusal).
func pageCells(t *testing.T, ctx context.Context) map[string][]string {
	t.Helper()
	return eval[map[string][]string](t, ctx, `(() => {
		const out = {};
		for (const t of document.querySelectorAll("#dd-out table"))
			for (const tr of t.querySelectorAll("tr[data-blocksize]"))
				out[t.dataset.kernel + "/" + tr.dataset.blocksize] = [...tr.querySelectorAll("td")].map(td => td.textContent);
		return out;
	})()`)
}

func TestBrowserDDFiguresEqualCLI(t *testing.T) {
	// A form of the test's own, filled in before the view first runs it:
	// count 16, five block sizes, two kernels.
	ctx, errs := tab(t, "lru")
	do(t, ctx,
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#dd-form input[name=count]').value = "16"`),
		chromedp.Evaluate[chromedp.Void](`for (const c of document.querySelectorAll('#dd-form input[name=size]')) c.checked = ["512","1024","2048","4096","65536"].includes(c.value)`),
		chromedp.Click(chromedp.ID(`tab-dd`)),
		chromedp.WaitVisible(chromedp.CSS(`#dd-out table .mbps`)))
	cells := pageCells(t, ctx)
	for kernel, sizes := range map[string][]string{"5.10.10": {"512", "1024", "2048", "4096"}, "6.18": {"512", "1024", "2048", "4096", "65536"}} {
		cli := cliSweep(t, kernel, sizes, 16)
		for _, bs := range sizes {
			assert.Equal(t, cli[bs], cells[kernel+"/"+bs], "%s at block size %s: the page's bios/page, requests/MiB, MB/s, bottleneck", kernel, bs)
		}
	}
	require.Len(t, cells["5.10.10/65536"], 1)
	assert.Contains(t, cells["5.10.10/65536"][0], "above PAGE_SIZE", "5.10.10 refuses blocks above a page")
	assert.Equal(t, "bhsim sweep --machine helios4 --kernel 5.10.10,6.18 --blocksize 512,1024,2048,4096,65536 --layout direct --bs 1M --op write --count 16",
		eval[string](t, ctx, `document.querySelector('#dd-command').textContent`))
	assert.Empty(t, errs.all())
}

// stepBlocks returns the step view's header and blocks as the page shows
// them, one Next after another; with reveal, each after its Reveal button.
func stepBlocks(t *testing.T, ctx context.Context, seed string, quiz, reveal bool) (header string, blocks []string) {
	t.Helper()
	do(t, ctx,
		chromedp.Click(chromedp.ID(`tab-step`)),
		chromedp.WaitVisible(chromedp.ID(`step-text`)),
		chromedp.SetValue(chromedp.CSS(`#step-form input[name=seed]`), seed),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#step-form input[name=quiz]').checked = `+map[bool]string{true: "true", false: "false"}[quiz]),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#step-text').textContent = ''`),
		chromedp.Click(chromedp.CSS(`#step-form button[type=submit]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector('#step-text').textContent.startsWith("1. ")`))
	header = eval[string](t, ctx, `document.querySelector('#step-header').textContent`)
	n := eval[int](t, ctx, `Number(document.querySelector('#step-pos-range').max) + 1`)
	for i := range n {
		if reveal {
			do(t, ctx, chromedp.Click(chromedp.ID(`quiz-reveal`)))
		}
		blocks = append(blocks, eval[string](t, ctx, `document.querySelector('#step-text').textContent`))
		if i+1 < n {
			do(t, ctx, chromedp.Click(chromedp.ID(`step-next`)))
		}
	}
	return header, blocks
}

func TestBrowserStepShowsRunStep(t *testing.T) {
	ctx, errs := tab(t, "step")
	header, blocks := stepBlocks(t, ctx, "11", false, false)
	assert.Equal(t, cliStep(t, 11, false, false), header+"\n\n"+strings.Join(blocks, "\n\n")+"\n\n", "the page shows run --step -s 11's header and blocks")
	assert.Empty(t, errs.all())
}

func TestBrowserQuizHidesAndReveals(t *testing.T) {
	ctx, errs := tab(t, "step")
	_, hidden := stepBlocks(t, ctx, "5", true, false)
	quiz := strings.Split(strings.TrimRight(cliStep(t, 5, true, false), "\n"), "\n\n")[1:]
	require.Equal(t, quiz, hidden, "the quiz shows run --step --quiz -s 5's blocks")
	for _, b := range hidden {
		assert.Contains(t, b, "   Cost:   ?\n", "a quiz hides the cost")
		assert.NotContains(t, b, " MISS", "a quiz hides the page cache's answer")
	}
	_, shown := stepBlocks(t, ctx, "5", true, true)
	answers := strings.Split(strings.TrimRight(cliStep(t, 5, true, true), "\n"), "\n\n")[1:]
	assert.Equal(t, answers, shown, "Reveal shows run --step --quiz --show -s 5's blocks")
	assert.Equal(t, "true", eval[string](t, ctx, `document.querySelector('#quiz-reveal').getAttribute('aria-pressed')`), "the reveal button says it is pressed")
	assert.Empty(t, errs.all())
}

func TestBrowserStartsOnTheFragmentsView(t *testing.T) {
	ctx, errs := tab(t, "lru")
	assert.Equal(t, "true", eval[string](t, ctx, `document.querySelector('#tab-lru').getAttribute('aria-selected')`))
	assert.True(t, eval[bool](t, ctx, `document.querySelector('#view-dd').hidden`), "the block-size view stays hidden")
	assert.Empty(t, eval[string](t, ctx, `document.querySelector('#dd-out').textContent`), "and its dd does not run")
	assert.Equal(t, "__bread(bdev, 1, 4096)", eval[string](t, ctx, `document.querySelector('#lru-call').textContent`))
	assert.Empty(t, errs.all())
}

func TestBrowserKeyboard(t *testing.T) {
	ctx, errs := tab(t, "step")
	do(t, ctx,
		chromedp.Focus(chromedp.ID(`tab-dd`)),
		chromedp.KeyEvent(kb.ArrowRight), // the next tab (the view shown is the step view's)
		chromedp.WaitVisible(chromedp.CSS(`#buf-ring .ring`)))
	assert.Equal(t, "true", eval[string](t, ctx, `document.querySelector('#tab-buffers').getAttribute('aria-selected')`), "→ on a tab selects the next")
	assert.Equal(t, "tab-buffers", eval[string](t, ctx, `document.activeElement.id`), "the selected tab has the focus")
	do(t, ctx, chromedp.Focus(chromedp.ID(`buf-next`)), chromedp.KeyEvent(kb.Enter), // the button
		chromedp.KeyEvent(kb.ArrowRight)) // the view's key
	pos := eval[string](t, ctx, `document.querySelector('#buf-pos').textContent`)
	assert.True(t, strings.HasPrefix(pos, "3 of "), "Enter on Next and → in the view step through its events: %q", pos)
	do(t, ctx, chromedp.Focus(chromedp.ID(`buf-frame`)), chromedp.KeyEvent(kb.ArrowRight)) // the range's own key
	pos = eval[string](t, ctx, `document.querySelector('#buf-pos').textContent`)
	assert.True(t, strings.HasPrefix(pos, "4 of "), "→ on the slider steps once: %q", pos)
	assert.Empty(t, errs.all())
}

func TestBrowserScreenshots(t *testing.T) {
	ctx, errs := tab(t, "dd")
	for _, v := range []struct{ tab, wait, name, then string }{
		{"tab-dd", "#dd-chart .bar", "web-blocksize", ""},
		// mid-writeback: the buffers locked, the bios merged in the plug
		{"tab-buffers", "#buf-ring .ring", "web-buffers", `bufFrames.findIndex(f => f.event === "block_unplug")`},
		// the seventeenth buffer pushes the first out
		{"tab-lru", "#lru-slots li", "web-lru", `lruRun.steps.findIndex(s => s.evicted > 0)`},
		{"tab-step", "#step-draw", "web-step", ""},
	} {
		do(t, ctx, chromedp.Click(chromedp.ID(v.tab)), chromedp.WaitVisible(chromedp.CSS(v.wait)))
		if v.then != "" {
			range_ := map[string]string{"web-buffers": "#buf-frame", "web-lru": "#lru-step"}[v.name]
			do(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { const r = document.querySelector('`+range_+`'); r.value = `+v.then+`; r.dispatchEvent(new Event("input")); })()`))
		}
		if v.name == "web-step" { // the quiz, its third operation's answers hidden
			do(t, ctx, chromedp.Click(chromedp.CSS(`#step-form input[name=quiz]`)), chromedp.Click(chromedp.CSS(`#step-form button[type=submit]`)),
				chromedp.WaitVisible(chromedp.ID(`quiz-reveal`)), chromedp.Click(chromedp.ID(`step-next`)), chromedp.Click(chromedp.ID(`step-next`)))
		}
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err, v.name)
		require.NoError(t, os.WriteFile(filepath.Join(t.TempDir(), v.name+".png"), shot, 0o644))
		img, err := png.Decode(bytes.NewReader(shot))
		require.NoError(t, err, v.name)
		assertNotBlank(t, img, v.name)
		if *update {
			require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", "images", v.name+".png"), shot, 0o644))
		}
	}
	assert.Empty(t, errs.all())
}

// assertNotBlank checks that a screenshot shows something: more than a
// few colours, and at least 3 % of its pixels far from white.
func assertNotBlank(t *testing.T, img image.Image, name string) {
	t.Helper()
	b := img.Bounds()
	colours := map[[3]uint32]bool{}
	dark, all := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 12, g >> 12, bl >> 12}] = true
			if r+g+bl < 3*0xc000 {
				dark++
			}
			all++
		}
	}
	assert.Greater(t, len(colours), 20, "%s: colours", name)
	assert.Greater(t, float64(dark)/float64(all), 0.03, "%s: inked pixels", name)
}
