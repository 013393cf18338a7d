package explore

import (
	"testing"

	"lockcheck/model"
)

// Shorten, from a counterexample that simulation found and shrank, finds
// one as short as breadth-first search's; kept to the faults of a
// pause-only counterexample, it finds the shortest with a pause alone,
// which is longer than the design's shortest (a pause and a crash).
func TestShorten(t *testing.T) {
	d := design(t, "redis/cad/rw/max-token,crashes=1")
	p, _ := model.PropertyByName("exclusive")
	bounds := Bounds{Symmetry: true}
	full := check(t, Config{Design: d, Properties: []model.Property{p}, Bounds: bounds})
	shortest := full.Results[0].Trace
	noCrash := check(t, Config{Design: d, Properties: []model.Property{p}, Bounds: bounds,
		Allow: func(a model.Action) bool { return a.Kind != model.ActCrash }})
	pauseOnly := noCrash.Results[0].Trace
	if !uses(shortest, model.ActCrash) || uses(pauseOnly, model.ActCrash) || len(pauseOnly) <= len(shortest) {
		t.Fatalf("want a shortest counterexample with a crash, and a longer one without:\n%s\n%s", model.FormatTrace(shortest), model.FormatTrace(pauseOnly))
	}

	// a long counterexample with both faults, from simulation
	rep, err := Simulate(SimConfig{Design: d, Properties: []model.Property{p}, Seed: 1, To: 2000, Depth: 1000, Swarm: true, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	long := rep.Results[0].Trace
	if rep.Results[0].Status != Violated {
		t.Fatalf("simulation did not find %s", p.Name)
	}
	for _, c := range []struct {
		name  string
		trace []model.Action
		want  int
	}{
		{"simulated", long, len(shortest)},
		{"pause only", pauseOnly, len(pauseOnly)},
		{"pause only, padded", append(append([]model.Action{}, pauseOnly...), model.Action{Kind: model.ActTick}), len(pauseOnly)},
	} {
		if c.name == "simulated" && !uses(long, model.ActCrash) {
			c.want = len(pauseOnly)
		}
		out, shorter, st, err := Shorten(d, p, c.trace, FaultKindsOf(c.trace), bounds)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if at, ok := violates(&d, p, out, nil); !ok || at != len(out) || !uses(out, model.ActPause) {
			t.Errorf("%s: the shortened trace does not end at a violation:\n%s", c.name, model.FormatTrace(out))
		}
		at, _ := violates(&d, p, c.trace, nil)
		if len(out) != c.want || shorter != (c.want < at) {
			t.Errorf("%s: %d steps shortened to %d (shorter %v), want %d:\n%s", c.name, len(c.trace), len(out), shorter, c.want, model.FormatTrace(out))
		}
		t.Logf("%s: %d steps, shortened to %d (%d states)", c.name, len(c.trace), len(out), st.Distinct)
	}
	// the same for any number of workers
	one, _, _, _ := Shorten(d, p, long, FaultKindsOf(long), Bounds{Symmetry: true, Workers: 1})
	three, _, _, _ := Shorten(d, p, long, FaultKindsOf(long), Bounds{Symmetry: true, Workers: 3})
	if model.FormatTrace(one) != model.FormatTrace(three) {
		t.Errorf("1 worker:\n%s3 workers:\n%s", model.FormatTrace(one), model.FormatTrace(three))
	}
	if _, _, _, err := Shorten(d, p, shortest[:len(shortest)-1], nil, bounds); err == nil {
		t.Error("a trace that does not break the property: no error")
	}
}

func uses(trace []model.Action, k model.ActionKind) bool {
	for _, a := range trace {
		if a.Kind == k {
			return true
		}
	}
	return false
}

// StopWhenViolated stops at the level where the last of the named
// properties is violated, with the same traces as a whole search, and
// leaves the others incomplete.
func TestStopWhenViolated(t *testing.T) {
	d := design(t, "demo2")
	full := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true}})
	stop := []string{"exclusive", "no-lost-update"}
	part := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true}, StopWhenViolated: stop})
	if part.Stats.StoppedBy != "all-violated" || part.Stats.Distinct >= full.Stats.Distinct {
		t.Fatalf("stopped by %q after %d states (the whole search: %d)", part.Stats.StoppedBy, part.Stats.Distinct, full.Stats.Distinct)
	}
	for _, name := range stop {
		a, _ := full.Result(name)
		b, _ := part.Result(name)
		if b.Status != Violated || model.FormatTrace(a.Trace) != model.FormatTrace(b.Trace) {
			t.Errorf("%s: %v, the whole search %v", name, b, a)
		}
	}
	if r, _ := part.Result("own-release"); r.Status != Incomplete {
		t.Errorf("own-release: %v, want incomplete", r)
	}
	for _, bad := range []string{"all-done", "nope"} {
		if _, err := Check(Config{Design: d, StopWhenViolated: []string{bad}}); err == nil {
			t.Errorf("StopWhenViolated %q: no error", bad)
		}
	}
}
