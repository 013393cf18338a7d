package webview

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockcheck/model"
)

// cpuTime is the CPU time the process has used (user and system): on a
// machine shared with other work, the cost of a page apart from the wait
// for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// longWalk is the longest of 20 random schedules of design name (seeded:
// the same every run), each taken to its end, a tick only when nothing
// else is enabled (the odd runs leave out the faults too).
func longWalk(tb testing.TB, name string) (model.Design, []model.Action) {
	d, err := model.ParseDesign(name)
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var best []model.Action
	var buf, pref []model.Action
	for run := 0; run < 20; run++ {
		s := model.Init(&d)
		var trace []model.Action
		for {
			buf = model.Actions(&d, &s, buf)
			if len(buf) == 0 {
				break
			}
			pref = pref[:0]
			for _, a := range buf {
				if a.Kind != model.ActTick && (run%2 == 0 || !a.Kind.IsFault()) {
					pref = append(pref, a)
				}
			}
			if len(pref) == 0 {
				pref = append(pref, buf...)
			}
			a := pref[rng.IntN(len(pref))]
			trace = append(trace, a)
			s, _ = model.Step(&d, s, a)
		}
		if len(trace) > len(best) {
			best = trace
		}
	}
	return d, best
}

// longest is a design whose schedules are about the longest the model
// allows: 8 clients of 8 jobs each, the longest horizon (120 ticks), and
// Redlock asking each of its 5 nodes in turn, every node to win.
const longest = "redlock/cad/none/plain,clients=8,jobs=8,horizon=120,quorum=all"

// BenchmarkExplorerStep times the server's answer to each click a user
// makes on a page whose schedule has steps steps: "page", the page at the
// schedule's end (the forward link's answer, and a reload), its timeline
// the last ticks of the path ("page-whole-timeline": every step); "back", the
// page one step before the end, with the last step ahead; "take", the
// last step clicked among the enabled actions there (the take request,
// its redirect, and the page it leads to). Each parses the URL path,
// replays the schedule and renders the page (timeline, state, actions,
// properties). The model caps a schedule's length (the horizon, 120
// ticks, and 8 clients of 8 jobs): the longest row is as long as the
// model lets a schedule be.
func BenchmarkExplorerStep(b *testing.B) {
	d, all := longWalk(b, longest)
	ex, err := NewExplorer(ExplorerConfig{Design: d.Name()})
	if err != nil {
		b.Fatal(err)
	}
	get := func(b *testing.B, url string, want int) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		ex.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
		if rec.Code != want {
			b.Fatalf("%s: %d: %s", url, rec.Code, rec.Body.String())
		}
		return rec
	}
	for _, n := range []int{100, 1000, len(all)} {
		trace := all[:n]
		end := PageURL(d.Name(), trace, -1)
		back := PageURL(d.Name(), trace, n-1)
		take := PageURL(d.Name(), trace[:n-1], -1) + "?at=" + fmt.Sprint(n-1) + "&take=" + strings.ReplaceAll(trace[n-1].String(), " ", "_")
		clicks := []struct {
			name  string
			click func(b *testing.B) int
		}{
			{"page", func(b *testing.B) int { return get(b, end, http.StatusOK).Body.Len() }},
			{"page-whole-timeline", func(b *testing.B) int { return get(b, end+"?timeline=all", http.StatusOK).Body.Len() }},
			{"back", func(b *testing.B) int { return get(b, back, http.StatusOK).Body.Len() }},
			{"take", func(b *testing.B) int {
				to := get(b, take, http.StatusSeeOther).Header().Get("Location")
				if to != end {
					b.Fatalf("take redirects to %s, want %s", to, end)
				}
				return get(b, to, http.StatusOK).Body.Len()
			}},
		}
		for _, c := range clicks {
			b.Run(fmt.Sprintf("steps=%d/%s", n, c.name), func(b *testing.B) {
				bytes := 0
				cpu0 := cpuTime()
				for b.Loop() {
					bytes = c.click(b)
				}
				b.ReportMetric(float64(bytes), "page-bytes")
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
