package webview

import (
	"fmt"
	"math/bits"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

// demoRun replays one of the seed's demos.
func demoRun(t testing.TB, n int) *model.Run {
	t.Helper()
	dm, err := model.LoadDemo(fmt.Sprint(n))
	require.NoError(t, err)
	r, err := model.Replay(&dm.Scenario.Design, dm.Scenario.Trace)
	require.NoError(t, err)
	return r
}

func demoPage(t testing.TB, n int) (*model.Run, string) {
	r := demoRun(t, n)
	return r, string(Page(r, Info{Title: fmt.Sprintf("demo %d", n), Design: r.Design.Name(), TextFile: "x.txt"}))
}

func TestPageIsSelfContainedAndDeterministic(t *testing.T) {
	r, page := demoPage(t, 2)
	require.Equal(t, page, string(Page(r, Info{Title: "demo 2", Design: r.Design.Name(), TextFile: "x.txt"})))
	for _, banned := range []string{"http:", "https:", "src=", "<link", "<script", "@import", "url(", "//fonts"} {
		require.NotContains(t, page, banned, "the page must need no network and no script")
	}
	require.True(t, strings.HasPrefix(page, "<!DOCTYPE html>"))
	require.True(t, strings.HasSuffix(page, "</html>\n"))
}

var (
	rowRe  = regexp.MustCompile(`(?s)<tr class="(row-[a-z]+)[^"]*"[^>]*>(.*?)</tr>`)
	cellRe = regexp.MustCompile(`<t[dh] class="(cell|tick)[^"]*" data-tick="(\d+)"`)
	markRe = regexp.MustCompile(`<span class="x c(\d)" data-client="([A-H])"`)
	stepRe = regexp.MustCompile(`data-step="(\d+)"`)
)

// TestPageRowsMatchTheRun: one row per client, the key row and the unsafe
// row, each with one cell per tick of the timeline; a ✗ for each unsafe
// client and tick and nowhere else; every client step on hover once.
func TestPageRowsMatchTheRun(t *testing.T) {
	for n := 1; n <= 6; n++ {
		r, page := demoPage(t, n)
		rows := rowRe.FindAllStringSubmatch(page, -1)
		var kinds []string
		for _, row := range rows {
			kinds = append(kinds, row[1])
			cells := cellRe.FindAllStringSubmatch(row[2], -1)
			require.Len(t, cells, len(r.Timeline), "demo %d row %s", n, row[1])
			for k, c := range cells {
				require.Equal(t, fmt.Sprint(r.Timeline[k].Tick), c[2])
			}
		}
		want := []string{"row-tick"}
		for i := 0; i < r.Design.Clients; i++ {
			want = append(want, "row-client")
		}
		want = append(want, "row-key", "row-storage", "row-unsafe")
		require.Equal(t, want, kinds, "demo %d", n)

		unsafeRow := rows[len(rows)-1][2]
		marks := markRe.FindAllStringSubmatch(unsafeRow, -1)
		wantMarks := 0
		for _, tr := range r.Timeline {
			wantMarks += bits.OnesCount8(tr.Unsafe)
		}
		require.Len(t, marks, wantMarks, "demo %d", n)
		require.Equal(t, wantMarks, strings.Count(page, `<span class="x c`), "✗ marks only in the unsafe row")

		seen := map[string]int{}
		for _, m := range stepRe.FindAllStringSubmatch(page, -1) {
			seen[m[1]]++
		}
		for _, st := range r.Steps {
			want := 1
			if st.Action.Kind == model.ActTick {
				want = 0
			}
			require.Equal(t, want, seen[fmt.Sprint(st.Seq)], "demo %d step %d (%s)", n, st.Seq, st.Action)
			if want == 1 {
				require.Contains(t, page, escape(model.Describe(&r.Design, &st)), "demo %d step %d told on hover", n, st.Seq)
			}
		}
	}
}

// TestPageShowsDemo2 checks the seed's story on the page: A paused from
// t=1, the key passing A → B → C, and one ✗ for A at t=15.
func TestPageShowsDemo2(t *testing.T) {
	_, page := demoPage(t, 2)
	require.Contains(t, page, `<td class="cell" data-tick="15"><span class="x c0" data-client="A"`)
	require.Contains(t, page, `<td class="cell believes paused" data-tick="2"`)
	require.Regexp(t, `data-tick="11" title="t=11: nobody, then B holds lock:order-42"><div class="bar"><span class="seg none">·</span><span class="seg c1">B</span>`, page)
	// demo 1 has no fault: no ✗ at all
	_, page1 := demoPage(t, 1)
	require.NotContains(t, page1, `class="x c`)
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// TestPageShowsTheLockService: a failover is drawn in its own row, under
// no client, with its story on hover.
func TestPageShowsTheLockService(t *testing.T) {
	d, err := model.ParseDesign("replica/cad/none/plain,pauses=0")
	require.NoError(t, err)
	sc, err := model.ParseScenario("design replica/cad/none/plain,pauses=0\nA acquire\nA read\nfailover\nB acquire\nB read\n")
	require.NoError(t, err)
	r, err := model.Replay(&d, sc.Trace)
	require.NoError(t, err)
	page := string(Page(r, Info{Title: "failover"}))
	require.Contains(t, page, `<tr class="row-service"><th class="label">lock service</th><td class="cell" data-tick="1"><span class="chip fault" data-step="3" title="step 3: `+escape(model.Describe(&d, &r.Steps[2])))
	require.Equal(t, 1, strings.Count(page, `data-step="3"`), "the failover is not drawn in a client's row")
	require.True(t, sc.Trace[0].Kind.ByClient())
	require.False(t, sc.Trace[2].Kind.ByClient())
	require.False(t, model.ActTick.ByClient())

	_, demo := demoPage(t, 2)
	require.NotContains(t, demo, "row-service", "no lock-service row when the service does nothing on its own")
}

// TestPageTellsTheCauseAndThePrevention: the cause sentence heads the
// page and the prevented section follows the story, both escaped.
func TestPageTellsTheCauseAndThePrevention(t *testing.T) {
	r, _ := demoPage(t, 2)
	page := string(Page(r, Info{Title: "demo 2", Cause: "B's pause outlived its key <&>.", Prevented: "1. ttl 10 → 20\n"}))
	require.Contains(t, page, `<p class="cause" id="cause">B&#39;s pause outlived its key &lt;&amp;&gt;.</p>`)
	require.Contains(t, page, "<h2>What would have prevented this</h2>\n<pre id=\"prevented\">1. ttl 10 → 20\n</pre>")
	require.Less(t, strings.Index(page, `id="cause"`), strings.Index(page, `id="timeline"`))
	plain := string(Page(r, Info{Title: "demo 2"}))
	require.NotContains(t, plain, `id="cause"`)
	require.NotContains(t, plain, `id="prevented"`)
}

// TestPageStorageRowNodeLanesAndViolation: the storage row gives the
// counter and the highest token seen at the end of each tick, marking the
// ticks where they changed; Redlock and the replica get a lane per node;
// the step where the page's own property breaks is flagged.
func TestPageStorageRowNodeLanesAndViolation(t *testing.T) {
	dm, err := model.LoadDemo("3")
	require.NoError(t, err)
	r, err := model.Replay(&dm.Scenario.Design, dm.Scenario.Trace)
	require.NoError(t, err)
	at, ok := r.Violated("exclusive")
	require.True(t, ok)
	page := string(Page(r, Info{Title: "demo 3", Property: "exclusive", ViolatedAt: at}))
	rows := rowRe.FindAllStringSubmatch(page, -1)
	var storage string
	for _, row := range rows {
		if row[1] == "row-storage" {
			storage = row[2]
		}
	}
	require.NotEmpty(t, storage)
	final := r.Final.Store
	require.Contains(t, storage, fmt.Sprintf("counter %d, %d writes accepted, highest token seen %d", final.Counter, final.Accepted, final.MaxTok))
	require.Contains(t, storage, `class="cell storage changed"`)
	require.Equal(t, 1, strings.Count(page, ` violation" data-step="`+fmt.Sprint(at)+`"`), "the violating step is flagged, once")
	require.Equal(t, 1, strings.Count(page, " violation\""))

	for _, c := range []struct {
		design string
		lanes  int
	}{{"redlock/cad/none/plain,clients=2,nodes=3", 3}, {"replica/cad/rw/max-token,pauses=0", 2}, {"demo2", 0}} {
		d, err := model.ParseDesign(c.design)
		require.NoError(t, err)
		run, err := model.Replay(&d, []model.Action{{Kind: model.ActAcquire, Client: 0}})
		require.NoError(t, err)
		p := string(Page(run, Info{Title: c.design}))
		require.Equal(t, c.lanes, strings.Count(p, `<tr class="row-node"`), c.design)
	}
}
