package model

import (
	"fmt"
	"strconv"
	"strings"
)

// ActionKind names what happens in one step. The words are the project's
// one vocabulary: the same in traces, scenario files, rapid's action labels
// and the timeline.
type ActionKind uint8

const (
	ActTick      ActionKind = iota // time moves one tick: keys expire, pauses end
	ActAcquire                     // SET lock NX PX (with INCR when acquire=script); redlock: ask the next node
	ActIncr                        // INCR lock:fence as its own request
	ActExpire                      // EXPIRE lock TTL (acquire=set-expire)
	ActCheck                       // check=validity: is there validity left?
	ActRead                        // read the counter from storage
	ActWrite                       // write read+1 to storage
	ActArrive                      // a write held in the network reaches the storage
	ActRelease                     // release: DEL, check-and-delete, the GET of get-del, db COMMIT
	ActDel                         // the DEL of get-del
	ActRenew                       // the watchdog (keep-alive) extends the TTL
	ActPause                       // fault: freeze the client for Arg ticks
	ActSlow                        // fault: the client's job is slow (work = slow-work)
	ActCrash                       // fault: the client crashes for good
	ActDelay                       // fault: hold the client's write in the network for Arg ticks
	ActReplicate                   // replica: the replica catches up with the primary
	ActFailover                    // fault: the replica is promoted, losing what it had not received
	ActNodeCrash                   // fault: lock node Arg crashes (and restarts after restart ticks)
	ActClockJump                   // fault: lock node Arg's clock jumps forward by jump ticks
	numActionKinds
)

var actionWords = [numActionKinds]string{"tick", "acquire", "incr", "expire", "check", "read", "write", "arrive", "release", "del", "renew",
	"pause", "slow", "crash", "delay", "replicate", "failover", "node-crash", "clock-jump"}

func (k ActionKind) String() string {
	if k < numActionKinds {
		return actionWords[k]
	}
	return "action(" + strconv.Itoa(int(k)) + ")"
}

// IsFault reports whether the action is a fault drawn from the budget rather
// than a step of a client's program, of time or of replication.
func (k ActionKind) IsFault() bool {
	switch k {
	case ActPause, ActSlow, ActCrash, ActDelay, ActFailover, ActNodeCrash, ActClockJump:
		return true
	}
	return false
}

// ByClient reports whether the action is taken by a client (and so names
// one): every action but tick, replicate and the lock-node faults.
func (k ActionKind) ByClient() bool {
	return k != ActTick && k != ActReplicate && k != ActFailover && k != ActNodeCrash && k != ActClockJump
}

func (k ActionKind) hasTicks() bool { return k == ActPause || k == ActDelay }
func (k ActionKind) hasNode() bool  { return k == ActNodeCrash || k == ActClockJump }

// Action is one thing that can happen: a comparable value.
type Action struct {
	Kind   ActionKind
	Client uint8 // which client (client actions only)
	Arg    uint8 // pause or delay length in ticks; node index for node faults
}

// ClientName is A, B, C, … for client 0, 1, 2, ….
func ClientName(i int) string { return string(rune('A' + i)) }

// String is the action in scenario-file words: "tick", "A acquire",
// "B pause 14", "failover", "node-crash 2" (nodes count from 1).
func (a Action) String() string {
	k := a.Kind
	switch {
	case !k.ByClient() && k.hasNode():
		return k.String() + " " + strconv.Itoa(int(a.Arg)+1)
	case !k.ByClient():
		return k.String()
	case k.hasTicks():
		return ClientName(int(a.Client)) + " " + k.String() + " " + strconv.Itoa(int(a.Arg))
	}
	return ClientName(int(a.Client)) + " " + k.String()
}

func verbList() string {
	return strings.Join(actionWords[:], ", ")
}

// ParseAction reads an action written by Action.String.
func ParseAction(s string) (Action, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return Action{}, fmt.Errorf("empty action (verbs: %s)", verbList())
	}
	a := Action{}
	verbAt := 0
	if len(f[0]) == 1 && f[0][0] >= 'A' && f[0][0] < 'A'+MaxClients {
		a.Client = f[0][0] - 'A'
		verbAt = 1
		if len(f) < 2 {
			return Action{}, fmt.Errorf("action %q: want \"<client> <verb>\" (verbs: %s)", clip(s), verbList())
		}
	}
	kind := -1
	for i, w := range actionWords {
		if w == f[verbAt] {
			kind = i
		}
	}
	if kind < 0 {
		return Action{}, fmt.Errorf("action %q: unknown verb %q (verbs: %s; client verbs take a client A-%c first)", clip(s), clip(f[verbAt]), verbList(), 'A'+MaxClients-1)
	}
	a.Kind = ActionKind(kind)
	if a.Kind.ByClient() != (verbAt == 1) {
		if verbAt == 1 {
			return Action{}, fmt.Errorf("action %q: %s takes no client", clip(s), a.Kind)
		}
		return Action{}, fmt.Errorf("action %q: %s needs a client first (\"A %s\")", clip(s), a.Kind, a.Kind)
	}
	args := f[verbAt+1:]
	needArg := a.Kind.hasTicks() || a.Kind.hasNode()
	if !needArg {
		if len(args) != 0 {
			return Action{}, fmt.Errorf("action %q: %s takes no argument", clip(s), a.Kind)
		}
		return a, nil
	}
	if len(args) != 1 {
		return Action{}, fmt.Errorf("action %q: %s takes one number", clip(s), a.Kind)
	}
	n, err := strconv.Atoi(args[0])
	switch {
	case a.Kind.hasTicks() && (err != nil || n < 1 || n > MaxWaitTicks):
		return Action{}, fmt.Errorf("action %q: %s length %q: want 1 to %d ticks", clip(s), a.Kind, clip(args[0]), MaxWaitTicks)
	case a.Kind.hasNode() && (err != nil || n < 1 || n > MaxNodes):
		return Action{}, fmt.Errorf("action %q: node %q: want 1 to %d", clip(s), clip(args[0]), MaxNodes)
	}
	a.Arg = uint8(n)
	if a.Kind.hasNode() {
		a.Arg--
	}
	return a, nil
}

// Result is the answer a request got.
type Result uint8

const (
	ResNone     Result = iota
	ResOK              // SET NX won, INCR/EXPIRE/GET answered, DEL removed the key, db write buffered
	ResRefused         // SET NX found the key: retry next tick (or wait)
	ResAccepted        // storage accepted the read or write
	ResRejected        // storage refused the read or write (fencing, CAS, killed session)
	ResNoop            // release found nothing to delete, EXPIRE found no key, renewal failed
)

// Event flags: what a step caused that properties and the timeline need.
const (
	EvUnsafe       uint16 = 1 << iota // ✗: the client acted on storage without holding the lock
	EvRemovedOther                    // a release removed another client's key
	EvExpired                         // tick: a key expired (or a session, a lease)
	EvExpiredHeld                     // tick: a key expired while its holder still believes in it
	EvResumed                         // tick: a paused client resumed
	EvJobDone                         // the client's job finished (release done)
	EvWon                             // redlock: the last vote won the lock
	EvCommit                          // db: this COMMIT decided the job's write
	EvGiveUp                          // check=validity: no validity left, the job gives up
	EvNodeBack                        // tick: a crashed node came back
)

// Event is what one step did. It is a fixed-size value: no allocation.
type Event struct {
	Action Action
	Now    uint8  // the tick the step happened at (for tick: the new tick)
	Result Result // the answer to the request
	Flags  uint16 // EvUnsafe, …
	Token  uint16 // token sent or received
	MaxTok uint16 // storage's highest token, when it refused
	Value  uint8  // value read or written; GET: owner+1 seen; redlock: votes
	Other  uint8  // the lock's holder (client+1) at the step; 0 none
	Node   uint8  // redlock: the node asked
	Held   uint8  // redlock: nodes the acting client holds at the step
	// For ticks: masks of clients whose key expired / who resumed.
	ExpiredMask uint8
	ResumedMask uint8
}

// lockNodes is how many nodes the design's lock service uses.
func lockNodes(d *Design) int {
	switch d.Lock {
	case LockRedlock:
		return d.Nodes
	case LockReplica:
		return 2
	}
	return 1
}

// crashableNodes is how many nodes (from node 0) a node-crash or clock-jump
// may hit: every Redlock node, the primary of a replica pair, the one Redis.
func crashableNodes(d *Design) int {
	switch d.Lock {
	case LockRedlock:
		return d.Nodes
	case LockRedis, LockReplica:
		return 1
	}
	return 0
}

// majority is how many Redlock nodes make the lock held.
func majority(d *Design) int { return d.Nodes/2 + 1 }

// HoldsLock reports whether client i really holds the lock in s: the key on
// node 0 is its own, or (redlock) its keys on the nodes that are up, plus the
// nodes that are down (a down node votes for nobody until it is back), make
// a majority.
func HoldsLock(d *Design, s *State, i int) bool {
	if d.Lock == LockRedlock {
		n := heldNodes(d, s, i)
		for k := 0; k < d.Nodes; k++ {
			if s.Nodes[k].Back != 0 {
				n++
			}
		}
		return n >= majority(d)
	}
	return s.Nodes[0].Owner == uint8(i+1)
}

func heldNodes(d *Design, s *State, i int) int {
	n := 0
	for k := 0; k < d.Nodes; k++ {
		if s.Nodes[k].Owner == uint8(i+1) {
			n++
		}
	}
	return n
}

// mainStep is the action client i's own thread would take next, if any.
func mainStep(d *Design, s *State, i int) (ActionKind, bool) {
	c := &s.Clients[i]
	if c.Ready != 0 || c.Flags&FlagWaiting != 0 {
		return 0, false
	}
	switch c.Phase {
	case PhaseAcquire:
		if d.Lock == LockZooKeeper && c.Flags&FlagZNode != 0 && s.Nodes[0].Owner != uint8(i+1) {
			return 0, false // waits on its predecessor's watch
		}
	case PhaseRead, PhaseWrite:
		if d.Check == CheckValidity && c.Flags&FlagChecked == 0 {
			return ActCheck, true
		}
	case PhaseArrive:
		return ActArrive, true
	case PhaseDone, PhaseCrashed:
		return 0, false
	}
	return phaseAction[c.Phase], true
}

// renewDue reports whether client i's watchdog must renew now.
func renewDue(d *Design, s *State, i int) bool {
	c := &s.Clients[i]
	return d.RenewTicks > 0 && c.Flags&(FlagBelieves|FlagPaused) == FlagBelieves && c.Timer != 0 && c.Timer <= s.Now && c.Live()
}

// Actions appends to buf the actions enabled in s, in a fixed order: client
// steps by client, then faults by client, then replication and node faults,
// then the tick. The order is deterministic, so a path of indices replays.
func Actions(d *Design, s *State, buf []Action) []Action {
	buf = buf[:0]
	anyStep := false
	anyLive := false
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		if !c.Live() {
			continue
		}
		anyLive = true
		if k, ok := mainStep(d, s, i); ok {
			anyStep = true
			buf = append(buf, Action{Kind: k, Client: uint8(i)})
		}
		if renewDue(d, s, i) {
			anyStep = true
			buf = append(buf, Action{Kind: ActRenew, Client: uint8(i)})
		}
	}
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		if !c.Live() || c.Flags&FlagStarted == 0 || c.Flags&FlagLost != 0 {
			continue
		}
		if int(s.PausesUsed) < d.Pauses && c.Phase != PhaseArrive {
			for p := 1; p <= d.MaxPauseTicks; p++ {
				if int(s.Now)+p > int(c.Ready) { // only pauses that delay it
					buf = append(buf, Action{Kind: ActPause, Client: uint8(i), Arg: uint8(p)})
				}
			}
		}
		if int(s.SlowUsed) < d.SlowJobs && c.Phase == PhaseRead && c.Flags&FlagSlow == 0 && d.SlowWorkTicks != d.WorkTicks {
			buf = append(buf, Action{Kind: ActSlow, Client: uint8(i)})
		}
		if int(s.Delayed) < d.Delays && c.Phase == PhaseWrite && c.Ready == 0 && (d.Check != CheckValidity || c.Flags&FlagChecked != 0) && !(d.Lock == LockDB && d.Tx == TxInside) {
			for p := 1; p <= d.MaxDelayTicks; p++ {
				buf = append(buf, Action{Kind: ActDelay, Client: uint8(i), Arg: uint8(p)})
			}
		}
		if int(s.CrashesUsed) < d.Crashes {
			buf = append(buf, Action{Kind: ActCrash, Client: uint8(i)})
		}
	}
	if anyLive {
		if d.Lock == LockReplica && int(s.Failed) < d.Failovers {
			p, r := &s.Nodes[0], &s.Nodes[1]
			if p.Owner != r.Owner || p.Exp != r.Exp || p.Fence != r.Fence {
				buf = append(buf, Action{Kind: ActReplicate})
			}
			buf = append(buf, Action{Kind: ActFailover})
		}
		for k := 0; k < crashableNodes(d); k++ {
			n := &s.Nodes[k]
			if int(s.NodeCrashed) < d.NodeCrashes && n.Back == 0 {
				buf = append(buf, Action{Kind: ActNodeCrash, Arg: uint8(k)})
			}
			if int(s.Jumped) < d.ClockJumps && n.Owner != 0 && n.Exp != 0 {
				buf = append(buf, Action{Kind: ActClockJump, Arg: uint8(k)})
			}
		}
	}
	if anyLive && int(s.Now) < d.HorizonTicks && (d.Clock == ClockFree || !anyStep) {
		buf = append(buf, Action{Kind: ActTick})
	}
	return buf
}

var phaseAction = [numPhases]ActionKind{
	PhaseIncr:    ActIncr,
	PhaseAcquire: ActAcquire,
	PhaseExpire:  ActExpire,
	PhaseRead:    ActRead,
	PhaseWrite:   ActWrite,
	PhaseArrive:  ActArrive,
	PhaseRelease: ActRelease,
	PhaseDel:     ActDel,
	PhaseReenter: ActAcquire,
}

// Enabled reports whether a is among Actions(d, s).
func Enabled(d *Design, s *State, a Action) bool {
	var buf [128]Action
	for _, b := range Actions(d, s, buf[:0]) {
		if b == a {
			return true
		}
	}
	return false
}

// Step is the model: the state after a, and what a caused. It is pure: s is
// a copy, nothing else is read or written. a must be enabled in s.
func Step(d *Design, s State, a Action) (State, Event) {
	ev := Event{Action: a, Now: s.Now}
	switch a.Kind {
	case ActTick:
		tick(d, &s, &ev)
		return s, ev
	case ActReplicate:
		back := s.Nodes[1].Back
		s.Nodes[1] = s.Nodes[0]
		s.Nodes[1].Back = back
		ev.Result, ev.Other = ResOK, s.Nodes[0].Owner
		return s, ev
	case ActFailover:
		s.Failed++
		ev.Other = s.Nodes[0].Owner
		s.Nodes[0] = s.Nodes[1]
		ev.Value = s.Nodes[0].Owner
		return s, ev
	case ActNodeCrash:
		s.NodeCrashed++
		n := &s.Nodes[a.Arg]
		ev.Other = n.Owner
		if d.Persist == 0 {
			n.Owner, n.Exp = 0, 0
			n.Fence = uint16(d.FirstToken - 1)
		}
		if d.RestartTicks > 0 {
			n.Back = s.Now + uint8(d.RestartTicks)
		}
		if d.Lock == LockReplica {
			// the primary restarts in place and the replica resyncs from it:
			// without persistence the restarted, empty primary empties it too
			back := s.Nodes[1].Back
			s.Nodes[1] = s.Nodes[0]
			s.Nodes[1].Back = back
		}
		return s, ev
	case ActClockJump:
		s.Jumped++
		n := &s.Nodes[a.Arg]
		ev.Other = n.Owner
		if int(n.Exp) <= int(s.Now)+d.JumpTicks {
			expireKey(d, &s, int(a.Arg), &ev)
		} else {
			n.Exp -= uint8(d.JumpTicks)
		}
		return s, ev
	}
	i := int(a.Client)
	c := &s.Clients[i]
	me := uint8(i + 1)
	ev.Other = s.Nodes[0].Owner
	switch a.Kind {
	case ActPause:
		s.PausesUsed++
		c.Ready = s.Now + a.Arg
		c.Flags |= FlagPaused
		if d.Lock == LockZooKeeper && int(a.Arg) > d.SessionTicks {
			c.Timer = s.Now + uint8(d.SessionTicks) // no heartbeats: the session will expire
		}
		return s, ev
	case ActSlow:
		s.SlowUsed++
		c.Flags |= FlagSlow
		return s, ev
	case ActCrash:
		s.CrashesUsed++
		if c.Phase == PhaseArrive {
			c.Flags = FlagStarted | FlagLost // its write is still on its way
			return s, ev
		}
		old := *c
		*c = Client{Phase: PhaseCrashed}
		if d.Lock == LockZooKeeper && old.Flags&FlagZNode != 0 {
			c.Flags, c.Token = FlagZNode, old.Token
			c.Timer = s.Now + uint8(d.SessionTicks)
		}
		return s, ev
	case ActDelay:
		s.Delayed++
		c.Phase = PhaseArrive
		c.Ready = s.Now + a.Arg
		c.Flags &^= FlagChecked
		ev.Token, ev.Value = sentToken(d, c, false), c.Read+1
		return s, ev
	}
	c.Flags |= FlagStarted
	switch a.Kind {
	case ActIncr:
		key := &s.Nodes[0]
		if key.Back != 0 { // the node is down: the INCR fails, try again next tick
			ev.Result = ResRefused
			c.Ready = s.Now + 1
			break
		}
		takeToken(key, c, &ev)
		ev.Result = ResOK
		if d.Acquire == AcquireIncrBefore {
			c.Phase = PhaseAcquire
		} else {
			c.Phase = PhaseRead
		}
	case ActAcquire:
		acquire(d, &s, i, &ev)
	case ActExpire:
		key := &s.Nodes[0]
		c.Phase = PhaseRead
		if key.Owner == 0 || key.Back != 0 {
			ev.Result = ResNoop
			break
		}
		ev.Result = ResOK
		key.Exp = keyEnd(d, s.Now)
	case ActCheck:
		left := int(c.Since) + d.TTLTicks - d.DriftTicks - int(s.Now)
		ev.Value = uint8(max(left, 0))
		if left > 0 {
			ev.Result = ResOK
			c.Flags |= FlagChecked
			break
		}
		ev.Result, ev.Flags = ResNoop, ev.Flags|EvGiveUp
		c.Phase = PhaseRelease
	case ActRead:
		c.Flags &^= FlagChecked
		if !HoldsLock(d, &s, i) {
			ev.Flags |= EvUnsafe
		}
		ev.Held = uint8(heldNodes(d, &s, i))
		tok := sentToken(d, c, true)
		ev.Token = tok
		if d.Lock == LockDB && d.Tx == TxInside {
			if s.Nodes[0].Owner != me { // the session was killed: the SELECT fails
				ev.Result = ResRejected
				c.Phase = PhaseRelease
				break
			}
			s.Nodes[0].Exp = keyEnd(d, s.Now)
		} else if !storageRead(d, &s.Store, tok) {
			ev.Result, ev.MaxTok = ResRejected, s.Store.MaxTok
			c.Phase = PhaseRelease
			break
		}
		ev.Result, ev.Value = ResAccepted, s.Store.Counter
		c.Read, c.Version = s.Store.Counter, s.Store.Version
		c.Phase = PhaseWrite
		if d.Reenter != ReenterNone {
			c.Phase = PhaseReenter
		}
		work := d.WorkTicks
		if c.Flags&FlagSlow != 0 {
			work = d.SlowWorkTicks
		}
		if work > 0 {
			c.Ready = s.Now + uint8(work)
		}
	case ActWrite, ActArrive:
		c.Flags &^= FlagChecked
		if !HoldsLock(d, &s, i) {
			ev.Flags |= EvUnsafe
		}
		ev.Held = uint8(heldNodes(d, &s, i))
		tok := sentToken(d, c, false)
		ev.Token, ev.Value = tok, c.Read+1
		c.Phase = PhaseRelease
		if c.Flags&FlagLost != 0 {
			c.Phase = PhaseCrashed
		}
		if d.Lock == LockDB && d.Tx == TxInside {
			if s.Nodes[0].Owner != me {
				ev.Result = ResRejected
				break
			}
			s.Nodes[0].Exp = keyEnd(d, s.Now)
			c.Flags |= FlagBuffered
			ev.Result = ResOK
			break
		}
		if !storageWrite(d, &s.Store, tok, c.Version) {
			ev.Result, ev.MaxTok = ResRejected, s.Store.MaxTok
			break
		}
		ev.Result = ResAccepted
		s.Store.Counter = c.Read + 1
		s.Store.Accepted++
	case ActRelease, ActDel:
		release(d, &s, i, &ev)
	case ActRenew:
		key := &s.Nodes[0]
		c.Timer = s.Now + uint8(d.RenewTicks)
		if key.Owner == me && key.Back == 0 {
			key.Exp = keyEnd(d, s.Now)
			ev.Result = ResOK
		} else {
			ev.Result = ResNoop // a failed renewal does not stop the worker
		}
	}
	return s, ev
}

// keyEnd is the tick at which a key (lease, session deadline) set now is
// gone: now+TTL (one tick earlier with the planted bug expire-early).
func keyEnd(d *Design, now uint8) uint8 {
	if d.Bug == BugExpireEarly && d.TTLTicks > 1 {
		return now + uint8(d.TTLTicks) - 1
	}
	return now + uint8(d.TTLTicks)
}

// grant makes client i the believer of a lock just won.
func grant(d *Design, s *State, i int) {
	c := &s.Clients[i]
	c.Flags |= FlagBelieves
	c.Phase = PhaseRead
	if d.RenewTicks > 0 {
		c.Timer = s.Now + uint8(d.RenewTicks)
	}
}

// refuse makes client i wait for its next try.
func refuse(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	ev.Result = ResRefused
	if d.Wait == WaitNotify || d.Lock == LockDB {
		c.Flags |= FlagWaiting
	} else {
		c.Ready = s.Now + 1
	}
}

func acquire(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	me := uint8(i + 1)
	key := &s.Nodes[0]
	switch d.Lock {
	case LockRedlock:
		if c.Asked == 0 {
			c.Since, c.Votes = s.Now, 0
		}
		k := c.Asked
		n := &s.Nodes[k]
		ev.Node, ev.Other = k, n.Owner
		if n.Back == 0 && (n.Owner == 0 || d.Bug == BugSetWithoutNX) {
			n.Owner, n.Exp = me, keyEnd(d, s.Now)
			c.Votes |= 1 << k
			ev.Result = ResOK
		} else {
			ev.Result = ResRefused
		}
		c.Asked++
		votes := 0
		for v := c.Votes; v != 0; v &= v - 1 {
			votes++
		}
		ev.Value = uint8(votes)
		if int(c.Asked) < d.Nodes {
			return
		}
		need := majority(d)
		if d.Quorum == QuorumAll {
			need = d.Nodes
		}
		c.Asked = 0
		left := int(c.Since) + d.TTLTicks - d.DriftTicks - int(s.Now)
		if votes >= need && left > 0 {
			ev.Flags |= EvWon
			c.Votes = 0
			grant(d, s, i)
			return
		}
		for k := 0; k < d.Nodes; k++ { // lost: unlock what it got
			if c.Votes&(1<<k) != 0 && s.Nodes[k].Owner == me {
				s.Nodes[k].Owner, s.Nodes[k].Exp = 0, 0
			}
		}
		c.Votes = 0
		c.Ready = s.Now + 1
		return
	case LockZooKeeper:
		if c.Flags&FlagZNode == 0 { // the node's sequence number orders the queue
			takeToken(key, c, ev)
			c.Flags |= FlagZNode
			if d.Check == CheckValidity {
				c.Since = s.Now
			}
			zkOwner(d, s)
		}
		ev.Other = key.Owner
		if key.Owner == me {
			ev.Result = ResOK
			grant(d, s, i)
		} else {
			ev.Result = ResRefused // waits for the watch on its predecessor
		}
		return
	}
	// redis, replica, etcd, db: one key on node 0
	if c.Phase == PhaseReenter {
		reenter(d, s, i, ev)
		return
	}
	if d.Check == CheckValidity {
		c.Since = s.Now // kept only when it is used, so states stay few
	}
	if key.Back != 0 || (key.Owner != 0 && d.Bug != BugSetWithoutNX) {
		refuse(d, s, i, ev)
		return
	}
	ev.Result = ResOK
	key.Owner = me
	key.Exp = keyEnd(d, s.Now)
	grant(d, s, i)
	// etcd and db take acquire=script only: for etcd the token is the put's
	// revision (its create_revision), and a db row lock takes fence=none
	switch d.Acquire {
	case AcquireScript:
		if d.Fence != FenceNone {
			takeToken(key, c, ev)
		}
	case AcquireIncrAfter:
		if d.Fence != FenceNone {
			c.Phase = PhaseIncr
		}
	case AcquireSetExpire:
		key.Exp = 0
		c.Phase = PhaseExpire
		if d.Fence != FenceNone {
			takeToken(key, c, ev)
		}
	}
}

// takeToken hands client c the next number of node key's counter (INCR
// lock:fence, etcd's revision, ZooKeeper's sequence).
func takeToken(key *Node, c *Client, ev *Event) {
	key.Fence++
	c.Token = key.Fence
	ev.Token = c.Token
}

// reenter is the nested acquire of a job that already holds the lock: a
// reentrant lock lets its owner in again (and resets the TTL, as Redisson
// does); a plain SET NX refuses the key's own holder like anyone else.
func reenter(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	me := uint8(i + 1)
	key := &s.Nodes[0]
	mine := d.Reenter == ReenterOwner && key.Owner == me
	if key.Back != 0 || (key.Owner != 0 && !mine && d.Bug != BugSetWithoutNX) {
		ev.Result = ResRefused
		c.Ready = s.Now + 1
		return
	}
	ev.Result = ResOK
	fresh := key.Owner != me
	key.Owner, key.Exp = me, keyEnd(d, s.Now)
	if fresh && d.Fence != FenceNone && d.Acquire == AcquireScript {
		takeToken(key, c, ev)
	}
	c.Phase = PhaseWrite
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

func release(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	me := uint8(i + 1)
	key := &s.Nodes[0]
	switch d.Lock {
	case LockRedlock:
		if d.Release == ReleaseGetDel && c.Phase == PhaseRelease {
			c.Votes = 0
			for k := 0; k < d.Nodes; k++ {
				if s.Nodes[k].Owner == me {
					c.Votes |= 1 << k
				}
			}
			ev.Result, ev.Value = ResOK, c.Votes
			c.Phase = PhaseDel
			return
		}
		ev.Result = ResNoop
		for k := 0; k < d.Nodes; k++ {
			n := &s.Nodes[k]
			del := false
			switch d.Release {
			case ReleaseDel:
				del = true
			case ReleaseCAD:
				del = n.Owner == me || d.Bug == BugCADNoCheck
			case ReleaseGetDel:
				del = c.Votes&(1<<k) != 0
			}
			if del && n.Owner != 0 && n.Back == 0 {
				if n.Owner != me {
					ev.Flags |= EvRemovedOther
					ev.Other = n.Owner
				}
				n.Owner, n.Exp = 0, 0
				ev.Result = ResOK
			}
		}
		finishJob(c, ev)
		return
	case LockZooKeeper:
		ev.Result = ResNoop
		if c.Flags&FlagZNode != 0 {
			ev.Result = ResOK
			c.Flags &^= FlagZNode
			zkOwner(d, s)
		}
		finishJob(c, ev)
		return
	case LockDB:
		if key.Owner == me {
			if c.Flags&FlagBuffered != 0 {
				ev.Flags |= EvCommit
				ev.Result, ev.Value = ResAccepted, c.Read+1
				s.Store.Counter = c.Read + 1
				s.Store.Accepted++
			} else {
				ev.Result = ResOK
			}
			unlock(d, s, key)
		} else if c.Flags&FlagBuffered != 0 {
			ev.Flags |= EvCommit
			ev.Result, ev.Value = ResRejected, c.Read+1 // rolled back: the session was killed
		} else {
			ev.Result = ResNoop
		}
		finishJob(c, ev)
		return
	}
	// redis, replica, etcd: one key on node 0
	if key.Back != 0 { // the node is down: the request fails
		ev.Result = ResNoop
		finishJob(c, ev)
		return
	}
	switch {
	case d.Release == ReleaseDel:
		deleteKey(d, s, me, ev)
		finishJob(c, ev)
	case d.Release == ReleaseCAD:
		if key.Owner == me || (d.Bug == BugCADNoCheck && key.Owner != 0) {
			deleteKey(d, s, me, ev)
		} else {
			ev.Result = ResNoop
		}
		finishJob(c, ev)
	case c.Phase == PhaseRelease: // get-del: the GET
		ev.Result, ev.Value = ResOK, key.Owner
		if key.Owner == me {
			c.Flags |= FlagSawMine
		}
		c.Phase = PhaseDel
	default: // get-del: the DEL
		if c.Flags&FlagSawMine != 0 {
			deleteKey(d, s, me, ev)
		} else {
			ev.Result = ResNoop
		}
		finishJob(c, ev)
	}
}

// unlock frees node 0's lock and wakes every waiting client.
func unlock(d *Design, s *State, key *Node) {
	key.Owner, key.Exp = 0, 0
	if d.Lock == LockEtcd && d.Fence != FenceNone {
		key.Fence++ // the delete is a new revision (tracked only when tokens are used)
	}
	for i := 0; i < d.Clients; i++ {
		s.Clients[i].Flags &^= FlagWaiting
	}
}

func deleteKey(d *Design, s *State, me uint8, ev *Event) {
	key := &s.Nodes[0]
	if key.Owner == 0 {
		ev.Result = ResNoop
		return
	}
	if key.Owner != me {
		ev.Flags |= EvRemovedOther
	}
	ev.Result = ResOK
	unlock(d, s, key)
}

// sentToken is the token the client sends with a read or a write, 0 for none.
func sentToken(d *Design, c *Client, read bool) uint16 {
	if d.Fence == FenceRW || (d.Fence == FenceWrite && !read) {
		return c.Token
	}
	return 0
}

// storageRead applies a read with token tok (0: none); false if refused.
func storageRead(d *Design, st *Storage, tok uint16) bool {
	if tok == 0 {
		return true
	}
	switch d.Storage {
	case StorageMaxToken:
		if tok < st.MaxTok && d.Bug != BugNoTokenCheck {
			return false
		}
		if d.Bug != BugReadNoRecord && tok > st.MaxTok {
			st.MaxTok = tok
		}
	case StorageMaxWrite:
		return tok >= st.MaxTok || d.Bug == BugNoTokenCheck
	}
	return true
}

// storageWrite checks a write with token tok (0: none) and the version the
// client read, records what the storage records, and reports acceptance.
// The caller sets the counter.
func storageWrite(d *Design, st *Storage, tok uint16, version uint8) bool {
	switch d.Storage {
	case StorageCAS:
		if st.Version != version {
			return false
		}
		st.Version++
	case StorageMaxToken, StorageMaxWrite:
		if tok != 0 {
			if tok < st.MaxTok && d.Bug != BugNoTokenCheck {
				return false
			}
			if tok > st.MaxTok {
				st.MaxTok = tok
			}
		}
	case StorageCondUpdate:
		if tok != 0 {
			if tok <= st.MaxTok && d.Bug != BugNoTokenCheck {
				return false
			}
			if tok > st.MaxTok {
				st.MaxTok = tok
			}
		}
	}
	return true
}

func finishJob(c *Client, ev *Event) {
	*c = Client{Phase: PhaseDone}
	ev.Flags |= EvJobDone
}

// expireKey removes node k's key at this tick, with the events it causes.
func expireKey(d *Design, s *State, k int, ev *Event) {
	n := &s.Nodes[k]
	o := n.Owner
	if o == 0 {
		return
	}
	if d.Lock == LockReplica && k == 1 {
		n.Owner, n.Exp = 0, 0 // the replica's copy: nobody is told
		return
	}
	ev.Flags |= EvExpired
	ev.ExpiredMask |= 1 << (o - 1)
	if s.Clients[o-1].Believes() {
		ev.Flags |= EvExpiredHeld
	}
	if k == 0 && (d.Lock == LockDB || d.Lock == LockEtcd) {
		unlock(d, s, n) // the server ends the session / lease: waiters wake
		return
	}
	n.Owner, n.Exp = 0, 0
}

// tick moves time: nodes come back, keys, leases and sessions whose time is
// reached vanish, waits that end are cleared (so equal situations are equal
// states).
func tick(d *Design, s *State, ev *Event) {
	s.Now++
	ev.Now = s.Now
	nodes := lockNodes(d)
	for k := 0; k < nodes; k++ {
		n := &s.Nodes[k]
		if n.Back == s.Now {
			n.Back = 0
			ev.Flags |= EvNodeBack
		}
		if n.Owner != 0 && n.Exp == s.Now {
			expireKey(d, s, k, ev)
		}
	}
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		if d.Lock == LockZooKeeper && c.Timer == s.Now && c.Timer != 0 {
			c.Timer = 0
			if c.Flags&FlagZNode != 0 { // the session expired: its node vanishes
				if s.Nodes[0].Owner == uint8(i+1) {
					ev.Flags |= EvExpired
					ev.ExpiredMask |= 1 << i
					if c.Believes() {
						ev.Flags |= EvExpiredHeld
					}
				}
				c.Flags &^= FlagZNode
				zkOwner(d, s)
			}
		}
		if c.Ready == s.Now {
			c.Ready = 0
			if c.Flags&FlagPaused != 0 {
				c.Flags &^= FlagPaused
				ev.Flags |= EvResumed
				ev.ResumedMask |= 1 << i
				if d.Lock == LockZooKeeper && c.Timer != 0 && c.Live() {
					c.Timer = 0 // heartbeats again before the session ran out
				}
			}
		}
	}
}
