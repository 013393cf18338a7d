package explore

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"lockcheck/catalogue"
	"lockcheck/model"
)

// Set LOCKCHECK_LONG=1 for the long test: the whole catalogue against the
// oracle (the SPIN configuration's pinned counts run in every go test).
var long = os.Getenv("LOCKCHECK_LONG") != ""

func design(t testing.TB, name string) model.Design {
	t.Helper()
	d, err := model.ParseDesign(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func check(t testing.TB, cfg Config) *Report {
	t.Helper()
	r, err := Check(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// oracleDesigns are small designs of several kinds: the seed's demos, planted
// model bugs, free clock, crashes and slow jobs together.
var oracleDesigns = []string{
	"demo1", "demo2", "demo3", "demo4", "demo5", "demo6",
	"demo6,bug=read-no-record",
	"demo6,bug=no-token-check",
	"demo2,bug=set-without-nx",
	"demo4,bug=cad-no-check",
	"redis/get-del/none/plain,clients=2",
	"redis/cad/none/plain,clock=free,horizon=12",
	"redis/del/none/plain,clients=2,crashes=1,slow=1",
	"redis/cad/rw/max-token,acquire=set-expire,pauses=0,crashes=1",
	"redis/cad/none/cas,clients=2",
	// etcd's reader-writer lock (readers=K): readers and writers are told
	// apart by a mark, which symmetry keeps
	"etcd-mutex/del/none/plain,readers=1",
	"etcd-mutex/del/none/plain,pause-at=acquire,readers=1",
	"etcd-mutex/del/none/plain,session-check=none,pause-at=acquire,readers=1",
}

// never is a property no state shows: a search for it visits everything.
var never = model.Property{Name: "never", Expect: model.Always, Doc: "test: nothing",
	Bad: func(*model.Design, *model.State, *model.Event) bool { return false }}

// stats without the measured fields.
func countsOf(s Stats) Stats {
	s.Seconds, s.VisitedBytes, s.MemoryBytes = 0, 0, 0
	return s
}

// sameReport compares two reports: verdicts, traces and counts.
func sameReport(t *testing.T, what string, want, got *Report) {
	t.Helper()
	if !reflect.DeepEqual(countsOf(want.Stats), countsOf(got.Stats)) {
		t.Errorf("%s: stats\nwant %+v\ngot  %+v", what, countsOf(want.Stats), countsOf(got.Stats))
	}
	if want.Counts != got.Counts {
		t.Errorf("%s: coverage counts differ\nwant %+v\ngot  %+v", what, want.Counts, got.Counts)
	}
	if len(want.Results) != len(got.Results) {
		t.Fatalf("%s: %d results, want %d", what, len(got.Results), len(want.Results))
	}
	for i := range want.Results {
		w, g := want.Results[i], got.Results[i]
		if w.Property != g.Property || w.Status != g.Status || len(w.Trace) != len(g.Trace) {
			t.Errorf("%s: got %v, want %v", what, g, w)
			continue
		}
		if model.FormatTrace(w.Trace) != model.FormatTrace(g.Trace) {
			t.Errorf("%s: %s: traces differ\nwant:\n%s\ngot:\n%s", what, w.Property, model.FormatTrace(w.Trace), model.FormatTrace(g.Trace))
		}
	}
}

// The engine agrees with the first, naive engine (a map of full states, one
// goroutine) on every verdict, every trace and every count, with and without
// symmetry, for any number of workers.
func TestMatchesNaiveOracle(t *testing.T) {
	names := oracleDesigns
	if long {
		names = nil
		for _, e := range catalogue.Entries {
			names = append(names, e.Name)
		}
	}
	for _, name := range names {
		d := design(t, name)
		for _, sym := range []bool{false, true} {
			want, err := naiveCheck(Config{Design: d, Bounds: Bounds{Symmetry: sym}})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []int{1, 3} {
				got := check(t, Config{Design: d, Bounds: Bounds{Symmetry: sym, Workers: w}})
				sameReport(t, fmt.Sprintf("%s symmetry=%v workers=%d", name, sym, w), want, got)
			}
		}
	}
}

// Every trace the engine returns replays through model.Replay and shows its
// property first at its last step (so no shorter prefix shows it).
func TestTracesReplayAndShowTheirProperty(t *testing.T) {
	for _, name := range oracleDesigns {
		d := design(t, name)
		for _, sym := range []bool{false, true} {
			rep := check(t, Config{Design: d, Bounds: Bounds{Symmetry: sym, Workers: 2}})
			for _, r := range rep.Results {
				if r.Trace == nil {
					continue
				}
				run, err := model.Replay(&d, r.Trace)
				if err != nil {
					t.Fatalf("%s %s: trace does not replay: %v\n%s", name, r.Property, err, model.FormatTrace(r.Trace))
				}
				seq, ok := run.Violated(r.Property)
				if !ok || seq != len(r.Trace) {
					t.Errorf("%s symmetry=%v: %s: replay shows it at step %d (%v), want the last step %d", name, sym, r.Property, seq, ok, len(r.Trace))
				}
			}
		}
	}
}

// Symmetry reduction changes the number of states, never a verdict or the
// length of a shortest trace.
func TestSymmetryKeepsVerdictsAndLengths(t *testing.T) {
	names := append([]string{
		"redis/cad/rw/max-token,clock=free,horizon=16",
		"redis/cad/none/plain,clients=4,horizon=30",
	}, oracleDesigns...)
	for _, name := range names {
		d := design(t, name)
		off := check(t, Config{Design: d, Bounds: Bounds{Symmetry: false}})
		on := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true}})
		if d.Clients > 1 && on.Stats.Distinct >= off.Stats.Distinct {
			t.Errorf("%s: symmetry did not reduce: %d states, %d without", name, on.Stats.Distinct, off.Stats.Distinct)
		}
		for i := range off.Results {
			a, b := off.Results[i], on.Results[i]
			if a.Status != b.Status || len(a.Trace) != len(b.Trace) {
				t.Errorf("%s: without symmetry %v, with %v", name, a, b)
			}
		}
	}
}

// Node faults pinned to a node and to the key holder's phase (fault-node,
// node-at) shrink the search and, where the pinned place is where the
// fault matters, keep every verdict: the state count falls, no property
// changes its status.
func TestPlacedNodeFaultsKeepVerdicts(t *testing.T) {
	for _, pair := range [][2]string{
		{"redis/cad/rw/max-token,pauses=0,node-crashes=1,persist=1,fsync=1", "node-at=read"},
		{"redis/cad/rw/max-token,pauses=0,node-crashes=1,persist=1,fsync=1", "node-at=write"},
		{"redlock/cad/none/plain,pauses=0,node-crashes=1", "fault-node=1"},
		{"redlock/cad/none/plain,pauses=0,node-crashes=1", "node-at=read,fault-node=1"},
		{"replica/cad/none/plain,pauses=0", "node-at=read"},
	} {
		free := check(t, Config{Design: design(t, pair[0]), Bounds: Bounds{Symmetry: true}})
		pinned := check(t, Config{Design: design(t, pair[0]+","+pair[1]), Bounds: Bounds{Symmetry: true}})
		if pinned.Stats.Distinct >= free.Stats.Distinct {
			t.Errorf("%s with %s: %d states, not fewer than %d", pair[0], pair[1], pinned.Stats.Distinct, free.Stats.Distinct)
		}
		for i := range free.Results {
			a, b := free.Results[i], pinned.Results[i]
			if p, _ := model.PropertyByName(a.Property); p.Expect == model.Always && a.Status != b.Status {
				t.Errorf("%s with %s: %s %v, unpinned %v", pair[0], pair[1], a.Property, b.Status, a.Status)
			}
		}
	}
}

// Any number of workers gives the same report as one: the same verdicts,
// traces, distinct states, transitions and depth.
func TestWorkersGiveIdenticalReports(t *testing.T) {
	for _, name := range []string{
		"redis/cad/rw/max-token,clock=free,horizon=11",
		"redis/del/none/plain,clock=free,horizon=11,crashes=1",
		"demo2",
	} {
		d := design(t, name)
		for _, sym := range []bool{true, false} {
			one := check(t, Config{Design: d, Bounds: Bounds{Symmetry: sym, Workers: 1}})
			for _, w := range []int{2, 4, 7} {
				got := check(t, Config{Design: d, Bounds: Bounds{Symmetry: sym, Workers: w}})
				sameReport(t, fmt.Sprintf("%s symmetry=%v workers=%d", name, sym, w), one, got)
			}
		}
	}
}

// Pinned state-space sizes of the single-Redis designs: a change to the
// model's state space shows here. (Designs of the other lock services are
// still growing; their sizes are checked against the oracle instead.)
// Update the numbers only for an intended model change, and say which.
func TestPinnedStateCounts(t *testing.T) {
	type pin struct {
		name              string
		sym               bool
		distinct, transit int64
		depth             int
	}
	pins := []pin{
		{"demo1", false, 259, 342, 29},
		{"demo1", true, 63, 81, 29},
		{"demo2", false, 24603, 34677, 52},
		{"demo2", true, 5324, 7568, 52},
		{"demo6", false, 24626, 34734, 51},
		{"demo6", true, 5328, 7581, 51},
		{"demo4", true, 262, 330, 50},
		{"redis/cad/rw/max-token,clock=free,horizon=12", true, 52137, 187975, 24},
		{"redis/cad/rw/max-token,clock=free,horizon=12", false, 275187, 946928, 24},
		// the SPIN configuration (README, Performance): about 16 s of CPU
		// and 320 MB for the two, so they run in every go test (they were
		// behind LOCKCHECK_LONG); -short leaves them out
		{"redis/cad/rw/max-token,clock=free,horizon=41", true, 1923012, 6618634, 53},
		{"redis/cad/rw/max-token,clock=free,horizon=41", false, 11233136, 38472985, 53},
	}
	if testing.Short() {
		pins = pins[:len(pins)-2]
	}
	for _, p := range pins {
		d := design(t, p.name)
		r := check(t, Config{Design: d, Properties: []model.Property{never}, Bounds: Bounds{Symmetry: p.sym}})
		got := pin{p.name, p.sym, r.Stats.Distinct, r.Stats.Transitions, r.Stats.Depth}
		if got != p || !r.Stats.Complete {
			t.Errorf("got  %+v (complete %v)\nwant %+v", got, r.Stats.Complete, p)
		}
	}
}

// counterAtLeast is a planted condition: the counter reaches n.
func counterAtLeast(n uint8) model.Property {
	return model.Property{Name: fmt.Sprintf("counter-%d", n), Expect: model.Always, Doc: "test: the counter reaches n",
		Bad: func(d *model.Design, s *model.State, ev *model.Event) bool { return s.Store.Counter >= n }}
}

// Planted conditions are caught with the shortest trace, worked out by
// hand: one client with W=2 needs acquire, read, two ticks of work and the
// write; two clients with W=0 need the first job done and released before
// the second can take the lock.
func TestPlantedConditionShortestTrace(t *testing.T) {
	for _, c := range []struct {
		design string
		prop   model.Property
		want   string
	}{
		{"redis/cad/none/plain,clients=1,pauses=0", counterAtLeast(1),
			"A acquire\nA read\ntick 2\nA write\n"},
		{"redis/cad/none/plain,clients=1,pauses=0,work=0", counterAtLeast(1),
			"A acquire\nA read\nA write\n"},
		{"redis/cad/none/plain,clients=2,pauses=0,work=0", counterAtLeast(2),
			"A acquire\nA read\nA write\nA release\nB acquire\nB read\nB write\n"},
		{"redis/cad/none/plain,clients=3,work=0", counterAtLeast(3),
			"A acquire\nA read\nA write\nA release\nB acquire\nB read\nB write\nB release\nC acquire\nC read\nC write\n"},
	} {
		d := design(t, c.design)
		for _, sym := range []bool{false, true} {
			for _, w := range []int{1, 2} {
				r := check(t, Config{Design: d, Properties: []model.Property{c.prop, never}, Bounds: Bounds{Symmetry: sym, Workers: w}})
				res := r.Results[0]
				if res.Status != Violated || model.FormatTrace(res.Trace) != c.want {
					t.Errorf("%s %s symmetry=%v: %v, trace\n%swant\n%s", c.design, c.prop.Name, sym, res, model.FormatTrace(res.Trace), c.want)
					continue
				}
				run, err := model.Replay(&d, res.Trace)
				if err != nil {
					t.Fatal(err)
				}
				if !c.prop.Bad(&d, &run.Final, &run.Steps[len(run.Steps)-1].Event) {
					t.Errorf("%s: the trace's last state does not show %s", c.design, c.prop.Name)
				}
			}
		}
	}
}

// The seed's Demo 2 loses an update; Demo 6 (token on reads and writes)
// does not, although its lock is still unsafe. A planted storage bug that
// forgets the tokens of reads brings the lost update back.
func TestDemosNoLostUpdate(t *testing.T) {
	for _, c := range []struct {
		design string
		want   Status
		steps  int
	}{
		{"demo2", Violated, 41},
		{"demo6", Holds, 0},
		{"demo6,bug=read-no-record", Violated, 41},
		{"demo6,bug=no-token-check", Violated, 41},
	} {
		d := design(t, c.design)
		r := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true}})
		res, _ := r.Result("no-lost-update")
		if res.Status != c.want || len(res.Trace) != c.steps {
			t.Errorf("%s: no-lost-update %v, want %s (%d steps)", c.design, res, c.want, c.steps)
		}
		if ex, _ := r.Result("exclusive"); ex.Status != Violated {
			t.Errorf("%s: exclusive %v, want violated", c.design, ex)
		}
	}
}

// A bound that stops the search leaves every undecided property
// incomplete, never holds; what was found before it stands.
func TestBoundsGiveIncomplete(t *testing.T) {
	d := design(t, "demo6")
	full := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true}})
	for _, c := range []struct {
		bounds  Bounds
		stopped string
	}{
		{Bounds{Symmetry: true, MaxStates: 1000}, "max-states"},
		{Bounds{Symmetry: true, MaxSteps: 33}, "max-steps"},
		{Bounds{Symmetry: true, MaxMemory: full.Stats.MemoryBytes / 2}, "max-memory"},
	} {
		for _, w := range []int{1, 3} {
			c.bounds.Workers = w
			r := check(t, Config{Design: d, Bounds: c.bounds})
			if r.Stats.Complete || r.Stats.StoppedBy != c.stopped {
				t.Errorf("%+v: complete %v, stopped by %q, want %q", c.bounds, r.Stats.Complete, r.Stats.StoppedBy, c.stopped)
			}
			for i, res := range r.Results {
				want := full.Results[i]
				switch {
				case res.Status == Holds || res.Status == NotSeen:
					t.Errorf("%+v: %v after an incomplete search", c.bounds, res)
				case res.Status == Incomplete:
				case res.Status != want.Status || len(res.Trace) != len(want.Trace):
					t.Errorf("%+v: %v, the full search says %v", c.bounds, res, want)
				}
			}
			switch c.stopped {
			case "max-states":
				if r.Stats.Distinct != 1000 {
					t.Errorf("max-states 1000: %d states", r.Stats.Distinct)
				}
			case "max-steps":
				if r.Stats.Depth != 33 {
					t.Errorf("max-steps 33: depth %d", r.Stats.Depth)
				}
				if res, _ := r.Result("exclusive"); res.Status != Violated {
					t.Errorf("max-steps 33: exclusive (31 steps) %v", res)
				}
			}
		}
	}
	// a bound that the search does not reach changes nothing
	r := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true, MaxStates: 1 << 20, MaxSteps: 1000, MaxMemory: 1 << 30}})
	sameReport(t, "loose bounds", full, r)
}

// Progress reports come while the search runs, and their counts only grow.
// The search waits at the end of its first level until a report has come
// (up to a minute), so that a search that ends before its first report is
// a failure, never a skip.
func TestProgress(t *testing.T) {
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = time.Millisecond
	var got []Progress
	var mu sync.Mutex
	first := make(chan struct{})
	var once sync.Once
	defer func() { levelDone = nil }()
	levelDone = func(int) {
		select {
		case <-first:
		case <-time.After(time.Minute):
		}
	}
	d := design(t, "redis/cad/rw/max-token,clock=free,horizon=12")
	r := check(t, Config{Design: d, Bounds: Bounds{Workers: 2}, Progress: func(p Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
		once.Do(func() { close(first) })
	}})
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("no progress report while the search ran")
	}
	for i, p := range got {
		if p.States > r.Stats.Distinct || p.Transitions > r.Stats.Transitions || p.Depth > r.Stats.Depth {
			t.Errorf("report %d: %+v beyond the end %+v", i, p, r.Stats)
		}
		if i > 0 && (p.States < got[i-1].States || p.Transitions < got[i-1].Transitions) {
			t.Errorf("report %d: %+v after %+v", i, p, got[i-1])
		}
	}
}

// An incomplete search states what it proved: no property left undecided
// has a counterexample of Proved steps or fewer. On demo2 (exclusive is
// broken in 31 steps, no-lost-update in 41) each step bound is checked
// against the unbounded search.
func TestProvedDepth(t *testing.T) {
	d := design(t, "demo2")
	full := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true}})
	ex, _ := full.Result("exclusive")
	if ex.Status != Violated || len(ex.Trace) != 31 {
		t.Fatalf("exclusive: %v", ex)
	}
	for _, steps := range []int{1, 20, 30, 31, 40} {
		r := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: steps}})
		if r.Stats.Proved != steps || r.Stats.StoppedBy != "max-steps" {
			t.Errorf("-steps %d: proved %d, stopped by %q", steps, r.Stats.Proved, r.Stats.StoppedBy)
		}
		for _, res := range r.Results {
			want, _ := full.Result(res.Property)
			switch {
			case res.Status == Incomplete && want.Trace != nil && len(want.Trace) <= r.Stats.Proved:
				t.Errorf("-steps %d: %s incomplete, but proved to %d and broken at %d", steps, res.Property, r.Stats.Proved, len(want.Trace))
			case res.Status != Incomplete && !reflect.DeepEqual(res, want):
				t.Errorf("-steps %d: %v, unbounded %v", steps, res, want)
			}
		}
	}
	// a states bound stops inside a level whose steps were all checked
	r := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true, MaxStates: 1000}})
	if r.Stats.StoppedBy != "max-states" || r.Stats.Proved != r.Stats.Depth {
		t.Errorf("-max-states: %+v", r.Stats)
	}
}

// First stops after the level of the first violation; Found reports each
// verdict as it comes, the same as the report's.
func TestFirstAndFound(t *testing.T) {
	d := design(t, "demo2")
	var found []Result
	r := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true}, First: true, Found: func(res Result, states int64) {
		if states <= 0 {
			t.Errorf("found %v at %d states", res, states)
		}
		found = append(found, res)
	}})
	if r.Stats.StoppedBy != "first" || r.Stats.Proved != 31 || r.Stats.Complete {
		t.Errorf("stats %+v", r.Stats)
	}
	for _, res := range r.Results {
		switch {
		case res.Property == "exclusive":
			if res.Status != Violated {
				t.Errorf("%v", res)
			}
		case res.Expect == model.Sometimes: // witnesses may come first
			if res.Status != Seen && res.Status != Incomplete {
				t.Errorf("%v", res)
			}
		case res.Status != Incomplete:
			t.Errorf("%v, want incomplete", res)
		}
	}
	var decided []Result
	for _, res := range r.Results {
		if res.Trace != nil {
			decided = append(decided, res)
		}
	}
	if len(found) != len(decided) {
		t.Fatalf("found %v, report %v", found, decided)
	}
	for _, f := range found {
		res, _ := r.Result(f.Property)
		if !reflect.DeepEqual(f, res) {
			t.Errorf("found %v, report %v", f, res)
		}
	}
}

// A done context stops the search: what was decided before stands, the
// rest is incomplete, and the level being expanded is dropped.
func TestInterrupted(t *testing.T) {
	d := design(t, "demo2")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true}, Context: ctx, Found: func(res Result, _ int64) {
		if res.Status == Violated {
			cancel()
		}
	}})
	if r.Stats.StoppedBy != "interrupted" || r.Stats.Proved != 31 || r.Stats.Depth != 31 {
		t.Errorf("stats %+v", r.Stats)
	}
	ex, _ := r.Result("exclusive")
	nl, _ := r.Result("no-lost-update")
	if ex.Status != Violated || len(ex.Trace) != 31 || nl.Status != Incomplete {
		t.Errorf("%v, %v", ex, nl)
	}

	// mid-level, on a bigger design: the call returns soon after the cancel
	big := design(t, "redlock/cad/none/plain,clients=4")
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	r = check(t, Config{Design: big, Bounds: Bounds{Symmetry: true, Workers: 2}, Context: ctx})
	if r.Stats.StoppedBy != "interrupted" || r.Stats.Complete {
		t.Errorf("stats %+v", r.Stats)
	}
	for _, res := range r.Results {
		if res.Status == Holds || res.Status == NotSeen {
			t.Errorf("%v after an interrupt", res)
		}
	}
}

// Chunks of a few states give the same report as one chunk a level: the
// same states, ids, parents, verdicts, traces and counts, also when a
// bound (states, steps) or -first stops the search, and with the frontier
// on disk.
func TestSmallChunksChangeNothing(t *testing.T) {
	for _, name := range []string{"demo1", "demo6", "demo6,bug=no-token-check", "redis/del/none/plain,clients=2,crashes=1,slow=1"} {
		d := design(t, name)
		for _, b := range []Bounds{{Symmetry: true}, {}, {Symmetry: true, MaxStates: 1500}, {MaxSteps: 9}, {Symmetry: true, FrontierDir: t.TempDir()}} {
			for _, first := range []bool{false, true} {
				wb := b
				wb.FrontierDir = ""
				want := check(t, Config{Design: d, Bounds: wb, First: first})
				func() {
					defer func(c, b int) { chunkStates, blockBits = c, b }(chunkStates, blockBits)
					for _, bits := range []int{3, 6} {
						chunkStates, blockBits = 1<<bits, bits-1
						for _, w := range []int{1, 3} {
							b.Workers = w
							if w == 1 && bits == 6 {
								continue
							}
							got := check(t, Config{Design: d, Bounds: b, First: first})
							what := fmt.Sprintf("%s %+v first=%v chunk=%d", name, b, first, 1<<bits)
							sameReport(t, what, want, got)
							if want.Coverage != got.Coverage {
								t.Errorf("%s: coverage %+v, want %+v", what, got.Coverage, want.Coverage)
							}
						}
					}
				}()
			}
		}
	}
}

// When a state sets a field the frontier's packing leaves out (a rule of
// model.NewPacking that missed a feature), Check searches again with the
// wide packing: the same report as a search that kept every field.
func TestCheckFallsBackToTheWidePacking(t *testing.T) {
	d := design(t, "redis/cad/rw/max-token,renew=3,clients=2")
	plain := design(t, "redis/cad/rw/max-token,clients=2") // no renew: its packing leaves out Timer
	want, err := search(Config{Design: d}, model.PropertiesFor(&d), 2, model.WidePacking(&d), model.Init(&d))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := search(Config{Design: d}, model.PropertiesFor(&d), 2, model.NewPacking(&plain), model.Init(&d)); err != errBadPack {
		t.Fatalf("a packing without Timer on a renew design: err %v, want errBadPack", err)
	}
	defer func(f func(*model.Design) model.Packing) { newPacking = f }(newPacking)
	newPacking = func(*model.Design) model.Packing { return model.NewPacking(&plain) }
	got := check(t, Config{Design: d, Bounds: Bounds{Workers: 2}})
	sameReport(t, "fallback", want, got)
	if got.Stats.Distinct != want.Stats.Distinct {
		t.Fatalf("fallback: %d states, want %d", got.Stats.Distinct, want.Stats.Distinct)
	}
}
