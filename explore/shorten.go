package explore

import (
	"fmt"

	"lockcheck/model"
)

// FaultKindsOf allows every action that is not a fault, and the faults of
// the kinds trace uses (a pause of any length, a node crash of any node),
// taken by any client at any moment, as often as the design's budget
// allows. It does not look at which client takes an action, so it may be
// used with symmetry.
func FaultKindsOf(trace []model.Action) func(model.Action) bool {
	var used [256]bool
	for _, a := range trace {
		if a.Kind.IsFault() {
			used[a.Kind] = true
		}
	}
	return func(a model.Action) bool { return !a.Kind.IsFault() || used[a.Kind] }
}

// Shorten looks breadth-first for a counterexample of the always property
// p (or a witness of the sometimes property p) shorter than trace, among the schedules that allow allows (nil: all),
// within bounds b (its MaxSteps is replaced by one step fewer than trace's
// violation). It returns the shortest it finds, or trace cut at its
// violation if there is none shorter (or the bounds stopped the search:
// st.Complete is then false); shorter says which. A random search that
// found a long counterexample and shrank it can so report one as short as
// breadth-first search would: FaultKindsOf(trace) keeps the search to the
// kinds of fault the counterexample needed, which is much smaller than the
// whole space when the design has several. An error if trace does not
// replay to a violation of p.
func Shorten(d model.Design, p model.Property, trace []model.Action, allow func(model.Action) bool, b Bounds) (out []model.Action, shorter bool, st Stats, err error) {
	at, ok := violates(&d, p, trace, nil)
	if !ok {
		return nil, false, st, fmt.Errorf("explore: the trace does not replay to a violation of %s on %s", p.Name, d.Name())
	}
	trace = trace[:at:at]
	if at <= 1 {
		return trace, false, st, nil
	}
	b.MaxSteps = at - 1
	rep, err := Check(Config{Design: d, Properties: []model.Property{p}, Bounds: b, First: true, Allow: allow})
	if err != nil {
		return nil, false, st, err
	}
	if res := rep.Results[0]; (res.Status == Violated || res.Status == Seen) && len(res.Trace) < at {
		return res.Trace, true, rep.Stats, nil
	}
	return trace, false, rep.Stats, nil
}
