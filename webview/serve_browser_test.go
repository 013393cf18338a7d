package webview

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"lockcheck/explore"
	"lockcheck/model"
)

var explorerShot = flag.String("explorer-screenshot", "", "also write the explorer browser test's screenshot (demo2 at its ✗) to this PNG file (for the README)")

// browse starts the explorer of cfg on a loopback test server and a
// headless Chromium driven by chromedp, and returns the browser's context
// and the server's URL.
func browse(t *testing.T, cfg ExplorerConfig) (context.Context, string) {
	t.Helper()
	path := chromium(t)
	ex, err := NewExplorer(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(ex)
	t.Cleanup(srv.Close)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelT(); cancelB(); cancelA() })
	require.NoError(t, chromedp.Do(ctx)) // start the browser
	return ctx, srv.URL
}

// at waits for the page of step k, parsed to its end (a long page is
// parsed as it arrives: its body is there long before its last line).
func at(k int) chromedp.Action[chromedp.Void] {
	return chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`body[data-at="%d"] #outcome`, k)))
}

// do runs actions; get runs one and returns its value.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

func get[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	require.NoError(t, err)
	return v
}

func sel(s string) chromedp.CSS { return chromedp.CSS(s) }

// clickOn waits for the first element that matches query and clicks it by
// script: chromedp.Click works on its DOM mirror's node, whose id can lag
// a navigation under load ("Could not find node with given id", seen in
// CI at a step's link).
func clickOn(query string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var v chromedp.Void
		if _, err := chromedp.WaitReady(sel(query))(ctx, t); err != nil {
			return v, err
		}
		// the click after the script returns: the navigation it starts
		// would cut the evaluation short
		found, err := chromedp.Evaluate[bool](`(function (q) { var e = document.querySelector(q); if (!e) { return false } setTimeout(function () { e.click() }, 0); return true })(`+strconv.Quote(query)+`)`)(ctx, t)
		if err == nil && !found {
			err = fmt.Errorf("click %s: no such element", query)
		}
		return v, err
	}
}

func attr(t *testing.T, ctx context.Context, query, name string) string {
	t.Helper()
	return get(t, ctx, chromedp.AttributeValue(sel(query), name)).Value
}

// marks counts the timeline's ✗ marks and returns them as "client@tick".
func marks(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return get(t, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#timeline .x')).map(function (x) { return x.dataset.client + '@' + x.closest('td').dataset.tick })`))
}

func propStatus(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	// asked by script, not by chromedp's DOM mirror, whose node ids can
	// lag a navigation ("No node with given id found" under load)
	return get(t, ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector('#properties tr[data-property="%s"] td.status').innerText.trim()`, name)))
}

// TestExplorerInBrowser drives the explorer page in a real headless
// Chromium: demo2's schedule taken by clicking its steps one by one (the
// ✗ appears at step 46, A's write at t=15, and not before), back two
// steps and another successor, a reload of the URL to the same state, and
// "shortest violation from here" at the initial state, as long as explore
// check's counterexample.
func TestExplorerInBrowser(t *testing.T) {
	dm, err := model.LoadDemo("demo2")
	require.NoError(t, err)
	trace := dm.Scenario.Trace
	ctx, base := browse(t, ExplorerConfig{Design: "demo2"})
	do(t, ctx, chromedp.Navigate(base+"/"), at(0))
	require.Empty(t, marks(t, ctx))

	for k, a := range trace {
		what := fmt.Sprintf(`#actions a.act[data-action="%s"]`, a)
		require.NoError(t, chromedp.Do(ctx, clickOn(what), at(k+1)), "step %d: %s", k+1, a)
		got := marks(t, ctx)
		if k+1 < 46 {
			require.Empty(t, got, "a ✗ before A's write, at step %d", k+1)
			require.Equal(t, "holds so far", propStatus(t, ctx, "exclusive"))
		} else {
			require.Equal(t, []string{"A@15"}, got, "step %d", k+1)
			require.Equal(t, "✗ violated at step 46", propStatus(t, ctx, "exclusive"))
		}
	}
	loc := get(t, ctx, chromedp.Location())
	require.Equal(t, base+PageURL("demo2", trace, -1), loc, "the URL holds the schedule")
	require.Equal(t, "✗ violated at step 49", propStatus(t, ctx, "no-lost-update"))
	// the story, told when opened
	do(t, ctx, clickOn("#story summary"), chromedp.WaitReady(sel(`#story[data-ready="yes"]`)))
	story := get(t, ctx, chromedp.Text(sel("#story-text")))
	require.Contains(t, story, "t=15 A: write counter = 1 → accepted  ✗ the key is C's")
	require.Equal(t, "t=15 A: write counter = 1 → accepted  ✗ the key is C's\n", get(t, ctx, chromedp.Text(sel("#story-text .bad"))))

	// back two steps, then another successor than the schedule's
	do(t, ctx, clickOn("#back"), at(48), clickOn("#back"), at(47))
	require.Equal(t, trace[47].String(), attr(t, ctx, "#forward", "title"))
	acts := get(t, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#actions a.act')).map(function (a) { return a.dataset.action })`))
	other := ""
	for _, a := range acts {
		if a != trace[47].String() {
			other = a
			break
		}
	}
	require.NotEmpty(t, other, "another successor at step 47: %v", acts)
	do(t, ctx, clickOn(fmt.Sprintf(`#actions a.act[data-action="%s"]`, other)), at(48))
	alt, err := model.ParseAction(other)
	require.NoError(t, err)
	want := append(append([]model.Action(nil), trace[:47]...), alt)
	loc = get(t, ctx, chromedp.Location())
	require.Equal(t, base+PageURL("demo2", want, -1), loc, "the new successor replaces the rest")
	require.Equal(t, "48", attr(t, ctx, "body", "data-steps"))

	// the URL reloads to the same state
	snapshot := func() string {
		return get(t, ctx, chromedp.Evaluate[string](`document.getElementById('current-state').outerHTML + document.getElementById('timeline').outerHTML + document.getElementById('actions').outerHTML + document.getElementById('properties').outerHTML`))
	}
	before := snapshot()
	do(t, ctx, chromedp.Reload(), at(48))
	require.Equal(t, before, snapshot())
	// and a fresh page given the link alone does too
	do(t, ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(loc), at(48))
	require.Equal(t, before, snapshot())

	// the zero fields toggle
	visibleZero := `Array.from(document.querySelectorAll('#current-state td.zero')).filter(function (e) { return e.offsetParent !== null }).length`
	require.Zero(t, get(t, ctx, chromedp.Evaluate[int](visibleZero)), "fields that stay zero are hidden")
	do(t, ctx, clickOn("#show-zero"))
	require.Positive(t, get(t, ctx, chromedp.Evaluate[int](visibleZero)), "the toggle shows them")

	// shortest violation from the initial state = explore check's
	d := dm.Scenario.Design
	rep, err := explore.Check(explore.Config{Design: d, Bounds: explore.Bounds{Symmetry: true}})
	require.NoError(t, err)
	search := func(name string) string {
		row := fmt.Sprintf(`#properties tr[data-property="%s"]`, name)
		do(t, ctx, clickOn(row+" button.search"), chromedp.WaitReady(sel(row+"[data-search-status]")))
		return attr(t, ctx, row, "data-search-steps")
	}
	for _, name := range []string{"exclusive", "mutex", "no-lost-update"} {
		res, ok := rep.Result(name)
		require.True(t, ok)
		require.Equal(t, explore.Violated, res.Status)
		do(t, ctx, chromedp.Navigate(base+PageURL("demo2", want, 0)), at(0))
		require.Equal(t, strconv.Itoa(len(res.Trace)), search(name), "%s: the page's search from the initial state against explore check", name)
	}
	// the result's link takes the schedule it found
	res, _ := rep.Result("no-lost-update")
	do(t, ctx, clickOn(`#properties tr[data-property="no-lost-update"] a.take-found`), at(len(res.Trace)))
	require.Equal(t, fmt.Sprintf("✗ violated at step %d", len(res.Trace)), propStatus(t, ctx, "no-lost-update"))

	// from a later state: as long as the rest of a shortest path
	res, _ = rep.Result("exclusive")
	do(t, ctx, chromedp.Navigate(base+PageURL("demo2", res.Trace, 10)), at(10))
	require.Equal(t, strconv.Itoa(len(res.Trace)-10), search("exclusive"))

	// download as scenario: the scenario text of the path so far
	text := get(t, ctx, chromedp.Evaluate[string](`fetch(document.getElementById('download').href).then(function (r) { return r.text() })`, chromedp.EvalAwaitPromise))
	sc, err := model.ParseScenario(text)
	require.NoError(t, err, text)
	require.Equal(t, res.Trace[:10], sc.Trace)
	// open in reproduce shows the command
	do(t, ctx, clickOn("#reproduce"), chromedp.WaitVisible(sel("#reproduce-command")))
	cmd := get(t, ctx, chromedp.Text(sel("#reproduce-command")))
	require.Contains(t, cmd, "explore reproduce demo2-explored.txt")
	require.Contains(t, cmd, strings.TrimSpace(text))
}

// spin5 is the SPIN comparison's design with 5 clients (bench/): fenced,
// so that no-lost-update holds and its search visits every state (about
// 15 s on 2 cores).
const spin5 = "redis/cad/rw/max-token,clock=free,horizon=41,clients=5"

// TestExplorerStopsASearch: a long search shows its progress, and stop
// ends it; the server lets it go, so that the next search runs.
func TestExplorerStopsASearch(t *testing.T) {
	ctx, base := browse(t, ExplorerConfig{Design: spin5})
	for try := 0; try < 2; try++ {
		row := `#properties tr[data-property="no-lost-update"]`
		do(t, ctx, chromedp.Navigate(base+"/"), at(0), clickOn(row+" button.search"))
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('`+row+` .found').textContent.indexOf(' states, depth') >= 0`, chromedp.WithPollingTimeout(90*time.Second)))
		require.NoError(t, err, "try %d: no progress shown", try)
		require.Contains(t, get(t, ctx, chromedp.Text(sel(row+" .found"))), "searching: ")
		do(t, ctx, clickOn(row+" button.stop"), chromedp.WaitReady(sel(row+`[data-search-status="stopped"]`)))
		require.Equal(t, "stopped", get(t, ctx, chromedp.Text(sel(row+" .found"))))
	}
}

// TestExplorerBadInputInBrowser: a bad URL is a one-line error in the
// page, never a blank or stuck one.
func TestExplorerBadInputInBrowser(t *testing.T) {
	ctx, base := browse(t, ExplorerConfig{Design: "demo2"})
	for path, want := range map[string]string{
		"/explore/nope":                   `design "nope": `,
		"/explore/demo2/-/A_write":        "step 1 (A write) is not enabled at t=1 (enabled: A acquire, B acquire, C acquire)",
		"/explore/demo2/-/A_flies":        `step 1 of the URL path, "A_flies": action "A flies": unknown verb "flies"`,
		"/explore/demo2/-/A_acquire?at=9": `at="9": want a step from 0 to 1`,
	} {
		do(t, ctx, chromedp.Navigate(base+path))
		msg := get(t, ctx, chromedp.Text(sel("#error")))
		require.Contains(t, msg, want, path)
		require.NotContains(t, msg, "\n")
	}
}

// explorerShotAt is the step of demo2 that the explorer's screenshot shows.
const explorerShotAt = 46

// TestExplorerScreenshot: the explorer at demo2's ✗ (step 46), with the
// shortest lost update from there found, as the README shows it
// (-explorer-screenshot=FILE keeps the PNG; the README's is made with
// go test ./webview -run TestExplorerScreenshot -explorer-screenshot
// ../counterexamples/demo2-explorer.png): not blank, with the ✗'s red.
func TestExplorerScreenshot(t *testing.T) {
	dm, err := model.LoadDemo("demo2")
	require.NoError(t, err)
	ctx, base := browse(t, ExplorerConfig{Design: "demo2"})
	row := `#properties tr[data-property="no-lost-update"]`
	do(t, ctx, chromedp.Navigate(base+PageURL("demo2", dm.Scenario.Trace, explorerShotAt)), at(explorerShotAt),
		clickOn(row+" button.search"), chromedp.WaitReady(sel(row+"[data-search-status]")))
	require.Equal(t, "3", attr(t, ctx, row, "data-search-steps"))
	data := get(t, ctx, chromedp.FullScreenshot(100))
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	b := img.Bounds()
	require.Equal(t, 1400, b.Dx())
	red, white := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if abs(int(r>>8)-220) < 24 && abs(int(g>>8)-38) < 24 && abs(int(bl>>8)-38) < 24 {
				red++
			}
			if r>>8 > 250 && g>>8 > 250 && bl>>8 > 250 {
				white++
			}
		}
	}
	require.Greater(t, red, 20, "no ✗ red in the screenshot")
	require.Less(t, white, b.Dx()*b.Dy()*97/100, "the screenshot is blank")
	if *explorerShot != "" {
		require.NoError(t, os.WriteFile(*explorerShot, data, 0o644))
		t.Logf("wrote %s (%d bytes)", *explorerShot, len(data))
		if filepath.Base(*explorerShot) == "demo2-explorer.png" {
			writeSum(t, "demo2-explorer.png") // TestScreenshotsCurrent's record of what it shows
		}
	}
}

// TestExplorerLongScheduleInBrowser: the page of a long schedule (the
// longest of longWalk's, 8 Redlock clients of 8 jobs: the longest the
// model allows) works in the browser as a short one does: back a step,
// then the step forward again by clicking it. Each click's time in the
// browser (the navigation's start to its load event, from the page's
// own Navigation Timing) is logged, not asserted: BenchmarkExplorerStep
// is the server's measure. The waits ask the page by script, not by
// chromedp's DOM queries, which mirror the whole DOM and are the slow
// part on a page this long.
func TestExplorerLongScheduleInBrowser(t *testing.T) {
	d, trace := longWalk(t, longest)
	require.Greater(t, len(trace), 4000)
	ctx, base := browse(t, ExplorerConfig{Design: d.Name()})
	do(t, ctx, chromedp.Navigate(base+PageURL(d.Name(), nil, -1)), at(0))
	// chromedp mirrors the DOM through DevTools' DOM agent, which costs
	// the renderer seconds on a page this long; this test asks the page by
	// script only, so the agent is off (a user's browser has none)
	do(t, ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, dom.Disable, cdp.Empty{})
		return err
	}))
	n := len(trace)
	click := func(js string) chromedp.Action[chromedp.Void] {
		// the click after the script returns: the navigation it starts
		// would cut the evaluation short
		return chromedp.Evaluate[chromedp.Void](`setTimeout(function () { ` + js + `.click(); }, 0)`)
	}
	// loaded waits for the page of step k to be loaded, asking it by
	// script every 20 ms (an evaluation that a navigation cuts short is
	// asked again)
	loaded := func(k int) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			expr := fmt.Sprintf(`document.readyState === 'complete' && document.body !== null && document.body.dataset.at === '%d' && document.getElementById('outcome') !== null`, k)
			for {
				if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
					return nil
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(20 * time.Millisecond):
				}
			}
		})
	}
	took := func(what string) {
		ms := get(t, ctx, chromedp.Evaluate[float64](`(function () { var e = performance.getEntriesByType('navigation')[0]; return e.loadEventEnd - e.startTime; })()`))
		t.Logf("%s: %.0f ms in the browser (request, parse, layout, load)", what, ms)
		t.Logf("%s: parsed at %s", what, get(t, ctx, chromedp.Evaluate[string](`(function () { var e = performance.getEntriesByType('navigation')[0]; return 'response end ' + Math.round(e.responseEnd) + ' ms, DOM interactive ' + Math.round(e.domInteractive) + ' ms, DOM complete ' + Math.round(e.domComplete) + ' ms'; })()`)))
	}
	do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`setTimeout(function () { location.href = %q; }, 0)`, base+PageURL(d.Name(), trace, -1))), loaded(n))
	took(fmt.Sprintf("the page of %d steps", n))
	do(t, ctx, click(`document.getElementById('back')`), loaded(n-1))
	took("back, clicked")
	do(t, ctx, click(fmt.Sprintf(`document.querySelector('#actions a.act[data-action="%s"]')`, trace[n-1])), loaded(n))
	took("the step forward, clicked")
	require.Equal(t, base+PageURL(d.Name(), trace, -1), get(t, ctx, chromedp.Location()))
	require.Equal(t, strconv.Itoa(n), get(t, ctx, chromedp.Evaluate[string](`document.body.dataset.steps`)))
	// beside a short page's click, same browser, same machine
	do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`setTimeout(function () { location.href = %q; }, 0)`, base+PageURL(d.Name(), trace[:20], -1))), loaded(20))
	do(t, ctx, click(`document.getElementById('back')`), loaded(19))
	took("back on a page of 20 steps")
}
