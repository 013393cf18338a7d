package explore

import (
	"fmt"
	"strings"

	"lockcheck/model"
)

// HintMaxStates bounds each search of Hint: a probe that reaches it without
// a witness counts as "not found".
var HintMaxStates = 4_000_000

// Hint says how to make a vacuous verdict on d meaningful: the fault that
// would put it to the test, and its least length, found by search over
// the fault kinds: a pause, a slow job, a partition and a network delay,
// in the order that suits the question d asks. A design whose budget has
// network faults (a partition, a held or lost request) and no slow job is
// asked first for a slow job, as a partition or a held request matters
// only while its holder is still working, then for longer network faults
// of its own kinds, then a pause; otherwise first for longer network
// faults it has, then a pause (pauses=1 when d has none), a slow job, and
// the network faults it has not. The first kind that works is the answer.
// For each kind, the least length (max-pause, slow-work, partition-ticks,
// max-delay) at which some lock expires or is lost while its holder
// believes in it: longer faults allow every behaviour of shorter ones, so
// the witness is monotone in the length; a first probe at the derived
// default (else at the largest) finds a length that works, and a
// bisection down to d's own finds the least; each probe stops at its
// first witness. A probe cut short by HintMaxStates counts as not found;
// a kind the design cannot have is skipped. A horizon at its derived
// default follows the fault; a horizon given explicitly stays.
func Hint(d model.Design, b Bounds) (string, error) {
	// the network's faults: a partition that outlasts the lease (its
	// holder cannot renew or heartbeat), a request or an acquire's reply
	// held in the network while the TTL runs; a kind the design already
	// has is asked first, lengthened
	var own, other []hintKind
	for _, k := range []hintKind{partitionHint(d), delayHint(d)} {
		if k.has {
			own = append(own, k)
		} else {
			other = append(other, k)
		}
	}
	var kinds []hintKind
	if (d.Partitions > 0 || d.Delays > 0 || d.Losses > 0) && d.SlowJobs == 0 {
		kinds = append(append([]hintKind{slowHint(d)}, own...), pauseHint(d))
	} else {
		kinds = append(own, pauseHint(d), slowHint(d))
	}
	kinds = append(kinds, other...)
	var notFound []string
	for i := range kinds {
		k := &kinds[i]
		if k.lo >= model.MaxWaitTicks {
			notFound = append(notFound, fmt.Sprintf("no %s can be longer than %d ticks", k.fault, model.MaxWaitTicks))
			continue
		}
		m, complete, err := leastLength(d, b, k)
		if err != nil {
			return "", err
		}
		if m > 0 {
			return k.words(m), nil
		}
		if k.invalid {
			continue // the design cannot have this fault: nothing to say
		}
		if complete {
			notFound = append(notFound, fmt.Sprintf("no %s of up to %d ticks makes a lock expire while held within horizon %d",
				k.fault, model.MaxWaitTicks, k.with(model.MaxWaitTicks).HorizonTicks))
		} else {
			notFound = append(notFound, fmt.Sprintf("no %s of up to %d ticks was found to make a lock expire while held within %s states of search",
				k.fault, model.MaxWaitTicks, thousands(HintMaxStates)))
		}
	}
	return strings.Join(notFound, "; ") + ": add another fault", nil
}

// hintKind is one fault kind Hint may suggest: d with that fault of
// length m, the length d already has (not enough), the derived default,
// and the advice for the least length found.
type hintKind struct {
	fault   string
	with    func(m int) model.Design
	lo, def int
	words   func(m int) string
	has     bool // d's budget already has this fault
	invalid bool // set by leastLength: no length of it makes a valid design
}

func pauseHint(d model.Design) hintKind {
	pauses, lo := d.Pauses, d.MaxPauseTicks
	if pauses == 0 {
		pauses, lo = 1, 0
	}
	return hintKind{fault: "pause", lo: lo, def: model.DerivedMaxPause(&d),
		with: func(m int) model.Design { return model.WithPauses(d, pauses, m) },
		words: func(m int) string {
			if d.Pauses == 0 {
				return fmt.Sprintf("add a pause: pauses=1 and max-pause at least %d", m)
			}
			return fmt.Sprintf("raise max-pause to at least %d", m)
		}}
}

func slowHint(d model.Design) hintKind {
	slow, lo := d.SlowJobs, d.SlowWorkTicks
	if slow == 0 {
		slow, lo = 1, d.WorkTicks
	}
	why := ""
	switch {
	case d.Partitions > 0:
		why = " (a partition matters only while its holder is still working)"
	case d.Delays > 0 || d.Losses > 0:
		why = " (a held or resent request matters only while its holder is still working)"
	}
	return hintKind{fault: "slow job", lo: lo, def: model.DerivedSlowWork(&d),
		with: func(m int) model.Design { return model.WithSlow(d, slow, m) },
		words: func(m int) string {
			if d.SlowJobs == 0 {
				return fmt.Sprintf("add a slow job: slow=1 and slow-work at least %d%s", m, why)
			}
			return fmt.Sprintf("raise slow-work to at least %d%s", m, why)
		}}
}

// partitionHint: a partition of the client from the lock service
// (partition=service unless d says otherwise), partition-ticks long.
func partitionHint(d model.Design) hintKind {
	return networkHint(d, "partition", "partitions", "partition-ticks", d.Partitions, d.PartitionTicks)
}

// delayHint: a request (or an acquire's reply) held in the network,
// max-delay long.
func delayHint(d model.Design) hintKind {
	return networkHint(d, "network delay", "delays", "max-delay", d.Delays, d.MaxDelayTicks)
}

// networkHint is a network fault's hint: count faults of the parameter
// lenName's length (one, from 0, when d has none).
func networkHint(d model.Design, fault, countName, lenName string, count, length int) hintKind {
	n, lo := count, length
	if n == 0 {
		n, lo = 1, 0
	}
	return hintKind{fault: fault, lo: lo, def: max(length, d.TTLTicks+d.WorkTicks+3), has: count > 0,
		with: func(m int) model.Design { return withSettings(d, countName, n, lenName, m) },
		words: func(m int) string {
			if count == 0 {
				return fmt.Sprintf("add a %s: %s=1 and %s at least %d", fault, countName, lenName, m)
			}
			return fmt.Sprintf("raise %s to at least %d", lenName, m)
		}}
}

// withSettings is d with two numbers set (model.Override: a horizon at
// its derived default follows), or a design that fails Validate when d
// cannot have them.
func withSettings(d model.Design, k1 string, v1 int, k2 string, v2 int) model.Design {
	dd, err := model.Override(d, model.Setting{Name: k1, Value: v1}, model.Setting{Name: k2, Value: v2})
	if err != nil {
		d.Clients = 0 // refused: Validate says so
		return d
	}
	return dd
}

// leastLength is the least length of k's fault at which a lock is lost
// while held, 0 if none is found; complete says the last probe that found
// none explored its whole space.
func leastLength(d model.Design, b Bounds, k *hintKind) (int, bool, error) {
	valid := false
	defer func() { k.invalid = !valid }()
	probe := func(m int) (seen, complete bool, err error) {
		dd := k.with(m)
		if err := dd.Validate(); err != nil {
			return false, true, nil // a length the grammar refuses (slow-work = work) shows nothing
		}
		valid = true
		rep, err := Check(Config{Design: dd, Properties: []model.Property{model.LockLostProperty},
			Bounds: Bounds{Symmetry: b.Symmetry, Workers: b.Workers, MaxStates: HintMaxStates}})
		if err != nil {
			return false, false, err
		}
		return rep.Results[0].Status == Seen, rep.Stats.Complete, nil
	}
	top := model.MaxWaitTicks
	lo := k.lo
	hi := min(max(k.def, lo+1), top)
	seen, complete, err := probe(hi)
	if err != nil {
		return 0, false, err
	}
	if !seen && hi < top {
		hi = top
		if seen, complete, err = probe(hi); err != nil {
			return 0, false, err
		}
	}
	if !seen {
		return 0, complete, nil
	}
	for hi-lo > 1 { // seen at hi; not seen (or not found) at lo
		mid := (lo + hi) / 2
		ok, _, err := probe(mid)
		if err != nil {
			return 0, false, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true, nil
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
