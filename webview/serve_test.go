package webview

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"lockcheck/explore"
	"lockcheck/model"
)

func getURL(t *testing.T, h http.Handler, url string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	return rec
}

func newExplorer(t *testing.T, design string) *Explorer {
	t.Helper()
	ex, err := NewExplorer(ExplorerConfig{Design: design})
	require.NoError(t, err)
	return ex
}

// TestSchedulePathRoundTrip: every scenario's schedule written as a URL
// path reads back as the same design and steps, runs folded as the
// scenario format folds them.
func TestSchedulePathRoundTrip(t *testing.T) {
	for _, name := range model.ScenarioNames() {
		dm, err := model.LoadDemo(name)
		require.NoError(t, err)
		p := SchedulePath(dm.Scenario.DesignName, dm.Scenario.Trace)
		sc, err := ParseSchedulePath(p)
		require.NoError(t, err, "%s: %s", name, p)
		require.Equal(t, dm.Scenario.Design, sc.Design, name)
		require.Equal(t, dm.Scenario.Trace, sc.Trace, name)
	}
	require.Equal(t, "demo2/-/A_acquire/tick_9/B_pause_14/B_acquire_x3", SchedulePath("demo2", []model.Action{
		{Kind: model.ActAcquire}, {Kind: model.ActTick}, {Kind: model.ActTick}, {Kind: model.ActTick}, {Kind: model.ActTick}, {Kind: model.ActTick},
		{Kind: model.ActTick}, {Kind: model.ActTick}, {Kind: model.ActTick}, {Kind: model.ActTick}, {Kind: model.ActPause, Client: 1, Arg: 14},
		{Kind: model.ActAcquire, Client: 1}, {Kind: model.ActAcquire, Client: 1}, {Kind: model.ActAcquire, Client: 1}}))
	sc, err := ParseSchedulePath("redis/cad/none/plain,ttl=5/-/A_acquire/node-crash_1")
	if err == nil || !strings.Contains(err.Error(), "node") {
		// redis has one node: node-crash needs node-crashes=; either way a clear error or a parse
		require.NoError(t, err)
		require.Len(t, sc.Trace, 2)
	}
}

// TestSchedulePathErrors: malformed paths are one-line errors naming the
// step.
func TestSchedulePathErrors(t *testing.T) {
	for p, want := range map[string]string{
		"":                           "no design in the URL path",
		"-/A_acquire":                "no design in the URL path",
		"nope":                       `design "nope": want 4 parts`,
		"Demo2":                      `design "Demo2": 'D' is not a character of a design name`,
		"demo2/-/A_acquire//B_read":  "step 2 of the URL path is empty",
		"demo2/-/A acquire":          `step 1 of the URL path, "A acquire": ' ' is not a character of a step`,
		"demo2/-/A_flies":            `step 1 of the URL path, "A_flies": action "A flies": unknown verb "flies"`,
		"demo2/-/A_acquire/design_x": `step 2 of the URL path, "design_x", is not a step`,
		"demo2/-/E_acquire":          `step 1 of the URL path, "E_acquire": client E, but the design has 3 clients`,
		"demo2/-/Z_acquire":          `step 1 of the URL path, "Z_acquire": action "Z acquire": unknown verb "Z"`,
		"demo2/-/tick_999":           `step 1 of the URL path, "tick_999": "tick 999": want "tick" or "tick N"`,
		"demo2/-/___":                `step 1 of the URL path, "___", is not a step`,
	} {
		_, err := ParseSchedulePath(p)
		require.Error(t, err, p)
		require.Contains(t, err.Error(), want, p)
		require.NotContains(t, err.Error(), "\n", p)
	}
	_, err := ParseSchedulePath("demo2/-/" + strings.Repeat("tick/", maxPathBytes/5+1))
	require.ErrorContains(t, err, "more than")
}

// FuzzParseSchedulePath: the URL path parser never panics; what it reads
// it writes back to a path that reads the same.
func FuzzParseSchedulePath(f *testing.F) {
	for _, name := range []string{"demo1", "demo2", "redlock-partition", "split-brain", "lost-release", "resent-write", "network-delay"} {
		dm, err := model.LoadDemo(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(SchedulePath(dm.Scenario.DesignName, dm.Scenario.Trace))
	}
	for _, s := range []string{"", "demo2", "demo2/-", "demo2/-/", "demo2/-/tick_9", "demo2/-/A_pause_0", "redis/cad/none/plain,ttl=5/-/A_acquire_x3",
		"demo2/-/-/-", "demo2/-/A_acquire/-/B_acquire", "//-//", "demo2/-/A_#", "demo2/-/expect_x", "demo2/-/tick_x2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		sc, err := ParseSchedulePath(p)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a two-line error: %q", err)
			}
			return
		}
		again, err := ParseSchedulePath(SchedulePath(sc.DesignName, sc.Trace))
		if err != nil {
			t.Fatalf("%q reads, but its path %q does not: %v", p, SchedulePath(sc.DesignName, sc.Trace), err)
		}
		require.Equal(t, sc.Design, again.Design)
		require.Equal(t, sc.Trace, again.Trace)
		_, _ = model.Replay(&sc.Design, sc.Trace) // never panics: a step not enabled is an error
	})
}

// TestExplorerBadRequests: every bad input is a 4xx with one line, in a
// page for a page.
func TestExplorerBadRequests(t *testing.T) {
	ex := newExplorer(t, "demo2")
	for url, want := range map[string]struct {
		status int
		msg    string
	}{
		"/explore/nope":                                          {400, `design "nope"`},
		"/explore/demo2/-/A_write":                               {400, "step 1 (A write) is not enabled at t=1"},
		"/explore/demo2/-/A_acquire?at=x":                        {400, `at="x": want a step from 0 to 1`},
		"/explore/demo2/-/A_acquire?at=-1":                       {400, `at="-1"`},
		"/explore/demo2/-/A_acquire/A_write?at=1":                {400, "step 2 (A write) is not enabled at t=1"}, // in the forward part
		"/explore/demo2/-/A_write/B_acquire?at=1&take=B_acquire": {400, "step 1 (A write) is not enabled at t=1"},
		"/explore/demo2/-/A_acquire/A_write?at=0&take=A_acquire": {400, "step 2 (A write) is not enabled at t=1"},
		"/explore/demo2?timeline=some":                           {400, `timeline="some": want timeline=all (every step drawn) or no timeline=`},
		"/explore/demo2?take=A_write":                            {400, `take="A_write": A write is not enabled at step 0, t=1`},
		"/explore/demo2?take=A_fly":                              {400, `take="A_fly": action "A fly": unknown verb`},
		"/search/demo2?property=nope":                            {400, `property="nope": want one of exclusive, mutex`},
		"/search/demo2/-/A_write?property=exclusive":             {400, "step 1 (A write) is not enabled"},
		"/scenario/demo2/-/A_write":                              {400, "step 1 (A write) is not enabled"},
		"/story/demo2/-/A_write":                                 {400, "step 1 (A write) is not enabled"},
		"/nothing":                                               {404, `no page "/nothing" here`},
		"/assets/nothing.js":                                     {404, ""},
		"/explore/demo2/-/" + strings.Repeat("x", 100):           {400, `unknown verb "xxx`},
	} {
		rec := getURL(t, ex, url)
		require.Equal(t, want.status, rec.Code, url)
		body := html.UnescapeString(rec.Body.String())
		require.Contains(t, body, want.msg, url)
		if strings.HasPrefix(url, "/explore/") {
			require.Contains(t, body, `<p class="error" id="error">`, url)
			line := body[strings.Index(body, `id="error">`):]
			line = line[:strings.Index(line, "</p>")]
			require.NotContains(t, line, "\n", url)
		}
	}
	rec := httptest.NewRecorder()
	ex.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/explore/demo2", nil))
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	// a search while another holds the searcher past the wait: 409
	ex.busyWait = 10 * time.Millisecond
	ex.busy <- struct{}{}
	rec = getURL(t, ex, "/search/demo2?property=exclusive")
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "another search is running: stop it first (one search at a time)\n", rec.Body.String())
	<-ex.busy
	rec = getURL(t, ex, "/search/demo2?property=exclusive")
	require.Equal(t, http.StatusOK, rec.Code)
	_, err := NewExplorer(ExplorerConfig{Design: "demo2", Trace: []model.Action{{Kind: model.ActWrite}}})
	require.ErrorContains(t, err, "step 1 (A write) is not enabled")
}

// TestExplorerTake: take= is a 303 to the page after the step; the step
// the schedule already has next keeps the rest (forward); another one
// replaces it.
func TestExplorerTake(t *testing.T) {
	ex := newExplorer(t, "demo2")
	rec := getURL(t, ex, "/")
	require.Equal(t, http.StatusSeeOther, rec.Code)
	require.Equal(t, "/explore/demo2", rec.Header().Get("Location"))
	rec = getURL(t, ex, "/explore/demo2/-/A_acquire/B_acquire/C_acquire?at=1&take=B_acquire")
	require.Equal(t, http.StatusSeeOther, rec.Code)
	require.Equal(t, "/explore/demo2/-/A_acquire/B_acquire/C_acquire?at=2", rec.Header().Get("Location"))
	rec = getURL(t, ex, "/explore/demo2/-/A_acquire/B_acquire/C_acquire?at=1&take=C_acquire")
	require.Equal(t, "/explore/demo2/-/A_acquire/C_acquire", rec.Header().Get("Location"))
}

// TestExplorerPage: the page of a state lists its enabled actions by the
// model's Actions, marks the step that breaks a property, and says each
// property's status; it asks nothing of the network.
func TestExplorerPage(t *testing.T) {
	dm, err := model.LoadDemo("demo2")
	require.NoError(t, err)
	ex := newExplorer(t, "demo2")
	rec := getURL(t, ex, PageURL("demo2", dm.Scenario.Trace, 45))
	require.Equal(t, http.StatusOK, rec.Code)
	page := rec.Body.String()
	r, err := model.Replay(&dm.Scenario.Design, dm.Scenario.Trace[:45])
	require.NoError(t, err)
	for _, a := range model.Actions(&r.Design, &r.Final, nil) {
		require.Contains(t, page, `data-action="`+a.String()+`"`)
	}
	// A's write at step 46 breaks exclusive: marked before it is taken
	require.Contains(t, page, `<a class="act bad" data-action="A write" href="?at=45&amp;take=A_write" title="t=15 A: write counter = 1 → accepted  ✗ the key is C&#39;s — ✗ exclusive">✗ A write</a>`)
	require.Contains(t, page, `data-property="mutex" data-status="violated"><th title=`)
	require.Contains(t, page, `data-property="exclusive" data-status="holds">`)
	require.Contains(t, page, `<td class="status">✗ violated at step 34</td>`)
	require.Contains(t, page, `<a id="back" href="?at=44"`)
	require.Contains(t, page, `<a id="forward" href="?at=46" title="A write">`)
	for _, external := range []string{"http://", "https://", "//cdn", "@import"} {
		require.NotContains(t, page, external)
		for _, name := range []string{"assets/explorer.js", "assets/explorer.css"} {
			data, err := assets.ReadFile(name)
			require.NoError(t, err)
			require.NotContains(t, string(data), external, name)
		}
	}
	// the assets are served from the binary
	rec = getURL(t, ex, "/assets/explorer.js")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), "shortest violation")
}

// TestExplorerTimelineWindow: on a long path the page draws the last
// ticks of the timeline, about timelineSteps steps, and says so with a
// link to the whole timeline, which draws every step; a short path's page
// draws it all with no such note.
func TestExplorerTimelineWindow(t *testing.T) {
	d, trace := longWalk(t, longest)
	require.Greater(t, len(trace), 4*timelineSteps)
	ex := newExplorer(t, d.Name())
	n := len(trace)
	page := getURL(t, ex, PageURL(d.Name(), trace, -1)).Body.String()
	chips := strings.Count(page, `<span class="chip `)
	require.Greater(t, chips, timelineSteps/2)
	require.Less(t, chips, timelineSteps+200)
	require.Contains(t, page, `data-step="`+strconv.Itoa(n)+`"`, "the last step is drawn")
	require.NotContains(t, page, `data-step="1" `, "the first is not")
	require.Contains(t, page, `<p class="legend" id="timeline-window">Ticks `)
	require.Contains(t, page, `href="?at=`+strconv.Itoa(n)+`&amp;timeline=all">the whole timeline</a>`)
	whole := getURL(t, ex, PageURL(d.Name(), trace, -1)+"?timeline=all").Body.String()
	require.NotContains(t, whole, `id="timeline-window"`)
	var drawn int
	for _, st := range []string{`data-step="1" `, `data-step="` + strconv.Itoa(n/2) + `" `, `data-step="` + strconv.Itoa(n) + `" `} {
		if strings.Contains(whole, st) {
			drawn++
		}
	}
	require.Equal(t, 3, drawn, "the whole timeline draws the first, a middle and the last step")
	// the window's step counts: the hidden ones and the drawn ones add up
	// to the path
	var shown, hidden int
	_, err := fmt.Sscanf(page[strings.Index(page, `id="timeline-window">`):], `id="timeline-window">Ticks %d to %d, the last %d steps; the %d steps`, new(int), new(int), &shown, &hidden)
	require.NoError(t, err)
	require.Equal(t, n, shown+hidden)
	dm, err := model.LoadDemo("demo2")
	require.NoError(t, err)
	short := getURL(t, newExplorer(t, "demo2"), PageURL("demo2", dm.Scenario.Trace, -1)).Body.String()
	require.NotContains(t, short, `id="timeline-window"`)
	require.Contains(t, short, `data-step="1" `)
}

// TestExplorerSearch: the search answers lines of JSON, the result as
// long as explore.Check's from the same state.
func TestExplorerSearch(t *testing.T) {
	dm, err := model.LoadDemo("demo2")
	require.NoError(t, err)
	ex := newExplorer(t, "demo2")
	d := dm.Scenario.Design
	props, _ := model.ParseProperties("exclusive")
	for _, at := range []int{0, 20, 46} {
		from := dm.Scenario.Trace[:at]
		rep, err := explore.Check(explore.Config{Design: d, Properties: props, From: from, Bounds: explore.Bounds{Symmetry: true}})
		require.NoError(t, err)
		rec := getURL(t, ex, "/search/"+SchedulePath("demo2", dm.Scenario.Trace)+"?property=exclusive&at="+strconv.Itoa(at))
		require.Equal(t, http.StatusOK, rec.Code)
		var last searchLine
		sc := bufio.NewScanner(rec.Body)
		for sc.Scan() {
			require.NoError(t, json.Unmarshal(sc.Bytes(), &last))
		}
		require.Equal(t, "result", last.Kind)
		require.Equal(t, string(rep.Results[0].Status), last.Status, "at %d", at)
		require.Equal(t, len(rep.Results[0].Trace), last.Steps, "at %d", at)
		if last.Href != "" {
			full, err := ParseSchedulePath(strings.TrimPrefix(last.Href, ExplorePrefix))
			require.NoError(t, err)
			run, err := model.Replay(&d, full.Trace)
			require.NoError(t, err)
			seq, ok := run.Violated("exclusive")
			require.True(t, ok)
			require.Equal(t, at+last.Steps, seq)
		}
	}
	// the story pane
	rec := getURL(t, ex, "/story/"+SchedulePath("demo2", dm.Scenario.Trace)+"?at=46")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), `<span class="bad">t=15 A: write counter = 1 → accepted  ✗ the key is C&#39;s`+"\n</span>")
	require.NotContains(t, rec.Body.String(), "C: write counter = 2")
	// the scenario download
	rec = getURL(t, ex, "/scenario/"+SchedulePath("demo2", dm.Scenario.Trace)+"?at=5")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, `attachment; filename="demo2-explored.txt"`, rec.Header().Get("Content-Disposition"))
	sc, err := model.ParseScenario(rec.Body.String())
	require.NoError(t, err)
	require.Equal(t, dm.Scenario.Trace[:5], sc.Trace)
}
