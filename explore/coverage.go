package explore

import "lockcheck/model"

// coverage.go: the search's counts of what its steps did (TLC's
// -coverage). Each worker counts the steps of its own units (an increment
// of a table in the unit, beside the step it counts); the tables are
// summed when a level is done, so the counts are the same for any number
// of workers and a level cut short by a bound counts nothing.

// noClient is the column of stepTable for steps that no client takes
// (ticks, replication, lock-node and storage faults).
const noClient = model.NumPhases

// stepTable counts one unit's steps by action kind and by the phase of the
// client that took each (its phase before the step; noClient for none). A
// unit has at most 256 states of fewer than 2^16 actions each, so uint32
// does not overflow. Its sides are powers of two, so that the hot path
// indexes it with a mask and no bounds check.
type stepTable [kindsPow2][phasesPow2]uint32

const (
	kindsPow2  = 32 // at least model.NumActionKinds
	phasesPow2 = 16 // at least model.NumPhases + 1
)

var (
	_ [kindsPow2 - model.NumActionKinds]struct{}
	_ [phasesPow2 - model.NumPhases - 1]struct{}
)

// byClient[k] is model.ActionKind(k).ByClient(), by mask.
var byClient = func() (b [kindsPow2]bool) {
	for k := range model.NumActionKinds {
		b[k] = model.ActionKind(k).ByClient()
	}
	return b
}()

// Counts are the steps and states of the explored space, counted: every
// step of every state the search expanded (the levels a bound cut short
// not counted; with Config.Allow only the allowed steps). A state's step
// is counted whether or not its successor was new, so that Transitions is
// the sum of Steps.
type Counts struct {
	// Steps[k][p] is the steps of action kind k taken by a client in
	// phase p (before the step: the step it was about to take, or the one
	// a fault fell before); Steps[k][model.NumPhases] those of no client
	// (ticks, replication, lock-node and storage faults).
	Steps [model.NumActionKinds][model.NumPhases + 1]int64
	// Phases[p] is the number of (state, client) pairs, over the states
	// expanded, with the client in phase p: how often the search met a
	// client at that point of its job.
	Phases [model.NumPhases]int64
}

// add sums unit u's counts into c.
func (c *Counts) add(u *unit) {
	for k := range c.Steps {
		for p := range c.Steps[k] {
			c.Steps[k][p] += int64(u.steps[k][p])
		}
	}
	for p := range c.Phases {
		c.Phases[p] += int64(u.phases[p])
	}
}

// addCounts sums o into c.
func (c *Counts) addCounts(o *Counts) {
	for k := range o.Steps {
		for p, n := range o.Steps[k] {
			c.Steps[k][p] += n
		}
	}
	for p, n := range o.Phases {
		c.Phases[p] += n
	}
}

// Kind is the number of steps of kind k.
func (c *Counts) Kind(k model.ActionKind) int64 {
	var n int64
	if int(k) < model.NumActionKinds {
		for _, v := range c.Steps[k] {
			n += v
		}
	}
	return n
}

// kinds has bit k set for every kind that occurred.
func (c *Counts) kinds() uint64 {
	var b uint64
	for k := range c.Steps {
		if c.Kind(model.ActionKind(k)) != 0 {
			b |= 1 << k
		}
	}
	return b
}

// Total is the number of steps counted (Stats.Transitions for a search
// that no bound cut short).
func (c *Counts) Total() int64 {
	var n int64
	for k := range c.Steps {
		n += c.Kind(model.ActionKind(k))
	}
	return n
}

// Never lists what design d's rules can do (model.PossibleKinds and
// PossiblePhases) but the counted steps never did: the action kinds
// without a fault that no step took, the fault kinds, and the client
// phases no expanded state had a client in. Each in order.
func (c *Counts) Never(d *model.Design) (actions, faults []model.ActionKind, phases []model.Phase) {
	kinds := model.PossibleKinds(d)
	for k := model.ActionKind(0); int(k) < model.NumActionKinds; k++ {
		if kinds&(1<<k) == 0 || c.Kind(k) != 0 {
			continue
		}
		if k.IsFault() {
			faults = append(faults, k)
		} else {
			actions = append(actions, k)
		}
	}
	ph := model.PossiblePhases(d)
	for p := model.Phase(0); int(p) < model.NumPhases; p++ {
		if ph&(1<<p) != 0 && c.Phases[p] == 0 {
			phases = append(phases, p)
		}
	}
	return actions, faults, phases
}
