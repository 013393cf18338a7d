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
	cut := isolated(d, s)
	if (p.Owner != r.Owner || p.Exp != r.Exp || p.Fence != r.Fence) && !cut && !splitBrain(d, s) {
		buf = append(buf, Action{Kind: ActReplicate})
	}
	if d.Partition == PartitionPrimary && !cut {
		return buf // with partition=primary, Sentinel fails over when it cannot see the primary
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
// promoted, with only what it had received (the fence counter too). With
// the primary cut off with some clients (partition=primary), the primary
// does not die: it keeps answering its side (split brain). The promoted
// replica becomes node 0, the clients of the other side use it; the old
// primary moves to node 1 and its clients (FlagOldSide) go on using it.
func failover(d *Design, s *State, ev *Event) {
	s.Failed++
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

func describeReplicate(st *StepRecord) string {
	return fmt.Sprintf("replica: catches up with the primary (key %s, fence %d)", owner(st.Event.Other), st.After.Nodes[1].Fence)
}

func describeFailover(st *StepRecord) string {
	if st.Event.Flags&EvSplit != 0 {
		return fmt.Sprintf("failover: the replica's side cannot see the primary and promotes the replica (key %s there, fence %d); the old primary keeps answering the clients cut off with it: split brain", owner(st.Event.Value), st.After.Nodes[0].Fence)
	}
	return fmt.Sprintf("failover: the primary dies, the replica is promoted (key %s there, fence %d)", owner(st.Event.Value), st.After.Nodes[0].Fence)
}
