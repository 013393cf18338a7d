package explore

import (
	"fmt"

	"lockcheck/model"
)

// HintMaxStates bounds each search of Hint: a probe that reaches it without
// a witness counts as "not found".
var HintMaxStates = 2_000_000

// Hint says how to make a vacuous verdict on d meaningful: the smallest
// max-pause (with pauses=1 when d has none) at which some lock expires or
// is lost while its holder believes in it, found by search. Longer pauses
// allow every behaviour of shorter ones, so the witness is monotone in
// max-pause and a bisection between d's max-pause and the largest finds
// the least; each probe stops at its first witness. A horizon at its
// derived default follows the pause; a horizon given explicitly stays (and
// may be what prevents the witness: the hint then says so).
func Hint(d model.Design, b Bounds) (string, error) {
	pauses, lo := d.Pauses, d.MaxPauseTicks
	if pauses == 0 {
		pauses, lo = 1, 0
	}
	seen := func(m int) (bool, error) {
		dd := model.WithPauses(d, pauses, m)
		rep, err := Check(Config{Design: dd, Properties: []model.Property{model.LockLostProperty},
			Bounds: Bounds{Symmetry: b.Symmetry, Workers: b.Workers, MaxStates: HintMaxStates}})
		if err != nil {
			return false, err
		}
		return rep.Results[0].Status == Seen, nil
	}
	hi := model.MaxWaitTicks
	if lo >= hi {
		return fmt.Sprintf("no pause can be longer than %d ticks: lengthen the work (slow=1) or shorten the TTL", hi), nil
	}
	ok, err := seen(hi)
	if err != nil {
		return "", err
	}
	if !ok {
		return fmt.Sprintf("no pause of up to %d ticks makes a lock expire while held within horizon %d (or %s states): add another fault",
			hi, model.WithPauses(d, pauses, hi).HorizonTicks, thousands(HintMaxStates)), nil
	}
	for hi-lo > 1 { // seen(hi), not seen(lo)
		mid := (lo + hi) / 2
		ok, err := seen(mid)
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
