package model

import (
	"fmt"
	"strings"
)

// lock_replica.go: a Redis primary (node 0) with an asynchronously
// replicated replica (node 1). Clients use the primary with the single-key
// rules of lock_redis.go; replication and failover are this file's.

// replicaService is a primary and its replica's words: a Redis node's,
// with its nodes named by their roles.
var replicaService = ServiceFacts{
	Noun: "key", Renewer: "watchdog", Beat: "watchdog",
	BeatLegend: "watchdog: X renewed its key (X! failed); x = due, but frozen with X (paused)",
	Frozen:     "'s watchdog is due but frozen with it: no renewal",
	Node:       "Redis", NodeStory: "the Redis node", Roles: []string{"primary", "replica"},
	Acquire: "SET", Refused: "nil", Renew: "renew",
	Poll:   "SET " + LockKey + " … NX → (nil)",
	Expiry: "key " + LockKey + " (%s's) expires",
	Bound:  "TTL",
}

// replicaActions are replication (while the replica lags) and the failover
// fault, offered while the failover budget lasts.
func replicaActions(d *Design, s *State, buf []Action) []Action {
	if d.Lock != LockReplica {
		return buf
	}
	over := int(s.Used[FaultFailover]) >= d.Failovers
	if over && d.Ack != AckWait { // with ack=wait the old primary rejoins as the new one's replica
		return buf
	}
	cut := isolated(d, s)
	if !caughtUp(s) && !cut && !splitBrain(d, s) {
		buf = append(buf, Action{Kind: ActReplicate})
	}
	if over {
		return buf
	}
	if d.Partition == PartitionPrimary && !cut {
		return buf // with partition=primary, Sentinel fails over when it cannot see the primary
	}
	if !nodeFaultAt(d, s, 0) { // node-at=…: only at the primary key's holder's step
		return buf
	}
	return append(buf, Action{Kind: ActFailover})
}

// caughtUp reports whether the replica has everything the primary has.
func caughtUp(s *State) bool {
	p, r := &s.Nodes[0], &s.Nodes[1]
	return p.Owner == r.Owner && p.Exp == r.Exp && p.Fence == r.Fence
}

// ackReturns reports whether client i's WAIT 1 T returns now: the replica
// has caught up, or has its key and token (what came since is another's);
// or T ticks have passed since its acquire. A client on an old primary's
// side of a split brain has no replica left.
func ackReturns(d *Design, s *State, i int) bool {
	c := &s.Clients[i]
	if d.AckTimeoutTicks > 0 && int(s.Now) >= int(c.Since)+d.AckTimeoutTicks {
		return true
	}
	return c.Flags&FlagOldSide == 0 && acked(s, i)
}

// acked reports whether the replica has client i's acquire.
func acked(s *State, i int) bool {
	r := &s.Nodes[1]
	return caughtUp(s) || (r.Owner == uint8(i+1) && r.Fence >= s.Clients[i].Token)
}

// ack is the return of client i's WAIT 1 T: 1 if the replica has its
// acquire, 0 after the timeout. Either way the client goes on with the
// lock: WAIT does not fail the SET, nor roll it back.
func ack(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	ev.Result, ev.Value = ResNoop, 0
	if c.Flags&FlagOldSide == 0 && acked(s, i) {
		ev.Result, ev.Value = ResOK, 1
	}
	c.Take(d, ActAck, Reply{Result: ev.Result}, s.Now)
}

// ackBroken: the primary died (a failover, a crash): the clients whose
// WAIT was waiting on it get a connection error; the acquire failed, and
// each tries again at the next tick (on the new primary). Its key may
// already be on the replica: then its own key refuses it until it expires.
func ackBroken(d *Design, s *State, ev *Event) {
	if d.Ack != AckWait {
		return
	}
	for i := 0; i < d.Clients; i++ {
		if c := &s.Clients[i]; c.Phase == PhaseAck && c.Flags&FlagOldSide == 0 {
			c.Phase, c.Ready = PhaseAcquire, s.Now+1
			ev.AckMask |= 1 << i
		}
	}
}

// replicate: the replica catches up with the primary.
func replicate(s *State, ev *Event) {
	replicaResync(s)
	ev.Result, ev.Other = ResOK, s.Nodes[0].Owner
}

// replicaResync copies the primary to the replica (keeping whether the
// replica is down).
func replicaResync(s *State) {
	back := s.Nodes[1].Back
	s.Nodes[1] = s.Nodes[0]
	s.Nodes[1].Back = back
}

// failover: the primary dies before replicating and the replica is
// promoted, with only what it had received (the fence counter too). With
// the primary cut off with some clients (partition=primary), the primary
// does not die: it keeps answering its side (split brain). The promoted
// replica becomes node 0, the clients of the other side use it; the old
// primary moves to node 1 and its clients (FlagOldSide) go on using it.
func failover(d *Design, s *State, ev *Event) {
	s.Used[FaultFailover]++
	ev.Other = s.Nodes[0].Owner
	if isolated(d, s) {
		s.Nodes[0], s.Nodes[1] = s.Nodes[1], s.Nodes[0]
		for i := 0; i < d.Clients; i++ {
			if c := &s.Clients[i]; c.Cut != 0 {
				c.Flags |= FlagOldSide
			}
		}
		ev.Flags |= EvSplit
	} else {
		s.Nodes[0] = s.Nodes[1]
	}
	ev.Value = s.Nodes[0].Owner
	ackBroken(d, s, ev)
	if k := diskNode(d); k >= 0 { // the promoted replica's own append-only file, taken as fsynced
		fsync(s.Nodes[0], &s.Nodes[k])
	}
}

// isolated reports whether the primary is cut off with some clients from
// the replica's side, before any failover (partition=primary).
func isolated(d *Design, s *State) bool {
	if d.Partition != PartitionPrimary {
		return false
	}
	for i := 0; i < d.Clients; i++ {
		if c := &s.Clients[i]; c.Cut != 0 && c.Flags&FlagOldSide == 0 {
			return true
		}
	}
	return false
}

// splitBrain reports whether an old primary still answers some clients
// after a failover.
func splitBrain(d *Design, s *State) bool {
	if d.Partition != PartitionPrimary {
		return false
	}
	for i := 0; i < d.Clients; i++ {
		if s.Clients[i].Flags&FlagOldSide != 0 {
			return true
		}
	}
	return false
}

// primaryIsolated reports whether client i, on the replica's side, cannot
// reach node k because the primary is cut off from that side.
func primaryIsolated(d *Design, s *State, i, k int) bool {
	return k == 0 && d.Partition == PartitionPrimary && s.Clients[i].Cut == 0 && isolated(d, s)
}

// rejoin: when the last client of an old primary's side heals, the old
// primary learns it was replaced and resyncs from the new one as its
// replica: what it granted meanwhile is gone.
func rejoin(d *Design, s *State) {
	if !splitBrain(d, s) {
		replicaResync(s)
	}
}

func describeAck(d *Design, st *StepRecord) string {
	cmd := fmt.Sprintf("WAIT 1 %d", d.AckTimeoutTicks*1000)
	if st.Event.Value == 1 {
		if st.Before.Nodes[0].Owner != st.Action.Client+1 {
			return cmd + " → 1: the replica has caught up, but its key is gone meanwhile; the acquire returns and it goes on with the lock"
		}
		return cmd + " → 1: the replica has its key; the acquire returns"
	}
	if st.Before.Clients[st.Action.Client].Flags&FlagOldSide != 0 {
		return cmd + fmt.Sprintf(" → 0 after %d ticks: no replica on its side; WAIT rolls nothing back, the acquire returns and it goes on with the lock", d.AckTimeoutTicks)
	}
	return cmd + fmt.Sprintf(" → 0 after %d ticks: the replica does not have its key yet; WAIT rolls nothing back, the acquire returns and it goes on with the lock", d.AckTimeoutTicks)
}

// ackBrokenWords names the clients whose WAIT the primary's death broke.
func ackBrokenWords(ev *Event) string {
	if ev.AckMask == 0 {
		return ""
	}
	var who []string
	for i := 0; i < MaxClients; i++ {
		if ev.AckMask&(1<<i) != 0 {
			who = append(who, ClientName(i))
		}
	}
	return "; " + strings.Join(who, ", ") + ": WAIT → error (the primary is gone), the acquire failed, it retries"
}

func describeReplicate(st *StepRecord) string {
	return fmt.Sprintf("replica: catches up with the primary (key %s, fence %d)", owner(st.Event.Other), st.After.Nodes[1].Fence)
}

func describeFailover(st *StepRecord) string {
	if st.Event.Flags&EvSplit != 0 {
		return fmt.Sprintf("failover: the replica's side cannot see the primary and promotes the replica (key %s there, fence %d); the old primary keeps answering the clients cut off with it: split brain", owner(st.Event.Value), st.After.Nodes[0].Fence) + ackBrokenWords(&st.Event)
	}
	return fmt.Sprintf("failover: the primary dies, the replica is promoted (key %s there, fence %d)", owner(st.Event.Value), st.After.Nodes[0].Fence) + ackBrokenWords(&st.Event)
}
