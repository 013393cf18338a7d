package explore

import (
	"fmt"
	"slices"
	"testing"

	"lockcheck/catalogue"
	"lockcheck/model"
)

// coverageDesigns add to the catalogue the kinds and phases it does not
// reach on its own.
var coverageDesigns = []string{
	"redis/cad/none/plain,clients=2,delays=1,timeout=3,losses=1",
	"redis/cad/none/plain,clients=2,renew=3,hangs=1,pauses=0",
	"redis/cad/none/plain,clients=2,jobs=2,restarts=1,pauses=0",
	"replica/cad/none/plain,clients=2,ack=wait,pauses=0",
	"redis/cad/none/plain,clients=2,check=validity,client-jumps=1,pauses=0",
}

// Every step the search counts is of a kind, and every client it meets in
// a phase, that model.PossibleKinds and PossiblePhases allow for the
// design (so that "never fired" names only what is really missing), and
// the steps counted add up to the transitions.
func TestPossibleCoversEverySearch(t *testing.T) {
	names := slices.Clone(coverageDesigns)
	for _, e := range catalogue.Entries {
		names = append(names, e.Name)
	}
	seenKinds, seenPhases := uint64(0), uint64(0)
	for _, name := range names {
		d := design(t, name)
		rep := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true, Workers: 2, MaxStates: 2_000_000}})
		c := &rep.Counts
		if c.Total() != rep.Stats.Transitions {
			t.Errorf("%s: %d steps counted, %d transitions", name, c.Total(), rep.Stats.Transitions)
		}
		kinds, phases := model.PossibleKinds(&d), model.PossiblePhases(&d)
		for k := model.ActionKind(0); int(k) < model.NumActionKinds; k++ {
			if n := c.Kind(k); n > 0 {
				seenKinds |= 1 << k
				if kinds&(1<<k) == 0 {
					t.Errorf("%s: %d steps of kind %s, which PossibleKinds leaves out", name, n, k.CoverageWord())
				}
			}
		}
		for p := model.Phase(0); int(p) < model.NumPhases; p++ {
			if n := c.Phases[p]; n > 0 {
				seenPhases |= 1 << p
				if phases&(1<<p) == 0 {
					t.Errorf("%s: %d clients met in phase %s, which PossiblePhases leaves out", name, n, p)
				}
			}
			for k := range c.Steps {
				if c.Steps[k][p] > 0 && c.Phases[p] == 0 {
					t.Errorf("%s: steps from phase %s, but no client met in it", name, p)
				}
			}
		}
		if rep.Coverage.Kinds != c.kinds() {
			t.Errorf("%s: coverage kinds %b, counts' kinds %b", name, rep.Coverage.Kinds, c.kinds())
		}
	}
	// the designs above reach every kind and phase: the test sees each rule
	for k := model.ActionKind(0); int(k) < model.NumActionKinds; k++ {
		if seenKinds&(1<<k) == 0 {
			t.Errorf("no design of the test takes a step of kind %s", k.CoverageWord())
		}
	}
	for p := model.Phase(0); int(p) < model.NumPhases; p++ {
		if seenPhases&(1<<p) == 0 {
			t.Errorf("no design of the test has a client in phase %s", p)
		}
	}
}

// Never names what the design can do and the search did not: with one
// step from the initial state, only the acquires (and the tick, with a
// free clock) fired; the pause, which falls only after a client's first
// step, never did. The whole search fires everything.
func TestCoverageNamesWhatNeverFired(t *testing.T) {
	d := design(t, "redis/cad/none/plain,clients=2")
	rep := check(t, Config{Design: d, Bounds: Bounds{MaxSteps: 1}})
	acts, faults, phases := rep.Counts.Never(&d)
	if got := fmt.Sprint(acts, faults, phases); got != "[tick read write release] [pause] [read write release done]" {
		t.Errorf("one step: never fired %s", got)
	}
	if n := rep.Counts.Steps[model.ActAcquire][model.PhaseAcquire]; n != 2 || rep.Counts.Total() != 2 {
		t.Errorf("one step: %d acquires from phase acquire, %d steps; want 2 and 2", n, rep.Counts.Total())
	}
	if rep.Counts.Phases[model.PhaseAcquire] != 2 {
		t.Errorf("one step: %d clients in phase acquire, want 2 (one state)", rep.Counts.Phases[model.PhaseAcquire])
	}
	rep = check(t, Config{Design: d})
	acts, faults, phases = rep.Counts.Never(&d)
	if len(acts)+len(faults)+len(phases) != 0 {
		t.Errorf("whole search: never fired %v %v %v", acts, faults, phases)
	}
	// pauses fell in every phase a client can pause in, none in done
	for _, p := range []model.Phase{model.PhaseAcquire, model.PhaseRead, model.PhaseWrite, model.PhaseRelease} {
		if rep.Counts.Steps[model.ActPause][p] == 0 {
			t.Errorf("no pause fell in phase %s", p)
		}
	}
	if n := rep.Counts.Steps[model.ActPause][model.PhaseDone]; n != 0 {
		t.Errorf("%d pauses of a client that is done", n)
	}
}
