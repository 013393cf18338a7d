package model

import "fmt"

// lock_etcd.go: an etcd lease with a TTL (kept alive by renew=k), the lock
// key put in a transaction if absent (the single-key rules of
// lock_redis.go), the key's create_revision as the fencing token. When the
// lease expires the server deletes the key and wakes the waiters.

// etcdService is etcd's words: a lease kept alive.
var etcdService = ServiceFacts{
	Noun: "lease", Renewer: "keep-alive", Beat: "keep-alive",
	BeatLegend: "keep-alive: X renewed its lease (X! failed); x = due, but frozen with X (paused)",
	Frozen:     "'s keep-alive is due but frozen with it: no renewal",
	Node:       "etcd", NodeStory: "the etcd cluster",
	Acquire: "put", Refused: "exists", Renew: "keep-alive",
	Poll:      "txn put-if-absent → not put",
	Expiry:    "%s's lease expires: its key is deleted",
	Contended: "a client's put-if-absent transaction is refused because another holds the key",
	Bound:     "lease",
}

// etcdDeleted: a delete is a new revision of the cluster (tracked only when
// tokens are used, so that states stay few).
func etcdDeleted(d *Design, key *Node) {
	if d.Fence != FenceNone {
		key.Fence++
	}
}

// Words.

func describeEtcdAcquire(d *Design, st *StepRecord) string {
	ev := &st.Event
	s := fmt.Sprintf("txn: if create_revision(lock/order-42) = 0 then put with lease (TTL %d)", d.TTLTicks)
	if ev.Result == ResOK {
		return s + " → OK" + tokenSuffix(d, ev.Token, "revision")
	}
	if n := &st.Before.Nodes[0]; n.Owner == 0 && n.Hold != 0 {
		return s + fmt.Sprintf(" → refused: lock-delay after an expired lease, free at t=%d; retry at t=%d", n.Hold, int(ev.Now)+1)
	}
	return s + fmt.Sprintf(" → the key is %s; retry at t=%d", owner(ev.Other), int(ev.Now)+1)
}

func describeEtcdRelease(ev *Event) string {
	if ev.Result == ResOK {
		return "delete its key (revoke the lease) → deleted"
	}
	return "delete its key → nothing: its lease has expired"
}

// describeKeepAlive tells a keep-alive: renewed; failed because the
// client is cut off while its lease still runs (it says until when); or
// failed because the lease has expired (or the key is another's).
func describeKeepAlive(d *Design, st *StepRecord) string {
	ev := &st.Event
	if ev.Result == ResOK {
		return fmt.Sprintf("keep-alive: lease renewed (valid until t=%d)", int(ev.Now)+d.TTLTicks)
	}
	i := int(st.Action.Client)
	key := &st.Before.Nodes[keyNode(&st.Before, i)]
	mine := key.Owner == uint8(i+1) && key.Back == 0
	if ev.Result == ResUnreachable {
		if mine && key.Exp > ev.Now {
			return fmt.Sprintf("keep-alive: fails, cut off from etcd (a partition); the lease still runs until t=%d (%d ticks left), then expires; the worker goes on", key.Exp, int(key.Exp)-int(ev.Now))
		}
		return "keep-alive: fails, cut off from etcd (a partition), and the lease has expired; the worker goes on"
	}
	if ev.Other != 0 && ev.Other != uint8(i+1) {
		return fmt.Sprintf("keep-alive: fails, the key is %s (its own lease has expired); the worker goes on", owner(ev.Other))
	}
	return "keep-alive: fails, the lease has expired; the worker goes on"
}
