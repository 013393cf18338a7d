package webview

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

// changedFields lists the fields of the state that differ between a and b,
// found by reflection (independent of the page's own tables): "Now",
// "Clients.0.Phase", "Store.Counter", …
func changedFields(a, b *model.State) []string {
	var out []string
	var walk func(path string, x, y reflect.Value)
	walk = func(path string, x, y reflect.Value) {
		switch x.Kind() {
		case reflect.Struct:
			for i := 0; i < x.NumField(); i++ {
				p := x.Type().Field(i).Name
				if path != "" {
					p = path + "." + p
				}
				walk(p, x.Field(i), y.Field(i))
			}
		case reflect.Array:
			for i := 0; i < x.Len(); i++ {
				walk(fmt.Sprintf("%s.%d", path, i), x.Index(i), y.Index(i))
			}
		default:
			if !x.Equal(y) {
				var n int
				if _, err := fmt.Sscanf(path, "Used.%d", &n); err == nil {
					path, _ = model.Fault(n).Counter() // the page names a used count by its fault's row
				}
				out = append(out, path)
			}
		}
	}
	walk("", reflect.ValueOf(*a), reflect.ValueOf(*b))
	sort.Strings(out)
	return out
}

var (
	entryRe   = regexp.MustCompile(`(?s)<li><details class="([^"]*)" id="step-(\d+)" data-seq="(\d+)"><summary>(.*?)</summary>(.*?)</details></li>`)
	changedRe = regexp.MustCompile(`<td class="ch" data-field="([^"]+)"`)
)

// inspectorRuns are runs whose pages the inspector tests read: the seed's
// demos and a Redlock run with a node crash (five node rows).
func inspectorRuns(t *testing.T) []*model.Run {
	var runs []*model.Run
	for n := 1; n <= 6; n++ {
		runs = append(runs, demoRun(t, n))
	}
	sc, err := model.ParseScenario("design redlock/cad/none/plain,clients=2,pauses=0,node-crashes=1\nA acquire\nA acquire\nB acquire\nB acquire\nB acquire\nA acquire\nB acquire\nA acquire\nB acquire\nnode-crash 3\nB read\n")
	require.NoError(t, err)
	r, err := model.Replay(&sc.Design, sc.Trace)
	require.NoError(t, err)
	return append(runs, r)
}

// TestInspectorHasEveryStateAndItsChanges: the initial state and one entry
// per step, in order, each told in the story's words; in each, exactly the
// fields the step changed (found by reflection over model.State) are
// highlighted; the violating step alone is flagged.
func TestInspectorHasEveryStateAndItsChanges(t *testing.T) {
	for _, r := range inspectorRuns(t) {
		name := r.Design.Name()
		at := 0
		if len(r.Found) > 0 {
			p, _ := model.PropertyByName(r.Found[0].Property)
			if p.Expect == model.Always {
				at = r.Found[0].Seq
			}
		}
		page := string(Page(r, Info{Title: name, Property: "x", ViolatedAt: at}))
		entries := entryRe.FindAllStringSubmatch(page, -1)
		require.Len(t, entries, len(r.Steps)+1, name)
		for k, e := range entries {
			require.Equal(t, fmt.Sprint(k), e[2], name)
			require.Equal(t, e[2], e[3])
			var got []string
			for _, m := range changedRe.FindAllStringSubmatch(e[5], -1) {
				got = append(got, m[1])
			}
			sort.Strings(got)
			if k == 0 {
				require.Contains(t, e[4], "initial state, t=1")
				require.Empty(t, got, "%s: nothing is highlighted in the initial state", name)
				continue
			}
			st := &r.Steps[k-1]
			want := changedFields(&st.Before, &st.After)
			require.Equal(t, want, got, "%s step %d (%s)", name, k, st.Action)
			require.Contains(t, e[4], escape(strings.TrimPrefix(model.Describe(&r.Design, st), fmt.Sprintf("t=%d", st.Event.Now))), "%s step %d told in the story's words", name, k)
			flagged := strings.Contains(e[1], "flagged")
			require.Equal(t, k == at, flagged, "%s step %d: flagged only at the violation (step %d)", name, k, at)
			require.Equal(t, k == at, strings.HasPrefix(e[4], "⚑ "), "%s step %d", name, k)
		}
		// every lock node and every client has its row in each state
		first := entries[0][5]
		for i := 0; i < r.Design.Clients; i++ {
			require.Contains(t, first, "<tr><th>"+model.ClientName(i)+"</th>", name)
		}
		require.Equal(t, len(r.Steps)+1, strings.Count(page, "<caption>storage</caption>"), name)
	}
	// a Redlock state shows its five nodes
	runs := inspectorRuns(t)
	page := string(Page(runs[len(runs)-1], Info{Title: "redlock"}))
	for k := 1; k <= 5; k++ {
		require.Contains(t, page, fmt.Sprintf("<tr><th>node %d</th>", k))
	}
}

// TestPageShowsTheFrozenWatchdog: a renewal is a chip in its client's row;
// while a paused client's renewal is overdue, its cells say the watchdog
// is frozen (on hover and by a class the style underlines in red).
func TestPageShowsTheFrozenWatchdog(t *testing.T) {
	sc, err := model.ParseScenario("design redis/cad/none/plain,clients=1,renew=3,pauses=2\nA acquire\nA read\nA pause 3\ntick 3\nA renew\nA pause 10\ntick 10\n")
	require.NoError(t, err)
	r, err := model.Replay(&sc.Design, sc.Trace)
	require.NoError(t, err)
	page := string(Page(r, Info{Title: "watchdog"}))
	require.True(t, strings.Contains(page, `<span class="chip grant" data-step="7" title="step 7: t=4 A: watchdog: PEXPIRE`), "the renewal is a chip in A's row")
	for tick := 1; tick <= 14; tick++ {
		frozen := strings.Contains(page, fmt.Sprintf(`<td class="cell believes paused frozen" data-tick="%d" title="t=%d`, tick, tick))
		require.Equal(t, tick >= 7 && tick <= 13, frozen, "t=%d", tick)
	}
	require.True(t, strings.Contains(page, "A&#39;s watchdog is due but frozen with it: no renewal"))
}

// TestPageShowsTheValidityLeft: a Redlock holder's validity counts down by
// its own clock, one cell per tick it believes, shown out (0) in red; a
// design that counts no validity has no such row.
func TestPageShowsTheValidityLeft(t *testing.T) {
	sc, err := model.ParseScenario("design redlock/cad/none/plain,clients=1,nodes=3\nA acquire\nA acquire\nA acquire\nA pause 10\ntick 10\n")
	require.NoError(t, err)
	r, err := model.Replay(&sc.Design, sc.Trace)
	require.NoError(t, err)
	page := string(Page(r, Info{Title: "redlock"}))
	require.Equal(t, 1, strings.Count(page, `<tr class="row-validity c0" data-client="A"><th class="label">A validity</th>`))
	for tick := 1; tick <= 11; tick++ {
		left := max(10-tick, 0) // TTL 10, drift 1, asked at t=1
		cls := "cell validity"
		if left == 0 {
			cls += " out"
		}
		require.True(t, strings.Contains(page, fmt.Sprintf(`<td class="%s" data-tick="%d" title="t=%d: A has %d ticks of validity left by its own clock">%d</td>`, cls, tick, tick, left, left)), "t=%d", tick)
	}
	_, demo := demoPage(t, 2)
	require.NotContains(t, demo, "row-validity")
}

// A lost update in which every client read 0: the inspector still shows
// what each client read (before, a field that stayed zero in every state
// was left out, and with it the stale read that explains the lost
// update), and ⚑ marks the write that lost the update, not the release at
// which no-lost-update is judged.
func TestInspectorShowsAStaleReadOfZero(t *testing.T) {
	text := "design redis/cad/none/plain,clients=2\nA acquire\nA read\nB acquire\nA pause 10\n" +
		strings.Repeat("tick\nB acquire\n", 10) + "B read\nA write\nA release\ntick 2\nB write\nB release\n"
	sc, err := model.ParseScenario(text)
	require.NoError(t, err)
	r, err := model.Replay(&sc.Design, sc.Trace)
	require.NoError(t, err)
	at, ok := r.Violated("no-lost-update")
	require.True(t, ok)
	for _, st := range r.Steps {
		for i := 0; i < r.Design.Clients; i++ {
			require.Zero(t, st.After.Clients[i].Read, "every read is 0")
		}
	}
	page := string(Page(r, Info{Title: "t", Design: r.Design.Name(), Property: "no-lost-update", ViolatedAt: at}))
	require.Regexp(t, `<th[^>]*>read</th>`, page, "the clients' reads are a row of the inspector")
	bWrite := 0
	for _, st := range r.Steps {
		if st.Action.Kind == model.ActWrite && st.Action.Client == 1 {
			bWrite = st.Seq
		}
	}
	require.Contains(t, page, fmt.Sprintf("⚑ marks step %d, the write that lost the update (no-lost-update is violated at step %d", bWrite, at))
	require.Contains(t, page, fmt.Sprintf(`id="step-%d"`, bWrite))
	require.Contains(t, page, "1 (2 acc.)", "the storage row shows the accepted writes beside the counter")
}

// TestInspectorNamesEveryPhase: a client's next step is named in the
// story's words for every phase; a client waiting for WAIT's replicas
// (PhaseAck) showed a blank cell when the page kept a list of its own.
func TestInspectorNamesEveryPhase(t *testing.T) {
	sc, err := model.ParseScenario("design replica/cad/none/plain,clients=1,ack=wait\nA acquire\n")
	require.NoError(t, err)
	r, err := model.Replay(&sc.Design, sc.Trace)
	require.NoError(t, err)
	require.Equal(t, model.PhaseAck, r.Steps[0].After.Clients[0].Phase)
	page := string(Page(r, Info{Title: "ack"}))
	require.Contains(t, page, `data-field="Clients.0.Phase" title="was acquire">wait</td>`)
	for p := model.Phase(0); int(p) < model.NumPhases; p++ {
		require.NotEqual(t, "phase?", p.String(), "phase %d has no word", p)
		require.NotEmpty(t, p.String(), "phase %d has no word", p)
	}
}
