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
	ActTick            ActionKind = iota // time moves one tick: keys expire, pauses end
	ActAcquire                           // SET lock NX PX (with INCR when acquire=script); redlock: ask the next node
	ActIncr                              // INCR lock:fence as its own request
	ActExpire                            // EXPIRE lock TTL (acquire=set-expire)
	ActCheck                             // check=validity: is there validity left?
	ActRead                              // read the counter from storage
	ActWrite                             // write read+1 to storage
	ActArrive                            // a write held in the network reaches the storage
	ActRelease                           // release: DEL, check-and-delete, the GET of get-del, db COMMIT
	ActDel                               // the DEL of get-del
	ActRenew                             // the watchdog (keep-alive) extends the TTL
	ActPause                             // fault: freeze the client for Arg ticks
	ActSlow                              // fault: the client's job is slow (work = slow-work)
	ActCrash                             // fault: the client crashes for good
	ActDelay                             // fault: hold the client's write in the network for Arg ticks
	ActReplicate                         // replica: the replica catches up with the primary
	ActFailover                          // fault: the replica is promoted, losing what it had not received
	ActNodeCrash                         // fault: lock node Arg crashes (and restarts after restart ticks)
	ActClockJump                         // fault: lock node Arg's clock jumps forward by jump ticks
	ActLose                              // fault: the client's next request is applied but its reply is lost; it resends after timeout
	ActPartition                         // fault: the client is cut off from group Arg (partition=) for partition-ticks
	ActSkew                              // fault: the client's own clock jumps by client-jump ticks ("A clock-jump")
	ActStorageSync                       // storage faults: the storage's replica catches up with its primary
	ActStorageFailover                   // fault: the storage's replica is promoted, losing what it had not received
	ActStaleRead                         // fault: the client's read is served by the storage's lagging replica
	ActCounterCrash                      // fault: the external fencing counter's node crashes and restarts empty
	ActHang                              // fault: the client's worker hangs for good; a watchdog thread of its own (watchdog=thread) goes on renewing
	ActRestart                           // fault: the client crashes and restarts at once, a new process running its job again
	ActAck                               // ack=wait: WAIT acks T returns (acks replicas have the key, or the timeout passed)
	ActApply                             // fence-check=two-step: the write, applied after its token check passed
	numActionKinds
)

// argKind is what an action's Arg means.
type argKind uint8

const (
	argNone    argKind = iota
	argTicks           // a length in ticks, 1 … MaxWaitTicks
	argNode            // a lock node, written 1 … MaxNodes, stored from 0
	argGroup           // a partition group, written 1 … MaxNodes, stored from 0
	argReplica         // a replica, written 2 … MaxNodes−1 after the word, stored from 0; replica 1 (0) is the bare word
)

// actionFacts are the facts about one kind of action, in one table: its
// word, whether a client takes it, whether it is a fault drawn from the
// budget, and what its argument is.
type actionFacts struct {
	word     string
	byClient bool
	fault    bool
	arg      argKind
}

var actionTable = [numActionKinds]actionFacts{
	ActTick:      {"tick", false, false, argNone},
	ActAcquire:   {"acquire", true, false, argNone},
	ActIncr:      {"incr", true, false, argNone},
	ActExpire:    {"expire", true, false, argNone},
	ActCheck:     {"check", true, false, argNone},
	ActRead:      {"read", true, false, argNone},
	ActWrite:     {"write", true, false, argNone},
	ActArrive:    {"arrive", true, false, argNone},
	ActRelease:   {"release", true, false, argNone},
	ActDel:       {"del", true, false, argNone},
	ActRenew:     {"renew", true, false, argNone},
	ActPause:     {"pause", true, true, argTicks},
	ActSlow:      {"slow", true, true, argNone},
	ActCrash:     {"crash", true, true, argNone},
	ActDelay:     {"delay", true, true, argTicks},
	ActReplicate: {"replicate", false, false, argReplica},
	ActFailover:  {"failover", false, true, argReplica},
	ActNodeCrash: {"node-crash", false, true, argNode},
	ActClockJump: {"clock-jump", false, true, argNode},
	ActLose:      {"lose", true, true, argNone},
	ActPartition: {"partition", true, true, argGroup},
	ActSkew:      {"clock-jump", true, true, argNone},

	ActStorageSync:     {"storage-sync", false, false, argNone},
	ActStorageFailover: {"storage-failover", false, true, argNone},
	ActStaleRead:       {"stale-read", true, true, argNone},
	ActCounterCrash:    {"counter-crash", false, true, argNone},
	ActHang:            {"hang", true, true, argNone},
	ActRestart:         {"restart", true, true, argNone},
	ActAck:             {"wait", true, false, argNone},
	ActApply:           {"apply", true, false, argNone},
}

func (k ActionKind) String() string {
	if k < numActionKinds {
		return actionTable[k].word
	}
	return "action(" + strconv.Itoa(int(k)) + ")"
}

// IsFault reports whether the action is a fault drawn from the budget rather
// than a step of a client's program, of time or of replication.
func (k ActionKind) IsFault() bool { return k < numActionKinds && actionTable[k].fault }

// ByClient reports whether the action is taken by a client (and so names
// one): every action but tick, replicate and the lock-node faults.
func (k ActionKind) ByClient() bool { return k < numActionKinds && actionTable[k].byClient }

func (k ActionKind) hasTicks() bool { return k < numActionKinds && actionTable[k].arg == argTicks }
func (k ActionKind) hasNode() bool  { return k < numActionKinds && actionTable[k].arg == argNode }
func (k ActionKind) hasGroup() bool { return k < numActionKinds && actionTable[k].arg == argGroup }
func (k ActionKind) hasReplica() bool {
	return k < numActionKinds && actionTable[k].arg == argReplica
}

// isRequest reports whether a client step is a request to the lock service
// or the storage (one that the network can delay or lose the reply of).
func (k ActionKind) isRequest() bool {
	switch k {
	case ActAcquire, ActIncr, ActExpire, ActRead, ActWrite, ActRelease, ActDel, ActStaleRead:
		return true
	}
	return false
}

// Action is one thing that can happen: a comparable value.
type Action struct {
	Kind   ActionKind
	Client uint8 // which client (client actions only)
	Arg    uint8 // pause or delay length in ticks; node index for node faults
}

// ClientName is A, B, C, … for client 0, 1, 2, ….
func ClientName(i int) string { return string(rune('A' + i)) }

// String is the action in scenario-file words: "tick", "A acquire",
// "B pause 14", "failover", "node-crash 2" (nodes count from 1),
// "replicate 2" ("replicate": replica 1).
func (a Action) String() string {
	k := a.Kind
	switch {
	case k.hasReplica() && a.Arg > 0:
		return k.String() + " " + strconv.Itoa(int(a.Arg)+1)
	case !k.ByClient() && k.hasNode():
		return k.String() + " " + strconv.Itoa(int(a.Arg)+1)
	case !k.ByClient():
		return k.String()
	case k.hasTicks():
		return ClientName(int(a.Client)) + " " + k.String() + " " + strconv.Itoa(int(a.Arg))
	case k.hasGroup():
		return ClientName(int(a.Client)) + " " + k.String() + " " + strconv.Itoa(int(a.Arg)+1)
	}
	return ClientName(int(a.Client)) + " " + k.String()
}

func verbList() string {
	words := make([]string, numActionKinds)
	for k := range actionTable {
		words[k] = actionTable[k].word
	}
	return strings.Join(words, ", ")
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
	for i, facts := range actionTable { // a word may name a client's and a node's fault (clock-jump)
		if facts.word == f[verbAt] && (kind < 0 || facts.byClient == (verbAt == 1)) {
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
	needArg := a.Kind.hasTicks() || a.Kind.hasNode() || a.Kind.hasGroup()
	if a.Kind.hasReplica() && len(args) == 1 {
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 || n > MaxNodes-1 {
			return Action{}, fmt.Errorf("action %q: replica %q: want 1 to %d", clip(s), clip(args[0]), MaxNodes-1)
		}
		a.Arg = uint8(n - 1)
		return a, nil
	}
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
	case a.Kind.hasGroup() && (err != nil || n < 1 || n > MaxNodes):
		return Action{}, fmt.Errorf("action %q: group %q: want 1 to %d (the node or window of partition=)", clip(s), clip(args[0]), MaxNodes)
	}
	a.Arg = uint8(n)
	if a.Kind.hasNode() || a.Kind.hasGroup() {
		a.Arg--
	}
	return a, nil
}

// Result is the answer a request got.
type Result uint8

const (
	ResNone        Result = iota
	ResOK                 // SET NX won, INCR/EXPIRE/GET answered, DEL removed the key, db write buffered
	ResRefused            // SET NX found the key: retry next tick (or wait)
	ResAccepted           // storage accepted the read or write
	ResRejected           // storage refused the read or write (fencing, CAS, killed session)
	ResNoop               // release found nothing to delete, EXPIRE found no key, renewal failed
	ResUnreachable        // a partition cut the client off: the request failed (it retries, or gives up a release)
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
	EvHealed                          // tick: a partition healed (HealedMask)
	EvStray                           // arrive: the first copy of a resent request arrived
	EvSplit                           // failover: a split brain (the old primary keeps answering its side)
	EvOldSide                         // the acting client talks to an old primary (split brain)
	EvOwnLater                        // arrive: a late release met its own client's lock of a later job (jobs=N)
	EvRenewSaved                      // renew: the key would have expired before its holder's next step (a slow job, a pause the renewer outlives)
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
	Other  uint8  // the lock's holder (client+1) before a client's step; 0 none (Redlock: redlockHolder; its acquire: the asked node's key; its release: another's key it reached, redlockRelease); a release that removed another's key: that key's owner
	Node   uint8  // redlock: the node asked
	Held   uint8  // redlock: nodes the acting client holds at the step
	// For ticks: masks of clients whose key expired / who resumed.
	ExpiredMask uint8
	ResumedMask uint8
	HealedMask  uint8
	AckMask     uint8 // failover, node crash: clients whose WAIT failed with the primary
}

// mainStep is the action client i's own thread would take next, if any.
func mainStep(d *Design, s *State, i int) (ActionKind, bool) {
	c := &s.Clients[i]
	if c.Flags&FlagInFlight != 0 { // waiting for a reply: next, the request (or reply) arrives
		return ActArrive, c.Ready == 0
	}
	if c.Ready != 0 || c.Flags&FlagWaiting != 0 {
		return 0, false
	}
	switch c.Phase {
	case PhaseAcquire:
		if !acquireEnabled(d, s, i) {
			return 0, false
		}
	case PhaseRead, PhaseWrite:
		if d.Check == CheckValidity && c.Flags&FlagChecked == 0 {
			return ActCheck, true
		}
	case PhaseArrive:
		return ActArrive, true
	case PhaseAck:
		return ActAck, ackReturns(d, s, i)
	case PhaseDone, PhaseCrashed:
		return 0, false
	}
	return phaseAction[c.Phase], true
}

// at reports whether a fault placed at p may fall before client i's next step.
// A failed attempt's release (attemptRelease) is a request of the lock
// call: delay-at=acquire (pause-at=…, lose-at=…) falls before it too.
func at(d *Design, s *State, i int, p Place) bool {
	if p == PlaceAny {
		return true
	}
	c := &s.Clients[i]
	k := c.Next(d)
	return k == placeKinds[p] || p == PlaceAcquire && (k == ActRelease || k == ActDel) && c.releasingAttempt(d)
}

// strayDue reports whether the first copy of client i's resent request
// arrives now.
func strayDue(s *State, i int) bool {
	c := &s.Clients[i]
	return c.Stray != 0 && c.Stray <= s.Now && c.Flags&FlagInFlight == 0 && c.Phase != PhaseArrive
}

// renewDue reports whether client i's watchdog must renew now.
func renewDue(d *Design, s *State, i int) bool {
	c := &s.Clients[i]
	return d.RenewTicks > 0 && c.Flags&renewsFor(d) != 0 && c.Flags&pausedFreezes(d) == 0 && c.Timer != 0 && c.Timer <= s.Now && c.Live()
}

// renewsFor is the flags of a client whose watchdog renews: it believes
// it holds the lock, or (watchdog=session) its acquire was applied and
// the reply is held: the session's lease renews the key it does not yet
// know is its own.
func renewsFor(d *Design) uint16 {
	if d.Watchdog == WatchdogSession {
		return FlagBelieves | FlagReply
	}
	return FlagBelieves
}

// lateRenewDue reports whether client i's watchdog, stopped only after
// the unlock (watchdog-stop=after-unlock), runs the renewal that was due
// at the release (lateRenewal kept it in Timer). A client that crashed
// with its write in flight (FlagLost) keeps its renew timer but runs
// nothing: it never released, and its watchdog died with it. Nor does
// one whose acquire reply the network holds (FlagReply): the acquire set
// its timer, but it has not released, and its watchdog starts only when
// the reply comes.
func lateRenewDue(d *Design, s *State, i int) bool {
	c := &s.Clients[i]
	return c.Timer != 0 && c.Flags&(FlagBelieves|FlagLost|FlagReply|pausedFreezes(d)) == 0 && c.Timer <= s.Now && c.Phase != PhaseCrashed
}

// Actions appends to buf the actions enabled in s, in a fixed order: client
// steps by client, then faults by client, then replication and node faults,
// then the tick. The order is deterministic, so a path of indices replays.
// Each fault family adds its own actions (fault_*.go); the order of the
// calls below (and in clientFaultActions) is the order of every trace and
// golden file.
func Actions(d *Design, s *State, buf []Action) []Action {
	buf = buf[:0]
	anyStep := false
	anyLive := false
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		if c.Stray != 0 && strayDue(s, i) { // a stray copy arrives whatever its client does
			anyStep = true
			buf = append(buf, Action{Kind: ActArrive, Client: uint8(i)})
		}
		if d.WatchdogStop == StopAfterUnlock && lateRenewDue(d, s, i) { // the renewal that runs after the release
			anyStep = true
			buf = append(buf, Action{Kind: ActRenew, Client: uint8(i)})
		}
		if !c.Live() {
			continue
		}
		anyLive = true
		// mainStep gives no step to a client with Ready set (at work,
		// paused, backing off): testing it here saves the call for them
		if c.Ready == 0 {
			if k, ok := mainStep(d, s, i); ok {
				anyStep = true
				buf = append(buf, Action{Kind: k, Client: uint8(i)})
			}
		}
		if renewDue(d, s, i) {
			anyStep = true
			buf = append(buf, Action{Kind: ActRenew, Client: uint8(i)})
		}
	}
	if clientFaultsLeft(d, s) { // most states have used every budget up
		buf = clientFaultActions(d, s, buf)
	}
	if anyLive {
		if d.Lock == LockReplica {
			buf = replicaActions(d, s, buf)
		}
		if d.NodeCrashes > 0 || d.ClockJumps > 0 {
			buf = nodeFaultActions(d, s, buf)
		}
		if d.StorageFailovers > 0 || d.StaleReads > 0 || d.CounterCrashes > 0 { // storage.go, fence_counter.go
			buf = storageActions(d, s, buf)
			buf = counterActions(d, s, buf)
		}
	}
	if anyLive && int(s.Now) < d.HorizonTicks && (d.Clock == ClockFree || !anyStep) {
		buf = append(buf, Action{Kind: ActTick})
	}
	return buf
}

// clientFaultActions appends the client faults enabled in s, by client,
// in clientFaultOrder (Actions' order), each family only while its budget
// lasts (a call saved per client and state; each checks its budget again
// itself). The families are spelled out, not looped over the table: the
// loop cost the model's successors about a third (BenchmarkSuccessors).
func clientFaultActions(d *Design, s *State, buf []Action) []Action {
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		if !c.Live() || c.Flags&FlagLost != 0 {
			continue
		}
		if c.Flags&FlagStarted != 0 { // these fall between two of its steps
			if int(s.Used[FaultPause]) < d.Pauses {
				buf = pauseActions(d, s, i, buf)
			}
			if int(s.Used[FaultSlow]) < d.SlowJobs {
				buf = slowActions(d, s, i, buf)
			}
			if int(s.Used[FaultDelay]) < d.Delays {
				buf = delayActions(d, s, i, buf)
			}
			if int(s.Used[FaultCrash]) < d.Crashes {
				buf = crashActions(d, s, i, buf)
			}
			if int(s.Used[FaultLoss]) < d.Losses {
				buf = loseActions(d, s, i, buf)
			}
			if int(s.Used[FaultClientJump]) < d.ClientJumps {
				buf = skewActions(d, s, i, buf)
			}
			if int(s.StoreCopy.StaleReads) < d.StaleReads {
				buf = staleReadActions(d, s, i, buf)
			}
			if d.Hangs > 0 {
				buf = hangActions(d, s, i, buf)
			}
			if d.Restarts > 0 {
				buf = restartActions(d, s, i, buf)
			}
		} else if d.Lock == LockZooKeeper && int(s.Used[FaultLoss]) < d.Losses {
			// a ZooKeeper job's create is its first step: its reply may be
			// lost too (what protected mode is for, lock_zookeeper.go)
			buf = loseActions(d, s, i, buf)
		}
		if int(s.Used[FaultPartition]) < d.Partitions {
			buf = partitionActions(d, s, i, buf) // a client may be cut off before it starts
		}
	}
	return buf
}

// clientFaultsLeft reports whether some client fault family of Actions
// still has budget in s (hangs and restarts count theirs by client): the
// table's left of some fault in clientFaultOrder, spelled out. (max, not
// two tests: the function stays within Go's inlining budget, a call saved
// on every state.)
func clientFaultsLeft(d *Design, s *State) bool {
	return int(s.Used[FaultPause]) < d.Pauses || int(s.Used[FaultSlow]) < d.SlowJobs || int(s.Used[FaultDelay]) < d.Delays ||
		int(s.Used[FaultCrash]) < d.Crashes || int(s.Used[FaultLoss]) < d.Losses || int(s.Used[FaultClientJump]) < d.ClientJumps ||
		int(s.StoreCopy.StaleReads) < d.StaleReads || max(d.Hangs, d.Restarts) > 0 || int(s.Used[FaultPartition]) < d.Partitions
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
// a copy, nothing else is read or written. a must be enabled in s. It
// dispatches once on the action's kind: time, replication and faults to
// their families' files, a client's own steps to clientStep, which hands
// the lock service's part to service.go.
func Step(d *Design, s State, a Action) (State, Event) {
	var ev Event
	StepTo(d, &s, a, &ev)
	return s, ev
}

// StepTo is Step in place: it changes *s into the state after a and writes
// what a caused to *ev. The search uses it to step without copying states
// in and out (Step's State argument and results are 184 bytes each).
func StepTo(d *Design, s *State, a Action, ev *Event) { stepTo(d, s, a, ev, false) }

// stepTo is StepTo; counted says that the caller counts the step's
// bypasses (bypass=K: stepCounted). Counted out of line, so that the
// other designs' steps keep nothing across the call of their kind's
// function: kept, its arguments were saved and restored on every step.
func stepTo(d *Design, s *State, a Action, ev *Event, counted bool) {
	if !counted && measuresBypass(d) {
		stepCounted(d, s, a, ev)
		return
	}
	*ev = Event{Action: a, Now: s.Now}
	if a.Kind.ByClient() {
		switch {
		case d.Lock != LockRedlock:
			ev.Other = s.Nodes[0].Owner
		case a.Kind != ActAcquire && a.Kind != ActRelease && a.Kind != ActDel: // those set their own
			ev.Other = redlockHolder(d, s, int(a.Client))
		}
		if s.Clients[a.Client].Flags&FlagOldSide != 0 {
			ev.Flags |= EvOldSide
		}
	}
	switch a.Kind {
	case ActTick:
		tick(d, s, ev)
	case ActReplicate:
		replicate(s, a, ev)
	case ActFailover:
		failover(d, s, a, ev)
	case ActNodeCrash:
		nodeCrash(d, s, int(a.Arg), ev)
	case ActClockJump:
		clockJump(d, s, int(a.Arg), ev)
	case ActPause:
		pause(s, int(a.Client), a.Arg)
		if sessionHooks(d) {
			paused(d, s, int(a.Client), a.Arg) // service.go: what it means for its session
		}
	case ActSlow:
		slow(s, int(a.Client))
	case ActCrash:
		crash(d, s, int(a.Client), ev)
	case ActDelay:
		delay(d, s, int(a.Client), a.Arg, ev)
	case ActLose:
		lose(d, s, int(a.Client), ev)
	case ActPartition:
		partition(d, s, int(a.Client), a.Arg)
	case ActSkew:
		skew(d, s, int(a.Client))
	case ActHang:
		hang(d, s, int(a.Client), ev)
	case ActRestart:
		restart(d, s, int(a.Client))
	case ActArrive:
		arrive(d, s, int(a.Client), ev)
	case ActStorageSync:
		storageSync(d, s, ev)
	case ActStorageFailover:
		storageFailover(d, s, ev)
	case ActCounterCrash:
		counterCrash(d, s, ev)
	default:
		clientStep(d, s, a, ev)
	}
	if d.Ack == AckWait {
		ackSettle(d, s)
	}
}

// stepCounted is the step a of a design that counts bypasses (bypass=K,
// fairness.go): who believed before it, the step, the counts after it.
func stepCounted(d *Design, s *State, a Action, ev *Event) {
	before := believing(d, s)
	stepTo(d, s, a, ev, true)
	countBypass(d, s, a, before)
}

// clientStep is one step of client a.Client's program: its requests to the
// lock service and to the storage.
func clientStep(d *Design, s *State, a Action, ev *Event) {
	i := int(a.Client)
	c := &s.Clients[i]
	c.Flags |= FlagStarted
	switch a.Kind {
	case ActIncr:
		if externalCounter(d) {
			counterIncr(s, i, ev)
		} else {
			incr(d, s, i, ev)
		}
	case ActAcquire:
		acquire(d, s, i, ev)
	case ActExpire:
		expire(d, s, i, ev)
	case ActCheck:
		check(d, s, i, ev)
	case ActRead:
		read(d, s, i, ev, false)
	case ActStaleRead:
		read(d, s, i, ev, true)
		storageReplicaDone(d, s)
	case ActWrite:
		write(d, s, i, ev)
	case ActRelease, ActDel:
		release(d, s, i, ev)
	case ActRenew:
		renew(d, s, i, ev)
	case ActAck:
		ack(d, s, i, ev)
	case ActApply:
		apply(d, s, i, ev) // storage.go
	}
}

// check is check=validity: the client compares the validity it has left
// (TTL − time since it sent the acquire − drift) with zero, and gives the
// job up if none is left.
func check(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	left := validityLeft(d, s, c)
	if d.Lock == LockLease { // its leader context, not a validity
		left = leaseCheck(c)
	}
	ev.Value = uint8(max(left, 0))
	ev.Result = ResNoop
	if left > 0 {
		ev.Result = ResOK
	}
	ev.Flags |= c.Take(d, ActCheck, Reply{Result: ev.Result, Left: left}, s.Now).Flags
}

// validityLeft is the validity the client believes it has left, by its own
// clock: TTL − (its clock now − its clock when it sent the acquire) − drift.
func validityLeft(d *Design, s *State, c *Client) int {
	return int(c.Since) + d.TTLTicks - d.DriftTicks - (int(s.Now) + int(c.Skew))
}

// read is the job's read of the counter, with its token when fence=rw;
// stale: served by the storage's lagging replica (a stale-read fault).
func read(d *Design, s *State, i int, ev *Event, stale bool) {
	c := &s.Clients[i]
	if !HoldsLock(d, s, i) && !readSafe(d, s, i) {
		ev.Flags |= EvUnsafe
	}
	ev.Held = uint8(heldNodes(d, s, i))
	tok := sentToken(d, c, true)
	ev.Token = tok
	r := readAt(d, s, i, ev, tok, stale)
	ev.Result, ev.Value = r.Result, r.Value
	c.Take(d, ActRead, r, s.Now)
}

// readAt is the storage's answer to client i's read with token tok: the
// counter and version read, a refusal (with the storage's highest token in
// ev.MaxTok), or unreachable.
func readAt(d *Design, s *State, i int, ev *Event, tok uint16, stale bool) Reply {
	if !reachStorage(d, s, i) { // cut off: the read fails; its retries fail until the partition heals
		ev.Flags &^= EvUnsafe
		return Reply{Result: ResUnreachable}
	}
	counter, version := s.Store.Counter, s.Store.Version
	switch {
	case stale:
		s.StoreCopy.StaleReads++
		if !replicaRead(d, &s.StoreCopy, tok) {
			ev.MaxTok = s.StoreCopy.MaxTok
			return Reply{Result: ResRejected}
		}
		counter, version = s.StoreCopy.Counter, s.StoreCopy.Version
	case inTx(d):
		if !txAccess(d, s, i) { // the session was killed: the SELECT fails
			return Reply{Result: ResRejected}
		}
	case !storageRead(d, &s.Store, tok):
		ev.MaxTok = s.Store.MaxTok
		return Reply{Result: ResRejected}
	}
	return Reply{Result: ResAccepted, Value: counter, Version: version}
}

// write is the job's write of read+1 (or the arrival of a delayed one).
func write(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	if !HoldsLock(d, s, i) {
		ev.Flags |= EvUnsafe
	}
	ev.Held = uint8(heldNodes(d, s, i))
	tok := sentToken(d, c, false)
	ev.Token, ev.Value = tok, c.Read+1
	switch {
	case !reachStorage(d, s, i) && c.Phase != PhaseArrive: // cut off: its retries fail until the partition heals
		ev.Flags &^= EvUnsafe
		ev.Result = ResUnreachable
	case inTx(d):
		ev.Result = ResRejected
		if txAccess(d, s, i) {
			ev.Result = ResOK // buffered until COMMIT
		}
	case twoStep(d):
		storeCheck(d, s, tok, ev) // storage.go: the check now, the write next
	default:
		storeWrite(d, s, i, tok, ev)
	}
	c.Take(d, ActWrite, Reply{Result: ev.Result}, s.Now)
}

// storeWrite is client i's write of read+1, with token tok, at the storage.
func storeWrite(d *Design, s *State, i int, tok uint16, ev *Event) {
	c := &s.Clients[i]
	if !storageWrite(d, &s.Store, tok, c.Version) {
		ev.Result, ev.MaxTok = ResRejected, s.Store.MaxTok
		return
	}
	ev.Result = ResAccepted
	s.Store.Counter = c.Read + 1
	accept(d, &s.Store, c)
}

// accept counts client c's job among those whose write was accepted, once
// however many copies of the write the storage took. Only designs whose
// clients resend (timeout=T) keep the FlagWrote mark, so that the others'
// states stay as few as they were.
func accept(d *Design, st *Storage, c *Client) {
	if d.TimeoutTicks == 0 {
		st.Accepted++
		return
	}
	if c.Flags&FlagWrote == 0 {
		c.Flags |= FlagWrote
		st.Accepted++
	}
}

// keyEnd is the tick at which a key (lease, session deadline) set now is
// gone: now+TTL (one tick earlier with the planted bug expire-early).
func keyEnd(d *Design, now uint8) uint8 {
	if d.Lock == LockConsul {
		return consulEnd(d, now) // the server doubles the session's TTL
	}
	if d.Bug == BugExpireEarly && d.TTLTicks > 1 {
		return now + uint8(d.TTLTicks) - 1
	}
	return now + uint8(d.TTLTicks)
}

// takeToken hands client c the next number of node key's counter (INCR
// lock:fence, etcd's revision, ZooKeeper's sequence).
func takeToken(key *Node, c *Client, ev *Event) {
	key.Fence++
	c.Token = key.Fence
	ev.Token = c.Token
}

// tick moves time: nodes come back, keys, leases and sessions whose time is
// reached vanish, waits that end are cleared (so equal situations are equal
// states).
func tick(d *Design, s *State, ev *Event) {
	s.Now++
	ev.Now = s.Now
	nodes := lockNodes(d)
	nodeBack(d, s)
	for k := 0; k < nodes; k++ {
		n := &s.Nodes[k]
		if n.Back == s.Now {
			n.Back = 0
			ev.Flags |= EvNodeBack
		}
		if n.Hold == s.Now { // lock-delay over (only lock-delay designs set Hold)
			n.Hold = 0
		}
		if n.Owner != 0 && n.Exp == s.Now {
			expireKey(d, s, k, ev)
		}
	}
	if k := diskNode(d); k >= 0 && int(s.Now)%d.FsyncTicks == 0 {
		fsync(s.Nodes[0], &s.Nodes[k])
	}
	sessions := sessionQueue(d) // clientTick's sessions, asked once a tick
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		if c.Cut != 0 && c.Cut <= s.Now {
			heal(d, s, i, ev)
		}
		if sessions {
			clientTick(d, s, i, ev)
		}
		if c.Ready == s.Now && c.Tick(s.Now) {
			ev.Flags |= EvResumed
			ev.ResumedMask |= 1 << i
			resumed(d, s, i)
		}
	}
}
