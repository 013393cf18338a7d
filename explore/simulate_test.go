package explore

import (
	"reflect"
	"testing"

	"lockcheck/model"
)

// Simulation finds the planted bugs that breadth-first search finds, shrinks
// each counterexample to one that still replays and still breaks the
// property with no single step removable, and gives the same report for
// any number of workers.
func TestSimulateFindsAndShrinks(t *testing.T) {
	for _, c := range []struct {
		design, prop string
	}{
		{"demo2", "exclusive"},
		{"demo4", "own-release"},
		{"demo6,bug=no-token-check", "no-lost-update"},
		{"demo4,bug=cad-no-check", "own-release"},
	} {
		d := design(t, c.design)
		bfs := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true}})
		want, _ := bfs.Result(c.prop)
		if want.Status != Violated {
			t.Fatalf("%s: breadth-first search: %v", c.design, want)
		}
		cfg := SimConfig{Design: d, Seed: 1, From: 0, To: 300, Depth: 1000, Swarm: true, Workers: 1}
		rep, err := Simulate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var got SimResult
		for _, r := range rep.Results {
			if r.Property == c.prop {
				got = r
			}
		}
		if got.Status != Violated {
			t.Errorf("%s: %s: %+v", c.design, c.prop, got)
			continue
		}
		p, _ := model.PropertyByName(c.prop)
		at, ok := violates(&d, p, got.Trace, nil)
		if !ok || at != len(got.Trace) {
			t.Errorf("%s: the shrunk trace does not end at its violation (%d of %d)", c.design, at, len(got.Trace))
		}
		for i := range got.Trace {
			less := append(append([]model.Action{}, got.Trace[:i]...), got.Trace[i+1:]...)
			if _, ok := violates(&d, p, less, nil); ok {
				t.Errorf("%s: step %d of the shrunk trace can go", c.design, i+1)
				break
			}
		}
		if len(got.Trace) < len(want.Trace) || got.RawSteps < len(got.Trace) {
			t.Errorf("%s: shrunk %d, raw %d, shortest %d", c.design, len(got.Trace), got.RawSteps, len(want.Trace))
		}
		t.Logf("%s %s: run %d, %d steps shrunk to %d (shortest %d); %d of %d runs; faults %v", c.design, c.prop, got.Run, got.RawSteps, len(got.Trace), len(want.Trace), got.Runs, rep.Done, rep.Faults)
		cfg.Workers = 3
		rep3, err := Simulate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		rep.Seconds, rep3.Seconds = 0, 0
		if !reflect.DeepEqual(rep, rep3) {
			t.Errorf("%s: 1 and 3 workers differ:\n%+v\n%+v", c.design, rep, rep3)
		}
	}
}

// A safe design: nothing found, and the runs used the faults.
func TestSimulateSafeDesign(t *testing.T) {
	d := design(t, "demo6")
	rep, err := Simulate(SimConfig{Design: d, Seed: 7, From: 0, To: 200, Depth: 1000, Swarm: true, Properties: []model.Property{mustProp(t, "no-lost-update")}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Results[0].Status != NotFound || rep.Done != 200 || len(rep.Faults) == 0 {
		t.Errorf("%+v", rep)
	}
}

func mustProp(t *testing.T, name string) model.Property {
	p, ok := model.PropertyByName(name)
	if !ok {
		t.Fatal(name)
	}
	return p
}
