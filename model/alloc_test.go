package model_test

import (
	"testing"

	"lockcheck/catalogue"
	"lockcheck/model"
)

// TestStepAndActionsAllocateNothing walks a few hundred random steps of
// every catalogue design and counts allocations of Actions and Step: the
// per-service and per-fault dispatch must stay static (a function table or
// an interface would make the state escape to the heap).
func TestStepAndActionsAllocateNothing(t *testing.T) {
	for _, e := range catalogue.Entries {
		d, err := model.ParseDesign(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]model.Action, 0, 256)
		s := model.Init(&d)
		seed := uint32(1)
		allocs := testing.AllocsPerRun(200, func() {
			buf = model.Actions(&d, &s, buf)
			if len(buf) == 0 {
				s = model.Init(&d)
				return
			}
			seed = seed*1664525 + 1013904223
			s, _ = model.Step(&d, s, buf[int(seed>>8)%len(buf)])
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per Actions+Step, want 0", e.Name, allocs)
		}
	}
}

// TestActionsShortcuts: Actions skips the client faults when no family has
// budget left (clientFaultsLeft), and mainStep for a client with Ready set.
// On random walks of every catalogue design, no client fault is enabled
// when clientFaultsLeft says none is left (so a new family's budget cannot
// be forgotten there), and mainStep gives a client with Ready set no step.
func TestActionsShortcuts(t *testing.T) {
	for _, e := range catalogue.Entries {
		d, err := model.ParseDesign(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		seed := uint32(7)
		for walk := 0; walk < 20; walk++ {
			s := model.Init(&d)
			for {
				if !model.ClientFaultsLeft(&d, &s) {
					if f := model.ClientFaultActions(&d, &s, nil); len(f) != 0 {
						t.Fatalf("%s: %v enabled with no client fault budget left", e.Name, f)
					}
				}
				for i := 0; i < d.Clients; i++ {
					if _, ok := model.MainStep(&d, &s, i); ok && s.Clients[i].Ready != 0 {
						t.Fatalf("%s: client %d has a step with Ready %d", e.Name, i, s.Clients[i].Ready)
					}
				}
				buf := model.Actions(&d, &s, nil)
				if len(buf) == 0 {
					break
				}
				seed = seed*1664525 + 1013904223
				s, _ = model.Step(&d, s, buf[int(seed>>8)%len(buf)])
			}
		}
	}
}
