package model

import "fmt"

// lock_replica.go: a Redis primary (node 0) with an asynchronously
// replicated replica (node 1). Clients use the primary with the single-key
// rules of lock_redis.go; replication and failover are this file's.

// replicaActions are replication (while the replica lags) and the failover
// fault, offered while the failover budget lasts.
func replicaActions(d *Design, s *State, buf []Action) []Action {
	if d.Lock != LockReplica || int(s.Failed) >= d.Failovers {
		return buf
	}
	p, r := &s.Nodes[0], &s.Nodes[1]
	if p.Owner != r.Owner || p.Exp != r.Exp || p.Fence != r.Fence {
		buf = append(buf, Action{Kind: ActReplicate})
	}
	return append(buf, Action{Kind: ActFailover})
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
// promoted, with only what it had received (the fence counter too).
func failover(s *State, ev *Event) {
	s.Failed++
	ev.Other = s.Nodes[0].Owner
	s.Nodes[0] = s.Nodes[1]
	ev.Value = s.Nodes[0].Owner
}

func describeReplicate(st *StepRecord) string {
	return fmt.Sprintf("replica: catches up with the primary (key %s, fence %d)", owner(st.Event.Other), st.After.Nodes[1].Fence)
}

func describeFailover(st *StepRecord) string {
	return fmt.Sprintf("failover: the primary dies, the replica is promoted (key %s there, fence %d)", owner(st.Event.Value), st.After.Nodes[0].Fence)
}
