package model

import "fmt"

// lock_redis.go: one Redis node holding lock:order-42 (SET NX PX, with the
// fence counter lock:fence beside it). The single-key rules here also serve
// the replica's primary, etcd's key and the database's row (node 0).

// redisService is one Redis node's words.
var redisService = ServiceFacts{
	Noun: "key", Renewer: "watchdog", Beat: "watchdog",
	BeatLegend: "watchdog: X renewed its key (X! failed); x = due, but frozen with X (paused)",
	Frozen:     "'s watchdog is due but frozen with it: no renewal",
	Node:       "Redis", NodeStory: "the Redis node",
	Acquire: "SET", Refused: "nil", Renew: "renew",
	Poll:   "SET " + LockKey + " … NX → (nil)",
	Expiry: "key " + LockKey + " (%s's) expires",
	Bound:  "TTL",
}

// keyAcquire is SET NX PX on node 0 (etcd: put-if-absent with a lease; db:
// SELECT … FOR UPDATE), with the fencing token per acquire=.
func keyAcquire(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	me := uint8(i + 1)
	k := keyNode(s, i)
	key := &s.Nodes[k]
	if c.Phase == PhaseReenter {
		reenter(d, s, i, ev)
		return
	}
	if d.Check != CheckTrust || d.AckTimeoutTicks > 0 {
		c.Since, c.Skew = s.Now, 0 // kept only when it is used, so states stay few
	}
	switch {
	case !reach(d, s, i, k):
		ev.Result = ResUnreachable
	case key.Back != 0 || (key.Owner != 0 && d.Bug != BugSetWithoutNX) || key.Hold != 0:
		ev.Result = ResRefused
	default:
		ev.Result = ResOK
		key.Owner = me
		key.Exp = keyEnd(d, s.Now)
		keySet(c)
		// etcd and db take acquire=script only: for etcd the token is the
		// put's revision (its create_revision), and a db row lock takes
		// fence=none
		switch d.Acquire {
		case AcquireScript:
			if d.Fence != FenceNone && !externalCounter(d) {
				key.Fence++
				ev.Token = key.Fence
			}
		case AcquireSetExpire:
			key.Exp = 0
			if d.Fence != FenceNone {
				key.Fence++
				ev.Token = key.Fence
			}
		}
	}
	c.Take(d, ActAcquire, Reply{Result: ev.Result, Token: ev.Token}, s.Now)
}

// incr is INCR lock:fence as its own request (acquire=incr-before|after).
func incr(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	key := &s.Nodes[keyNode(s, i)]
	switch {
	case !reach(d, s, i, keyNode(s, i)):
		ev.Result = ResUnreachable
	case key.Back != 0: // the node is down: the INCR fails, try again next tick
		ev.Result = ResRefused
	default:
		key.Fence++
		ev.Token, ev.Result = key.Fence, ResOK
	}
	c.Take(d, ActIncr, Reply{Result: ev.Result, Token: ev.Token}, s.Now)
}

// expire is EXPIRE lock TTL, the second request of acquire=set-expire.
func expire(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	key := &s.Nodes[keyNode(s, i)]
	switch {
	case !reach(d, s, i, keyNode(s, i)):
		ev.Result = ResUnreachable // it goes on without an expiry
	case key.Owner == 0 || key.Back != 0:
		ev.Result = ResNoop
	default:
		ev.Result = ResOK
		key.Exp = keyEnd(d, s.Now)
	}
	c.Take(d, ActExpire, Reply{Result: ev.Result}, s.Now)
}

// reenter is the nested acquire of a job that already holds the lock: a
// reentrant lock lets its owner in again (and resets the TTL, as Redisson
// does); a plain SET NX refuses the key's own holder like anyone else.
func reenter(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	me := uint8(i + 1)
	key := &s.Nodes[keyNode(s, i)]
	if !reach(d, s, i, keyNode(s, i)) {
		unreachable(s, i, ev)
		return
	}
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

// keyRelease is DEL, the check-and-delete script, or GET then DEL.
func keyRelease(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	me := uint8(i + 1)
	key := &s.Nodes[keyNode(s, i)]
	var own uint8
	switch {
	case !reach(d, s, i, keyNode(s, i)): // cut off: the release fails, the key expires by itself
		ev.Result = ResUnreachable
	case key.Back != 0: // the node is down: the request fails
		ev.Result = ResNoop
	case d.Release == ReleaseDel:
		deleteKey(d, s, i, ev)
	case d.Release == ReleaseCAD:
		if key.Owner == me || (d.Bug == BugCADNoCheck && key.Owner != 0) {
			deleteKey(d, s, i, ev)
		} else {
			ev.Result = ResNoop
		}
	case c.Phase == PhaseRelease: // get-del: the GET
		ev.Result, ev.Value = ResOK, key.Owner
		if key.Owner == me {
			own = 1
		}
	default: // get-del: the DEL
		if c.Flags&FlagSawMine != 0 {
			deleteKey(d, s, i, ev)
		} else {
			ev.Result = ResNoop
		}
	}
	ev.Flags |= c.Take(d, phaseAction[c.Phase], Reply{Result: ev.Result, Own: own}, s.Now).Flags
}

// deleteKey deletes the key client i uses, whoever holds it.
func deleteKey(d *Design, s *State, i int, ev *Event) {
	key := &s.Nodes[keyNode(s, i)]
	if key.Owner == 0 {
		ev.Result = ResNoop
		return
	}
	if key.Owner != uint8(i+1) {
		ev.Flags |= EvRemovedOther
	}
	ev.Result = ResOK
	unlock(d, s, key)
}

// keyRenew is the watchdog's PEXPIRE (etcd: the lease keep-alive). A failed
// renewal does not stop the worker.
func keyRenew(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	key := &s.Nodes[keyNode(s, i)]
	switch {
	case !reach(d, s, i, keyNode(s, i)):
		ev.Result = ResUnreachable // a failed renewal does not stop the worker
	case key.Owner == uint8(i+1) && key.Back == 0:
		if goneBeforeNextStep(key, c) {
			// the watchdog is put to the test and holds
			ev.Flags |= EvRenewSaved
		}
		key.Exp = keyEnd(d, s.Now)
		ev.Result = ResOK
	case setsMissingKey(d, key):
		// extend=setnx: redsync's touchWithSetNXScript sets a missing key
		// again with its value and reports success (Mutex.touch)
		key.Owner, key.Exp = uint8(i+1), keyEnd(d, s.Now)
		keySet(c)
		ev.Result = ResOK
	default:
		ev.Result = ResNoop
	}
	ev.Flags |= c.Take(d, ActRenew, Reply{Result: ev.Result}, s.Now).Flags
}

// goneBeforeNextStep reports whether key expires before client c's main
// thread takes its next step (a slow job's work, a pause): a renewal that
// extends it then saves the lock.
func goneBeforeNextStep(key *Node, c *Client) bool {
	return key.Exp != 0 && c.Ready != 0 && key.Exp <= c.Ready
}

// setsMissingKey reports whether a renewal sets key again: extend=setnx,
// and the key is gone (SET NX finds no key; a node down or in lock-delay
// refuses it).
func setsMissingKey(d *Design, key *Node) bool {
	return d.Extend == ExtendSetNX && key.Owner == 0 && key.Back == 0 && key.Hold == 0
}

// unreachable: a request the client could not deliver (a partition); it
// tries again next tick.
func unreachable(s *State, i int, ev *Event) {
	ev.Result = ResUnreachable
	s.Clients[i].Ready = s.Now + 1
}

// Words.

func describeKeyAcquire(d *Design, st *StepRecord) string {
	ev := &st.Event
	i := int(st.Action.Client)
	value := jobValue(d, i, &st.Before.Clients[i])
	cmd := fmt.Sprintf("SET %s %s NX PX %d", LockKey, value, d.TTLTicks*1000)
	if d.Acquire == AcquireSetExpire {
		cmd = fmt.Sprintf("SET %s %s NX", LockKey, value)
	}
	if st.Before.Clients[i].Phase == PhaseReenter {
		cmd = fmt.Sprintf("nested acquire: SET %s %s NX PX %d", LockKey, LockValue(i), d.TTLTicks*1000)
		if d.Reenter == ReenterOwner {
			cmd = fmt.Sprintf("nested acquire: reentrant lock, owner %s, count+1, PX %d", LockValue(i), d.TTLTicks*1000)
		}
	}
	if ev.Result == ResUnreachable {
		return cmd + fmt.Sprintf(" → error: cut off (a partition); retry at t=%d", int(ev.Now)+1)
	}
	if ev.Result == ResRefused {
		switch {
		case st.Before.Nodes[0].Back != 0:
			return cmd + fmt.Sprintf(" → error (node down); retry at t=%d", int(ev.Now)+1)
		case st.Before.Nodes[0].Owner == 0 && st.Before.Nodes[0].Hold != 0:
			return cmd + fmt.Sprintf(" → refused: lock-delay after an expired holder, free at t=%d; retry at t=%d", st.Before.Nodes[0].Hold, int(ev.Now)+1)
		case d.Wait == WaitNotify:
			return cmd + " → (nil), the key is " + owner(ev.Other) + "; sleeps until a release notice"
		}
		return fmt.Sprintf("%s → (nil), the key is %s; retry at t=%d", cmd, owner(ev.Other), int(ev.Now)+1)
	}
	s := cmd + " → OK"
	if ev.Token != 0 {
		s += fmt.Sprintf(", INCR lock:fence → %d", ev.Token)
	}
	return s
}

func describeIncr(ev *Event) string {
	if ev.Result == ResUnreachable {
		return fmt.Sprintf("INCR lock:fence → error: cut off (a partition); retry at t=%d", int(ev.Now)+1)
	}
	if ev.Result == ResRefused {
		return fmt.Sprintf("INCR lock:fence → error (node down); retry at t=%d", int(ev.Now)+1)
	}
	return fmt.Sprintf("INCR lock:fence → %d", ev.Token)
}

func describeExpire(d *Design, ev *Event) string {
	if ev.Result == ResUnreachable {
		return fmt.Sprintf("EXPIRE %s %d → error: cut off (a partition); the key has no expiry", LockKey, d.TTLTicks)
	}
	if ev.Result == ResNoop {
		return fmt.Sprintf("EXPIRE %s %d → 0 (no key)", LockKey, d.TTLTicks)
	}
	return fmt.Sprintf("EXPIRE %s %d → 1", LockKey, d.TTLTicks)
}

func describeWatchdog(d *Design, st *StepRecord) string {
	ev := &st.Event
	who := "watchdog: "
	late := !st.Before.Clients[st.Action.Client].Believes()
	if late {
		who = "watchdog, after the release (stopped after the unlock): "
	}
	if ev.Result == ResOK && ev.Other == 0 {
		s := fmt.Sprintf("%sno key: SET %s %s NX PX %d → OK (extend=setnx), renewal reported a success", who, LockKey, LockValue(int(st.Action.Client)), d.TTLTicks*1000)
		if late {
			return s + "  ✗ the released key is back, as " + ClientName(int(st.Action.Client)) + "'s"
		}
		return s + "  ✗ its lost key is back, as its own"
	}
	if ev.Result == ResOK {
		return fmt.Sprintf("%sPEXPIRE %s %d → 1 (valid until t=%d)", who, LockKey, d.TTLTicks*1000, int(ev.Now)+d.TTLTicks)
	}
	then := renewFailThen(d, st)
	if ev.Result == ResUnreachable {
		return who + "renewal fails, cut off (a partition); " + then
	}
	if ev.Other == 0 {
		return who + "renewal fails, there is no key; " + then
	}
	return fmt.Sprintf("%srenewal fails, the key is %s; %s", who, owner(ev.Other), then)
}

// renewFailThen is what follows a failed renewal: the worker goes on, or
// (renew-fail=stop) it is told and stops; after the release nothing.
func renewFailThen(d *Design, st *StepRecord) string {
	switch {
	case !st.Before.Clients[st.Action.Client].Believes():
		return "the watchdog stops"
	case d.RenewFail != RenewFailStop:
		return "the worker goes on"
	case st.Event.Flags&EvGiveUp != 0:
		return "the worker is told: it gives the job up, its next step the release"
	}
	return "the worker is told: it stops once its request in flight is answered"
}

// describeKeyRelease tells DEL, check-and-delete, GET and DEL on one node;
// the caller adds the ✗ of a removed foreign lock.
func describeKeyRelease(d *Design, st *StepRecord) string {
	return keyReleaseWords(d, st) + attemptNote(d, st) // jobs.go
}

func keyReleaseWords(d *Design, st *StepRecord) string {
	ev := &st.Event
	a := st.Action
	c := &st.Before.Clients[a.Client]
	switch {
	case ev.Result == ResUnreachable:
		return "release → error: cut off (a partition); it gives up, the key will expire"
	case st.Before.Nodes[keyNode(&st.Before, int(a.Client))].Back != 0:
		return "release → error (node down)"
	case a.Kind == ActRelease && d.Release == ReleaseGetDel:
		v := "(nil)"
		if ev.Value != 0 {
			v = LockValue(int(ev.Value - 1))
		}
		return fmt.Sprintf("GET %s → %s", LockKey, v)
	case a.Kind == ActRelease && d.Release == ReleaseCAD:
		s := "release: check-and-delete script → "
		switch {
		case ev.Result == ResOK:
			s += "1 (deleted)"
		case ev.Other == 0:
			s += "0 (no key)"
		default:
			s += "0 (the key is " + owner(ev.Other) + ")"
		}
		return s
	case a.Kind == ActDel && c.Flags&FlagSawMine == 0:
		return "GET said the key is not ours: no DEL"
	case ev.Result == ResOK:
		return "DEL " + LockKey + " → 1"
	}
	return "DEL " + LockKey + " → 0"
}

// lockDelay is Chubby's lock-delay (lock-delay=N): the key of a holder that
// failed to renew it (it expired, or a clock jump ended it) may not be
// taken by anyone for N ticks, so that a holder that was only slow or
// paused has time to notice; a release frees the lock at once.
func lockDelay(d *Design, s *State, n *Node) {
	n.Hold = s.Now + uint8(d.LockDelayTicks)
}
