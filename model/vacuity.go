package model

import "strings"

// vacuity.go: whether a passing always-property exercised anything. A lock
// that is never lost while its holder believes in it makes every safety
// property hold by construction: "holds" then says nothing about the
// design, only that the fault budget never hurt it. The search records, for
// the whole explored space, which actions occurred and whether a lock was
// lost while held; Vacuity turns that into words.

// Coverage.Kinds has a bit per action kind: at most 64 kinds.
var _ [64 - numActionKinds]struct{}

// Coverage is what occurred in an explored space.
type Coverage struct {
	Kinds          uint64 // bit k: an action of kind k occurred
	LockLost       bool   // a lock expired or was taken while its holder believed in it (LockLost)
	ForeignRelease bool   // a release reached a lock (Redlock: a node's key) another client held (ForeignRelease)
	LateRelease    bool   // a late release met its own client's lock of a later job (jobs=N)
	Rejected       bool   // the storage refused a read or a write (a late or resent copy the fence stopped)
	NoExpiry       bool   // a fault left a lock key without expiry (a lost SET NX reply, a crash before EXPIRE; a lost ZooKeeper create's reply)
	RenewSaved     bool   // a renewal kept a key that would have expired before its holder's next step (EvRenewSaved)
}

// Witness bits: what one step showed (Witnesses).
const (
	WitLockLost uint8 = 1 << iota
	WitForeignRelease
	WitLateRelease
	WitRejected
	WitNoExpiry
	WitRenewSaved
	AllWitnesses = WitLockLost | WitForeignRelease | WitLateRelease | WitRejected | WitNoExpiry | WitRenewSaved
)

// Witnesses are the witness bits of the step whose event is ev, reaching s.
func Witnesses(d *Design, s *State, ev *Event) uint8 {
	var w uint8
	if LockLost(d, s, ev) {
		w |= WitLockLost
	}
	if ForeignRelease(d, s, ev) {
		w |= WitForeignRelease
	}
	if ev != nil && ev.Flags&EvOwnLater != 0 {
		w |= WitLateRelease
	}
	if ev != nil && ev.Result == ResRejected {
		w |= WitRejected
	}
	if ev != nil && (d.Acquire == AcquireSetExpire && ev.Action.Kind.IsFault() && keyWithoutExpiry(d, s) || d.Lose == LoseRequest && unappliedRelease(d, s, ev)) {
		w |= WitNoExpiry
	}
	if ev != nil && ev.Action.Kind == ActLose && d.Lock == LockZooKeeper && ev.Token != 0 && s.Clients[ev.Action.Client].Phase == PhaseAcquire {
		w |= WitNoExpiry // a create's reply was lost: a node its client must find again (lock_zookeeper.go)
	}
	if ev != nil && ev.Flags&EvRenewSaved != 0 {
		w |= WitRenewSaved
	}
	return w
}

// keyWithoutExpiry reports whether a lock node of s holds a key that
// never expires.
func keyWithoutExpiry(d *Design, s *State) bool {
	for k, nodes := 0, lockNodes(d); k < nodes; k++ {
		if n := &s.Nodes[k]; n.Owner != 0 && n.Exp == 0 {
			return true
		}
	}
	return false
}

// unappliedRelease reports whether the step lost a release before it
// reached the service (lose=request) and left its client's lock with no
// expiry: a lock that frees itself only if its owner sends the release
// again (release-fail=retry), the test that progress needs.
func unappliedRelease(d *Design, s *State, ev *Event) bool {
	if ev.Action.Kind != ActLose || d.Lose != LoseRequest {
		return false
	}
	i := int(ev.Action.Client)
	c := &s.Clients[i]
	if c.Live() && c.Phase != PhaseRelease && c.Phase != PhaseDel {
		return false
	}
	n := &s.Nodes[keyNode(s, i)]
	return n.Owner == uint8(i+1) && n.Exp == 0
}

// Unwitnessable are the witness bits that design d can never show (a late
// release of an earlier job needs repeated jobs): a search need not look
// for them.
func Unwitnessable(d *Design) uint8 {
	var w uint8
	if !tracksValues(d) {
		w |= WitLateRelease
	}
	if d.Storage == StoragePlain {
		w |= WitRejected
	}
	if d.Acquire != AcquireSetExpire && !(d.Lock == LockZooKeeper && d.Losses > 0) && (d.Lose != LoseRequest || d.Losses == 0) {
		w |= WitNoExpiry
	}
	if d.RenewTicks == 0 || d.Lock == LockRedlock {
		w |= WitRenewSaved // Redlock's quorum renewal does not mark it yet
	}
	return w
}

// Witnessed is c's witness bits.
func (c *Coverage) Witnessed() uint8 {
	var w uint8
	if c.LockLost {
		w |= WitLockLost
	}
	if c.ForeignRelease {
		w |= WitForeignRelease
	}
	if c.LateRelease {
		w |= WitLateRelease
	}
	if c.Rejected {
		w |= WitRejected
	}
	if c.NoExpiry {
		w |= WitNoExpiry
	}
	if c.RenewSaved {
		w |= WitRenewSaved
	}
	return w
}

// AddWitnesses records witness bits w.
func (c *Coverage) AddWitnesses(w uint8) {
	c.LockLost = c.LockLost || w&WitLockLost != 0
	c.ForeignRelease = c.ForeignRelease || w&WitForeignRelease != 0
	c.LateRelease = c.LateRelease || w&WitLateRelease != 0
	c.Rejected = c.Rejected || w&WitRejected != 0
	c.NoExpiry = c.NoExpiry || w&WitNoExpiry != 0
	c.RenewSaved = c.RenewSaved || w&WitRenewSaved != 0
}

// ForeignRelease reports whether the step is a release (or get-del's DEL)
// that reached the lock while another client held it: a late or retried
// release, the test that own-release needs. For Redlock it is a node's key,
// as own-release's violation is: the release reached a node, up and not cut
// off, whose key was another client's (redlockRelease's ev.Other).
func ForeignRelease(d *Design, s *State, ev *Event) bool {
	if ev == nil || (ev.Action.Kind != ActRelease && ev.Action.Kind != ActDel) {
		return false
	}
	return ev.Other != 0 && ev.Other != ev.Action.Client+1
}

// Note records one step's action kind (the search ORs kinds itself, for
// speed; Note is for drivers that replay).
func (c *Coverage) Note(a Action) { c.Kinds |= 1 << (uint(a.Kind) & 63) }

// Faults lists the fault kinds that occurred, in action order.
func (c *Coverage) Faults() []ActionKind {
	var out []ActionKind
	for k := ActionKind(0); k < numActionKinds && k < 64; k++ {
		if c.Kinds&(1<<k) != 0 && k.IsFault() {
			out = append(out, k)
		}
	}
	return out
}

// FaultWords is Faults as words, "none" if none: "pause, crash".
func (c *Coverage) FaultWords() string {
	var w []string
	for _, k := range c.Faults() {
		w = append(w, k.String())
	}
	if len(w) == 0 {
		return "none"
	}
	return strings.Join(w, ", ")
}

// LockLost reports whether the step whose event is ev, reaching s, took a
// lock from a client that still believes it holds it: its key, lease or
// session expired (a pause, a slow job, a clock jump), a release removed
// it, or a lock-node fault (crash, failover) lost it. It is the witness
// that a passing safety property was put to the test.
func LockLost(d *Design, s *State, ev *Event) bool {
	if ev == nil {
		return false
	}
	if ev.Flags&(EvExpiredHeld|EvRemovedOther) != 0 {
		return true
	}
	if d.Lock == LockEtcdMutex && ev.Flags&EvExpired != 0 {
		return true // a waiter's key expired in the queue: does it still take the lock?
	}
	if ev.Flags&EvOwnLater != 0 && ev.Result == ResOK && s.Clients[ev.Action.Client].Believes() {
		return true // a late release of its own deleted the lock it holds (value=process)
	}
	if k := ev.Action.Kind; k.ByClient() || k == ActTick {
		return false // a client's own step, or a tick without an expiry in use
	}
	for i := 0; i < d.Clients; i++ {
		if s.Clients[i].Believes() && !HoldsLock(d, s, i) {
			return true
		}
	}
	return false
}

// LockLostProperty is LockLost as a sometimes-property, for searches that
// look for the witness alone (the vacuity hint).
var LockLostProperty = Property{"lock-lost", Sometimes,
	"a lock expires or is lost while its holder still believes it holds it",
	LockLost}

// Vacuity says why the always-property p, which held, held vacuously over
// an explored space with coverage c: "" when its witness occurred. The
// safety properties need a lock lost while held; own-release needs that or
// a release that reached another's lock; progress needs a lost lock or a
// crashed client (a lock whose holder is gone).
func Vacuity(p *Property, c *Coverage) string {
	if p.Expect != Always || c.LockLost {
		return ""
	}
	if c.RenewSaved && (p.Name == "exclusive" || p.Name == "mutex" || p.Name == "no-lost-update") {
		// a renewal kept a lock its holder would otherwise have lost
		// before its next step: the fault reached the lock and the
		// watchdog stood
		return ""
	}
	switch p.Name {
	case "exclusive", "mutex":
		// a late release that met its own client's next lock and left it
		// alone (value=job) is the test these needed; for exclusive, so is
		// a late or resent request that the storage refused
		if c.LateRelease || (p.Name == "exclusive" && c.Rejected) {
			return ""
		}
	case "no-lost-update":
		// the storage's own faults put data safety to the test with the
		// lock intact: a stale read, a failover that loses the highest
		// token, a fencing counter that restarts empty
		// so does a late or resent copy of a request that the storage
		// refused: the fault reached the data and the fence stopped it
		if c.Kinds&(1<<ActStaleRead|1<<ActStorageFailover|1<<ActCounterCrash) != 0 || c.LateRelease || c.Rejected {
			return ""
		}
	case "own-release":
		if c.ForeignRelease {
			return ""
		}
		return "no lock expired or was lost while held and no release reached another's lock"
	case "progress":
		// and a key a fault left without expiry (a lost SET NX reply, a
		// crash between SET NX and EXPIRE) is a lock that frees itself only
		// if its owner knows of it
		if c.Kinds&(1<<ActCrash|1<<ActHang|1<<ActRestart) != 0 || c.NoExpiry {
			return ""
		}
		return "no lock expired or was lost while held, no client crashed and no fault left a key without expiry"
	}
	return "no lock expired or was lost while held"
}
