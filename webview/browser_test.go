package webview

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"image"
	"image/png"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

var screenshot = flag.String("screenshot", "", "also write the browser test's screenshot of the Demo 2 page to this PNG file (for the README)")

// chromiumPath is Debian's chromium (apt-get install -y chromium).
const chromiumPath = "/usr/bin/chromium"

// chromium returns the browser, or skips the test when it is not installed
// (fails under CI=true: CI installs it, so a missing browser is a broken
// CI script, not a reason to skip).
func chromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found, but CI must check the page in a browser: install it with apt-get install -y chromium", chromiumPath)
		}
		t.Skipf("%s not found: the timeline page is not checked in a real browser (install it with: apt-get install -y chromium)", chromiumPath)
	}
	return chromiumPath
}

// runChromium runs headless Chromium on a file with extra arguments and
// returns its standard output.
func runChromium(t *testing.T, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	all := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir=" + t.TempDir(),
	}, args...)
	all = append(all, "file://"+page)
	cmd := exec.CommandContext(ctx, chromium(t), all...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, tail(errb.String()))
	}
	return out.Bytes()
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

// factsScript measures the rendered timeline and writes what it found into
// the DOM, for --dump-dom to bring out.
const factsScript = `<script>
(function () {
  function box(el) { var b = el.getBoundingClientRect(); return {l: b.left, r: b.right, t: b.top, b: b.bottom, w: b.width, h: b.height}; }
  var facts = {table: box(document.getElementById('timeline')), rows: [], marks: [], believes: []};
  document.querySelectorAll('#timeline tr').forEach(function (tr) {
    var cells = [];
    tr.querySelectorAll('[data-tick]').forEach(function (c) { var b = box(c); b.tick = +c.dataset.tick; cells.push(b); });
    var b = box(tr); b.kind = tr.className.split(' ')[0]; b.cells = cells;
    facts.rows.push(b);
  });
  document.querySelectorAll('#timeline .x').forEach(function (x) {
    var b = box(x); var cs = getComputedStyle(x);
    b.text = x.textContent; b.color = cs.color; b.visibility = cs.visibility; b.display = cs.display;
    b.tick = +x.closest('td').dataset.tick;
    facts.marks.push(b);
  });
  document.querySelectorAll('#timeline tr.row-client td').forEach(function (td) {
    facts.believes.push({client: td.parentElement.dataset.client, tick: +td.dataset.tick,
      on: td.classList.contains('believes'), bg: getComputedStyle(td).backgroundColor});
  });
  var pre = document.createElement('pre');
  pre.id = 'layout-facts';
  pre.textContent = JSON.stringify(facts);
  document.body.appendChild(pre);
})();
</script>
`

type rect struct {
	L, R, T, B, W, H float64
}

type layoutFacts struct {
	Table rect
	Rows  []struct {
		rect
		Kind  string
		Cells []struct {
			rect
			Tick int
		}
	}
	Marks []struct {
		rect
		Text, Color, Visibility, Display string
		Tick                             int
	}
	Believes []struct {
		Client string
		Tick   int
		On     bool
		Bg     string
	}
}

// demo2Page is the seed's Demo 2 as a page, written to a temporary folder.
func demo2Page(t *testing.T) (*model.Run, []byte) {
	dm, err := model.LoadDemo("2")
	require.NoError(t, err)
	r, err := model.Replay(&dm.Scenario.Design, dm.Scenario.Trace)
	require.NoError(t, err)
	at, ok := r.Violated("no-lost-update")
	require.True(t, ok)
	p, _ := model.PropertyByName("no-lost-update")
	return r, Page(r, Info{
		Title: strings.TrimSuffix(dm.Title, ".") + ": " + dm.Scenario.Design.Name() + " breaks no-lost-update", Design: dm.Scenario.Design.Name(),
		Preset: "demo2", Property: p.Name, PropertyDoc: p.Doc, ViolatedAt: at,
		FoundBy: "the seed's scripted story (model/scenarios/demo2.txt)",
	})
}

// TestBrowserRendersTheTimeline loads the Demo 2 page in headless Chromium
// and checks, from the layout the browser computed, that every row and
// every cell is drawn, that the ✗ marks are visible, red, in the unsafe row
// and in the column of their tick, and that believing is shaded.
func TestBrowserRendersTheTimeline(t *testing.T) {
	chromium(t)
	r, page := demo2Page(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "demo2.html")
	withScript := strings.Replace(string(page), "</body>", factsScript+"</body>", 1)
	require.NoError(t, os.WriteFile(file, []byte(withScript), 0o644))
	dom := string(runChromium(t, file, "--window-size=1280,900", "--dump-dom"))
	_, rest, ok := strings.Cut(dom, `<pre id="layout-facts">`)
	require.True(t, ok, "the page's layout script did not run:\n%s", tail(dom))
	raw, _, _ := strings.Cut(rest, "</pre>")
	var facts layoutFacts
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(raw)), &facts))

	require.Greater(t, facts.Table.W, 300.0)
	require.Greater(t, facts.Table.H, 100.0)
	var kinds []string
	prevBottom := 0.0
	for _, row := range facts.Rows {
		kinds = append(kinds, row.Kind)
		require.Greater(t, row.H, 10.0, "row %s has no height", row.Kind)
		require.GreaterOrEqual(t, row.T, prevBottom-0.5, "row %s overlaps the row above", row.Kind)
		prevBottom = row.B
		require.Len(t, row.Cells, len(r.Timeline), "row %s", row.Kind)
		for k, c := range row.Cells {
			require.Equal(t, r.Timeline[k].Tick, c.Tick)
			require.Greater(t, c.W, 10.0, "row %s tick %d has no width", row.Kind, c.Tick)
			if k > 0 {
				require.Greater(t, c.L, row.Cells[k-1].L, "row %s: ticks out of order", row.Kind)
			}
		}
	}
	require.Equal(t, []string{"row-tick", "row-client", "row-client", "row-client", "row-key", "row-storage", "row-unsafe"}, kinds)
	ticks := facts.Rows[0].Cells
	unsafe := facts.Rows[len(facts.Rows)-1]

	wantMarks := 0
	for _, tr := range r.Timeline {
		wantMarks += bits.OnesCount8(tr.Unsafe)
	}
	require.Equal(t, 1, wantMarks, "Demo 2 has one ✗ (A's write at t=15)")
	require.Len(t, facts.Marks, wantMarks)
	for _, m := range facts.Marks {
		require.Equal(t, "✗A", m.Text)
		require.Equal(t, "rgb(220, 38, 38)", m.Color, "the ✗ is red")
		require.Equal(t, "visible", m.Visibility)
		require.Greater(t, m.W, 5.0)
		require.Greater(t, m.H, 5.0)
		cx, cy := (m.L+m.R)/2, (m.T+m.B)/2
		require.True(t, cy > unsafe.T && cy < unsafe.B, "the ✗ is in the unsafe row")
		col := ticks[m.Tick-ticks[0].Tick]
		require.True(t, cx > col.L && cx < col.R, "the ✗ of t=%d is in its column (%.0f not in %.0f..%.0f)", m.Tick, cx, col.L, col.R)
	}
	require.Equal(t, 15, facts.Marks[0].Tick)
	// the storage row shows the accepted writes beside the counter, as
	// the browser laid it out (before: the counter alone; the accepted
	// writes only in a tooltip): 2 after three accepted writes
	require.Contains(t, dom, ">2 (3 acc.)</td>")

	plain := ""
	for _, b := range facts.Believes {
		if !b.On {
			plain = b.Bg
		}
	}
	on := 0
	for _, b := range facts.Believes {
		if b.On {
			on++
			require.NotEqual(t, plain, b.Bg, "%s believes at t=%d but the cell is not shaded", b.Client, b.Tick)
		}
	}
	require.Positive(t, on)
}

// TestBrowserScreenshot takes a screenshot of the Demo 2 page and checks it
// is not blank: mostly white, with the clients' colours and the red of the
// ✗. With -screenshot=FILE it keeps the PNG (for the README).
func TestBrowserScreenshot(t *testing.T) {
	chromium(t)
	_, page := demo2Page(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "demo2.html")
	require.NoError(t, os.WriteFile(file, page, 0o644))
	shot := filepath.Join(dir, "shot.png")
	runChromium(t, file, "--window-size=1100,560", "--screenshot="+shot)
	data, err := os.ReadFile(shot)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	bounds := img.Bounds()
	require.Equal(t, image.Rect(0, 0, 1100, 560), bounds)
	count := func(r0, g0, b0 int) int {
		n := 0
		for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
			for x := bounds.Min.X; x < bounds.Max.X; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				if abs(int(r>>8)-r0) < 24 && abs(int(g>>8)-g0) < 24 && abs(int(b>>8)-b0) < 24 {
					n++
				}
			}
		}
		return n
	}
	total := bounds.Dx() * bounds.Dy()
	white := count(255, 255, 255)
	require.Less(t, white, total*97/100, "the screenshot is blank")
	require.Greater(t, white, total/3, "the page background is white")
	for name, c := range map[string][3]int{"A's blue": {0x25, 0x63, 0xeb}, "B's amber": {0xd9, 0x77, 0x06}, "C's green": {0x05, 0x96, 0x69}, "the ✗'s red": {220, 38, 38}} {
		require.Greater(t, count(c[0], c[1], c[2]), 20, "no %s in the screenshot", name)
	}
	if *screenshot != "" {
		require.NoError(t, os.WriteFile(*screenshot, data, 0o644))
		t.Logf("wrote %s (%d bytes)", *screenshot, len(data))
		if filepath.Base(*screenshot) == "demo2-timeline.png" {
			writeSum(t, "demo2-timeline.png") // TestScreenshotsCurrent's record of what it shows
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// inspectorScript opens the inspector's entry for one step the way a
// reader does (a click on its summary) and writes what the browser then
// draws into the DOM: the flagged entry's look, the highlighted fields of
// the opened step, an unhighlighted cell's background, and whether a
// closed entry's tables take any room.
const inspectorScript = `<script>
(function () {
  function box(el) { var b = el.getBoundingClientRect(); return {w: b.width, h: b.height}; }
  var facts = {entries: document.querySelectorAll('#inspector details').length, flagged: [], opened: null, closed: null};
  document.querySelectorAll('#inspector details.flagged').forEach(function (d) {
    var s = d.querySelector('summary'); var cs = getComputedStyle(s);
    facts.flagged.push({seq: +d.dataset.seq, text: s.textContent, outline: cs.outlineColor, outlineStyle: cs.outlineStyle, color: cs.color});
  });
  var open = document.getElementById('step-' + OPEN);
  var before = box(open);
  open.querySelector('summary').click();
  var after = box(open);
  var changed = [];
  open.querySelectorAll('td.ch').forEach(function (td) {
    var b = box(td); var cs = getComputedStyle(td);
    changed.push({field: td.dataset.field, text: td.textContent, w: b.w, h: b.h, bg: cs.backgroundColor, visibility: cs.visibility});
  });
  var plain = open.querySelector('td:not(.ch)');
  facts.opened = {seq: +open.dataset.seq, isOpen: open.open, heightBefore: before.h, heightAfter: after.h, changed: changed,
    plainBg: plain ? getComputedStyle(plain).backgroundColor : '', tables: open.querySelectorAll('table.state').length};
  var other = document.getElementById('step-' + CLOSED);
  var table = other.querySelector('table.state');
  facts.closed = {isOpen: other.open, height: box(other).h, summaryHeight: box(other.querySelector('summary')).h,
    tableVisible: table.checkVisibility ? table.checkVisibility() : true};
  var pre = document.createElement('pre');
  pre.id = 'inspector-facts';
  pre.textContent = JSON.stringify(facts);
  document.body.appendChild(pre);
})();
</script>
`

type inspectorFacts struct {
	Entries int
	Flagged []struct {
		Seq                                int
		Text, Outline, OutlineStyle, Color string
	}
	Opened struct {
		Seq                       int
		IsOpen                    bool
		HeightBefore, HeightAfter float64
		Changed                   []struct {
			Field, Text, Bg, Visibility string
			W, H                        float64
		}
		PlainBg string
		Tables  int
	}
	Closed struct {
		IsOpen                bool
		Height, SummaryHeight float64
		TableVisible          bool
	}
}

// TestBrowserInspector loads the Demo 2 page in headless Chromium: the
// step at which no-lost-update breaks is flagged (⚑, a red outline); a
// click opens A's stale write, whose changed fields (as reflection over
// the states finds them) are drawn highlighted, visible, on a colour the
// unchanged fields do not have; a step nobody opened shows no table.
func TestBrowserInspector(t *testing.T) {
	chromium(t)
	r, page := demo2Page(t)
	at, _ := r.Violated("no-lost-update")
	var open *model.StepRecord // A's write at t=15, the one the ✗ marks
	for k := range r.Steps {
		if st := &r.Steps[k]; st.Action.Kind == model.ActWrite && st.Event.Flags&model.EvUnsafe != 0 {
			open = st
		}
	}
	require.NotNil(t, open)
	script := strings.NewReplacer("OPEN", fmt.Sprint(open.Seq), "CLOSED", fmt.Sprint(at)).Replace(inspectorScript)
	file := filepath.Join(t.TempDir(), "demo2.html")
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(page), "</body>", script+"</body>", 1)), 0o644))
	dom := string(runChromium(t, file, "--window-size=1280,900", "--dump-dom"))
	_, rest, ok := strings.Cut(dom, `<pre id="inspector-facts">`)
	require.True(t, ok, "the inspector script did not run:\n%s", tail(dom))
	raw, _, _ := strings.Cut(rest, "</pre>")
	var facts inspectorFacts
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(raw)), &facts))

	require.Equal(t, len(r.Steps)+1, facts.Entries)
	require.Len(t, facts.Flagged, 1, "one flagged step")
	f := facts.Flagged[0]
	// ⚑ marks A's write, which lost B's update, not the release at which
	// every job has ended and no-lost-update is judged
	require.Equal(t, open.Seq, f.Seq)
	require.NotEqual(t, at, f.Seq)
	require.True(t, strings.HasPrefix(f.Text, "⚑ step "+fmt.Sprint(open.Seq)+":"), f.Text)
	require.Equal(t, "rgb(220, 38, 38)", f.Outline)
	require.Equal(t, "solid", f.OutlineStyle)

	o := facts.Opened
	require.Equal(t, open.Seq, o.Seq)
	require.True(t, o.IsOpen, "a click on the summary opens the step")
	require.Greater(t, o.HeightAfter, o.HeightBefore+40, "the opened step shows its state")
	require.GreaterOrEqual(t, o.Tables, 3, "clients, lock nodes, storage, time")
	var got []string
	for _, c := range o.Changed {
		got = append(got, c.Field)
		require.Equal(t, "visible", c.Visibility)
		require.Greater(t, c.W, 5.0, c.Field)
		require.Greater(t, c.H, 5.0, c.Field)
		require.Equal(t, "rgb(253, 230, 138)", c.Bg, "%s is highlighted", c.Field)
		require.NotEqual(t, o.PlainBg, c.Bg)
	}
	sort.Strings(got)
	require.Equal(t, changedFields(&open.Before, &open.After), got)
	// A writes 1 over B's 1: the counter stays, the accepted writes grow (the lost update)
	require.Equal(t, []string{"Clients.0.Phase", "Store.Accepted"}, got)

	require.False(t, facts.Closed.IsOpen)
	require.False(t, facts.Closed.TableVisible, "a closed step's state is not drawn")
	require.InDelta(t, facts.Closed.SummaryHeight, facts.Closed.Height, 1, "a closed step takes its summary's room, no more")
}

// linkScript clicks a step's chip in the timeline and, once the browser
// has followed the link, writes where it went and whether the step's entry
// in the inspector opened.
const linkScript = `<script>
window.addEventListener('load', function () {
  var a = document.querySelector('#timeline .chip[data-step="STEP"] a');
  var before = document.getElementById('step-STEP').open;
  a.click();
  setTimeout(function () {
    var pre = document.createElement('pre');
    pre.id = 'link-facts';
    var s = document.getElementById('state-STEP');
    pre.textContent = JSON.stringify({hash: location.hash, before: before, open: document.getElementById('step-STEP').open,
      visible: s.checkVisibility ? s.checkVisibility() : false, top: s.getBoundingClientRect().top});
    document.body.appendChild(pre);
  }, 200);
});
</script>
`

// TestBrowserChipOpensItsStep: a click on a step in the timeline follows
// its link to the inspector, which the browser opens on that step's state.
func TestBrowserChipOpensItsStep(t *testing.T) {
	chromium(t)
	r, page := demo2Page(t)
	var step int // A's write at t=15
	for k := range r.Steps {
		if st := &r.Steps[k]; st.Action.Kind == model.ActWrite && st.Event.Flags&model.EvUnsafe != 0 {
			step = st.Seq
		}
	}
	file := filepath.Join(t.TempDir(), "demo2.html")
	script := strings.ReplaceAll(linkScript, "STEP", fmt.Sprint(step))
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(page), "</body>", script+"</body>", 1)), 0o644))
	dom := string(runChromium(t, file, "--window-size=1280,900", "--virtual-time-budget=5000", "--dump-dom"))
	_, rest, ok := strings.Cut(dom, `<pre id="link-facts">`)
	require.True(t, ok, "the link script did not run:\n%s", tail(dom))
	raw, _, _ := strings.Cut(rest, "</pre>")
	var facts struct {
		Hash         string
		Before, Open bool
		Visible      bool
		Top          float64
	}
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(raw)), &facts))
	require.Equal(t, fmt.Sprintf("#state-%d", step), facts.Hash)
	require.False(t, facts.Before, "the step starts closed")
	require.True(t, facts.Open, "following the link opened the step")
	require.True(t, facts.Visible, "its state is drawn")
	require.Less(t, facts.Top, 900.0, "and scrolled into view")
}
