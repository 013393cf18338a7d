package model

import (
	"fmt"
	"strconv"
	"strings"
)

// budget.go: the parameters whose default is derived from the design, so
// that the default fault budget can break the design it checks. A pause of
// at most 15 ticks cannot outlast a TTL of 30: with fixed defaults,
// redis/cad/none/plain,ttl=30 "held" with no fencing at all, because no lock
// ever expired while held. Each derived default is a function of the lock's
// lifetime (the TTL; ZooKeeper: the session timeout) and the job's work,
// equal to the old fixed default at ttl=10, work=2.
//
// A derived parameter is at its default when it equals the value derived
// from the rest of the design: Name leaves it out, ParseDesign derives it
// again, so names round-trip whatever the TTL.

// derivedParam is one parameter whose default is derived.
type derivedParam struct {
	name   string
	field  func(*Design) *int
	derive func(d *Design) int
	rule   string // how, for explore designs
}

// derivedParams are applied in this order: the horizon comes last, as it
// depends on the (derived or given) lengths of the faults.
var derivedParams = []derivedParam{
	{"lock-delay", func(d *Design) *int { return &d.LockDelayTicks },
		func(d *Design) int {
			if d.Lock == LockConsul {
				return d.TTLTicks
			}
			return 0
		},
		"consul: the ttl (the api's defaults: SessionTTL 15 s, LockDelay 15 s); 0 elsewhere"},
	{"max-pause", func(d *Design) *int { return &d.MaxPauseTicks },
		func(d *Design) int { return clampTicks(lifetime(d)+d.WorkTicks+3, MaxWaitTicks) },
		"ttl + work + 3: a pause that falls after the read must outlast the TTL, and then another client must have time to poll, read, work and write"},
	{"slow-work", func(d *Design) *int { return &d.SlowWorkTicks },
		func(d *Design) int { return clampTicks(lifetime(d)+d.WorkTicks, MaxWaitTicks) },
		"ttl + work: the slow job's work outlasts the TTL by the time another client needs for its own job"},
	{"max-delay", func(d *Design) *int { return &d.MaxDelayTicks },
		func(d *Design) int { return clampTicks(lifetime(d)+d.WorkTicks+3, MaxWaitTicks) },
		"ttl + work + 3, as max-pause: a held request must outlast the TTL and the next holder's job"},
	{"partition-ticks", func(d *Design) *int { return &d.PartitionTicks },
		func(d *Design) int { return clampTicks(lifetime(d)+d.WorkTicks+3, MaxWaitTicks) },
		"ttl + work + 3, as max-pause: a partition must outlast the TTL (or the session) and the next holder's job"},
	{"horizon", func(d *Design) *int { return &d.HorizonTicks },
		func(d *Design) int {
			longest := max(d.MaxPauseTicks, d.SlowWorkTicks, d.MaxDelayTicks, d.PartitionTicks)
			return clampTicks(max(40, lifetime(d)+2*longest), MaxHorizonTicks)
		},
		"the larger of 40 and ttl + 2 × the longest of max-pause, slow-work, max-delay and partition-ticks: room for the jobs to finish after the longest fault"},
}

// lifetime is how long a granted lock lives without renewal: the TTL, or a
// ZooKeeper session's timeout (Consul: until another may take it).
func lifetime(d *Design) int {
	if sessionQueue(d) {
		return d.SessionTicks
	}
	if d.Lock == LockConsul { // invalidated 2 × ttl on, then held back by its lock-delay
		return 2*d.TTLTicks + d.LockDelayTicks
	}
	return d.TTLTicks
}

func clampTicks(v, hi int) int { return min(max(v, 1), hi) }

// derivedDefault is the default of parameter name for d: derived from d if
// it is a derived parameter, def otherwise.
func derivedDefault(d *Design, name string, def int) int {
	for _, p := range derivedParams {
		if p.name == name {
			return p.derive(d)
		}
	}
	return def
}

// atDefaults records which derived parameters of d are at their derived
// defaults, before ParseDesign sets the name's parameters.
func atDefaults(d *Design) []bool {
	at := make([]bool, len(derivedParams))
	for i, p := range derivedParams {
		at[i] = *p.field(d) == p.derive(d)
	}
	return at
}

// rederive sets again, from the parameters just set, the derived
// parameters that the name did not give and that were at their defaults
// before (a preset's own values stay).
func rederive(d *Design, given map[string]bool, at []bool) {
	for i, p := range derivedParams {
		if !given[p.name] && at[i] {
			*p.field(d) = p.derive(d)
		}
	}
}

// deriveAll sets every derived parameter to its derived default.
func deriveAll(d *Design) {
	for _, p := range derivedParams {
		*p.field(d) = p.derive(d)
	}
}

// KeepBudget copies from's derived parameters (fault lengths and horizon)
// into d, except those in keys: a design changed on another axis (a longer
// TTL) is checked against the same faults, not re-derived ones.
func KeepBudget(d *Design, from *Design, keys map[string]bool) {
	for _, p := range derivedParams {
		switch {
		case keys[p.name]:
		case p.name == "lock-delay": // the service's, not a fault's: at its default it follows the new design
			if *p.field(from) == p.derive(from) {
				*p.field(d) = p.derive(d)
			}
		case !budgetUsed(d, p.name):
			*p.field(d) = p.derive(d) // a fault the design does not draw: no length to keep
		default:
			*p.field(d) = *p.field(from)
		}
	}
}

// budgetUsed reports whether the fault whose parameter name is has a
// budget in d (parameters of no fault always count as used).
func budgetUsed(d *Design, name string) bool {
	for _, f := range budgetOrder {
		for _, p := range faultTable[f].params {
			if p == name {
				return f.Budget(d) > 0
			}
		}
	}
	return true
}

// describeDerived is the default of a derived parameter in explore
// designs' words, or "".
func describeDerived(name string, def int) string {
	for _, p := range derivedParams {
		if p.name == name {
			return fmt.Sprintf("derived default (%d at ttl=10, work=2): %s", def, p.rule)
		}
	}
	return ""
}

// DerivedParamNames lists the parameters whose default is derived.
func DerivedParamNames() []string {
	var out []string
	for _, p := range derivedParams {
		out = append(out, p.name)
	}
	return out
}

// derivedNote is explore designs' paragraph on derived defaults.
func derivedNote() string {
	return "Defaults of " + strings.Join(DerivedParamNames(), ", ") + " are derived from the design's TTL (zookeeper: session; consul: 2 × ttl + lock-delay) and work, so that\n" +
		"the default fault budget can break the design it checks; a name leaves a parameter out when it equals its derived default.\n"
}

// WithPauses is d with pauses and max-pause set; a horizon at its derived
// default follows the new pause length, a horizon given explicitly stays.
func WithPauses(d Design, pauses, maxPause int) Design {
	derived := d.HorizonTicks == derivedDefault(&d, "horizon", d.HorizonTicks)
	d.Pauses, d.MaxPauseTicks = pauses, maxPause
	if derived {
		d.HorizonTicks = derivedDefault(&d, "horizon", d.HorizonTicks)
	}
	return d
}

// DerivedMaxPause is the max-pause d's TTL and work derive (the default).
func DerivedMaxPause(d *Design) int { return derivedDefault(d, "max-pause", d.MaxPauseTicks) }

// Setting is one numeric design parameter given apart from the name, as a
// command-line flag gives it (-max-pause 30).
type Setting struct {
	Name  string
	Value int
}

// Override sets the given parameters of d, then derives again those derived
// parameters that were at their defaults and are not among them, as
// ParseDesign does for a name: -max-pause 30 lengthens the horizon exactly
// as max-pause=30 in the name would. The result is validated.
func Override(d Design, settings ...Setting) (Design, error) {
	at := atDefaults(&d)
	given := map[string]bool{}
	for _, s := range settings {
		if given[s.Name] {
			return Design{}, designErr("design parameter %q given twice", clip(s.Name))
		}
		given[s.Name] = true
		if err := d.set(s.Name, strconv.Itoa(s.Value)); err != nil {
			return Design{}, err
		}
	}
	rederive(&d, given, at)
	if err := d.Validate(); err != nil {
		return Design{}, err
	}
	return d, nil
}

// GrowBudget lengthens d's faults by as many ticks as its lock lives
// longer than from's (the TTL; ZooKeeper: the session): every pause, slow
// job's work, held request, partition and node clock jump of the budget
// outlasts the new lifetime by as much as it outlasted the old one, and
// the horizon makes room for them (ttl + 2 × the longest fault, at most
// MaxHorizonTicks). No real pause, GC, VM migration or swap is bounded by
// the TTL: a longer TTL checked against the same faults holds only because
// the faults stayed short. It returns how many ticks the faults grew (0: d
// lives no longer than from, and d is unchanged), and false when a fault
// would have to grow past MaxWaitTicks, so that d cannot be judged fairly.
func GrowBudget(d *Design, from *Design) (int, bool) {
	delta := lifetime(d) - lifetime(from)
	if delta <= 0 {
		return 0, true
	}
	grow := func(used bool, f *int) bool {
		if !used {
			return true
		}
		if *f+delta > MaxWaitTicks {
			return false
		}
		*f += delta
		return true
	}
	ok := grow(d.Pauses > 0, &d.MaxPauseTicks)
	ok = grow(d.SlowJobs > 0, &d.SlowWorkTicks) && ok
	ok = grow(d.Delays > 0, &d.MaxDelayTicks) && ok
	ok = grow(d.Partitions > 0, &d.PartitionTicks) && ok
	ok = grow(d.ClockJumps > 0, &d.JumpTicks) && ok
	longest := max(d.MaxPauseTicks, d.SlowWorkTicks, d.MaxDelayTicks, d.PartitionTicks)
	d.HorizonTicks = clampTicks(max(d.HorizonTicks, lifetime(d)+2*longest), MaxHorizonTicks)
	return delta, ok
}

// Lifetime is how long a granted lock lives without renewal: the TTL, or
// a ZooKeeper session's timeout.
func Lifetime(d *Design) int { return lifetime(d) }

// WithSlow is d with slow and slow-work set; a horizon at its derived
// default follows the new work length, a horizon given explicitly stays.
func WithSlow(d Design, slow, work int) Design {
	derived := d.HorizonTicks == derivedDefault(&d, "horizon", d.HorizonTicks)
	d.SlowJobs, d.SlowWorkTicks = slow, work
	if derived {
		d.HorizonTicks = derivedDefault(&d, "horizon", d.HorizonTicks)
	}
	return d
}

// DerivedSlowWork is the slow-work d's TTL and work derive (the default).
func DerivedSlowWork(d *Design) int { return derivedDefault(d, "slow-work", d.SlowWorkTicks) }
