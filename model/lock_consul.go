package model

import "fmt"

// lock_consul.go: a Consul session lock, as the Go client's api.Lock takes
// it (github.com/hashicorp/consul/api v1.35.0, lock.go). Lock.Lock creates
// a session (createSession: a SessionEntry with the TTL and LockDelay,
// default 15 s each), starts Session.RenewPeriodic (session.go: a renewal
// every TTL/2), and puts the key with ?acquire=<session> (KV.Acquire); a
// refused acquire waits on a blocking query until the key changes, or,
// when the key has no session (a lock-delay is in effect), retries after
// DefaultLockRetryTime. Unlock is KV.Release (?release=<session>), which
// frees the key only while its session still holds it, then destroys the
// session. monitorLock watches the key and closes the lock's channel when
// the session no longer holds it: a worker that does not select on that
// channel goes on (the model's worker does not).
//
// The server (agent/consul/session_ttl.go, resetSessionTimerLocked)
// invalidates a session whose TTL passed without a renewal, but multiplies
// the TTL by structs.SessionTTLMultiplier (2) first: the session, and the
// lock, last up to twice the TTL after the last renewal (the contract is
// only "not before the TTL"). Invalidation (state/session.go,
// deleteSessionTxn) either releases the session's keys (behavior=release,
// the default) or deletes them (behavior=delete), and in both cases sets
// the session's lock-delay on them: no session may acquire the key before
// it ends (the KVS endpoint refuses a lock whose lock-delay has not
// expired). An explicit release sets no lock-delay.
//
// The fencing token (fence=write|rw) is an index of the key: its LockIndex
// (index=lock), which state/kvs.go's kvsLockTxn sets to the old LockIndex
// + 1 when a new session acquires an existing key and to 1 when it creates
// the key, so that a key deleted by behavior=delete starts again at 1; or
// its ModifyIndex (index=modify), the Raft index of the key's last write,
// which only grows.
//
// The single-key rules of lock_redis.go serve it (node 0 is the key: Owner
// the client whose session holds it, Exp the session's invalidation, Hold
// the lock-delay, Fence the index the token is taken from), with renew=k
// as RenewPeriodic. No Consul server is installed here: model only.

// consulService is Consul's words.
var consulService = ServiceFacts{
	Noun: "session", Renewer: "session renewal", Beat: "renew",
	BeatLegend: "renew: X renewed its session (X! failed); x = due, but frozen with X (paused)",
	Frozen:     "'s session renewal is due but frozen with it: no renewal",
	Node:       "Consul", NodeStory: "the Consul servers",
	Acquire: "acquire", Refused: "false", Renew: "renew",
	Poll:      "PUT lock/order-42?acquire → false",
	Expiry:    "%s's session is invalidated (2 × its TTL without a renewal): the key is released",
	Contended: "a client's acquire is refused because another session holds the key (or a lock-delay holds it back)",
	Bound:     "session",
	Unplayed:  "no Consul server is installed here: Consul sessions are modelled only",
}

// ConsulBehavior is what a Consul session's invalidation does to its keys.
type ConsulBehavior uint8

const (
	BehaviorRelease ConsulBehavior = iota // the keys lose their session (SessionBehaviorRelease)
	BehaviorDelete                        // the keys are deleted (SessionBehaviorDelete)
	numConsulBehaviors
)

var behaviorAxis = axis{"behavior", []string{"release", "delete"}, []string{
	"consul: an invalidated session's key is released: it stays, with no session (default)",
	"consul: an invalidated session's key is deleted: the next acquire creates it again, LockIndex 1",
}}

func (m ConsulBehavior) String() string { return word(behaviorAxis, int(m)) }

// ConsulIndex is which index of the key a Consul lock's token is.
type ConsulIndex uint8

const (
	IndexLock   ConsulIndex = iota // LockIndex: acquisitions of the key
	IndexModify                    // ModifyIndex: the Raft index of its last write
	numConsulIndexes
)

var indexAxis = axis{"index", []string{"lock", "modify"}, []string{
	"consul: the fencing token is the key's LockIndex (1 when the key is created) (default)",
	"consul: the fencing token is the key's ModifyIndex (the Raft index of its last write)",
}}

func (m ConsulIndex) String() string { return word(indexAxis, int(m)) }

// consulEnd is when a session renewed (or created) at now is invalidated:
// 2 × the TTL later (SessionTTLMultiplier).
func consulEnd(d *Design, now uint8) uint8 { return now + uint8(2*d.TTLTicks) }

// consulWritten: a write of the key (a release, an invalidation) is a
// new Raft index, its ModifyIndex (tracked only when it is the token).
func consulWritten(d *Design, key *Node) {
	if d.Index == IndexModify && d.Fence != FenceNone {
		key.Fence++
	}
}

// consulInvalidated: the server invalidates the session that holds key
// (then unlock releases it and wakes the waiters). behavior=delete deletes
// the key, and with it its LockIndex: the next acquire creates it at 1.
func consulInvalidated(d *Design, key *Node) {
	if d.Behavior == BehaviorDelete && d.Index == IndexLock {
		key.Fence = 0
	}
}

// consulApplies refuses Consul parameters that could not act.
func (d Design) consulApplies() error {
	if d.Lock != LockConsul {
		return nil
	}
	if d.Index == IndexModify && d.Fence == FenceNone {
		return designErr("design parameter index=modify applies only with fence=write or rw: with fence=none no token is taken")
	}
	if d.RenewTicks >= 2*d.TTLTicks {
		return designErr("design parameter renew=%d with ttl=%d: the server invalidates the session 2 × ttl = %d ticks after its last renewal, before the renewal is due; want renew below it (RenewPeriodic renews at ttl/2)", d.RenewTicks, d.TTLTicks, 2*d.TTLTicks)
	}
	if 2*d.TTLTicks > MaxWaitTicks {
		return designErr("design parameter ttl=%d for lock consul: the session lives 2 × ttl = %d ticks, more than %d; want ttl at most %d", d.TTLTicks, 2*d.TTLTicks, MaxWaitTicks, MaxWaitTicks/2)
	}
	return nil
}

// Words.

func consulIndexWord(d *Design) string {
	if d.Index == IndexModify {
		return "ModifyIndex"
	}
	return "LockIndex"
}

func describeConsulAcquire(d *Design, st *StepRecord) string {
	ev := &st.Event
	s := "PUT lock/order-42?acquire=<its session>"
	switch ev.Result {
	case ResOK:
		return s + fmt.Sprintf(" → true (session TTL %d: invalidated at t=%d unless renewed)", d.TTLTicks, consulEnd(d, ev.Now)) + tokenSuffix(d, ev.Token, consulIndexWord(d))
	case ResUnreachable:
		return s + fmt.Sprintf(" → error: cut off (a partition); retry at t=%d", int(ev.Now)+1)
	}
	if n := &st.Before.Nodes[0]; n.Owner == 0 && n.Hold != 0 {
		return s + fmt.Sprintf(" → false: lock-delay after an invalidated session, free at t=%d; retry at t=%d", n.Hold, int(ev.Now)+1)
	}
	return s + fmt.Sprintf(" → false: %s session holds the key; retry at t=%d", owner(ev.Other), int(ev.Now)+1)
}

func describeConsulRelease(ev *Event) string {
	switch ev.Result {
	case ResOK:
		return "PUT lock/order-42?release=<its session> → true; its session destroyed"
	case ResUnreachable:
		return "PUT lock/order-42?release=<its session> → error: cut off (a partition); the session lives until it is invalidated"
	}
	return "PUT lock/order-42?release=<its session> → false: its session no longer holds the key (invalidated)"
}

func describeConsulRenew(d *Design, st *StepRecord) string {
	ev := &st.Event
	switch ev.Result {
	case ResOK:
		return fmt.Sprintf("PUT /v1/session/renew → renewed (invalidated at t=%d unless renewed again: 2 × TTL)", consulEnd(d, ev.Now))
	case ResUnreachable:
		return "PUT /v1/session/renew → error: cut off (a partition); the worker goes on"
	}
	return "PUT /v1/session/renew → session not found (invalidated); the worker goes on"
}

// consulExpiryWords is the invalidation of client i's session.
func consulExpiryWords(d *Design, i int) string {
	what := "the key is released"
	if d.Behavior == BehaviorDelete {
		what = "the key is deleted"
	}
	s := fmt.Sprintf("%s's session is invalidated (2 × its TTL without a renewal): %s", ClientName(i), what)
	if d.LockDelayTicks > 0 {
		s += fmt.Sprintf(", and its lock-delay holds it back for %d ticks", d.LockDelayTicks)
	}
	return s
}
