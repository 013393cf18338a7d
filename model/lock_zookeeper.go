package model

import "fmt"

// lock_zookeeper.go: an ephemeral sequential node per client; the lowest
// sequence holds the lock and the next waits on a watch. A client's session
// lives while it heartbeats: a pause longer than the session timeout, or a
// crash, lets the session expire and its node vanish. The sequence number
// is the fencing token.
//
// protect= is what a client does when the reply to its create is lost
// (losses=N with lose-at=acquire or any). protect=yes is Curator's
// protected mode (CreateBuilder.withProtection: the node's name carries a
// GUID, and the retry first searches the parent for it) and go-zookeeper's
// Lock (zk v1.0.4, lock.go: Lock.LockWithData creates through
// Conn.CreateProtectedEphemeralSequential, conn.go, which prefixes the
// name with "_c_" and a random GUID and, on ErrConnectionClosed, lists
// the parent's children and returns the node with its GUID): the client
// finds its node again. protect=no is a recipe that calls Create(…,
// FlagEphemeral|FlagSequence) again when the first call returned no name:
// the first node stays, owned by the client's session, which is alive, and
// the client does not know of it (an orphan node). It is dropped only when
// that session ends (a pause or a partition that outlives it, a crash);
// a client's session outlives its job (its process keeps its connection).
// An orphan that is the lowest node holds the lock for no one: its client
// waits behind it with its second node, and so does everyone else.
//
// State (protect=no only): node slots 1 … losses are the orphan nodes, in
// sequence order: Owner the client whose session owns it, Fence its
// sequence. Node 0's Owner is the owner of the lowest node, known or
// orphan (zkOwner); a client holds the lock only if its own known node is
// the lowest (zkHolds).

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

// Protect is whether a ZooKeeper client finds again the node of a create
// whose reply was lost.
type Protect uint8

const (
	ProtectYes Protect = iota // Curator's protected mode; go-zookeeper's Lock
	ProtectNo                 // a plain create, sent again: the first node is an orphan
	numProtects
)

var protectAxis = axis{"protect", []string{"yes", "no"}, []string{
	"zookeeper: a create whose reply is lost is found again by the GUID in its name (Curator's protected mode; go-zookeeper's Lock) (default)",
	"zookeeper: a plain create, sent again when its reply is lost: the first node stays, owned by the client's live session, unknown to it",
}}

func (m Protect) String() string { return word(protectAxis, int(m)) }

// unprotected reports whether d's ZooKeeper clients create again, without
// looking for the node of a create whose reply was lost.
func unprotected(d *Design) bool { return d.Lock == LockZooKeeper && d.Protect == ProtectNo }

// orphanSlots is how many node slots (from slot 1) hold orphan nodes.
func orphanSlots(d *Design) int {
	if unprotected(d) {
		return d.Losses
	}
	return 0
}

// protectApplies refuses protect=no where no create's reply can be lost.
func (d Design) protectApplies() error {
	if d.Protect == ProtectNo && (d.Losses == 0 || d.LoseAt != PlaceAny && d.LoseAt != PlaceAcquire) {
		return designErr("design parameter protect=no applies only with losses ≥ 1 and lose-at=any or acquire: only a create whose reply is lost leaves a node its client does not know of")
	}
	return nil
}

// zkHolds reports whether client i holds the lock: its own known node is
// the lowest (node 0's Owner is i's, and no orphan of i's is lower).
func zkHolds(d *Design, s *State, i int) bool {
	c := &s.Clients[i]
	if s.Nodes[0].Owner != uint8(i+1) || c.Flags&FlagZNode == 0 {
		return false
	}
	for k := 1; k <= orphanSlots(d); k++ {
		if n := &s.Nodes[k]; n.Owner == uint8(i+1) && n.Fence < c.Token {
			return false
		}
	}
	return true
}

// zkAcquireEnabled: a client whose node exists but is not the lowest waits
// on its predecessor's watch.
func zkAcquireEnabled(d *Design, s *State, i int) bool {
	c := &s.Clients[i]
	return c.Flags&FlagZNode == 0 || zkHolds(d, s, i)
}

// zkLost: client i's create was applied but its reply lost (before is the
// client as it was). Without protected mode the node it created is an
// orphan: its session owns it, the client forgets it and creates another.
func zkLost(d *Design, s *State, i int, before *Client) {
	c := &s.Clients[i]
	if !unprotected(d) || before.Flags&FlagZNode != 0 || c.Flags&FlagZNode == 0 {
		return
	}
	for k := 1; k <= d.Losses; k++ { // the next free slot: sequences only grow
		if n := &s.Nodes[k]; n.Owner == 0 {
			n.Owner, n.Fence = uint8(i+1), c.Token
			break
		}
	}
	c.Flags &^= FlagZNode
	c.Token = before.Token
}

// ownsOrphan reports whether client i's session owns an orphan node.
func ownsOrphan(d *Design, s *State, i int) bool {
	for k := 1; k <= orphanSlots(d); k++ {
		if s.Nodes[k].Owner == uint8(i+1) {
			return true
		}
	}
	return false
}

// dropOrphans removes client i's orphan nodes (its session ended),
// keeping the others in sequence order from slot 1.
func dropOrphans(d *Design, s *State, i int) {
	to := 1
	for k := 1; k <= orphanSlots(d); k++ {
		if n := s.Nodes[k]; n.Owner != uint8(i+1) {
			s.Nodes[k] = Node{}
			s.Nodes[to] = n
			to++
		} else {
			s.Nodes[k] = Node{}
		}
	}
}

// zkOrphanHeld is the client whose orphan node holds the lock for ever:
// the lowest node is one its client does not know of, and its session
// will not end by itself (no expiry is due: the client heartbeats); or -1.
func zkOrphanHeld(d *Design, s *State) int {
	o := int(s.Nodes[0].Owner) - 1
	if o < 0 || zkHolds(d, s, o) || s.Clients[o].Timer != 0 || !ownsOrphan(d, s, o) {
		return -1
	}
	if c := &s.Clients[o]; c.Flags&FlagZNode != 0 {
		for k := 1; k <= orphanSlots(d); k++ { // its known node is lower than every orphan: it holds
			if n := &s.Nodes[k]; n.Owner == uint8(o+1) && n.Fence < c.Token {
				return o
			}
		}
		return -1
	}
	return o
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
	if zkHolds(d, s, i) {
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
	for k := 1; k <= orphanSlots(d); k++ {
		if n := &s.Nodes[k]; n.Owner != 0 && (owner == 0 || n.Fence < best) {
			best, owner = n.Fence, n.Owner
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

// zkForgets reports whether a ZooKeeper client may forget a node it still
// has (release-fail=forget with lose=request): the only way a node
// outlives its holder's job with its session alive.
func zkForgets(d *Design) bool {
	return d.Lock == LockZooKeeper && d.ReleaseFail == ReleaseFailForget && d.Lose == LoseRequest
}

// zkOrphan reports whether c's node outlives its job for ever: c is done
// or crashed, and its session will never expire (no timer: the process
// lives on and heartbeats).
func zkOrphan(c *Client) bool { return !c.Live() && c.Flags&FlagZNode != 0 && c.Timer == 0 }

// zkTick: the session of client i expires when its timer is reached.
func zkTick(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	if c.Timer != s.Now || c.Timer == 0 {
		return
	}
	c.Timer = 0
	if c.Flags&FlagZNode != 0 || ownsOrphan(d, s, i) { // the session expired: its nodes vanish
		if s.Nodes[0].Owner == uint8(i+1) {
			expiredHeld(s, i, ev)
		}
		c.Flags &^= FlagZNode
		dropOrphans(d, s, i)
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

// zkCrashed: a crashed client's node (and orphans) live until its
// session expires: a session timeout after the crash, or, when the
// session had already stopped hearing from the client (cut off for
// longer than the timeout), when that timeout runs out.
func zkCrashed(d *Design, s *State, i int, old Client) {
	c := &s.Clients[i]
	expires := s.Now + uint8(d.SessionTicks)
	if old.Timer != 0 && old.Timer < expires {
		expires = old.Timer
	}
	c.Marks |= old.Marks & MarkReader // etcd-mutex, readers=K: its key is still a read key
	if old.Flags&FlagZNode != 0 {
		c.Flags, c.Token = FlagZNode, old.Token
		c.Timer = expires
	} else if ownsOrphan(d, s, i) {
		c.Timer = expires
	}
}

// Words.

// describeOrphanHeld says that client o's orphan node holds the lock.
func describeOrphanHeld(d *Design, s *State, o int) string {
	seq := uint16(0)
	for k := 1; k <= orphanSlots(d); k++ {
		if n := &s.Nodes[k]; n.Owner == uint8(o+1) && (seq == 0 || n.Fence < seq) {
			seq = n.Fence
		}
	}
	return fmt.Sprintf("the lowest node, /lock/n-%010d, is %s's: its session, alive, owns it, but %s does not know of it (the create's reply was lost, and without protected mode %s creates another instead of finding it); the node lives as long as %s's session, which heartbeats, and every client, %s too, waits behind it", seq, ClientName(o), ClientName(o), ClientName(o), ClientName(o), ClientName(o))
}

func describeZKAcquire(d *Design, st *StepRecord) string {
	ev := &st.Event
	i := int(st.Action.Client)
	c := &st.Before.Clients[i]
	if ev.Result == ResUnreachable {
		return fmt.Sprintf("create /lock/n-… → error: cut off (a partition); retry at t=%d", int(ev.Now)+1)
	}
	s := "watch fires: its predecessor is gone"
	if d.Losses > 0 { // after a lost reply too: the recipe lists the children
		s = fmt.Sprintf("lists /lock: its node /lock/n-%010d is there", c.Token)
	}
	if c.Flags&FlagZNode == 0 {
		s = fmt.Sprintf("create /lock/n-%010d (ephemeral, sequential)", st.After.Nodes[0].Fence)
	}
	if ev.Result == ResOK {
		return s + "; lowest node: holds the lock" + tokenSuffix(d, ev.Token, "sequence")
	}
	if ev.Other == uint8(i+1) {
		return s + "; waits: the lowest node is its own earlier one, which it does not know is its own"
	}
	return s + "; waits on its predecessor (" + owner(ev.Other) + " node)"
}

// describeZKLost: what a lost create's reply leaves.
func describeZKLost(d *Design, st *StepRecord) string {
	i := int(st.Action.Client)
	switch {
	case d.Lock != LockZooKeeper || st.Before.Clients[i].Flags&FlagZNode != 0 || st.After.Nodes[0].Fence == st.Before.Nodes[0].Fence:
		return ""
	case unprotected(d):
		return "; without protected mode it will not look for that node: it creates another, and its session keeps this one"
	}
	return "; protected mode: its retry will find that node by the GUID in its name"
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
