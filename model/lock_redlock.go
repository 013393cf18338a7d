package model

import (
	"fmt"
	"strconv"
	"strings"
)

// redlockRenew is the watchdog's extension (redsync's Extend, Redisson's
// renewal): PEXPIRE on every node it can reach whose key is still its own;
// the lock is extended if a quorum was. A failed extension does not stop
// the worker.
func redlockRenew(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	me := uint8(i + 1)
	n, kept := 0, 0 // keys extended; keys that outlive the worker's next step without this renewal
	for k := 0; k < d.Nodes; k++ {
		key := &s.Nodes[k]
		mine := key.Owner == me && key.Back == 0
		if mine && !goneBeforeNextStep(key, c) {
			kept++
		}
		switch {
		case !reach(d, s, i, k):
		case mine:
			key.Exp = keyEnd(d, s.Now)
			n++
		case setsMissingKey(d, key): // extend=setnx: a missing key is set again
			key.Owner, key.Exp = me, keyEnd(d, s.Now)
			n++
		}
	}
	need := majority(d)
	if d.Quorum == QuorumAll {
		need = d.Nodes
	}
	ev.Value = uint8(n)
	if n >= need {
		ev.Result = ResOK
		if kept < need {
			// without this renewal the quorum is gone before the
			// worker's next step: the watchdog is put to the test and holds
			ev.Flags |= EvRenewSaved
		}
	} else {
		ev.Result = ResNoop
	}
	ev.Flags |= c.Take(d, ActRenew, Reply{Result: ev.Result}, s.Now).Flags
}

func describeRedlockRenew(d *Design, ev *Event) string {
	if ev.Result == ResOK {
		return fmt.Sprintf("watchdog: PEXPIRE %s %d on every node → extended on %d of %d (valid until t=%d)", LockKey, d.TTLTicks*1000, ev.Value, d.Nodes, int(ev.Now)+d.TTLTicks)
	}
	then := "the worker goes on"
	if d.RenewFail == RenewFailStop {
		then = "the worker is told and stops"
	}
	return fmt.Sprintf("watchdog: PEXPIRE on every node → extended on %d of %d, no quorum: the extension fails; %s", ev.Value, d.Nodes, then)
}

// lock_redlock.go: Redlock over N independent Redis nodes. A client asks the
// nodes one by one, counts the votes, and holds the lock only with a quorum
// won within the validity time (TTL − elapsed − drift); a lost attempt
// unlocks what it got.

// redlockService is Redlock's words: numbered nodes, a key on each.
var redlockService = ServiceFacts{
	Noun: "keys", Renewer: "watchdog", Beat: "watchdog",
	BeatLegend: "watchdog: X renewed its key (X! failed); x = due, but frozen with X (paused)",
	Frozen:     "'s watchdog is due but frozen with it: no renewal",
	Node:       "Redis", NodeStory: "the Redis node", Numbered: true,
	Acquire: "SET", Refused: "nil", Renew: "renew",
	Poll:      "SET " + LockKey + " … NX on every node → lost the vote",
	Expiry:    "key " + LockKey + " (%s's) expires",
	Contended: "a client's SET NX is refused on a node because another holds the key there",
	Bound:     "TTL",
}

// majority is how many Redlock nodes make the lock held.
func majority(d *Design) int { return d.Nodes/2 + 1 }

// redlockHolds: client i's keys on the nodes that are up, plus the nodes
// that are down (a down node votes for nobody until it is back), make a
// majority. A key kept on a down node (persist=1, restart=N) counts once,
// as a down node: a crash alone neither gives nor takes the lock.
func redlockHolds(d *Design, s *State, i int) bool {
	n := 0
	for k := 0; k < d.Nodes; k++ {
		if s.Nodes[k].Back != 0 || s.Nodes[k].Owner == uint8(i+1) {
			n++
		}
	}
	return n >= majority(d)
}

// redlockHolder is the lock's holder (client+1; 0 none) as client i's step
// meets it: i itself if it holds (redlockHolds), else the lowest-numbered
// client that does. Down nodes count for every client, so two clients may
// both hold; preferring i makes the holder i exactly when HoldsLock(d, s, i),
// the answer the step's ✗ (EvUnsafe) gives.
func redlockHolder(d *Design, s *State, i int) uint8 {
	var keys [MaxClients + 1]int
	down := 0
	for k := 0; k < d.Nodes; k++ {
		n := &s.Nodes[k]
		if n.Back != 0 {
			down++
		} else if int(n.Owner) < len(keys) {
			keys[n.Owner]++
		}
	}
	need := majority(d) - down
	if keys[i+1] >= need {
		return uint8(i + 1)
	}
	for j := 0; j < d.Clients; j++ {
		if keys[j+1] >= need {
			return uint8(j + 1)
		}
	}
	return 0
}

// redlockAcquire asks node c.Asked; after the last node it counts.
func redlockAcquire(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	me := uint8(i + 1)
	if c.Asked == 0 {
		c.Since, c.Skew = s.Now, 0
	}
	k := c.Asked
	n := &s.Nodes[k]
	ev.Node, ev.Other = k, n.Owner
	if !reach(d, s, i, int(k)) {
		ev.Result = ResUnreachable
	} else if n.Back == 0 && (n.Owner == 0 || d.Bug == BugSetWithoutNX) {
		n.Owner, n.Exp = me, keyEnd(d, s.Now)
		ev.Result = ResOK
	} else {
		ev.Result = ResRefused
	}
	t := c.Take(d, ActAcquire, Reply{Result: ev.Result, Node: k, Left: validityLeft(d, s, c)}, s.Now)
	ev.Value = t.Votes
	ev.Flags |= t.Flags
	for k := 0; k < d.Nodes; k++ { // lost: unlock what it got
		if t.Unlock&(1<<k) != 0 && s.Nodes[k].Owner == me {
			s.Nodes[k].Owner, s.Nodes[k].Exp = 0, 0
		}
	}
}

// redlockRelease releases on every node (get-del: GET on every node first).
// ev.Other is the owner of another client's key the release reached (on a
// node up and not cut off from it), the last one it removed if it removed
// any (EvRemovedOther): redsync's unlock is a GET-compare-DEL script run on
// each node, so each such key puts the ownership check to the test
// (ForeignRelease). A plain DEL removes it, even a vote another client won
// mid-acquire, which then counts a majority it does not hold.
func redlockRelease(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	me := uint8(i + 1)
	ev.Other = 0
	if d.Release == ReleaseGetDel && c.Phase == PhaseRelease {
		var own uint8
		for k := 0; k < d.Nodes; k++ {
			if s.Nodes[k].Owner == me {
				own |= 1 << k
			}
			if ev.Other == 0 && redlockForeignKey(d, s, i, k) {
				ev.Other = s.Nodes[k].Owner
			}
		}
		ev.Result, ev.Value = ResOK, own
		c.Take(d, ActRelease, Reply{Result: ResOK, Own: own}, s.Now)
		return
	}
	ev.Result = ResNoop
	for k := 0; k < d.Nodes; k++ {
		n := &s.Nodes[k]
		if ev.Flags&EvRemovedOther == 0 && redlockForeignKey(d, s, i, k) {
			ev.Other = n.Owner
		}
		del := false
		switch d.Release {
		case ReleaseDel:
			del = true
		case ReleaseCAD:
			del = n.Owner == me || d.Bug == BugCADNoCheck
		case ReleaseGetDel:
			del = c.Votes&(1<<k) != 0
		}
		if del && n.Owner != 0 && n.Back == 0 && reach(d, s, i, k) {
			if n.Owner != me {
				ev.Flags |= EvRemovedOther
				ev.Other = n.Owner
			}
			n.Owner, n.Exp = 0, 0
			ev.Result = ResOK
		}
	}
	ev.Flags |= c.Take(d, phaseAction[c.Phase], Reply{Result: ev.Result}, s.Now).Flags
}

// redlockForeignKey reports whether node k is up, reached by client i, and
// holds another client's key.
func redlockForeignKey(d *Design, s *State, i, k int) bool {
	n := &s.Nodes[k]
	return n.Owner != 0 && n.Owner != uint8(i+1) && n.Back == 0 && reach(d, s, i, k)
}

func popcount(x uint8) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// Words.

func describeRedlockAcquire(d *Design, st *StepRecord) string {
	ev := &st.Event
	i := int(st.Action.Client)
	// strconv, not Sprintf: an explorer page tells thousands of these
	s := "SET " + LockKey + " " + LockValue(i) + " NX PX " + strconv.Itoa(int(d.TTLTicks)*1000) + " on node " + strconv.Itoa(int(ev.Node)+1) + " → "
	switch {
	case ev.Result == ResOK:
		s += "OK"
	case ev.Result == ResUnreachable:
		s += "error: cut off (a partition)"
	case st.Before.Nodes[ev.Node].Back != 0:
		s += "error (node down)"
	default:
		s += "(nil), the key there is " + owner(ev.Other)
	}
	s += " [" + strconv.Itoa(int(ev.Value)) + " of " + strconv.Itoa(int(d.Nodes)) + " votes]"
	if int(ev.Node)+1 == d.Nodes {
		c := st.Before.Clients[i]
		if c.Asked == 0 { // the first node: the attempt starts now
			c.Since, c.Skew = ev.Now, 0
		}
		left := validityLeft(d, &st.Before, &c) // Before.Now is the step's tick
		if ev.Flags&EvWon != 0 {
			s += fmt.Sprintf("; lock won, validity %d ticks", left)
		} else {
			s += fmt.Sprintf("; lost (validity %d), unlocks its nodes, retry at t=%d", left, int(ev.Now)+1)
		}
	}
	return s
}

func describeRedlockRelease(d *Design, st *StepRecord) string {
	ev := &st.Event
	if st.Action.Kind == ActRelease && d.Release == ReleaseGetDel {
		return fmt.Sprintf("GET %s on every node → its own on %d", LockKey, popcount(ev.Value))
	}
	if ev.Result == ResOK {
		return "release on every node → deleted"
	}
	return "release on every node → nothing to delete"
}

// redlockExpiryNodes names the nodes on which client i's key expired at a
// tick, and reports whether i no longer holds the lock after it.
func redlockExpiryNodes(d *Design, st *StepRecord, i int) (string, bool) {
	me := uint8(i + 1)
	var nodes []string
	for k := 0; k < d.Nodes; k++ {
		if st.Before.Nodes[k].Owner == me && st.After.Nodes[k].Owner != me {
			nodes = append(nodes, strconv.Itoa(k+1))
		}
	}
	lost := !redlockHolds(d, &st.After, i)
	if len(nodes) == 0 {
		return "", lost
	}
	s := " on " + nodeWords(d, nodes)
	if len(nodes) < d.Nodes {
		s += fmt.Sprintf(" (%s keeps %d of %d, %d needed)", ClientName(i), heldNodes(d, &st.After, i), d.Nodes, majority(d))
	}
	return s, lost
}

// nodeWords names Redlock nodes: "node 3", "nodes 1 and 3", "all 5 nodes".
func nodeWords(d *Design, nodes []string) string {
	switch {
	case len(nodes) == d.Nodes:
		return fmt.Sprintf("all %d nodes", d.Nodes)
	case len(nodes) == 1:
		return "node " + nodes[0]
	}
	return "nodes " + strings.Join(nodes[:len(nodes)-1], ", ") + " and " + nodes[len(nodes)-1]
}

// redlockRemovedWords names the other clients' keys a Redlock release
// removed (EvRemovedOther), and whose lock it was: "B's key on node 3" (a
// vote B won mid-acquire), "B's lock (its keys on nodes 1, 2 and 3)".
func redlockRemovedWords(d *Design, st *StepRecord) string {
	me := st.Action.Client + 1
	var out []string
	for j := 0; j < d.Clients; j++ {
		o := uint8(j + 1)
		if o == me {
			continue
		}
		var nodes []string
		for k := 0; k < d.Nodes; k++ {
			if st.Before.Nodes[k].Owner == o && st.After.Nodes[k].Owner == 0 {
				nodes = append(nodes, strconv.Itoa(k+1))
			}
		}
		switch {
		case len(nodes) == 0:
		case redlockHolds(d, &st.Before, j):
			out = append(out, fmt.Sprintf("%s lock (its keys on %s)", owner(o), nodeWords(d, nodes)))
		case len(nodes) == 1:
			out = append(out, owner(o)+" key on "+nodeWords(d, nodes))
		default:
			out = append(out, owner(o)+" keys on "+nodeWords(d, nodes))
		}
	}
	return strings.Join(out, " and ")
}
