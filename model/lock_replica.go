package model

import (
	"fmt"
	"strings"
)

// lock_replica.go: a Redis primary (node 0) with asynchronously
// replicated replicas (nodes 1 … replicas=). Clients use the primary with
// the single-key rules of lock_redis.go; replication and failover are this
// file's. Each replica holds a copy of the primary as it was at its last
// catch-up, and the replicas are kept in order of how fresh that copy is
// (node 1 the freshest: the highest replication offset), so that which of
// them is the freshest is in the state without a bit of its own, and
// replicas that differ only by name are one state.

// replicaService is a primary and its replica's words: a Redis node's,
// with its nodes named by their roles.
var replicaService = ServiceFacts{
	Noun: "key", Renewer: "watchdog", Beat: "watchdog",
	BeatLegend: "watchdog: X renewed its key (X! failed); x = due, but frozen with X (paused)",
	Frozen:     "'s watchdog is due but frozen with it: no renewal",
	Node:       "Redis", NodeStory: "the Redis node", Roles: []string{"primary", "replica"}, Replicated: true,
	Acquire: "SET", Refused: "nil", Renew: "renew",
	Poll:   "SET " + LockKey + " … NX → (nil)",
	Expiry: "key " + LockKey + " (%s's) expires",
	Bound:  "TTL",
}

// replicasApply refuses replicas= and acks= where they cannot act.
func (d Design) replicasApply() error {
	switch {
	case d.Acks > 1 && d.Ack != AckWait:
		return designErr("design parameter acks applies only with ack=wait (WAIT acks T)")
	case d.Acks > d.Replicas:
		return designErr("design parameter acks=%d with replicas=%d: WAIT would wait for more replicas than there are; want acks from 1 to %d", d.Acks, d.Replicas, d.Replicas)
	case d.Replicas > 1 && d.Partition == PartitionPrimary:
		return designErr("partition=primary does not apply with replicas=%d (which replicas are cut off with the primary is not modelled); want replicas=1", d.Replicas)
	case d.Promote == PromoteAny && d.Replicas == 1:
		return designErr("promote=any applies only with replicas ≥ 2 (with one replica there is no choice)")
	case d.Promote == PromoteAny && d.Failovers == 0:
		return designErr("promote=any applies only with failovers ≥ 1")
	case d.RejoinTicks > 0 && d.Failovers == 0:
		return designErr("design parameter rejoin applies only with failovers ≥ 1 (how long a failed primary stays down)")
	case d.RejoinTicks > 0 && d.Partition == PartitionPrimary:
		return designErr("design parameter rejoin does not apply with partition=primary (the old primary does not fail there: it keeps answering its side); want rejoin=0")
	case d.Replicas > 1 && d.FsyncTicks > 0 && 2+d.Replicas > MaxNodes:
		return designErr("design parameter fsync does not apply with replicas=%d: no node slot is left for the primary's append-only file; want replicas from 1 to %d", d.Replicas, MaxNodes-2)
	}
	return nil
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
	up := upReplicas(d, s)
	if !isolated(d, s) && !splitBrain(d, s) {
		for k := lagging(d, s); k <= up; k++ {
			buf = append(buf, Action{Kind: ActReplicate, Arg: uint8(k - 1)})
		}
	}
	if over {
		return buf
	}
	if d.Partition == PartitionPrimary && !isolated(d, s) {
		return buf // with partition=primary, Sentinel fails over when it cannot see the primary
	}
	if !nodeFaultAt(d, s, 0) { // node-at=…: only at the primary key's holder's step
		return buf
	}
	if d.RejoinTicks > 0 && s.Nodes[0].Back != 0 { // rejoin=K: a primary that is down does not fail again
		return buf
	}
	buf = append(buf, Action{Kind: ActFailover})
	if d.Promote == PromoteAny {
		for k := 2; k <= up; k++ {
			if p, q := &s.Nodes[k-1], &s.Nodes[k]; p.Owner != q.Owner || p.Exp != q.Exp || p.Fence != q.Fence {
				buf = append(buf, Action{Kind: ActFailover, Arg: uint8(k - 1)})
			} // the same copy as the fresher one: promoting it is the same step
		}
	}
	return buf
}

// lagging is the first replica (1 … replicas) that has not caught up:
// replicas 1 … lagging−1 all have what the primary has (replicas+1 when
// every one has). A replica whose copy equals the primary's behind a
// fresher one that does not is lagging too: its copy is older history
// that happens to read the same, and catching up moves it to the front.
func lagging(d *Design, s *State) int {
	p := &s.Nodes[0]
	up := upReplicas(d, s)
	for k := 1; k <= up; k++ {
		if r := &s.Nodes[k]; p.Owner != r.Owner || p.Exp != r.Exp || p.Fence != r.Fence {
			return k
		}
	}
	return up + 1
}

// upReplicas is how many replicas are up: replicas 1 … upReplicas. A
// failed primary waiting to rejoin (rejoin=K) is a down replica, kept
// after the up ones (the earliest down first); it has no copy, takes no
// replication, acks no WAIT and is not promoted. With rejoin=0 every
// replica is up.
func upReplicas(d *Design, s *State) int {
	for k := 1; k <= d.Replicas; k++ {
		if s.Nodes[k].Back != 0 {
			return k - 1
		}
	}
	return d.Replicas
}

// WAIT's answer, once it has returned by itself, is kept in the client's
// Marks (ackSettle): Redis answers a blocked WAIT in the pass of its event
// loop that reads the acks-th replica's acknowledgement of the client's
// writes (replicas answer the REPLCONF GETACK a blocked WAIT sends at
// once), with the count then (src/replication.c,
// processClientsWaitingReplicas). A replica that catches up after that,
// before the client reads the answer at its wait step, is not in it; and a
// WAIT that has returned stays returned, whatever the replicas' copies
// read later. Three bits, 0 while WAIT blocks (an answer is ≥ acks ≥ 1;
// replicas ≤ MaxNodes−1 = 4): the bits of lease's MarkConfigB and
// MarkCancelled and of etcd-mutex's MarkReader, locks that have no
// replicas.
const (
	MarkAcked uint8 = 1 << 5        // WAIT's answer, times this
	MarkAcks        = 7 * MarkAcked // its three bits
)

// ackReturns reports whether client i's WAIT acks T returns now: it has
// returned by itself (acks= replicas had its acquire: ackSettle), or T
// ticks have passed since its acquire. A client on an old primary's side
// of a split brain has no replica left.
func ackReturns(d *Design, s *State, i int) bool {
	c := &s.Clients[i]
	if d.AckTimeoutTicks > 0 && int(s.Now) >= int(c.Since)+d.AckTimeoutTicks {
		return true
	}
	return c.Marks&MarkAcks != 0
}

// ackSettle runs after every step of an ack=wait design: the WAIT of each
// client in PhaseAck that acks= replicas now have (ackCount) returns, its
// answer the count now, kept until its wait step reads it; a client that
// is not waiting keeps no answer.
//
//go:noinline
func ackSettle(d *Design, s *State) {
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		switch {
		case c.Phase != PhaseAck:
			c.Marks &^= MarkAcks
		case c.Marks&MarkAcks == 0:
			if n := ackCount(d, s, i); n >= d.Acks {
				c.Marks |= uint8(n) * MarkAcked
			}
		}
	}
}

// ackCount is how many replicas have client i's acquire: those that have
// caught up, and those that have its key and token (what came since is
// another's). WAIT's answer.
func ackCount(d *Design, s *State, i int) int {
	if s.Clients[i].Flags&FlagOldSide != 0 {
		return 0
	}
	n := lagging(d, s) - 1
	for k, up := n+1, upReplicas(d, s); k <= up; k++ {
		if r := &s.Nodes[k]; r.Owner == uint8(i+1) && r.Fence >= s.Clients[i].Token {
			n++
		}
	}
	return n
}

// ack is the return of client i's WAIT acks T: the replicas that had its
// acquire when it returned, acks or more (ResOK, ackSettle), or fewer
// after the timeout (the count now). Either way the client goes on with
// the lock: WAIT does not fail the SET, nor roll it back.
func ack(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	n := int(c.Marks / MarkAcked)
	if n == 0 { // still blocked: the timeout
		n = ackCount(d, s, i)
	}
	ev.Result, ev.Value = ResNoop, uint8(n)
	if n >= d.Acks {
		ev.Result = ResOK
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

// replicate: replica k (Arg+1) catches up with the primary; its copy is
// now the freshest, so it moves to the front (node 1) and the fresher
// ones move one back. (Not inlined: its copy's call would make stepTo
// keep s and ev on its stack on every step of every design.)
//
//go:noinline
func replicate(s *State, a Action, ev *Event) {
	k := int(a.Arg) + 1
	back := s.Nodes[k].Back
	copy(s.Nodes[2:k+1], s.Nodes[1:k])
	s.Nodes[1] = s.Nodes[0]
	s.Nodes[1].Back = back
	ev.Result, ev.Other = ResOK, s.Nodes[0].Owner
}

// replicaResync copies the primary to every replica (keeping whether a
// replica is down).
func replicaResync(d *Design, s *State) {
	for k := 1; k <= d.Replicas; k++ {
		back := s.Nodes[k].Back
		s.Nodes[k] = s.Nodes[0]
		s.Nodes[k].Back = back
	}
}

// failover: the primary dies before replicating and the freshest replica
// (node 1) is promoted, with only what it had received (the fence counter
// too); the old primary later rejoins as a replica, resynced from it (it
// stays node 1), and the other replicas go on from where they were, now
// behind the new primary. With rejoin=K the old primary is down K ticks
// first (retire). With
// the primary cut off with some clients (partition=primary), the primary
// does not die: it keeps answering its side (split brain). The promoted
// replica becomes node 0, the clients of the other side use it; the old
// primary moves to node 1 and its clients (FlagOldSide) go on using it.
func failover(d *Design, s *State, a Action, ev *Event) {
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
	} else if d.RejoinTicks == 0 {
		promote(s, int(a.Arg)+1)
	} else if !retire(d, s, int(a.Arg)+1) { // no replica up to promote: the lock service is down
		ackBroken(d, s, ev)
		return
	}
	ev.Value = s.Nodes[0].Owner
	ackBroken(d, s, ev)
	if k := diskNode(d); k >= 0 { // the promoted replica's own append-only file, taken as fsynced
		fsync(s.Nodes[0], &s.Nodes[k])
	}
}

// promote makes replica p the primary (promote=any: Sentinel's choice).
// The replicas fresher than it hold history the new primary never had:
// reconfigured to follow it, they cannot resync partially and take a full
// resync, taken as at once; so does the old primary, back as a replica.
// Replicas 1 … p are then copies of the new primary, the staler ones go
// on from their copies.
func promote(s *State, p int) {
	s.Nodes[0] = s.Nodes[p]
	for k := 1; k < p; k++ {
		back := s.Nodes[k].Back
		s.Nodes[k] = s.Nodes[0]
		s.Nodes[k].Back = back
	}
}

// retire (rejoin=K): the primary dies and stays down K ticks while it
// restarts. Replica p is promoted (promote), and the old primary becomes
// a down replica after the up ones, with no copy: it rejoins when it is
// back (replicaRejoin). With no replica up (replicas=1, the second
// failure while the first failed primary is still down) Sentinel has
// nobody to promote: the primary stays the primary, down K ticks, and
// restarts as a node crash does (persist= says what it keeps); every
// request fails meanwhile, as to a crashed node (lock_redis.go). The
// down replica, back first, would be a replica of a dead primary: it
// comes back with the primary. Reports whether a replica was promoted.
func retire(d *Design, s *State, p int) bool {
	back := s.Now + uint8(d.RejoinTicks)
	if upReplicas(d, s) == 0 {
		n := &s.Nodes[0]
		switch {
		case d.Persist == 0:
			n.Owner, n.Exp = 0, 0
			n.Fence = uint16(d.FirstToken - 1)
		case d.FsyncTicks > 0:
			reload(s, n, &s.Nodes[diskNode(d)])
		}
		n.Back = back
		for k := 1; k <= d.Replicas; k++ {
			s.Nodes[k].Back = max(s.Nodes[k].Back, back)
		}
		return false
	}
	promote(s, p)
	copy(s.Nodes[p:d.Replicas], s.Nodes[p+1:d.Replicas+1])
	s.Nodes[d.Replicas] = Node{Back: back}
	return true
}

// replicaRejoin (rejoin=K): each down replica whose time is reached
// rejoins with a full resync from the primary: a copy of it, now the
// freshest (replica 1). tick then clears its Back.
func replicaRejoin(d *Design, s *State) {
	for k := 1; k <= d.Replicas; k++ {
		if s.Nodes[k].Back == s.Now {
			copy(s.Nodes[2:k+1], s.Nodes[1:k])
			s.Nodes[1] = s.Nodes[0]
			s.Nodes[1].Back = s.Now
		}
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
		replicaResync(d, s)
	}
}

func describeAck(d *Design, st *StepRecord) string {
	cmd := fmt.Sprintf("WAIT %d %d → %d", d.Acks, d.AckTimeoutTicks*1000, st.Event.Value)
	if d.Replicas > 1 {
		return cmd + describeAcks(d, st)
	}
	if st.Event.Result == ResOK {
		if st.Before.Nodes[0].Owner != st.Action.Client+1 {
			return cmd + ": the replica has caught up, but its key is gone meanwhile; the acquire returns and it goes on with the lock"
		}
		return cmd + ": the replica has its key; the acquire returns"
	}
	if st.Before.Clients[st.Action.Client].Flags&FlagOldSide != 0 {
		return cmd + fmt.Sprintf(" after %d ticks: no replica on its side; WAIT rolls nothing back, the acquire returns and it goes on with the lock", d.AckTimeoutTicks)
	}
	return cmd + fmt.Sprintf(" after %d ticks: the replica does not have its key yet; WAIT rolls nothing back, the acquire returns and it goes on with the lock", d.AckTimeoutTicks)
}

// describeAcks is WAIT's answer with several replicas.
func describeAcks(d *Design, st *StepRecord) string {
	n := int(st.Event.Value)
	if st.Event.Result == ResOK {
		if now := ackCount(d, &st.Before, int(st.Action.Client)); now != n { // it returned at an earlier step (ackSettle)
			return fmt.Sprintf(": it returned when %d of %d replicas had its key (%d have it now); the acquire returns", n, d.Replicas, now)
		}
		if st.Before.Nodes[0].Owner != st.Action.Client+1 {
			return fmt.Sprintf(": %d of %d replicas have caught up, but its key is gone meanwhile; the acquire returns and it goes on with the lock", n, d.Replicas)
		}
		return fmt.Sprintf(": %d of %d replicas have its key; the acquire returns", n, d.Replicas)
	}
	return fmt.Sprintf(" after %d ticks: %d of %d replicas have its key, %d wanted; WAIT rolls nothing back, the acquire returns and it goes on with the lock", d.AckTimeoutTicks, n, d.Replicas, d.Acks)
}

// othersFollow says that the replicas not promoted go on from their copies.
func othersFollow(d *Design) string {
	if d.Replicas == 2 {
		return "replica 2 follows the new primary from where it was"
	}
	return fmt.Sprintf("replicas 2 … %d follow the new primary from where they were", d.Replicas)
}

// stalerFollow says what the replicas do after replica p's promotion: the
// fresher ones resync in full, the staler ones go on from their copies.
func stalerFollow(d *Design, p int) string {
	w := "replica 1, fresher than it, resyncs from it in full, and so does the old primary, back as a replica"
	if p > 2 {
		w = fmt.Sprintf("replicas 1 … %d, fresher than it, resync from it in full, and so does the old primary, back as a replica", p-1)
	}
	switch {
	case p+1 == d.Replicas:
		w += fmt.Sprintf("; replica %d follows it from where it was", d.Replicas)
	case p < d.Replicas:
		w += fmt.Sprintf("; replicas %d … %d follow it from where they were", p+1, d.Replicas)
	}
	return w
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

func describeReplicate(d *Design, st *StepRecord) string {
	w := fmt.Sprintf("catches up with the primary (key %s, fence %d)", owner(st.Event.Other), st.After.Nodes[1].Fence)
	switch k := int(st.Action.Arg) + 1; {
	case d.Replicas == 1:
		return "replica: " + w
	case k == 1:
		return "replica 1: " + w
	case k == 2:
		return "replica 2: " + w + "; its copy is now the freshest: it is replica 1, and replica 1 is replica 2"
	default:
		return fmt.Sprintf("replica %d: %s; its copy is now the freshest: it is replica 1, and replicas 1 … %d are 2 … %d", k, w, k-1, k)
	}
}

func describeFailover(d *Design, st *StepRecord) string {
	if d.RejoinTicks > 0 {
		return describeRetire(d, st)
	}
	if p := int(st.Action.Arg) + 1; p > 1 {
		return fmt.Sprintf("failover: the primary dies, and Sentinel promotes replica %d, not the freshest (key %s there, fence %d); %s", p, owner(st.Event.Value), st.After.Nodes[0].Fence, stalerFollow(d, p)) + ackBrokenWords(&st.Event)
	}
	if d.Replicas > 1 {
		return fmt.Sprintf("failover: the primary dies, the freshest replica (replica 1) is promoted (key %s there, fence %d); the old primary comes back as its replica 1, resynced, and %s", owner(st.Event.Value), st.After.Nodes[0].Fence, othersFollow(d)) + ackBrokenWords(&st.Event)
	}
	if st.Event.Flags&EvSplit != 0 {
		return fmt.Sprintf("failover: the replica's side cannot see the primary and promotes the replica (key %s there, fence %d); the old primary keeps answering the clients cut off with it: split brain", owner(st.Event.Value), st.After.Nodes[0].Fence) + ackBrokenWords(&st.Event)
	}
	return fmt.Sprintf("failover: the primary dies, the replica is promoted (key %s there, fence %d)", owner(st.Event.Value), st.After.Nodes[0].Fence) + ackBrokenWords(&st.Event)
}

// describeRetire is a failover's words with rejoin=K: the old primary is
// down K ticks, then rejoins as a replica.
func describeRetire(d *Design, st *StepRecord) string {
	back := int(st.Event.Now) + d.RejoinTicks
	a := &st.After.Nodes[0]
	if a.Back != 0 {
		w := "failover: the primary dies and Sentinel has no replica to promote (its only replica, the old primary, is still restarting): the lock service is down"
		w += fmt.Sprintf("; the primary restarts, still the primary, at t=%d", back)
		switch {
		case d.Persist == 0:
			w += ", its keys lost"
		case d.FsyncTicks > 0:
			w += describeReload(d, st)
		default:
			w += ", its keys kept on disk"
		}
		return w + "; every request fails until then" + ackBrokenWords(&st.Event)
	}
	p, up := int(st.Action.Arg)+1, upReplicas(d, &st.Before)
	who := "replica 1, the freshest one up"
	switch {
	case d.Replicas == 1:
		who = "the replica"
	case up == 1:
		who = "replica 1, the only one up"
	case p > 1:
		who = fmt.Sprintf("replica %d, not the freshest", p)
	}
	w := fmt.Sprintf("failover: the primary dies, and Sentinel promotes %s (key %s there, fence %d); the old primary is down, restarting, until t=%d, then rejoins as a replica with a full resync", who, owner(st.Event.Value), a.Fence, back)
	if p > 1 {
		w += "; " + stalerResync(p)
	}
	switch {
	case up == p+1:
		w += fmt.Sprintf("; replica %d is now replica %d", up, up-1)
	case up > p+1:
		w += fmt.Sprintf("; replicas %d … %d are now %d … %d", p+1, up, p, up-1)
	}
	return w + ackBrokenWords(&st.Event)
}

// stalerResync says that the replicas fresher than replica p, promoted,
// resync from it in full.
func stalerResync(p int) string {
	if p == 2 {
		return "replica 1, fresher than it, resyncs from it in full"
	}
	return fmt.Sprintf("replicas 1 … %d, fresher than it, resync from it in full", p-1)
}
