package model

import "fmt"

// lock_zookeeper.go: an ephemeral sequential node per client; the lowest
// sequence holds the lock and the next waits on a watch. A client's session
// lives while it heartbeats: a pause longer than the session timeout, or a
// crash, lets the session expire and its node vanish. The sequence number
// is the fencing token.

// zookeeperService is ZooKeeper's words: a session kept by heartbeats.
var zookeeperService = ServiceFacts{
	Noun: "session", Renewer: "watchdog", Beat: "heartbeat",
	BeatLegend: "heartbeat: x = X is paused and sends no heartbeats: its session runs out",
	Frozen:     " is paused: no heartbeats, its session runs out",
	Node:       "ZooKeeper", NodeStory: "the ZooKeeper ensemble",
	Acquire: "lock", Refused: "wait", Renew: "renew",
	Poll:      "create the lock node → wait",
	Expiry:    "%s's session expires: its node vanishes",
	Contended: "a client's node is not the lowest: it waits behind another's",
	Bound:     "session", QueueEntry: "node",
}

// zkAcquireEnabled: a client whose node exists but is not the lowest waits
// on its predecessor's watch.
func zkAcquireEnabled(s *State, i int) bool {
	c := &s.Clients[i]
	return c.Flags&FlagZNode == 0 || s.Nodes[0].Owner == uint8(i+1)
}

// zkAcquire creates the client's node (first time), then holds the lock if
// its node is the lowest.
func zkAcquire(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	key := &s.Nodes[0]
	if !reach(d, s, i, 0) {
		ev.Result = ResUnreachable
		c.Take(d, ActAcquire, Reply{Result: ev.Result}, s.Now)
		return
	}
	if c.Flags&FlagZNode == 0 { // the node's sequence number orders the queue
		takeToken(key, c, ev)
		c.Flags |= FlagZNode
		if d.Check == CheckValidity {
			c.Since, c.Skew = s.Now, 0
		}
		zkOwner(d, s)
	}
	ev.Other = key.Owner
	ev.Result = ResRefused // it waits for the watch on its predecessor
	if key.Owner == uint8(i+1) {
		ev.Result = ResOK
	}
	c.Take(d, ActAcquire, Reply{Result: ev.Result, Token: ev.Token}, s.Now)
}

// zkOwner recomputes who holds a ZooKeeper lock: the lowest live sequence.
func zkOwner(d *Design, s *State) {
	best, owner := uint16(0), uint8(0)
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		if c.Flags&FlagZNode != 0 && (owner == 0 || c.Token < best) {
			best, owner = c.Token, uint8(i+1)
		}
	}
	s.Nodes[0].Owner = owner
}

// zkRelease deletes the client's node.
func zkRelease(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	ev.Result = ResNoop
	if !reach(d, s, i, 0) { // cut off: its node lives until its session expires
		ev.Result = ResUnreachable
		token, node := c.Token, c.Flags&FlagZNode
		ev.Flags |= c.Take(d, ActRelease, Reply{Result: ev.Result}, s.Now).Flags
		if node != 0 {
			c.Flags, c.Token = c.Flags|FlagZNode, token
			c.Timer = s.Now + uint8(d.SessionTicks)
		}
		return
	}
	if c.Flags&FlagZNode != 0 {
		ev.Result = ResOK
		c.Flags &^= FlagZNode
		zkOwner(d, s)
	}
	ev.Flags |= c.Take(d, ActRelease, Reply{Result: ev.Result}, s.Now).Flags
}

// zkTick: the session of client i expires when its timer is reached.
func zkTick(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	if c.Timer != s.Now || c.Timer == 0 {
		return
	}
	c.Timer = 0
	if c.Flags&FlagZNode != 0 { // the session expired: its node vanishes
		if s.Nodes[0].Owner == uint8(i+1) {
			expiredHeld(s, i, ev)
		}
		c.Flags &^= FlagZNode
		zkOwner(d, s)
	}
}

// zkPaused: a pause longer than the session timeout sends no heartbeats,
// so the session will expire.
func zkPaused(d *Design, s *State, i int, p uint8) {
	if int(p) > d.SessionTicks {
		s.Clients[i].Timer = s.Now + uint8(d.SessionTicks)
	}
}

// zkResumed: heartbeats again before the session ran out.
func zkResumed(s *State, i int) {
	if c := &s.Clients[i]; c.Timer != 0 && c.Live() {
		c.Timer = 0
	}
}

// zkCrashed: a crashed client's node lives until its session expires.
func zkCrashed(d *Design, s *State, i int, old Client) {
	if old.Flags&FlagZNode != 0 {
		c := &s.Clients[i]
		c.Flags, c.Token = FlagZNode, old.Token
		c.Timer = s.Now + uint8(d.SessionTicks)
	}
}

// Words.

func describeZKAcquire(d *Design, st *StepRecord) string {
	ev := &st.Event
	i := int(st.Action.Client)
	c := &st.Before.Clients[i]
	if ev.Result == ResUnreachable {
		return fmt.Sprintf("create /lock/n-… → error: cut off (a partition); retry at t=%d", int(ev.Now)+1)
	}
	s := "watch fires: its predecessor is gone"
	if c.Flags&FlagZNode == 0 {
		s = fmt.Sprintf("create /lock/n-%010d (ephemeral, sequential)", st.After.Clients[i].Token)
	}
	if ev.Result == ResOK {
		return s + "; lowest node: holds the lock" + tokenSuffix(d, ev.Token, "sequence")
	}
	return s + "; waits on its predecessor (" + owner(ev.Other) + " node)"
}

func describeZKRelease(ev *Event) string {
	if ev.Result == ResUnreachable {
		return "delete its node → error: cut off (a partition); the node lives until its session expires"
	}
	if ev.Result == ResOK {
		return "delete its node → the next in line is notified"
	}
	return "delete its node → no node (its session expired)"
}

func describeZKPause(d *Design, ev *Event, p uint8) string {
	if int(p) > d.SessionTicks {
		return fmt.Sprintf("; no heartbeats: its session will expire at t=%d", int(ev.Now)+d.SessionTicks)
	}
	return ""
}
