package model

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// replayText replays a scenario given as text.
func replayText(t *testing.T, text string) *Run {
	t.Helper()
	sc, err := ParseScenario(text)
	require.NoError(t, err)
	r, err := Replay(&sc.Design, sc.Trace)
	require.NoError(t, err)
	return r
}

// timelineRow is the cells of the row with label, under the tick row's
// columns: cell[t] for tick t ("" when blank).
func timelineRow(t *testing.T, tl, label string) map[int]string {
	t.Helper()
	lines := strings.Split(tl, "\n")
	ticks := []rune(lines[0])
	var row []rune
	for _, l := range lines {
		if strings.HasPrefix(l, label+"  ") || strings.HasPrefix(l, label+" ") && len(strings.Fields(strings.TrimPrefix(l, label))) > 0 {
			row = []rune(l)
			break
		}
	}
	require.NotNil(t, row, "no row %q in\n%s", label, tl)
	cells := map[int]string{}
	for col := 0; col < len(ticks); col++ {
		if ticks[col] == ' ' || (col > 0 && ticks[col-1] != ' ') {
			continue
		}
		end := col
		for end < len(ticks) && ticks[end] != ' ' {
			end++
		}
		var tick int
		for _, c := range ticks[col:end] {
			if c < '0' || c > '9' {
				tick = -1
				break
			}
			tick = tick*10 + int(c-'0')
		}
		if tick < 0 {
			continue
		}
		cell := ""
		if col < len(row) {
			stop := col
			for stop < len(row) && row[stop] != ' ' {
				stop++
			}
			cell = string(row[col:stop])
		}
		cells[tick] = cell
	}
	return cells
}

// TestTimelineWatchdog: a renewal shows as its client's letter in the
// watchdog row; a renewal due while its client is paused shows in lower
// case on every tick it is overdue; the story says the watchdog froze, at
// the pause and at the expiry. The same for etcd's keep-alive.
func TestTimelineWatchdog(t *testing.T) {
	for _, c := range []struct{ lock, row, word string }{{"redis", "watchdog", "watchdog"}, {"etcd", "keep-alive", "keep-alive"}} {
		r := replayText(t, "design "+c.lock+"/cad/none/plain,clients=1,renew=3,pauses=2\nA acquire\nA read\nA pause 3\ntick 3\nA renew\nA pause 10\ntick 10\n")
		story := RenderSteps(r)
		require.Contains(t, story, "t=4 A: pauses for 10 ticks (GC, VM migration), frozen until t=14; its "+c.word+" freezes with it: the renewal due at t=7 waits until t=14\n")
		require.Contains(t, story, "while A still believes it holds the lock (its "+c.word+", due at t=7, froze with A's pause); A resumes\n")
		require.NotContains(t, story, "t=1 A: pauses for 3 ticks (GC, VM migration), frozen until t=4;", "the first pause ends as the renewal falls due: nothing froze")
		tl := RenderTimeline(r)
		wd := timelineRow(t, tl, c.row)
		for tick := 1; tick <= 14; tick++ {
			want := ""
			switch {
			case tick == 4:
				want = "A"
			case tick >= 7 && tick <= 13:
				want = "a"
			}
			require.Equal(t, want, wd[tick], "%s t=%d\n%s", c.row, tick, tl)
		}
	}
	// without a renewal, no watchdog row
	r := replayText(t, "design redis/cad/none/plain,clients=1,renew=3\nA acquire\nA read\ntick 2\nA write\nA release\n")
	require.NotContains(t, RenderTimeline(r), "watchdog")
	r = replayText(t, "design redis/cad/none/plain,clients=1\nA acquire\nA read\nA pause 10\ntick 10\n")
	require.NotContains(t, RenderTimeline(r), "watchdog")
	require.NotContains(t, RenderSteps(r), "watchdog")
}

// TestTimelineRedlockLanes: one lane per node shows which node lost its
// key and when, the holder's validity counts down by its own clock, and the
// story names the node whose key expired and what the holder keeps.
func TestTimelineRedlockLanes(t *testing.T) {
	// A wins nodes 1-3 of 5 (4 and 5 cut off); node 1's clock jumps and its key expires at t=2
	r := replayText(t, `design redlock/cad/none/plain,clients=1,pauses=0,jumps=1,jump=9,partition=minority,partitions=1
A acquire
A acquire
A acquire
A partition 4
A acquire
A acquire
A read
clock-jump 1
tick
`)
	story := RenderSteps(r)
	require.Contains(t, story, "t=2  key lock:order-42 (A's) expires on node 1 (A keeps 2 of 5, 3 needed) while A still believes it holds the lock\n")
	tl := RenderTimeline(r)
	for k, want := range [][2]string{{"A", "·"}, {"A", "A"}, {"A", "A"}, {"·", "·"}, {"·", "·"}} {
		lane := timelineRow(t, tl, "node "+string(rune('1'+k)))
		require.Equal(t, want[0], lane[1], "node %d t=1\n%s", k+1, tl)
		require.Equal(t, want[1], lane[2], "node %d t=2\n%s", k+1, tl)
	}
	v := timelineRow(t, tl, "A validity")
	require.Equal(t, "9", v[1])
	require.Equal(t, "8", v[2])
	require.Contains(t, tl, "the lock is held with 3 of 5")
}

// TestTimelineStorageRows: the counter, the accepted writes and the highest
// token the storage has seen, at the end of each tick (Demo 3: B's write
// with 34 raises it; A's with 33 is refused and leaves it).
func TestTimelineStorageRows(t *testing.T) {
	r, err := replayDemo(t, 3, nil)
	require.NoError(t, err)
	tl := RenderTimeline(r)
	tok := timelineRow(t, tl, "max token")
	require.Equal(t, "0", tok[1], tl)
	require.Equal(t, "34", tok[13], tl)
	require.Equal(t, "35", tok[15], tl)
	require.Equal(t, "2", timelineRow(t, tl, "counter")[15])
	require.Equal(t, "2", timelineRow(t, tl, "accepted")[15])
	require.Contains(t, tl, "max token: the highest fencing token it has seen")
	// a storage that checks no token has no token row; cas has a version row
	r = replayText(t, "design redis/cad/none/cas,clients=1\nA acquire\nA read\ntick 2\nA write\n")
	tl = RenderTimeline(r)
	require.NotContains(t, tl, "max token")
	require.Equal(t, "1", timelineRow(t, tl, "version")[3], tl)
}

// TestTimelineWithoutStates: a run rebuilt from its timeline alone (the
// reality package's) draws the seed's four rows.
func TestTimelineWithoutStates(t *testing.T) {
	r, err := replayDemo(t, 2, nil)
	require.NoError(t, err)
	tl := RenderTimeline(&Run{Design: r.Design, Timeline: r.Timeline})
	lines := strings.Split(strings.TrimRight(tl, "\n"), "\n")
	require.Len(t, lines, 4, tl)
	require.True(t, strings.HasPrefix(lines[3], "unsafe"))
}
