package explore

import "lockcheck/model"

type naiveNode struct {
	parent int32 // index of the parent in the nodes slice, -1 for the root
	action model.Action
}

// naiveCheck is the first engine, kept as a test oracle: a map of full
// states, one goroutine. Check must agree with it on verdicts, shortest
// lengths and distinct-state counts.
func naiveCheck(cfg Config) (*Report, error) {
	d := cfg.Design
	if err := d.Validate(); err != nil {
		return nil, err
	}
	props := cfg.Properties
	if props == nil {
		props = model.PropertiesFor(&d)
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
	nodes := []naiveNode{{parent: -1}}
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
	proved := 0
	truncated := false
	for len(frontier) > 0 && remaining > 0 {
		if cfg.Bounds.MaxSteps > 0 && depth >= cfg.Bounds.MaxSteps {
			truncated = true
			break
		}
		var next []int32
		for _, idx := range frontier {
			s := states[idx]
			for c := 0; c < d.Clients; c++ {
				rep.Counts.Phases[s.Clients[c].Phase]++
			}
			buf = model.Actions(&d, &s, buf)
			for _, a := range buf {
				ns, ev := model.Step(&d, s, a)
				rep.Stats.Transitions++
				col := model.NumPhases
				if a.Kind.ByClient() {
					col = int(s.Clients[a.Client].Phase)
				}
				rep.Counts.Steps[a.Kind][col]++
				for i, p := range props {
					if !done[i] && p.Bad(&d, &ns, &ev) {
						record(i, append(naivePath(nodes, idx), a))
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
				nodes = append(nodes, naiveNode{parent: idx, action: a})
				id := int32(len(nodes) - 1)
				seen[key] = id
				states = append(states, ns)
				next = append(next, id)
			}
		}
		proved = depth + 1 // every step from this level was checked
		if len(next) > 0 {
			depth++
		}
		frontier = next
	}
	rep.Stats.Distinct = int64(len(states))
	rep.Stats.Depth = depth
	rep.Stats.Complete = !truncated && len(frontier) == 0
	if rep.Stats.Complete || (cfg.Bounds.MaxSteps > 0 && depth >= cfg.Bounds.MaxSteps) {
		proved = depth
	}
	rep.Stats.Proved = proved
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
func naivePath(nodes []naiveNode, idx int32) []model.Action {
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
