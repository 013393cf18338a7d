package explore

import (
	"fmt"

	"lockcheck/model"
)

// HintMaxStates bounds each search of Hint: a probe that reaches it without
// a witness counts as "not found".
var HintMaxStates = 4_000_000

// Hint says how to make a vacuous verdict on d meaningful: the least
// max-pause (with pauses=1 when d has none) at which some lock expires or
// is lost while its holder believes in it, found by search. Longer pauses
// allow every behaviour of shorter ones, so the witness is monotone in
// max-pause: a first probe at the derived default (else at the largest
// pause) finds a length that works, and a bisection down to d's own
// max-pause finds the least; each probe stops at its first witness. A probe
// cut short by HintMaxStates counts as not found, so the hint is the least
// length found to work. A horizon at its derived default follows the pause;
// a horizon given explicitly stays.
func Hint(d model.Design, b Bounds) (string, error) {
	pauses, lo := d.Pauses, d.MaxPauseTicks
	if pauses == 0 {
		pauses, lo = 1, 0
	}
	probe := func(m int) (seen, complete bool, err error) {
		dd := model.WithPauses(d, pauses, m)
		rep, err := Check(Config{Design: dd, Properties: []model.Property{model.LockLostProperty},
			Bounds: Bounds{Symmetry: b.Symmetry, Workers: b.Workers, MaxStates: HintMaxStates}})
		if err != nil {
			return false, false, err
		}
		return rep.Results[0].Status == Seen, rep.Stats.Complete, nil
	}
	top := model.MaxWaitTicks
	if lo >= top {
		return fmt.Sprintf("no pause can be longer than %d ticks: lengthen the work (slow=1) or shorten the TTL", top), nil
	}
	hi := min(max(model.DerivedMaxPause(&d), lo+1), top)
	seen, complete, err := probe(hi)
	if err != nil {
		return "", err
	}
	if !seen && hi < top {
		hi = top
		if seen, complete, err = probe(hi); err != nil {
			return "", err
		}
	}
	if !seen {
		if complete {
			return fmt.Sprintf("no pause of up to %d ticks makes a lock expire while held within horizon %d: add another fault",
				top, model.WithPauses(d, pauses, top).HorizonTicks), nil
		}
		return fmt.Sprintf("no pause of up to %d ticks was found to make a lock expire while held within %s states of search",
			top, thousands(HintMaxStates)), nil
	}
	for hi-lo > 1 { // seen at hi; not seen (or not found) at lo
		mid := (lo + hi) / 2
		ok, _, err := probe(mid)
		if err != nil {
			return "", err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	if d.Pauses == 0 {
		return fmt.Sprintf("add a pause: pauses=1 and max-pause at least %d", hi), nil
	}
	return fmt.Sprintf("raise max-pause to at least %d", hi), nil
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	out := ""
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out += ","
		}
		out += string(r)
	}
	return out
}
