package linearizability

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"lockcheck/explore"
	"lockcheck/model"
)

// The model's no-lost-update asks, once every job has ended, whether the
// counter equals the number of writes the storage accepted. Porcupine asks
// whether the jobs, as their clients saw them, fit an atomic counter. On
// the model's runs the two agree, at every point of a run, not only at the
// end, in this form:
//
//	Illegal  ⇔  counter ≠ accepted writes (now)
//
// Why: the counter is always the last accepted write, read+1 where read
// was the counter then, so counter ≤ accepted, and once an update is lost
// the counter never catches up (the last writer would have had to read
// accepted-1, which needs every other write before its read, which needs
// no update lost before it, and so on). A history in which no update is
// lost fits an atomic counter with each job at its read, and one with a
// lost update has two successful jobs that read the same value (or a final
// counter below the successful increments), which no order fits.
//
// The modelling differences, and why the check below uses "now":
//   - no-lost-update waits for every job to end; linearizability judges
//     the history so far. A trace that stops after A's lost update while C
//     still waits (Demo 4) is Illegal but not yet a no-lost-update
//     violation. It becomes one in every continuation in which the jobs
//     end, because the loss is permanent.
//   - Outcomes the clients cannot know: the model counts a write that
//     landed after its client crashed (when the model gets network delay)
//     among the accepted writes; porcupine only knows the outcome is
//     unknown, and may explain the run by the write not landing (or
//     landing on an equal value). Then no-lost-update can fail while the
//     history is linearizable. The model produces no unknown outcomes yet;
//     the hand-built histories in counter_test.go cover them.
func lostNow(r *model.Run) bool { return r.Final.Store.Counter != r.Final.Store.Accepted }

// crossDesigns is every release × fence × storage × acquire, with a fault
// budget (a pause, a slow job, a crash) and short numbers, so that runs
// are short and faults matter.
func crossDesigns(t testing.TB, params string) []model.Design {
	var out []model.Design
	for _, rel := range []string{"del", "get-del", "cad"} {
		for _, fence := range []string{"none", "write", "rw"} {
			for _, st := range []string{"plain", "max-token", "max-write", "cond-update", "cas"} {
				for _, acq := range []string{"script", "incr-before", "incr-after", "set-expire"} {
					name := fmt.Sprintf("redis/%s/%s/%s,acquire=%s,%s", rel, fence, st, acq, params)
					d, err := model.ParseDesign(name)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// randomWalk draws a trace: mostly client steps and ticks, sometimes a
// fault, until nothing is enabled or maxLen steps.
func randomWalk(d *model.Design, rng *rand.Rand, maxLen int) []model.Action {
	s := model.Init(d)
	var trace, buf, calm []model.Action
	for len(trace) < maxLen {
		buf = model.Actions(d, &s, buf)
		if len(buf) == 0 {
			break
		}
		calm = calm[:0]
		for _, a := range buf {
			if !a.Kind.IsFault() {
				calm = append(calm, a)
			}
		}
		pick := buf
		if len(calm) > 0 && rng.IntN(5) > 0 {
			pick = calm
		}
		a := pick[rng.IntN(len(pick))]
		s, _ = model.Step(d, s, a)
		trace = append(trace, a)
	}
	return trace
}

// long reports whether the long cross-checks were asked for
// (LOCKCHECK_LONG=1): ten times the walks.
func long() bool { return os.Getenv("LOCKCHECK_LONG") != "" }

type crossStats struct {
	runs, illegal, lostNLU, disagree, unknownStorage int
}

// crossCheck checks one run both ways and reports disagreements.
func crossCheck(t *testing.T, d *model.Design, trace []model.Action, st *crossStats) {
	t.Helper()
	run, err := model.Replay(d, trace)
	if err != nil {
		t.Fatalf("%s: %v", d.Name(), err)
	}
	res, err := CheckRun(run, Options{})
	if err != nil {
		t.Fatalf("%s: %v", d.Name(), err)
	}
	sres, err := CheckStorage(run, Options{})
	if err != nil {
		t.Fatalf("%s: %v", d.Name(), err)
	}
	st.runs++
	show := func(msg string) {
		t.Errorf("%s\ndesign %s\n%s%s\n%s\n%s", msg, d.Name(), model.FormatTrace(trace), model.Render(run), res.Summary, sres.Summary)
	}
	if (res.Verdict == Illegal) != lostNow(run) {
		show(fmt.Sprintf("porcupine says %s, but counter %d and %d accepted writes", res.Verdict, run.Final.Store.Counter, run.Final.Store.Accepted))
	}
	if _, v := run.Violated("no-lost-update"); v {
		st.lostNLU++
		if res.Verdict != Illegal {
			show("no-lost-update violated but porcupine says " + string(res.Verdict))
		}
	}
	if sres.Verdict != Ok {
		show("the model's storage breaks its own spec")
	}
	if res.Verdict == Illegal {
		st.illegal++
		// A lost update needs a storage operation the lock did not allow.
		found := false
		for _, dg := range sres.Disagreements {
			found = found || (dg.Accepted && dg.Holder != dg.Client)
		}
		if !found {
			show("not linearizable, yet the storage accepted nothing from a client without the key")
		}
	}
	if len(sres.Disagreements) > 0 {
		st.disagree++
	}
}

// Every counterexample and witness that breadth-first search prints, on
// small designs across the axes, gets the same verdict from porcupine as
// from the model; every no-lost-update counterexample is Illegal.
func TestCrossCheckExplore(t *testing.T) {
	params := []string{"ttl=3,work=1,max-pause=4,slow=1,slow-work=4,horizon=16,clients=2,crashes=1"}
	if long() {
		params = append(params, "ttl=4,work=1,max-pause=5,slow=1,slow-work=5,horizon=16,clients=3,crashes=1")
	}
	var st crossStats
	nlu, designs := 0, 0
	for _, p := range params {
		for _, d := range crossDesigns(t, p) {
			designs++
			rep, err := explore.Check(explore.Config{Design: d, Bounds: explore.Bounds{Symmetry: true, Workers: 1}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				if r.Trace == nil {
					continue
				}
				crossCheck(t, &d, r.Trace, &st)
				if r.Property == "no-lost-update" && r.Status == explore.Violated {
					nlu++
				}
			}
		}
	}
	t.Logf("%d designs, %d traces, %d no-lost-update counterexamples, %d illegal", designs, st.runs, nlu, st.illegal)
	if nlu == 0 || st.illegal == 0 {
		t.Fatal("no lost update found: the cross-check is vacuous")
	}
}

// Random walks over every design of crossDesigns, a fixed seed: porcupine
// and the model agree on every run (and on prefixes: a quarter of the
// walks stop early, and every prefix of every twentieth walk is checked).
func TestCrossCheckRandomWalks(t *testing.T) {
	walks := 25
	if long() {
		walks = 500
	}
	rng := rand.New(rand.NewPCG(5, 1))
	var st crossStats
	for _, params := range []string{
		"clients=3,pauses=1,slow=1,crashes=1",
		"clients=3,ttl=4,work=2,max-pause=6,slow=1,slow-work=6,crashes=1,clock=free,horizon=20",
		// the faults from the field: lost replies and resends, stray
		// first copies of writes and releases, a partition from the
		// storage (no crashes: a crashed client's stray copy is an unknown
		// outcome, the modelling difference described above)
		"clients=3,ttl=4,work=1,pauses=0,delays=1,max-delay=7,losses=1,timeout=2,partitions=1,partition=storage,partition-ticks=6,horizon=24",
	} {
		for _, d := range crossDesigns(t, params) {
			for w := 0; w < walks; w++ {
				maxLen := 400
				if w%4 == 3 {
					maxLen = 1 + rng.IntN(60)
				}
				trace := randomWalk(&d, rng, maxLen)
				crossCheck(t, &d, trace, &st)
				if w%20 == 0 { // and every prefix
					for n := 0; n < len(trace); n++ {
						crossCheck(t, &d, trace[:n], &st)
					}
				}
				if t.Failed() {
					return
				}
			}
		}
	}
	t.Logf("%d runs: %d illegal, %d no-lost-update, %d with lock/storage disagreements", st.runs, st.illegal, st.lostNLU, st.disagree)
	if st.illegal == 0 || st.illegal == st.runs || st.lostNLU == 0 {
		t.Fatal("the walks found no lost update, or nothing else: the cross-check is vacuous")
	}
}

// Testing the tester: a data-safe design stays linearizable on every walk;
// the same design with a planted storage bug loses updates, and both
// porcupine models catch it.
func TestPlantedBugs(t *testing.T) {
	safe, err := model.ParseDesign("redis/cad/rw/max-token,pauses=1,slow=1,crashes=1")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for w := 0; w < 300; w++ {
		run, err := model.Replay(&safe, randomWalk(&safe, rng, 400))
		if err != nil {
			t.Fatal(err)
		}
		if res, _ := CheckRun(run, Options{}); res.Verdict != Ok {
			t.Fatalf("safe design: %s\n%s", res.Summary, model.Render(run))
		}
	}
	for _, bug := range []string{"no-token-check", "read-no-record"} {
		d := safe
		bd, err := model.ParseDesign(safe.Name() + ",bug=" + bug)
		if err != nil {
			t.Fatal(err)
		}
		d = bd
		rep, err := explore.Check(explore.Config{Design: d, Properties: onlyProperty(t, "no-lost-update"), Bounds: explore.Bounds{Symmetry: true, Workers: 1}})
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Results[0]
		if r.Status != explore.Violated {
			t.Fatalf("bug %s: no-lost-update %s", bug, r.Status)
		}
		run, err := model.Replay(&d, r.Trace)
		if err != nil {
			t.Fatal(err)
		}
		res, err := CheckRun(run, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sres, err := CheckStorage(run, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != Illegal || sres.Verdict != Illegal || !strings.Contains(sres.Summary, "accepted, but the storage had seen token") {
			t.Errorf("bug %s: %s; %s\n%s", bug, res.Summary, sres.Summary, model.Render(run))
		}
		t.Logf("bug %s: %s; %s", bug, res.Summary, sres.Summary)
	}
}

func onlyProperty(t testing.TB, name string) []model.Property {
	p, ok := model.PropertyByName(name)
	if !ok {
		t.Fatalf("no property %s", name)
	}
	return []model.Property{p}
}
