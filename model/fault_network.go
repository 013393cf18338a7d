package model

import (
	"fmt"
	"strconv"
)

// fault_network.go: faults of the network between a client and the lock
// service or the storage, each drawn from its budget:
//   - delay: a request held in the network for 1 … max-delay ticks; it is
//     applied when it arrives and answered at once. The acquire of a
//     single-key service (redis, replica, etcd, db) is the exception: it is
//     applied at once and its reply is held, so that the TTL runs while the
//     client does not know it holds the lock. With timeout=T, a write or a
//     release held longer than T is resent at T, and its first copy still
//     arrives later (a stray copy); other requests are held at most T.
//   - lose: a request is applied but its reply is lost; the client resends
//     it after timeout ticks (a resent write sets the same value again, a
//     resent release may find another client's lock).
//   - partition: the client is cut off for partition-ticks from what
//     partition= says (the lock service, one node or a minority of Redlock
//     nodes, the storage, or, for the replica, it stays with the primary
//     while the replica's side is cut off). Its requests there fail; it keeps
//     running. A cut-off client sends no heartbeats or keep-alives.

// delayable reports whether client i's next request may be held now, and
// which request it is.
func delayable(d *Design, s *State, i int, p Place) (ActionKind, bool) {
	k, ok := mainStep(d, s, i)
	if !ok || !k.isRequest() || s.Clients[i].Stray != 0 || !at(d, s, i, p) {
		return 0, false
	}
	return k, true
}

// resendable reports whether a request held longer than the timeout is
// resent while its first copy is still on its way (a stray copy).
func resendable(k ActionKind) bool { return k == ActWrite || k == ActRelease || k == ActDel }

// delayActions: hold client i's next request for 1 … max-delay ticks.
func delayActions(d *Design, s *State, i int, buf []Action) []Action {
	if int(s.Used[FaultDelay]) >= d.Delays {
		return buf
	}
	k, ok := delayable(d, s, i, d.DelayAt)
	if !ok {
		return buf
	}
	most := d.MaxDelayTicks
	if d.TimeoutTicks > 0 && !resendable(k) && most > d.TimeoutTicks && !abandoned(d, k) {
		most = d.TimeoutTicks // held longer, it is a lost reply: lose covers that
	}
	for p := 1; p <= most; p++ {
		buf = append(buf, Action{Kind: ActDelay, Client: uint8(i), Arg: uint8(p)})
	}
	return buf
}

// delay sends client i's next request and holds it (or, for a single-key
// acquire, its reply) in the network for p ticks.
func delay(d *Design, s *State, i int, p uint8, ev *Event) {
	c := &s.Clients[i]
	k, _ := mainStep(d, s, i)
	s.Used[FaultDelay]++
	if int(p) > d.TimeoutTicks && abandoned(d, k) {
		abandon(d, s, i, p)
		return
	}
	if d.TimeoutTicks > 0 && int(p) > d.TimeoutTicks && resendable(k) {
		// the client gives up waiting at the timeout and resends; the first
		// copy arrives at now+p
		c.SendResent(d, k, s.Now, p)
		ev.Token, ev.Value = sentToken(d, c, false), c.Read+1
		return
	}
	switch {
	case k == ActWrite:
		ev.Token, ev.Value = sentToken(d, c, false), c.Read+1
		c.DelayWrite(s.Now, p)
	case k == ActAcquire && singleKey(d):
		// applied now; the reply (and with it the belief) arrives later
		had := c.Believes()
		clientStep(d, s, Action{Kind: ActAcquire, Client: uint8(i)}, ev)
		ev.Action = Action{Kind: ActDelay, Client: uint8(i), Arg: p}
		if !had && c.Believes() {
			c.Flags &^= FlagBelieves
		}
		c.Flags |= FlagInFlight | FlagReply
	default:
		c.Flags |= FlagInFlight
	}
	c.Ready = s.Now + p
}

// arrive: a held request reaches its server (or a held reply its client),
// or the first copy of a resent request arrives.
func arrive(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	switch {
	case c.Phase == PhaseArrive:
		write(d, s, i, ev)
	case c.Flags&FlagReply != 0:
		c.Flags &^= FlagInFlight | FlagReply
		ev.Result = ResOK
		if c.Phase != PhaseAcquire && c.Phase != PhaseReenter && c.Phase != PhaseAck && !c.Believes() {
			left := validityLeft(d, s, c)
			if d.Check == CheckAcquire {
				ev.Value = uint8(max(left, 0))
			}
			if t := c.TakeAcquireReply(d, left, s.Now); t.Flags&EvGiveUp != 0 {
				ev.Flags |= EvGiveUp // check=acquire: no validity left; it deletes its key if still its own
				ev.Result = ResRefused
				if k := keyNode(s, i); !attemptRelease(d) && reach(d, s, i, k) && s.Nodes[k].Owner == uint8(i+1) && s.Nodes[k].Back == 0 {
					unlock(d, s, &s.Nodes[k])
				}
			}
		} else if c.Phase == PhaseAcquire || c.Phase == PhaseReenter {
			ev.Result = ResRefused
		}
	case c.Flags&FlagInFlight != 0:
		c.Flags &^= FlagInFlight
		k := phaseAction[c.Phase]
		clientStep(d, s, Action{Kind: k, Client: uint8(i)}, ev)
		ev.Action = Action{Kind: ActArrive, Client: uint8(i)}
	default: // the stray first copy of a resent write or release
		strayArrive(d, s, i, ev)
	}
}

// strayArrive applies the first copy of client i's resent write or release,
// whatever its client has done since.
func strayArrive(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	ev.Flags |= EvStray
	stray := c.Flags&FlagStrayDel != 0
	c.Stray = 0
	c.Flags &^= FlagStrayDel
	if d.Abandon != AbandonNone {
		lateAcquire(d, s, i, ev)
		return
	}
	if stray {
		if d.Lock == LockEtcdMutex {
			emStrayRelease(d, s, i, ev)
			return
		}
		if !singleKey(d) {
			ev.Result = ResNoop
			strayDone(c)
			return
		}
		key := &s.Nodes[keyNode(s, i)]
		ev.Other = key.Owner
		later := key.Back == 0 && laterOwnKey(d, s, i, key)
		matches := lateReleaseMatches(d, c)
		strayDone(c)
		switch {
		case key.Back != 0 || key.Owner == 0:
			ev.Result = ResNoop
		case later: // its own lock of a later job (jobs=N)
			ev.Flags |= EvOwnLater
			if matches {
				deleteKey(d, s, i, ev)
			} else {
				ev.Result = ResNoop
			}
		case d.Release == ReleaseCAD && key.Owner != uint8(i+1):
			ev.Result = ResNoop
		default: // DEL (or the DEL of get-del, sent after the GET said ours)
			deleteKey(d, s, i, ev)
		}
		return
	}
	if !HoldsLock(d, s, i) {
		ev.Flags |= EvUnsafe
	}
	ev.Held = uint8(heldNodes(d, s, i))
	tok := sentToken(d, c, false)
	ev.Token, ev.Value = tok, c.Read+1
	storeWrite(d, s, i, tok, ev)
}

// abandoned reports whether a request of kind k held past the timeout is
// abandoned by its caller (abandon=retry|fail): an acquire.
func abandoned(d *Design, k ActionKind) bool {
	return k == ActAcquire && d.Abandon != AbandonNone
}

// abandon: client i's SET NX is held in the network for p ticks, longer
// than its timeout. It is not applied yet: it lands at now+p (the client's
// Stray, an acquire's in these designs). At the timeout the caller gives
// up on it (go-redis returns the context's error; the command is still on
// its way to the server): abandon=retry sends SET NX again then, and
// abandon=fail ends the job at once, without the lock.
func abandon(d *Design, s *State, i int, p uint8) { s.Clients[i].Abandon(d, s.Now, p) }

// Abandon is the client whose acquire, sent at tick now, the network
// holds for p ticks, longer than its timeout (abandon=retry|fail): it
// lands at now+p (Stray); at the timeout the client gives up on it and
// tries again (retry) or ends its job without the lock (fail).
func (c *Client) Abandon(d *Design, now, p uint8) {
	c.Stray = now + p
	if d.Abandon == AbandonFail {
		*c = Client{Phase: PhaseDone, Flags: FlagStarted, Stray: c.Stray, Cut: c.Cut, Group: c.Group}
		return
	}
	c.Ready = now + uint8(d.TimeoutTicks)
}

// lateAcquire applies client i's abandoned SET NX now: it takes the key if
// the key is free, for a client that will never read the reply (it is as
// it was: the acquire's effect on the client is undone, as lose undoes a
// reply). The key is then its own and nobody believes it: an orphan that
// blocks everyone, its client's next SET NX too, until it expires (with
// acquire=set-expire, for ever).
func lateAcquire(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	before := *c
	acquire(d, s, i, ev)
	*c = before
}

// abandonApplies refuses abandon= where it cannot act.
func (d Design) abandonApplies() error {
	if d.Abandon == AbandonNone {
		return nil
	}
	switch {
	case d.Delays == 0 || d.TimeoutTicks == 0 || d.DelayAt != PlaceAcquire:
		return designErr("design parameter abandon=%s acts on an acquire held past the timeout: it needs delays ≥ 1, timeout ≥ 1 and delay-at=acquire", d.Abandon)
	case d.MaxDelayTicks <= d.TimeoutTicks:
		return designErr("design parameter abandon=%s needs max-delay above the timeout (%d ≤ %d): no acquire is held past it", d.Abandon, d.MaxDelayTicks, d.TimeoutTicks)
	case d.Check == CheckAcquire:
		return designErr("design parameter abandon=%s does not apply with check=acquire, which judges a late reply by its validity (a failed attempt's release is modelled there)", d.Abandon)
	case d.Jobs > 1 || d.Restarts > 0:
		return designErr("design parameter abandon=%s with jobs ≥ 2 or restarts: an abandoned acquire landing in a later job or process is not modelled", d.Abandon)
	case d.Reenter != ReenterNone:
		return designErr("design parameter abandon=%s does not apply to a nested acquire (reenter=%s)", d.Abandon, d.Reenter)
	}
	return nil
}

// loseActions: client i's next request will be applied but its reply lost.
func loseActions(d *Design, s *State, i int, buf []Action) []Action {
	if int(s.Used[FaultLoss]) >= d.Losses {
		return buf
	}
	if _, ok := delayable(d, s, i, d.LoseAt); ok {
		buf = append(buf, Action{Kind: ActLose, Client: uint8(i)})
	}
	return buf
}

// lose applies client i's next request, then forgets the reply: the client
// is as it was, and resends after the timeout. What the servers did stays,
// and so do the facts a client keeps for the servers (its ZooKeeper node,
// as Curator's protected mode finds it again, unless protect=no; its job's
// accepted write).
//
// With lose=request nothing is applied: the request is lost before it
// reaches its server. With release-fail=forget a release that got no
// answer is not sent again: the client clears its lock (Client.Forget)
// and its job is over, whether the release was applied or not.
func lose(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	k, _ := mainStep(d, s, i)
	s.Used[FaultLoss]++
	forget := d.ForgetsRelease(k)
	if d.Lose == LoseRequest {
		ev.Result = ResNoop
		if k == ActWrite {
			ev.Token, ev.Value = sentToken(d, c, false), c.Read+1
		}
		node, token := c.Flags&FlagZNode, c.Token
		ev.Flags |= c.LoseRequest(d, k, s.Now)
		if forget && node != 0 && d.Lock == LockZooKeeper { // its node lives on with its session: the process does
			c.Flags, c.Token = c.Flags|node, token
		}
		return
	}
	before := *c
	clientStep(d, s, Action{Kind: k, Client: uint8(i)}, ev)
	ev.Action = Action{Kind: ActLose, Client: uint8(i)}
	if forget { // applied: the client, which heard nothing, is done with it all the same
		if c.Phase == PhaseDel { // get-del: the GET's reply lost, the DEL is never sent
			ev.Flags |= c.Forget(d, s.Now)
		}
		return
	}
	ev.Flags &^= EvJobDone
	keep := c.Flags & (FlagZNode | FlagWrote)
	token := c.Token
	*c = before
	c.Flags = c.Flags&^(FlagZNode|FlagWrote) | keep | FlagStarted
	if sessionQueue(d) {
		c.Token = token
		zkLost(d, s, i, &before) // protect=no: the created node is an orphan
	}
	c.Ready = s.Now + uint8(d.TimeoutTicks)
}

// partitionActions: cut client i off from one group of partition=.
func partitionActions(d *Design, s *State, i int, buf []Action) []Action {
	c := &s.Clients[i]
	if int(s.Used[FaultPartition]) >= d.Partitions || c.Cut != 0 {
		return buf
	}
	for g := 0; g < partitionGroups(d); g++ {
		buf = append(buf, Action{Kind: ActPartition, Client: uint8(i), Arg: uint8(g)})
	}
	return buf
}

// partition cuts client i off from group g until partition-ticks from now.
func partition(d *Design, s *State, i int, g uint8) {
	c := &s.Clients[i]
	s.Used[FaultPartition]++
	c.Cut = s.Now + uint8(d.PartitionTicks)
	c.Group = g + 1
	if cutsService(d) {
		paused(d, s, i, uint8(d.PartitionTicks)) // no heartbeats reach the service
	}
}

// heal ends client i's partition.
func heal(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	c.Cut, c.Group = 0, 0
	ev.Flags |= EvHealed
	ev.HealedMask |= 1 << i
	if cutsService(d) {
		resumed(d, s, i)
	}
	if c.Flags&FlagOldSide != 0 {
		c.Flags &^= FlagOldSide
		rejoin(d, s)
	}
}

// cutsService reports whether partition= cuts clients off from the whole
// lock service (so that heartbeats stop too).
func cutsService(d *Design) bool { return d.Partition == PartitionService }

// reach reports whether client i can reach lock node k now.
func reach(d *Design, s *State, i, k int) bool {
	c := &s.Clients[i]
	if c.Cut == 0 {
		return !primaryIsolated(d, s, i, k)
	}
	switch d.Partition {
	case PartitionService:
		return false
	case PartitionNode:
		return k != int(c.Group)-1
	case PartitionMinority:
		from := int(c.Group) - 1
		return (k-from+d.Nodes)%d.Nodes >= minority(d)
	}
	return true // storage, primary: the client reaches the node it talks to
}

// reachStorage reports whether client i can reach the storage now (a
// database row lock's storage is its lock service).
func reachStorage(d *Design, s *State, i int) bool {
	c := &s.Clients[i]
	if c.Cut == 0 {
		return true
	}
	return d.Partition != PartitionStorage && !(SameDatabase(d) && d.Partition == PartitionService)
}

// Words.

func describeDelay(d *Design, st *StepRecord, p uint8) string {
	ev := &st.Event
	c := &st.After.Clients[st.Action.Client]
	k := st.Before.Clients[st.Action.Client].Next(d)
	until := int(ev.Now) + int(p)
	switch {
	case c.Stray != 0 && st.Before.Clients[st.Action.Client].Stray == 0 && abandoned(d, k):
		then := "it gives up on it and sends SET NX again"
		if d.Abandon == AbandonFail {
			then = "it gives up on it and on its job: it goes on without the lock"
		}
		return fmt.Sprintf("sends SET %s NX; the network holds it until t=%d, and at t=%d (its %d-tick deadline) %s; the request is still on its way", LockKey, until, int(ev.Now)+d.TimeoutTicks, d.TimeoutTicks, then)
	case c.Stray != 0 && st.Before.Clients[st.Action.Client].Stray == 0:
		return fmt.Sprintf("sends %s; the network holds it until t=%d, so at t=%d (timeout %d) it sends it again", requestWords(d, k, ev), until, int(ev.Now)+d.TimeoutTicks, d.TimeoutTicks)
	case k == ActWrite:
		return fmt.Sprintf("sends write counter = %d%s; the network holds it until t=%d", ev.Value, tokenNote(ev.Token), until)
	case c.Flags&FlagReply != 0:
		shadow := *st
		shadow.Action.Kind = ActAcquire
		return describeAcquire(d, &shadow) + fmt.Sprintf("; the reply is held in the network until t=%d", until)
	}
	return fmt.Sprintf("sends %s; the network holds it until t=%d", requestWords(d, k, ev), until)
}

// requestWords names a request kind in a few words.
func requestWords(d *Design, k ActionKind, ev *Event) string {
	switch k {
	case ActWrite:
		return fmt.Sprintf("write counter = %d%s", ev.Value, tokenNote(ev.Token))
	case ActRead:
		return "its read"
	case ActIncr:
		return "INCR lock:fence"
	case ActExpire:
		return "EXPIRE " + LockKey
	case ActAcquire:
		return "its acquire"
	case ActDel:
		return "DEL " + LockKey
	}
	return "its release"
}

// describeArrive tells a held request's arrival, in the words of the request.
func describeArrive(d *Design, st *StepRecord) string {
	ev := &st.Event
	c := &st.Before.Clients[st.Action.Client]
	switch {
	case c.Phase == PhaseArrive:
		return describeWrite(d, st, unsafeNote(d, ev))
	case c.Flags&FlagReply != 0:
		switch {
		case ev.Flags&EvGiveUp != 0:
			s := fmt.Sprintf("the held acquire reply arrives: OK, but sent at t=%d it leaves %d−%d−%d = %d ticks of validity: no lock (check=acquire)", c.Since, d.TTLTicks, int(ev.Now)+int(c.Skew)-int(c.Since), d.DriftTicks, validityLeft(d, &st.Before, c))
			if attemptRelease(d) {
				return s + "; it releases the attempt's key, then tries again"
			}
			if k := keyNode(&st.Before, int(st.Action.Client)); st.Before.Nodes[k].Owner == uint8(st.Action.Client+1) && st.After.Nodes[k].Owner == 0 {
				return s + "; check-and-delete of its own key → 1; retry at t=" + strconv.Itoa(int(ev.Now)+1)
			}
			return s + "; its key is gone already; retry at t=" + strconv.Itoa(int(ev.Now)+1)
		case ev.Result == ResOK && d.Check == CheckAcquire:
			return fmt.Sprintf("the held acquire reply arrives: OK, %d ticks of validity left (check=acquire): it holds the lock (it thinks)", ev.Value)
		case ev.Result == ResOK:
			return "the held acquire reply arrives: OK, it holds the lock (it thinks)"
		}
		return "the held acquire reply arrives: refused"
	case c.Flags&FlagInFlight != 0:
		shadow := *st
		shadow.Action.Kind = phaseAction[c.Phase]
		return "its held request arrives: " + describeClientStep(d, &shadow)
	}
	if d.Abandon != AbandonNone {
		return describeLateAcquire(d, st)
	}
	if ev.Value != 0 && c.Flags&FlagStrayDel == 0 {
		s := fmt.Sprintf("the first copy of its write counter = %d%s arrives late → ", ev.Value, tokenNote(ev.Token))
		if ev.Result == ResRejected {
			return s + storageRefusal(d, Action{Kind: ActWrite}, ev) + unsafeNote(d, ev)
		}
		return s + "accepted" + unsafeNote(d, ev)
	}
	s := "the first copy of its release arrives late → "
	if ev.Flags&EvOwnLater != 0 && attemptRelease(d) {
		return "the first copy of its failed attempt's release arrives late → " + describeLateAttempt(d, st)
	}
	if ev.Flags&EvOwnLater != 0 {
		return "the first copy of an earlier job's release arrives late → " + describeLateOwn(d, st)
	}
	switch {
	case ev.Result == ResOK:
		s += "deleted"
	case d.Lock == LockRedlock && ev.Other == 0: // ev.Other: the lock's holder (redlockHolder)
		s += "nobody holds the lock, nothing deleted"
	case d.Lock == LockRedlock:
		s += "the lock is " + owner(ev.Other) + ", left alone"
	case ev.Other == 0:
		s += "no key"
	default:
		s += "the key is " + owner(ev.Other) + ", left alone"
	}
	if ev.Flags&EvRemovedOther != 0 {
		s += "  ✗ deleted " + owner(ev.Other) + " lock"
	}
	return s
}

func describeLose(d *Design, st *StepRecord) string {
	k, _ := mainStep(d, &st.Before, int(st.Action.Client))
	forget := d.ForgetsRelease(k)
	again := fmt.Sprintf(", it sends it again at t=%d", int(st.Event.Now)+d.TimeoutTicks)
	if d.Lose == LoseRequest {
		s := "sends " + requestWords(d, k, &st.Event) + "; the request is lost on the way (the connection dropped it): nothing is applied"
		if forget {
			return s + "; no answer: it takes the release as done and forgets its lock (release-fail=forget)" + orphanNote(d, st)
		}
		return s + "; no reply" + again
	}
	shadow := *st
	shadow.Action.Kind = k
	if forget {
		return describeClientStep(d, &shadow) + "; the reply is lost: it takes the release as done (release-fail=forget)"
	}
	return describeClientStep(d, &shadow) + "; the reply is lost" + again + describeZKLost(d, st)
}

// orphanNote tells what becomes of a lock whose holder forgot it with its
// release unapplied (release-fail=forget, lose=request).
func orphanNote(d *Design, st *StepRecord) string {
	i := int(st.Action.Client)
	k := keyNode(&st.After, i)
	n := &st.After.Nodes[k]
	switch {
	case n.Owner != uint8(i+1):
		return ""
	case n.Exp != 0:
		return fmt.Sprintf("; its %s stays, held by nobody who knows it, until it expires at t=%d", Service(d.Lock).Noun, n.Exp)
	case d.Lock == LockZooKeeper:
		return "; its node stays: its session lives on with the process, and nobody will delete it"
	}
	return "; its lock stays, and nothing will free it"
}

func describePartition(d *Design, st *StepRecord) string {
	g := int(st.Action.Arg)
	until := int(st.Event.Now) + d.PartitionTicks
	var what string
	switch d.Partition {
	case PartitionService:
		what = "the lock service"
		if SameDatabase(d) {
			what = "the database"
		}
	case PartitionNode:
		what = fmt.Sprintf("node %d", g+1)
	case PartitionMinority:
		var nodes []string
		for k := 0; k < minority(d); k++ {
			nodes = append(nodes, fmt.Sprint((g+k)%d.Nodes+1))
		}
		what = "nodes " + joinStrings(nodes)
	case PartitionStorage:
		what = "the storage"
	case PartitionPrimary:
		return fmt.Sprintf("is cut off with the primary from the replica's side until t=%d", until)
	}
	return fmt.Sprintf("is cut off from %s until t=%d (a partition); it keeps running", what, until)
}

func joinStrings(xs []string) string {
	s := ""
	for k, x := range xs {
		if k > 0 {
			s += ", "
		}
		s += x
	}
	return s
}

// describeLateAcquire tells an abandoned SET NX that lands late.
func describeLateAcquire(d *Design, st *StepRecord) string {
	ev := &st.Event
	s := "its abandoned SET " + LockKey + " NX arrives late → "
	switch {
	case ev.Result == ResOK && st.After.Nodes[keyNode(&st.After, int(st.Action.Client))].Exp == 0:
		return s + "OK: the key is its own, with no expiry, and nobody believes it holds it: an orphan for ever"
	case ev.Result == ResOK:
		return s + "OK: the key is its own, and nobody believes it holds it: an orphan until it expires"
	case ev.Result == ResUnreachable:
		return s + "error: cut off (a partition)"
	case ev.Other != 0:
		return s + "(nil), the key is " + owner(ev.Other)
	}
	return s + "(nil)"
}
