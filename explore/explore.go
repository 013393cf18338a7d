// Package explore is bounded exhaustive search over the model: breadth-first,
// so the first counterexample it finds for a property is a shortest one.
package explore

import (
	"fmt"

	"lockcheck/model"
)

// Status is a property's verdict within the bounds.
type Status string

const (
	Holds      Status = "holds"      // Always: no reachable state violates it (within bounds)
	Violated   Status = "violated"   // Always: a counterexample was found
	Seen       Status = "seen"       // Sometimes: a witness was found
	NotSeen    Status = "not-seen"   // Sometimes: no reachable state shows it (within bounds)
	Incomplete Status = "incomplete" // a bound stopped the search before a verdict
)

// Bounds limit the search.
type Bounds struct {
	MaxSteps  int  // depth: actions from the initial state (0 = no limit; the horizon bounds time)
	MaxStates int  // distinct states (0 = no limit); reaching it gives incomplete
	Workers   int  // goroutines (0 = GOMAXPROCS)
	Symmetry  bool // canonicalise interchangeable clients
}

// Config is one search.
type Config struct {
	Design     model.Design
	Properties []model.Property // nil = all
	Bounds     Bounds
	Progress   func(Progress) // called about once a second on long runs; may be nil
}

// Progress is a snapshot of a running search.
type Progress struct {
	States      int64
	Transitions int64
	Depth       int
}

// Result is one property's verdict. Trace is the shortest counterexample
// (Always) or witness (Sometimes) from the initial state; nil otherwise.
type Result struct {
	Property string
	Expect   model.Expectation
	Status   Status
	Trace    []model.Action
}

// Stats describe the search.
type Stats struct {
	Distinct    int64
	Transitions int64
	Depth       int
	Complete    bool // the reachable space within MaxSteps was exhausted
}

// Report is the outcome of Check.
type Report struct {
	Design  model.Design
	Bounds  Bounds
	Results []Result
	Stats   Stats
}

// Result finds a property's result by name.
func (r *Report) Result(name string) (Result, bool) {
	for _, res := range r.Results {
		if res.Property == name {
			return res, true
		}
	}
	return Result{}, false
}

type node struct {
	parent int32 // index of the parent in the nodes slice, -1 for the root
	action model.Action
}

// Check explores every state reachable within the bounds, breadth-first,
// checking every property on every state and step.
func Check(cfg Config) (*Report, error) {
	d := cfg.Design
	if err := d.Validate(); err != nil {
		return nil, err
	}
	props := cfg.Properties
	if props == nil {
		props = model.Properties
	}
	rep := &Report{Design: d, Bounds: cfg.Bounds}
	rep.Results = make([]Result, len(props))
	done := make([]bool, len(props))
	for i, p := range props {
		rep.Results[i] = Result{Property: p.Name, Expect: p.Expect}
	}
	canon := func(s model.State) model.State {
		if cfg.Bounds.Symmetry {
			return model.Canonical(&d, s)
		}
		return s
	}
	nodes := []node{{parent: -1}}
	seen := map[model.State]int32{}
	init := model.Init(&d)
	seen[canon(init)] = 0
	states := []model.State{init}
	remaining := len(props)
	record := func(i int, trace []model.Action) {
		done[i] = true
		remaining--
		rep.Results[i].Trace = trace
		if props[i].Expect == model.Always {
			rep.Results[i].Status = Violated
		} else {
			rep.Results[i].Status = Seen
		}
	}
	for i, p := range props {
		if p.Bad(&d, &init, nil) {
			record(i, []model.Action{})
		}
	}
	frontier := []int32{0}
	var buf []model.Action
	depth := 0
	truncated := false
	for len(frontier) > 0 && remaining > 0 {
		if cfg.Bounds.MaxSteps > 0 && depth >= cfg.Bounds.MaxSteps {
			truncated = true
			break
		}
		var next []int32
		for _, idx := range frontier {
			s := states[idx]
			buf = model.Actions(&d, &s, buf)
			for _, a := range buf {
				ns, ev := model.Step(&d, s, a)
				rep.Stats.Transitions++
				for i, p := range props {
					if !done[i] && p.Bad(&d, &ns, &ev) {
						record(i, append(path(nodes, idx), a))
					}
				}
				key := canon(ns)
				if _, ok := seen[key]; ok {
					continue
				}
				if cfg.Bounds.MaxStates > 0 && len(states) >= cfg.Bounds.MaxStates {
					truncated = true
					continue
				}
				nodes = append(nodes, node{parent: idx, action: a})
				id := int32(len(nodes) - 1)
				seen[key] = id
				states = append(states, ns)
				next = append(next, id)
			}
		}
		if len(next) > 0 {
			depth++
		}
		frontier = next
	}
	rep.Stats.Distinct = int64(len(states))
	rep.Stats.Depth = depth
	rep.Stats.Complete = !truncated && len(frontier) == 0
	for i := range rep.Results {
		if done[i] {
			continue
		}
		switch {
		case !rep.Stats.Complete && remaining > 0 && (truncated || len(frontier) > 0):
			rep.Results[i].Status = Incomplete
		case props[i].Expect == model.Always:
			rep.Results[i].Status = Holds
		default:
			rep.Results[i].Status = NotSeen
		}
	}
	return rep, nil
}

// path rebuilds the actions from the root to node idx. Symmetry may have
// stored a state under another client naming; the actions are those that
// reached the stored (uncanonicalised) state, so they replay as they are.
func path(nodes []node, idx int32) []model.Action {
	var rev []model.Action
	for idx > 0 {
		rev = append(rev, nodes[idx].action)
		idx = nodes[idx].parent
	}
	out := make([]model.Action, len(rev))
	for i := range rev {
		out[i] = rev[len(rev)-1-i]
	}
	return out
}

// String is a one-line verdict, for messages.
func (r Result) String() string {
	if r.Trace != nil {
		return fmt.Sprintf("%s: %s (%d steps)", r.Property, r.Status, len(r.Trace))
	}
	return fmt.Sprintf("%s: %s", r.Property, r.Status)
}
