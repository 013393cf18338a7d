package model

import (
	"fmt"
	"strings"
)

// fairness.go: bounded bypass, fairness measured (bypass=K).
//
// Starvation (props.go) is fairness as a witness: a client still waits
// for its first lock while another finished all its jobs. Bounded bypass
// is fairness as a number: how many later requesters the lock serves
// before a waiting one. A client's request begins when its acquire
// reaches the service and does not win at once (a refused SET NX it will
// poll again, a ZooKeeper node behind another, a blocked SELECT … FOR
// UPDATE); it ends when the client is granted the lock (it believes it
// holds it), gives the attempt up, or crashes. A grant to another client
// bypasses it if that client asked after it did: its request began later,
// or it won at its first try while this one waited. A first-come,
// first-served queue (ZooKeeper's sequential nodes, etcd's Mutex) serves
// the clients ahead and nobody later, so its bypass is 0; a polling lock
// (SET NX retried every tick) lets a newcomer in between a waiter's polls,
// again and again while the others have jobs left.
//
// bypass=K adds the always-property "bypass" (no waiting client is
// bypassed more than K times) and the witness "bypassed" (some waiting
// client is bypassed at all). The counter lives in the client's Asked byte
// and its arrival order among the waiting clients in Votes (1 the oldest):
// Redlock and the lease use both for their own attempts, and a pooled
// advisory session keeps its backend in Votes, so bypass= is refused there.
// An order (a rank, not a client's name) keeps the state symmetric under
// renaming the clients. The count stops at K+1, so the bound adds no
// states past the first violation. Designs without bypass= leave both
// bytes as they were, and their states as many as before.

// NoBypass is Design.Bypass when fairness is not measured.
const NoBypass = -1

// measuresBypass reports whether design d counts bypasses (bypass=K).
func measuresBypass(d *Design) bool { return d.Bypass != NoBypass }

// Bypass is the bounded-bypass property of a design with bypass=K.
var Bypass = Property{"bypass", Always,
	"no waiting client is bypassed more than bypass= times: served after a client that asked after it (bypass=K)",
	func(d *Design, s *State, ev *Event) bool { return maxBypass(d, s) > d.Bypass }}

// Bypassed is bypass's witness: some waiting client was bypassed.
var Bypassed = Property{"bypassed", Sometimes,
	"a client that asked after a waiting one is served first (bypass=K)",
	func(d *Design, s *State, ev *Event) bool { return maxBypass(d, s) > 0 }}

// maxBypass is the most times a waiting client of s has been bypassed.
func maxBypass(d *Design, s *State) int {
	n := 0
	for i := 0; i < d.Clients; i++ {
		n = max(n, int(s.Clients[i].Asked))
	}
	return n
}

// Bypasses is how often waiting client i of s has been bypassed (bypass=K
// designs; 0 otherwise), for timelines and replays.
func Bypasses(d *Design, s *State, i int) int {
	if !measuresBypass(d) {
		return 0
	}
	return int(s.Clients[i].Asked)
}

// bypassApplies refuses bypass= where it cannot count.
func (d Design) bypassApplies() error {
	switch {
	case !measuresBypass(&d):
		return nil
	case d.Lock == LockRedlock || d.Lock == LockLease || pooledSession(&d):
		return designErr("design parameter bypass does not apply to lock %s%s: its attempts keep their own state where bypass counts (allowed: redis, replica, etcd, zookeeper, etcd-mutex, and advisory but for a session-level lock with pool=tx)", d.Lock, poolWords(&d))
	case d.Lock == LockDB || advisoryXact(&d):
		return designErr("design parameter bypass does not apply to lock %s%s: the model wakes every waiter to race for a released lock, where PostgreSQL queues them (heap_lock_tuple's tuple lock, the lock manager's wait queue), so the count would be the model's, not the server's", d.Lock, xactWords(&d))
	case d.Clients < 2:
		return designErr("design parameter bypass needs clients ≥ 2: one client has nobody to be bypassed by")
	}
	return nil
}

// xactWords names level=xact in bypass's refusal.
func xactWords(d *Design) string {
	if advisoryXact(d) {
		return " with level=xact"
	}
	return ""
}

// poolWords names pool=tx in bypass's refusal.
func poolWords(d *Design) string {
	if pooledSession(d) {
		return " with pool=tx"
	}
	return ""
}

// believing is the set of clients of s that believe they hold the lock.
func believing(d *Design, s *State) uint16 {
	var m uint16
	for i := 0; i < d.Clients; i++ {
		if s.Clients[i].Believes() {
			m |= 1 << i
		}
	}
	return m
}

// trying reports whether client c is still inside its lock request: live,
// not granted, at a step of its acquire, and (a queue) with its entry
// still in the queue: a session that expired while it waited took its
// node or key, and so its request, with it (its next acquire is a new
// request, last in line).
func trying(d *Design, c *Client) bool {
	if !c.Live() || c.Believes() || sessionQueue(d) && c.Flags&FlagZNode == 0 {
		return false
	}
	switch c.Phase {
	case PhaseIncr, PhaseAcquire, PhaseExpire, PhaseAck:
		return true
	}
	return false
}

// countBypass updates the bypass counts after the step a (bypass=K):
// before is who believed before it. Each new grant bypasses every waiting
// client that asked before the granted one; a client whose acquire did
// not win joins the waiting clients, last; a client granted, giving up or
// crashed leaves them.
func countBypass(d *Design, s *State, a Action, before uint16) {
	granted := believing(d, s) &^ before
	top := uint8(d.Bypass + 1)
	for j := 0; j < d.Clients; j++ {
		if granted&(1<<j) == 0 {
			continue
		}
		rj := s.Clients[j].Votes
		for k := 0; k < d.Clients; k++ {
			ck := &s.Clients[k]
			if k != j && ck.Votes != 0 && (rj == 0 || ck.Votes < rj) && ck.Asked < top {
				ck.Asked++
			}
		}
	}
	last := uint8(0)
	for k := 0; k < d.Clients; k++ {
		ck := &s.Clients[k]
		if ck.Votes != 0 && (!trying(d, ck) || a.Kind == ActRestart && k == int(a.Client)) {
			left := ck.Votes
			ck.Votes, ck.Asked = 0, 0
			for m := 0; m < d.Clients; m++ {
				if s.Clients[m].Votes > left {
					s.Clients[m].Votes--
				}
			}
		}
	}
	for k := 0; k < d.Clients; k++ {
		last = max(last, s.Clients[k].Votes)
	}
	if a.Kind == ActAcquire {
		if c := &s.Clients[a.Client]; c.Votes == 0 && trying(d, c) {
			c.Votes = last + 1
		}
	}
}

// bypassNote tells, on the step that granted the lock, whom the grant
// bypassed (bypass=K): "; B asked first and still waits: bypassed 1
// time", with ✗ once a count passes the bound.
func bypassNote(d *Design, st *StepRecord) string {
	if !measuresBypass(d) {
		return ""
	}
	var who []string
	over := false
	for k := 0; k < d.Clients; k++ {
		if n := int(st.After.Clients[k].Asked); n > int(st.Before.Clients[k].Asked) {
			who = append(who, fmt.Sprintf("%s asked first and still waits: bypassed %s", ClientName(k), plural(n, "time", "times")))
			over = over || n > d.Bypass
		}
	}
	if len(who) == 0 {
		return ""
	}
	if over {
		return "  ✗ " + strings.Join(who, "; ")
	}
	return "; " + strings.Join(who, "; ")
}
