package properties

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"lockcheck/counterexamples"
	"lockcheck/explore"
	"lockcheck/model"
)

var (
	strategyFlag  = flag.String("properties.strategy", "swarm", "how a step is drawn: swarm, stable or uniform")
	timelinesFlag = flag.Bool("properties.timelines", false, "log the shrunk timeline of every caught violation, not only of failures")
	onlyFlag      = flag.String("properties.only", "", "TestDesigns: run only the holds subtests (holds) or only the hunts (caught); design names hold slashes, so -run cannot pick these by level")
	designFlag    = flag.String("properties.design", "", "TestDesigns: run the suite on this design (a name or preset as explore check takes it) instead of the catalogue")
	roundsFlag    = flag.Int("properties.rounds", 5, "after a catch, up to this many more rounds hunting a shorter violation (0: none; -short: 0 unless set)")
)

func TestMain(m *testing.M) {
	flag.Parse()
	// rapid saves a failing case as an opaque fail file and replays it on
	// every later run. Here a caught violation of an unsafe design is the
	// expected outcome, and a real failure is written as a readable
	// counterexample file (writeFailure); so unless asked for, no fail
	// files.
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.nofailfile" })
	if _, env := os.LookupEnv("RAPID_NOFAILFILE"); !set && !env {
		if err := flag.Set("rapid.nofailfile", "true"); err != nil {
			fmt.Fprintln(os.Stderr, "properties:", err)
			os.Exit(2)
		}
	}
	// a design of the user's: a bad one is one line, before any test
	if *designFlag != "" {
		if _, err := flagDesign(*designFlag); err != nil {
			fmt.Fprintln(os.Stderr, "properties:", err)
			os.Exit(2)
		}
	}
	// -short: the first shrink only
	rounds := false
	flag.Visit(func(f *flag.Flag) { rounds = rounds || f.Name == "properties.rounds" })
	if testing.Short() && !rounds {
		*roundsFlag = 0
	}
	os.Exit(m.Run())
}

func chosenStrategy(t testing.TB) strategy {
	s, err := strategyByName(*strategyFlag)
	if err != nil {
		t.Fatalf("-properties.strategy: %v", err)
	}
	return s
}

// TestDesigns is the suite: for every design in the catalogue, exhaustive
// search says which properties it breaks; rapid must then never break the
// others (the "holds" subtest, -rapid.checks schedules) and must catch
// each broken one, naming it, with a shrunk schedule as short as the
// shortest that breadth-first search finds.
func TestDesigns(t *testing.T) {
	names, err := suiteDesigns()
	if err != nil {
		t.Fatal(err)
	}
	strat := chosenStrategy(t)
	if *onlyFlag != "" && *onlyFlag != "holds" && *onlyFlag != "caught" {
		t.Fatalf("-properties.only=%q: want holds or caught", *onlyFlag)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			d, err := model.ParseDesign(name)
			if err != nil {
				t.Fatal(err)
			}
			exp, err := expectationFor(d)
			if err != nil {
				t.Fatal(err)
			}
			if *onlyFlag != "caught" {
				t.Run("holds", func(t *testing.T) { checkHolds(t, d, exp, strat) })
			}
			if *onlyFlag != "holds" {
				for _, v := range exp.violated() {
					t.Run(v.prop.Name, func(t *testing.T) { checkCaught(t, d, exp, v, strat) })
				}
			}
		})
	}
}

// checkHolds runs rapid on d with no target: no property that exhaustive
// search (exp) says cannot show may show.
func checkHolds(t *testing.T, d model.Design, exp *expectation, strat strategy) {
	h := newHunt(d, exp, -1, strat)
	rec := newRecorder(t.Name())
	rapid.Check(rec, h.prop)
	if rec.Failed() {
		t.Errorf("%s\n\n%s", rec.report(), h.explainBad())
		return
	}
	t.Logf("%d schedules, %d finished; %s; %s", h.runs, h.finished, h.coverage(), h.lin)
}

// catchBudget: a hunt for a violation that exhaustive search found may
// take up to catchBudget times -rapid.checks schedules, and never fewer
// than catchBudget times 100, -short or not (it stops at the first catch,
// so the budget costs nothing when the catch is quick). A violation that
// needs a fault in a one-step window shows in about one schedule in a
// hundred; the rarest of the catalogue's, in one in 200 to 300
// (TestMeasureRates: a pause of exactly 11 or 12 of 15 ticks before an
// etcd-mutex Lock's wait; a pause and a storage failover in one tick),
// which 1000 schedules miss 3 to 5% of the time and 2000 a few in a
// thousand. A catch later than -rapid.checks is logged as a SLOW CATCH.
const catchBudget = 20

// rapidChecks is -rapid.checks.
func rapidChecks() int { return flag.Lookup("rapid.checks").Value.(flag.Getter).Get().(int) }

// checkWith runs rapid.Check of h with rec as its TB and the given number
// of checks (as if -rapid.checks were that).
func checkWith(t *testing.T, rec *recorder, h *hunt, checks int) {
	withFlag(t, "rapid.checks", strconv.Itoa(checks), func() { rapid.Check(rec, h.prop) })
}

// catchChecks is the number of schedules a hunt may take.
func catchChecks(checks int) int {
	n := catchBudget * max(checks, 100)
	if testing.Short() {
		n *= 5 // rapid takes a fifth of -rapid.checks under -short
	}
	return n
}

// roundBudget: each extra round (-properties.rounds) may take up to
// roundBudget times -rapid.checks schedules, and at most maxRoundChecks.
const (
	roundBudget    = 10
	maxRoundChecks = 1000
)

// checkCaught runs rapid on d hunting property v, which exhaustive search
// breaks: rapid must catch it, and its shrunk schedule, made as short as
// it can be among the faults it used (shortest), must replay to the
// violation and be as short as search's shortest: longer is a shrink gap,
// shorter a search bug. (With -properties.rounds=0, as under -short, a
// gap is logged, not an error: some catches use the wrong faults, and only
// the rounds find others.)
func checkCaught(t *testing.T, d model.Design, exp *expectation, v verdict, strat strategy) {
	r, ok := catchAndShrink(t, d, exp, v, strat)
	if !ok {
		return
	}
	if r.first.caught == nil {
		t.Errorf("rapid did not catch %s in %d schedules, but exhaustive search finds a %d-step counterexample:\n%s",
			v.prop.Name, r.first.runs, len(v.trace), model.FormatTrace(v.trace))
		return
	}
	if n := r.first.rec.checksToCatch(); n > r.checks {
		t.Logf("SLOW CATCH %s: caught after %d checks, more than -rapid.checks=%d", v.prop.Name, n, r.checks)
	}
	n, bfs := len(r.final), len(v.trace)
	t.Logf("caught %s after %d checks (%v to catch, %v with shrinking); shrunk to %d steps; %d more rounds (%v) for other faults; "+
		"breadth-first among the faults of a %d-step catch (%s; %d states, %v): %d steps; breadth-first shortest %d",
		v.prop.Name, r.first.rec.checksToCatch(), r.catch.Round(time.Microsecond), r.shrink.Round(time.Millisecond),
		len(r.first.caught), r.rounds, r.more.Round(time.Millisecond), len(r.faultsOf),
		faultWords(r.faultsOf), r.passStates, r.pass.Round(time.Millisecond), n, bfs)
	run, _ := model.Replay(&d, r.final)
	switch {
	case n < bfs:
		t.Errorf("the shortened schedule (%d steps) is shorter than breadth-first search's shortest (%d): the search is not breadth-first or not complete\n%s",
			n, bfs, model.Render(run))
	case n > bfs && *roundsFlag > 0:
		t.Errorf("SHRINK GAP %s: %d steps, %d more than the shortest, after %d rounds and breadth-first search among the faults of rapid's shortest (%s)\nshortened schedule:\n%s\nbreadth-first search's shortest:\n%s",
			v.prop.Name, n, n-bfs, r.rounds, faultWords(r.faultsOf), model.FormatTrace(r.final), model.FormatTrace(v.trace))
	case n > bfs:
		t.Logf("SHRINK GAP %s: %d steps, %d more than the shortest (-properties.rounds=0)", v.prop.Name, n, n-bfs)
	}
	if *timelinesFlag {
		t.Logf("\n%s", model.Render(run))
	}
}

// catchResult is a hunt for one property: the first catch, the catches
// of more rounds, and the shortest counterexample among the faults of a
// catch.
type catchResult struct {
	first               *hunt
	rounds              int // rounds that caught another set of faults
	checks              int // -rapid.checks
	catch, shrink, more time.Duration
	// final is the shortest counterexample breadth-first search finds
	// among the kinds of fault of one of the catches (shorten), faultsOf
	// that catch; tried are the catches' masks of fault kinds; passStates
	// and pass are what the searches took
	final, faultsOf []model.Action
	tried           []uint64
	passStates      int64
	pass            time.Duration
}

// catchAndShrink hunts property v in design d: one rapid.Check with up to
// catchBudget times -rapid.checks schedules; its shrunk schedule is then
// shortened (shorten), which finds the shortest counterexample with the
// kinds of fault it used. While that is longer than search's shortest,
// up to -properties.rounds more rounds hunt for a violation that needs a
// kind of fault none of the catches so far used (a violation with only
// the kinds of an earlier catch does not count), until a round finds
// none; each catch is shortened too. rapid's shrinker deletes and lowers
// but never adds: a schedule where the holder pauses cannot shrink into a
// shorter one where it crashes. ok is false if the test failed.
func catchAndShrink(t *testing.T, d model.Design, exp *expectation, v verdict, strat strategy) (r catchResult, ok bool) {
	r.checks = rapidChecks()
	start := time.Now()
	h, ok := hunt1(t, d, exp, v, strat, nil, catchChecks(r.checks))
	r.first = h
	if !ok || h.caught == nil {
		return r, ok
	}
	r.catch, r.shrink = h.firstHit.Sub(start), time.Since(h.firstHit)
	if !r.shorten(t, d, v, h.caught) {
		return r, false
	}
	start, passed := time.Now(), r.pass
	for i := 1; i <= *roundsFlag && len(r.final) > len(v.trace); i++ {
		h, ok := hunt1(t, d, exp, v, strat, r.tried, min(roundBudget*r.checks, maxRoundChecks))
		if !ok {
			return r, false
		}
		if h.caught == nil {
			break
		}
		r.rounds = i
		if !r.shorten(t, d, v, h.caught) {
			return r, false
		}
	}
	r.more = time.Since(start) - (r.pass - passed)
	return r, true
}

// shorten is the final pass on a caught schedule: breadth-first search
// among the kinds of fault it used (explore.Shorten), which finds the
// shortest counterexample with those faults. The result must replay to
// the violation like any caught schedule; it becomes r.final if it is the
// shortest yet. It reports whether the test may go on.
func (r *catchResult) shorten(t *testing.T, d model.Design, v verdict, caught []model.Action) bool {
	start := time.Now()
	out, _, st, err := explore.Shorten(d, v.prop, caught, explore.FaultKindsOf(caught), bfsBounds)
	r.pass += time.Since(start)
	r.passStates += st.Distinct
	if err != nil {
		t.Errorf("breadth-first search among the faults of the shrunk schedule: %v\n%s", err, model.FormatTrace(caught))
		return false
	}
	if !checkSchedule(t, d, v.prop.Name, out) {
		return false
	}
	if r.final == nil || len(out) < len(r.final) {
		r.final, r.faultsOf = out, caught
	}
	r.tried = append(r.tried, faultMask(caught))
	return true
}

// faultWords lists the kinds of fault a schedule uses.
func faultWords(trace []model.Action) string {
	var words []string
	allow := explore.FaultKindsOf(trace)
	for _, ki := range kinds {
		if ki.cat == catFault && allow(model.Action{Kind: ki.kind}) && !slices.Contains(words, ki.kind.String()) {
			words = append(words, ki.kind.String())
		}
	}
	if len(words) == 0 {
		return "no fault"
	}
	return strings.Join(words, ", ")
}

// hunt1 is one rapid.Check of design d for property v, with the given
// number of checks, counting only violations that need a kind of fault
// none of tried has. A caught schedule must replay to the violation; ok is
// false if the test failed.
func hunt1(t *testing.T, d model.Design, exp *expectation, v verdict, strat strategy, tried []uint64, checks int) (h *hunt, ok bool) {
	h = newHunt(d, exp, v.index, strat)
	h.tried = tried
	h.rec = newRecorder(t.Name())
	checkWith(t, h.rec, h, checks)
	switch {
	case h.bad != nil:
		t.Errorf("%s\n\n%s", h.rec.report(), h.explainBad())
		return h, false
	case !h.rec.Failed():
		return h, true
	case h.caught == nil:
		t.Errorf("rapid failed for another reason while hunting %s:\n%s", v.prop.Name, h.rec.report())
		return h, false
	}
	if !strings.Contains(h.rec.report(), "caught "+v.prop.Name) {
		t.Errorf("rapid's report does not name %s:\n%s", v.prop.Name, h.rec.report())
		return h, false
	}
	return h, checkSchedule(t, d, v.prop.Name, h.caught)
}

// checkSchedule checks a caught schedule of design d: it replays to a
// violation of prop at its last step, and the linearizability checker
// agrees with no-lost-update on it. It reports whether the test may go
// on.
func checkSchedule(t *testing.T, d model.Design, prop string, trace []model.Action) bool {
	run, err := model.Replay(&d, trace)
	if err != nil {
		t.Errorf("the shrunk schedule does not replay: %v\n%s", err, model.FormatTrace(trace))
		return false
	}
	if at, shows := run.Violated(prop); !shows || at != len(trace) {
		t.Errorf("the shrunk schedule replays but does not end at a violation of %s (found %v):\n%s", prop, run.Found, model.Render(run))
		return false
	}
	if why, err := crossCheckRun(run); err != nil || why != "" {
		t.Errorf("the shrunk schedule: linearizability cross-check: %v%s\n%s", err, why, model.Render(run))
		return false
	}
	return true
}

// explainBad tells a disagreement: the shrunk schedule as the CLI's
// timeline, and a file that replays it.
func (h *hunt) explainBad() string {
	if h.bad == nil {
		return "(no schedule recorded)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rapid and exhaustive search disagree on design %s: %s\n%s\n\n", h.d.Name(), h.badProp, h.badWhy)
	run, err := model.Replay(&h.d, h.bad)
	if err != nil {
		fmt.Fprintf(&b, "the schedule does not replay (%v):\n%s", err, model.FormatTrace(h.bad))
		return b.String()
	}
	b.WriteString(model.Render(run))
	b.WriteString("\n")
	b.WriteString(writeFailure(h.d, h.badProp, h.bad))
	return b.String()
}

// failureDir is where failing schedules are written: a counterexample file
// (lockcheck/counterexamples, with its timeline page) when the property is
// one of the model's Always properties, else a scenario file.
var failureDir = filepath.Join(os.TempDir(), "lockcheck-properties")

// writeFailure writes trace, which shows prop in design d, to failureDir
// and says how to replay it.
func writeFailure(d model.Design, prop string, trace []model.Action) string {
	if err := os.MkdirAll(failureDir, 0o755); err != nil {
		return fmt.Sprintf("could not write the schedule (%v); as a scenario:\n%s", err, scenarioText(d, prop, trace))
	}
	if p, ok := model.PropertyByName(prop); ok && p.Expect == model.Always {
		path, err := counterexamples.WriteCounterexample(failureDir, counterexamples.Counterexample{
			Design:     d,
			Property:   prop,
			Trace:      trace,
			FoundBy:    "rapid (go test ./properties) drew this schedule and shrank it: not breadth-first search, so it may not be the shortest",
			Regenerate: "go test ./properties (its failure message has the -run and -rapid.seed that reproduce it)",
		})
		if err == nil {
			return fmt.Sprintf("counterexample file: %s\nreplay it:          go run ./cmd/explore replay %s\n", path, path)
		}
	}
	path := filepath.Join(failureDir, safeName(d.Name()+"--"+prop)+".txt")
	if err := os.WriteFile(path, []byte(scenarioText(d, prop, trace)), 0o644); err != nil {
		return fmt.Sprintf("could not write the schedule (%v); as a scenario:\n%s", err, scenarioText(d, prop, trace))
	}
	return fmt.Sprintf("scenario file: %s (model.ParseScenario reads it; model.Replay replays it)\n", path)
}

// scenarioText is a scenario file (model.ParseScenario reads it) for trace.
func scenarioText(d model.Design, prop string, trace []model.Action) string {
	return fmt.Sprintf("# %s on design %s: %d steps, found by rapid (go test ./properties), shrunk.\n\ndesign %s\n%s",
		prop, d.Name(), len(trace), d.Name(), model.FormatTrace(trace))
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// coverage says how many schedules showed each property.
func (h *hunt) coverage() string {
	var parts []string
	for i, v := range h.exp.verdicts {
		parts = append(parts, fmt.Sprintf("%s %d", v.prop.Name, h.witnessed[i]))
	}
	return "shown: " + strings.Join(parts, ", ")
}
