package properties

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"lockcheck/explore"
	"lockcheck/model"
)

// Testing the tester. A suite that passes whatever the model does is not
// testing; these plant bugs and check that the suite fails, naming what
// broke, with a shrunk schedule.

// TestPlantedBugs plants each of the model's bugs (the design parameter
// bug=…) in the first suite design where exhaustive search says it
// changes a verdict, and runs the suite's "holds" check on the bugged
// design against the expectations of the clean one, as if the model had
// regressed after the expectations were taken. rapid must find a schedule
// that shows a property the clean design cannot show, and its shrunk
// schedule, shortened by breadth-first search among its faults (as the
// suite's hunts are), must be as short as the bugged design's shortest;
// where that is known to be unique, exactly it.
func TestPlantedBugs(t *testing.T) {
	names, err := catalogueDesigns()
	if err != nil {
		t.Fatal(err)
	}
	strat := chosenStrategy(t)
	// the one shortest schedule that shows a bug, where it is unique
	exact := map[model.Bug]string{
		model.BugSetWithoutNX: "A acquire\nB acquire\n", // SET without NX: the second SET takes the lock too
	}
	for b := model.Bug(1); !strings.Contains(b.String(), "("); b++ {
		t.Run(b.String(), func(t *testing.T) {
			clean, bugged, flipped := findBugDesign(t, names, b)
			h := newHunt(bugged.design, clean, -1, strat)
			rec := newRecorder(t.Name())
			checkWith(t, rec, h, catchChecks(rapidChecks()))
			if !rec.Failed() || h.bad == nil {
				t.Fatalf("bug %s planted in %s: rapid found nothing in %d schedules, but exhaustive search shows %s", b, clean.design.Name(), h.runs, strings.Join(flipped, ", "))
			}
			v, ok := bugged.verdict(h.badProp)
			if !ok || !v.shows {
				t.Fatalf("bug %s: rapid reports %s, which exhaustive search of the bugged design does not show:\n%s", b, h.badProp, rec.report())
			}
			if !strings.Contains(rec.report(), "DISAGREEMENT: "+h.badProp) {
				t.Errorf("rapid's report does not name %s:\n%s", h.badProp, rec.report())
			}
			run, err := model.Replay(&bugged.design, h.bad)
			if err != nil {
				t.Fatalf("the shrunk schedule does not replay on the bugged design: %v", err)
			}
			if at, ok := run.Violated(h.badProp); !ok || at != len(h.bad) {
				t.Fatalf("the shrunk schedule does not end where %s shows (found %v)", h.badProp, run.Found)
			}
			short, _, st, err := explore.Shorten(bugged.design, v.prop, h.bad, explore.FaultKindsOf(h.bad), bfsBounds)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("bug %s in %s: caught %s; shrunk to %d steps, %d after breadth-first search among its faults (%s, %d states), breadth-first shortest %d\n%s",
				b, clean.design.Name(), h.badProp, len(h.bad), len(short), faultWords(h.bad), st.Distinct, len(v.trace), model.FormatTrace(short))
			if run, err := model.Replay(&bugged.design, short); err != nil {
				t.Fatalf("the shortened schedule does not replay on the bugged design: %v", err)
			} else if at, ok := run.Violated(h.badProp); !ok || at != len(short) {
				t.Fatalf("the shortened schedule does not end where %s shows (found %v)", h.badProp, run.Found)
			}
			switch {
			case len(short) != len(v.trace):
				t.Errorf("shortened to %d steps, breadth-first shortest %d:\n%s", len(short), len(v.trace), model.FormatTrace(short))
			case exact[b] != "" && model.FormatTrace(short) != exact[b]:
				t.Errorf("shortened to\n%swant\n%s", model.FormatTrace(short), exact[b])
			}
		})
	}
}

// findBugDesign is the first of names where planting bug b makes
// exhaustive search show a property that the clean design cannot show.
func findBugDesign(t *testing.T, names []string, b model.Bug) (clean, bugged *expectation, flipped []string) {
	t.Helper()
	for _, name := range names {
		d, err := model.ParseDesign(name)
		if err != nil {
			t.Fatal(err)
		}
		db := d
		db.Bug = b
		if db.Validate() != nil {
			continue
		}
		clean, err := expectationFor(d)
		if err != nil {
			t.Fatal(err)
		}
		bugged, err := expectationFor(db)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range bugged.verdicts {
			if v.shows && !clean.verdicts[i].shows {
				flipped = append(flipped, v.prop.Name)
			}
		}
		if len(flipped) > 0 {
			return clean, bugged, flipped
		}
	}
	t.Fatalf("bug %s changes no verdict of any suite design", b)
	return nil, nil, nil
}

// heldPause is a planted property: a client pauses for 5 ticks or more
// while it believes it holds the lock. Its one shortest schedule is "A
// acquire, A pause 5".
var heldPause = model.Property{
	Name:   "planted-held-pause",
	Expect: model.Always,
	Doc:    "no client pauses for 5 ticks or more while it believes it holds the lock (planted)",
	Bad: func(d *model.Design, s *model.State, ev *model.Event) bool {
		return ev != nil && ev.Action.Kind == model.ActPause && ev.Action.Arg >= 5 && s.Clients[ev.Action.Client].Believes()
	},
}

// readTwo is a planted property: a client reads the counter at 2 — two
// jobs have written before it. Its shortest schedules are long (two whole
// jobs, with the others polling every tick) and there are several.
var readTwo = model.Property{
	Name:   "planted-read-two",
	Expect: model.Always,
	Doc:    "no client reads the counter at 2 (planted)",
	Bad: func(d *model.Design, s *model.State, ev *model.Event) bool {
		return ev != nil && ev.Action.Kind == model.ActRead && ev.Result == model.ResAccepted && ev.Value == 2
	},
}

// TestPlantedProperties checks the search and the shrinker on properties
// whose shortest schedules are known: rapid must catch each and shrink it
// to the length breadth-first search finds; where the shortest schedule is
// unique, to exactly that schedule (as rapid's own checkShrink tests do).
func TestPlantedProperties(t *testing.T) {
	strat := chosenStrategy(t)
	for _, tc := range []struct {
		design string
		prop   model.Property
		exact  string // the one shortest schedule, if it is unique
	}{
		{"demo2", heldPause, "A acquire\nA pause 5\n"},
		{"demo1", readTwo, ""},
		{"redlock/cad/none/plain,pauses=0", readTwo, ""},
	} {
		t.Run(tc.design+"/"+tc.prop.Name, func(t *testing.T) {
			d, err := model.ParseDesign(tc.design)
			if err != nil {
				t.Fatal(err)
			}
			exp, err := expectationWith(d, append(append([]model.Property(nil), model.Properties...), tc.prop))
			if err != nil {
				t.Fatal(err)
			}
			v, _ := exp.verdict(tc.prop.Name)
			if !v.shows {
				t.Fatalf("exhaustive search does not show %s in %s", tc.prop.Name, d.Name())
			}
			if tc.exact != "" && model.FormatTrace(v.trace) != tc.exact {
				t.Fatalf("breadth-first search's shortest schedule is\n%swant\n%s", model.FormatTrace(v.trace), tc.exact)
			}
			h := newHunt(d, exp, v.index, strat)
			rec := newRecorder(t.Name())
			checkWith(t, rec, h, catchChecks(rapidChecks()))
			if h.caught == nil {
				t.Fatalf("rapid did not catch %s:\n%s", tc.prop.Name, rec.report())
			}
			got := model.FormatTrace(h.caught)
			t.Logf("caught %s after %d checks; shrunk to %d steps, breadth-first shortest %d", tc.prop.Name, rec.checksToCatch(), len(h.caught), len(v.trace))
			if tc.exact != "" && got != tc.exact {
				t.Errorf("shrunk to\n%swant\n%s", got, tc.exact)
			}
			if len(h.caught) != len(v.trace) {
				t.Errorf("shrunk to %d steps, breadth-first shortest %d:\n%s", len(h.caught), len(v.trace), got)
			}
		})
	}
}

// TestCrossCheckCatchesALyingChecker replaces the linearizability checker
// with one that always answers the same and checks that the cross-check
// against no-lost-update fails, both ways.
func TestCrossCheckCatchesALyingChecker(t *testing.T) {
	real := linCheck
	defer func() { linCheck = real }()
	strat := chosenStrategy(t)
	for _, tc := range []struct {
		design, verdict string
	}{
		{"demo2", "ok"},      // demo2 loses updates: a lost update judged linearizable
		{"demo1", "illegal"}, // demo1 never does: a correct run judged not linearizable
	} {
		t.Run(tc.design+"/"+tc.verdict, func(t *testing.T) {
			linCheck = func(*model.Run) (string, string, error) {
				return tc.verdict, "a checker that always says " + tc.verdict, nil
			}
			d, err := model.ParseDesign(tc.design)
			if err != nil {
				t.Fatal(err)
			}
			exp, err := expectationFor(d)
			if err != nil {
				t.Fatal(err)
			}
			h := newHunt(d, exp, -1, strat)
			rec := newRecorder(t.Name())
			checkWith(t, rec, h, catchChecks(rapidChecks()))
			if !rec.Failed() || h.badProp != "linearizable" {
				t.Fatalf("the cross-check did not catch a checker that always says %q in %d schedules:\n%s", tc.verdict, h.runs, rec.report())
			}
			t.Logf("caught after %d checks, shrunk to %d steps: %s", rec.checksToCatch(), len(h.bad), h.badWhy)
		})
	}
}

// TestDataRunsOut checks that a schedule whose data runs out goes on as
// if every number were zero (the zero schedule) instead of being thrown
// away as invalid: rapid.MakeFuzz with no input at all runs the zero
// schedule to its end. If rapid's internals change so that running out of
// data is no longer recognised, this fails (and the shrinker loses the
// ability to delete a step that needs one more step at the end).
func TestDataRunsOut(t *testing.T) {
	strat := chosenStrategy(t)
	for _, name := range []string{"demo2", "redlock/cad/none/plain,pauses=0", "replica/cad/rw/max-token,pauses=0"} {
		d, err := model.ParseDesign(name)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := expectationFor(d)
		if err != nil {
			t.Fatal(err)
		}
		h := newHunt(d, exp, -1, strat)
		ran := t.Run(name, func(t *testing.T) { rapid.MakeFuzz(h.prop)(t, nil) })
		if !ran || h.finished != 1 {
			t.Fatalf("%s: the schedule with no data did not run to its end (ran %v, finished %d)", name, ran, h.finished)
		}
		if got, want := model.FormatTrace(h.trace), model.FormatTrace(h.pick.info.zeroRun); got != want {
			t.Errorf("%s: the schedule with no data is\n%swant the zero schedule\n%s", name, got, want)
		}
	}
}

// TestPlanBefore checks the two forms of plan on the zero schedule of a
// design whose only fault is a delay before an acquire, a TTL of 10 and
// work of 3 (redsync's check at the reply): its lost update needs the
// acquire that wins the lock, after the first release, held 7 or 8 ticks
// (the shortest has B's, at t=4). A plan "before the first acquire that
// is not refused, a delay of 8" is that; "the second" is C's acquire,
// with nobody left to lose an update to. The same plan "after" can never
// delay a winning acquire: the client that took the trigger holds the lock
// or has to retry, so the delay hits its next attempt, a refused one.
func TestPlanBefore(t *testing.T) {
	d, err := model.ParseDesign("redis/cad/none/plain,check=acquire,delay-at=acquire,work=3,pauses=0,delays=1,max-delay=8")
	if err != nil {
		t.Fatal(err)
	}
	strat := chosenStrategy(t)
	if strat.profiles == nil || !slices.ContainsFunc(strat.profiles, func(p profile) bool { return p.planned }) {
		t.Skipf("strategy %s has no planned profile", strat.name)
	}
	acquire, delay := model.ActionKind(255), model.ActionKind(255)
	for _, ki := range kinds {
		switch ki.kind.String() {
		case "acquire":
			acquire = ki.kind
		case "delay":
			delay = ki.kind
		}
	}
	for _, tc := range []struct {
		plan    plan
		delayed string // the delay the schedule takes, as model.FormatTrace writes it, or ""
		lost    bool
	}{
		{plan{before: true, trigger: acquire, nth: 0, fault: delay, arg: 8}, "B delay 8", true},
		{plan{before: true, trigger: acquire, nth: 1, fault: delay, arg: 8}, "C delay 8", false},
		{plan{before: true, trigger: acquire, nth: 0, fault: delay, arg: 3}, "B delay 3", false},
		{plan{trigger: acquire, nth: 0, fault: delay, arg: 8}, "", false},          // A holds the lock: never delayed again
		{plan{trigger: acquire, nth: 1, fault: delay, arg: 8}, "B delay 8", false}, // B's refused attempt at t=2
	} {
		p := newPicker(strat, &d)
		if got := p.info.before[delay]; !slices.Equal(got, []model.ActionKind{acquire}) {
			t.Fatalf("the delay (delay-at=acquire) comes before %v, want only the acquire", got)
		}
		for _, pr := range p.profiles {
			if pr.planned {
				p.prof = pr
			}
		}
		for i := 0; i < d.Clients; i++ {
			p.speed[i] = (i + 1) * normalSpeed
		}
		p.plan, p.plan.target, p.exhausted = tc.plan, -1, true // every number zero from here on
		s := model.Init(&d)
		var trace []model.Action
		for en := model.Actions(&d, &s, nil); len(en) > 0; en = model.Actions(&d, &s, en) {
			a := p.pick(nil, &s, en)
			p.observe(a)
			trace = append(trace, a)
			s, _ = model.Step(&d, s, a)
		}
		delayed := ""
		for _, a := range trace {
			if a.Kind == delay {
				delayed = strings.TrimSpace(model.FormatTrace([]model.Action{a}))
			}
		}
		run, err := model.Replay(&d, trace)
		if err != nil {
			t.Fatalf("%+v: the schedule does not replay: %v", tc.plan, err)
		}
		_, lost := run.Violated("no-lost-update")
		if delayed != tc.delayed || lost != tc.lost {
			t.Errorf("plan %+v: the schedule delays %q and loses an update: %v; want %q and %v\n%s", tc.plan, delayed, lost, tc.delayed, tc.lost, model.Render(run))
		}
	}
}
