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
