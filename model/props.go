package model

import (
	"fmt"
	"strings"

	"lockcheck/internal/didyoumean"
)

// Expectation says how a property is judged over all behaviours.
type Expectation uint8

const (
	// Always: no reachable step or state may show the condition (a safety
	// property; a state showing it is a counterexample).
	Always Expectation = iota
	// Sometimes: some reachable step or state should show the condition (a
	// witness that a passing Always check is not vacuous).
	Sometimes
)

func (e Expectation) String() string {
	if e == Sometimes {
		return "sometimes"
	}
	return "always"
}

// Property is a named predicate. Bad reports whether the state s, reached by
// the step whose event is ev (nil for the initial state), shows the
// property's condition: a violation for Always, a witness for Sometimes.
type Property struct {
	Name   string
	Expect Expectation
	Doc    string
	Bad    func(d *Design, s *State, ev *Event) bool
}

// Properties are every property, Always ones first, in a fixed order.
var Properties = []Property{
	{"exclusive", Always,
		"no client reads or writes storage while the key is not its own (the seed's ✗)",
		func(d *Design, s *State, ev *Event) bool { return ev != nil && ev.Flags&EvUnsafe != 0 }},
	// mutex is lock safety, apart from data safety: a fenced design breaks
	// it (two holders) and still loses no update (demo6).
	{"mutex", Always,
		"no two clients believe they hold the lock at once (the service never grants it while an earlier grant is still believed in)",
		func(d *Design, s *State, ev *Event) bool {
			if d.Readers > 0 {
				return rwConflict(d, s) // readers share the lock (lock_etcd_mutex.go)
			}
			return believers(d, s) >= 2
		}},
	{"own-release", Always,
		"a release never removes a lock that another client holds",
		func(d *Design, s *State, ev *Event) bool { return ev != nil && ev.Flags&EvRemovedOther != 0 }},
	{"no-lost-update", Always,
		"when every job has ended, the counter equals the number of accepted writes",
		func(d *Design, s *State, ev *Event) bool {
			return s.Finished(d) && s.Store.Counter != s.Store.Accepted
		}},
	{"progress", Always,
		"no live client waits forever: a lock whose holder finished or crashed frees itself, and a sleeper is woken",
		func(d *Design, s *State, ev *Event) bool { return stuck(d, s) }},
	{"expired-while-held", Sometimes,
		"a key expires while its holder still believes it holds the lock",
		func(d *Design, s *State, ev *Event) bool { return ev != nil && ev.Flags&EvExpiredHeld != 0 }},
	{"contended", Sometimes,
		"a client's SET NX is refused because another holds the key",
		func(d *Design, s *State, ev *Event) bool {
			return ev != nil && ev.Action.Kind == ActAcquire && ev.Result == ResRefused
		}},
	{"fenced", Sometimes,
		"the storage rejects a read or a write",
		func(d *Design, s *State, ev *Event) bool { return ev != nil && ev.Result == ResRejected }},
	{"all-done", Sometimes,
		"every client finishes its job",
		func(d *Design, s *State, ev *Event) bool {
			for i := 0; i < d.Clients; i++ {
				if s.Clients[i].Phase != PhaseDone {
					return false
				}
			}
			return true
		}},
}

// Starvation is fairness, as a witness: with repeated jobs (jobs ≥ 2), a
// state in which a client still waits for its first lock (it has tried,
// it is live, it never held the lock: it is in its first job, at its
// acquire, with no grant on its way) while another client has finished
// every one of its jobs, that is, took the lock jobs times while the first
// waited. Every client starts at t=1, so the waiter has waited since the
// start. It is a Sometimes property, liveness and not safety: seen means
// the lock let one client in again and again while another waited (Redis
// polling, a pub/sub wake-up race); not seen, within the bounds, means no
// schedule does (ZooKeeper's queue is first come, first served). It is
// checked only on designs with jobs ≥ 2 (PropertiesFor); the search is
// bounded by the horizon, so "for ever" means "while the others finished
// all their jobs".
var Starvation = Property{"starvation", Sometimes,
	"a client still waits for its first lock while another has finished all its jobs (jobs ≥ 2)",
	func(d *Design, s *State, ev *Event) bool { return starved(d, s) >= 0 }}

// starved is a client that waits for its first lock while another has
// finished all its jobs, or -1.
func starved(d *Design, s *State) int {
	if d.Jobs < 2 {
		return -1
	}
	done := false
	for i := 0; i < d.Clients && !done; i++ {
		done = s.Clients[i].Phase == PhaseDone
	}
	if !done {
		return -1
	}
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		if c.Job == 0 && c.Flags&FlagStarted != 0 && (c.Phase == PhaseAcquire || c.Phase == firstPhase(d)) &&
			c.Flags&(FlagBelieves|FlagReply) == 0 && c.Marks&MarkRestarts == 0 {
			return i
		}
	}
	return -1
}

// PropertiesFor is every property that applies to design d: Properties,
// and Starvation when its clients run several jobs each.
func PropertiesFor(d *Design) []Property {
	if d.Jobs < 2 && d.Lock != LockLease && !measuresBypass(d) {
		return Properties
	}
	ps := append([]Property(nil), Properties...)
	if d.Lock == LockLease {
		ps = append(ps, Grace) // lock_lease.go
	}
	if d.Jobs >= 2 {
		ps = append(ps, Starvation)
	}
	if measuresBypass(d) {
		ps = append(ps, Bypass, Bypassed) // fairness.go
	}
	return ps
}

// believers counts the clients that believe they hold the lock and are
// still inside their critical section. Belief starts only when the service
// grants the lock (an acquire's reply, a Redlock quorum, the lowest
// ZooKeeper node) and ends at the release or a crash, so two believers at
// once are two grants that overlap. A client whose next step is its release
// (its work done or given up, or a release whose reply was lost and will be
// resent) has left the critical section: it acts on nothing but the lock.
func believers(d *Design, s *State) int {
	n := 0
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		if InCriticalSection(c.Flags&FlagBelieves != 0, c.Phase) {
			n++
		}
	}
	return n
}

// InCriticalSection reports whether a client that believes it holds the
// lock (believes) and whose next step is p is inside its critical section:
// one whose next step is its release has left it. mutex counts these; a
// real client's replay (reality) counts its own the same way.
func InCriticalSection(believes bool, p Phase) bool {
	return believes && p != PhaseRelease && p != PhaseDel
}

// stuck: some live client can never get the lock: a key with no expiry
// whose holder will never release it (done or crashed, or restarted and
// waiting on it), or (wait=notify)
// no key at all while every live client sleeps until a release that nobody
// will make. Sessions (ZooKeeper) and idle timeouts (db) free a lock by
// themselves, except where a lock can be held for ever by no client that
// believes in it (HeldForEver: an orphan ZooKeeper node of a live session,
// a pooled backend's lock): a live client then waits for ever, or gets in
// only as a re-entry of a lock that is not its own.
func stuck(d *Design, s *State) bool {
	// The search asks this of every step of every design, and a stuck
	// node is rare: the node scan comes first and the clients are read
	// only when it finds one, or for wait=notify with no key.
	if leaks(d) && HeldForEver(d, s) >= 0 {
		return anyLive(d, s)
	}
	if stuckFree(d) {
		return false
	}
	node := StuckNode(d, s)
	if node < 0 && (d.Wait != WaitNotify || s.Nodes[0].Owner != 0) {
		return false
	}
	anyLive, allWaiting := false, true
	for i := 0; i < d.Clients; i++ {
		if c := &s.Clients[i]; c.Live() {
			anyLive = true
			if c.Flags&FlagWaiting == 0 {
				allWaiting = false
			}
		}
	}
	return anyLive && (node >= 0 || allWaiting)
}

// anyLive reports whether some client is live.
func anyLive(d *Design, s *State) bool {
	for i := 0; i < d.Clients; i++ {
		if s.Clients[i].Live() {
			return true
		}
	}
	return false
}

// StuckNode is a lock node whose key never expires and that its owner will
// never release (done, crashed, or a live client that no longer knows of
// it), or -1.
func StuckNode(d *Design, s *State) int {
	for k, nodes := 0, lockNodes(d); k < nodes; k++ {
		n := &s.Nodes[k]
		if n.Owner == 0 || n.Exp != 0 {
			continue
		}
		if d.Lock == LockZooKeeper { // the node's end is its session's (zkOrphan)
			if zkOrphan(&s.Clients[n.Owner-1]) {
				return k
			}
			continue
		}
		if !s.Clients[n.Owner-1].Live() || forgotten(d, s, int(n.Owner-1)) {
			return k
		}
	}
	return -1
}

// forgotten reports whether client i, live, holds a key it does not know
// of: it is back at its acquire with no reply on its way, so the key is an
// earlier process's or job's (restarts, jobs=N), or its own SET NX's whose
// reply was lost (a one-job design too: its resent SET NX is refused by
// its own key), and it waits on it like everyone else. A reentrant lock
// (reenter=owner) lets the same client in again on a one-job design,
// where the owner is the client itself.
func forgotten(d *Design, s *State, i int) bool {
	c := &s.Clients[i]
	return (tracksValues(d) || d.Reenter != ReenterOwner) && d.Lock != LockRedlock && (c.Phase == PhaseAcquire || c.Phase == firstPhase(d)) &&
		c.Flags&(FlagBelieves|FlagReply|FlagInFlight) == 0
}

// PropertyByName finds a property (Starvation, Grace and the bypass pair too).
func PropertyByName(name string) (Property, bool) {
	for _, p := range append(Properties[:len(Properties):len(Properties)], Starvation, Grace, Bypass, Bypassed) {
		if p.Name == name {
			return p, true
		}
	}
	return Property{}, false
}

// PropertyNames lists the names, in order: Starvation, the lease's Grace
// and bypass's pair (fairness.go) last.
func PropertyNames() []string {
	names := make([]string, 0, len(Properties)+4)
	for _, p := range Properties {
		names = append(names, p.Name)
	}
	return append(names, Starvation.Name, Grace.Name, Bypass.Name, Bypassed.Name)
}

// ParsePropertiesFor is ParseProperties for design d: "all" gives
// PropertiesFor(d).
func ParsePropertiesFor(d *Design, list string) ([]Property, error) {
	if strings.TrimSpace(list) == "all" {
		return PropertiesFor(d), nil
	}
	return ParseProperties(list)
}

// ParseProperties reads a comma-separated list of property names ("all" =
// every property). An empty list is an error: it names no property, and
// taking it for all would hide a script's empty variable.
func ParseProperties(list string) ([]Property, error) {
	list = strings.TrimSpace(list)
	if list == "" {
		return nil, fmt.Errorf("no property given (want a comma-separated list of %s, or all)", strings.Join(PropertyNames(), ", "))
	}
	if list == "all" {
		return append([]Property(nil), Properties...), nil
	}
	var out []Property
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		p, ok := PropertyByName(name)
		if !ok {
			return nil, fmt.Errorf("unknown property %q%s (allowed: %s, or all)", clip(name), didyoumean.Hint(name, append(PropertyNames(), "all")), strings.Join(PropertyNames(), ", "))
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// Class is what an always-property protects.
type Class uint8

const (
	// LockSafety: the lock itself is exclusive (exclusive, mutex,
	// own-release). A lease-based lock loses it whenever a holder outlives
	// its lease (a pause, a slow job, a held request), whatever the TTL.
	LockSafety Class = iota
	// DataSafety: the data the lock protects stays right (no-lost-update):
	// what a fencing token checked by the storage, a compare-and-set or the
	// database's own transaction keeps even when the lock breaks.
	DataSafety
	// Liveness: no live client waits for ever (progress).
	Liveness
	// Fairness: no waiting client is passed over too often (bypass,
	// fairness.go).
	Fairness
)

func (c Class) String() string {
	switch c {
	case DataSafety:
		return "data safety"
	case Liveness:
		return "liveness"
	case Fairness:
		return "fairness"
	}
	return "lock safety"
}

// ClassOf is what the always-property named name protects.
func ClassOf(name string) Class {
	switch name {
	case "no-lost-update":
		return DataSafety
	case "progress":
		return Liveness
	case Bypass.Name:
		return Fairness
	}
	return LockSafety
}

// DocFor is p's Doc in the words of d's lock service: "contended" is a
// refused SET NX only where the lock is a Redis key.
func (p *Property) DocFor(d *Design) string {
	if d.Readers > 0 && (p.Name == "mutex" || p.Name == "exclusive") {
		return rwDocs[p.Name] // lock_etcd_mutex.go
	}
	if w := Service(d.Lock).Contended; p.Name == "contended" && w != "" {
		return w // the service's row (lock_*.go)
	}
	return p.Doc
}
