package model

// client.go: the client's own program, one client at a time and pure: what
// it sends next (Client.Next) and how the answer to a request changes it
// (Client.Take), with the faults that strike the process itself (Pause,
// Slow, Crash, Tick). Nothing here reads another client, a lock node or the
// storage: the answer comes in as a Reply.
//
// Two drivers run this one program, as Stateright runs one actor under its
// checker and on real sockets. The model's Step works out each answer from
// the state (the service's file, lock_*.go, and storage.go) and hands it to
// Take; reality's real client (reality/client.go) sends the request to
// real servers, reads their answer into a Reply and hands it to the same
// Take. So the rules of the job (after a won acquire the read, after a
// refused one a retry next tick, after a rejected read the release, after
// the release the job is over) are written once.
//
// Static dispatch only: Take is a switch on the request's kind and is
// called by pointer, so nothing escapes and nothing is allocated (the
// alloc test covers Step and Actions, which call it).

// Reply is the answer to a client's request, as the client reads it.
type Reply struct {
	Result  Result
	Token   uint16 // a token received: INCR, the acquire's script, etcd's revision, ZooKeeper's sequence; 0 none
	Value   uint8  // read: the counter read
	Version uint8  // read: the version read (storage=cas)
	Own     uint8  // get-del's GET: the nodes whose key was the client's own, a mask (one node: 1)
	Node    uint8  // Redlock's acquire: the node that answered
	// Left is the validity the client has left by its own clock, in ticks
	// (TTL − time since it sent the acquire − drift), read by check=validity
	// and by Redlock's count after its last node: the driver measures it
	// (the model from its ticks, reality from its real clock).
	Left int
}

// Taken is what a reply did beyond the client itself, for the driver.
type Taken struct {
	Flags  uint16 // EvWon (Redlock's count won), EvGiveUp (no validity left), EvJobDone (the release ended the job)
	Votes  uint8  // Redlock: the attempt's votes after this answer
	Unlock uint8  // Redlock: a lost attempt's votes, the nodes whose key it must delete
}

// phaseAction is the request each phase sends.
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
	PhaseAck:     ActAck,
	PhaseApply:   ActApply,
}

// Next is the kind of the client's next step of its own, whether or not it
// may take it now: ActArrive while a request or write of its own is in the
// network, ActCheck before a storage access that check=validity guards.
// (A client that is done or crashed has none: Next is then meaningless;
// Live says so.)
func (c *Client) Next(d *Design) ActionKind {
	if c.Flags&FlagInFlight != 0 || c.Phase == PhaseArrive {
		return ActArrive
	}
	if (c.Phase == PhaseRead || c.Phase == PhaseWrite) && d.Check == CheckValidity && c.Flags&FlagChecked == 0 {
		return ActCheck
	}
	return phaseAction[c.Phase]
}

// Take changes the client as the reply r to its request k, answered at
// tick now, says. k is the request's kind (ActArrive's write is ActWrite;
// the DEL of get-del is ActDel); the client is in the phase that sent it.
//
// With renew-fail=stop, a worker whose watchdog has told it that a renewal
// failed (its Timer stopped while it believes) gives its job up as soon as
// it takes an answer between two steps of its job.
func (c *Client) Take(d *Design, k ActionKind, r Reply, now uint8) Taken {
	return c.take(d, k, r, now, false)
}

// take is Take; stopping says that the caller (takeStopping) stops the
// worker after it. Stopped out of line, so that the other designs' replies
// keep nothing across the calls below (a check after them, on every reply,
// cost BenchmarkSPIN3SymmetryWorker1 0.07% more instructions).
func (c *Client) take(d *Design, k ActionKind, r Reply, now uint8, stopping bool) Taken {
	if d.RenewFail == RenewFailStop && !stopping {
		return c.takeStopping(d, k, r, now)
	}
	switch k {
	case ActIncr:
		c.takeIncr(d, r, now)
	case ActAcquire:
		if d.Lock == LockRedlock {
			return c.takeVote(d, r, now)
		}
		c.takeAcquire(d, r, now)
	case ActExpire: // with or without an expiry, it goes on with the lock
		lockTaken(d, c)
	case ActCheck:
		if r.Result == ResOK {
			c.Flags |= FlagChecked
			break
		}
		c.Phase = PhaseRelease // no validity left: the job gives up
		return Taken{Flags: EvGiveUp}
	case ActRead:
		if d.Readers > 0 && c.Marks&MarkReader != 0 && r.Result == ResAccepted { // a reader's job: it read, it releases
			c.Flags &^= FlagChecked
			c.Read, c.Version = r.Value, r.Version
			c.Phase = PhaseRelease
			break
		}
		c.takeRead(d, r, now)
	case ActWrite, ActApply:
		if k == ActWrite && twoStep(d) && r.Result == ResOK { // fence-check=two-step: the check passed, the write follows
			c.Flags &^= FlagChecked
			c.Phase = PhaseApply
			break
		}
		c.takeWrite(d, r)
	case ActRelease, ActDel:
		if k == ActRelease && d.Release == ReleaseGetDel && c.Phase == PhaseRelease && r.Result == ResOK {
			// the GET of get-del: the DEL follows, if the key was its own
			if d.Lock == LockRedlock {
				c.Votes = r.Own
			} else if r.Own != 0 {
				c.Flags |= FlagSawMine
			}
			c.Phase = PhaseDel
			break
		}
		if c.releasingAttempt(d) { // a failed attempt's release: the lock call tries again
			c.retryAttempt(d, now)
			break
		}
		late := c.lateRenewal(d, now)
		t := Taken{Flags: c.finishJob(d)}
		c.Timer = late
		return t
	case ActRenew:
		return c.takeRenew(d, r, now)
	case ActAck: // WAIT returned: it goes on with the lock either way
		c.Flags |= FlagBelieves
		c.Phase = PhaseRead
		if d.RenewTicks > 0 {
			c.Timer = now + uint8(d.RenewTicks)
		}
	}
	return Taken{}
}

// takeStopping is Take with renew-fail=stop: the reply taken, a worker
// whose renewal failed (its Timer stopped while it believes) stops.
func (c *Client) takeStopping(d *Design, k ActionKind, r Reply, now uint8) Taken {
	t := c.take(d, k, r, now, true)
	if c.Timer == 0 && c.Believes() {
		t.Flags |= c.stopWorker()
	}
	return t
}

// takeRenew: the watchdog's renewal answered. By default its next renewal
// follows, whatever this one did: a failed renewal does not stop the
// worker. With renew-fail=stop a failed one stops the watchdog and the
// worker (stopWorker). A renewal after the release (watchdog-stop=
// after-unlock) is the watchdog's last. A session's keep-alive
// (watchdog=session) goes on while the acquire's reply is held.
func (c *Client) takeRenew(d *Design, r Reply, now uint8) Taken {
	switch {
	case !c.Believes() && c.Flags&renewsFor(d)&FlagReply == 0:
		c.Timer = 0
	case r.Result != ResOK && d.RenewFail == RenewFailStop:
		c.Timer = 0
		return Taken{Flags: c.stopWorker()}
	default:
		c.Timer = now + uint8(d.RenewTicks)
	}
	return Taken{}
}

// stopWorker is the worker told that its lock is lost (renew-fail=stop):
// between two steps of its job it gives the job up (its work cut short),
// its next step the release, and reports EvGiveUp; with a request in the network it first
// takes the answer (Take stops it then); a write already sent, or a
// release, goes on.
func (c *Client) stopWorker() uint16 {
	if c.Flags&FlagInFlight != 0 {
		return 0
	}
	switch c.Phase {
	case PhaseIncr, PhaseExpire, PhaseRead, PhaseWrite, PhaseApply:
		c.Phase = PhaseRelease
		c.Flags &^= FlagChecked
		if c.Flags&FlagPaused == 0 { // its work (or a retry's wait) is cancelled with it
			c.Ready = 0
		}
		return EvGiveUp
	}
	return 0
}

// LoseRequest is the client whose request of kind k was lost before it
// reached its server (lose=request): it heard nothing, so it sends the
// request again after its timeout, or, for a release with
// release-fail=forget, takes the release as done (Forget). It returns the
// event flags (EvJobDone when it forgot).
func (c *Client) LoseRequest(d *Design, k ActionKind, now uint8) uint16 {
	c.Flags |= FlagStarted
	if d.ForgetsRelease(k) {
		return c.Forget(d, now)
	}
	c.Ready = now + uint8(d.TimeoutTicks)
	return 0
}

// ForgetsRelease reports whether a request of kind k that got no answer
// (a lost request or reply) is taken as done rather than sent again: a
// release, or get-del's DEL, with release-fail=forget.
func (d *Design) ForgetsRelease(k ActionKind) bool {
	return d.ReleaseFail == ReleaseFailForget && (k == ActRelease || k == ActDel)
}

// Forget is the client taking its release, which got no answer, as done
// (release-fail=forget: the error of a lost request or reply is read as
// "released", or the client clears its lock before it knows): it holds
// no value any more, believes nothing, and its job is over, whatever the
// server did with the release; its next job (jobs=N) begins once its
// timeout for the answer is over. It returns EvJobDone.
func (c *Client) Forget(d *Design, now uint8) uint16 {
	late := c.lateRenewal(d, now)
	f := c.finishJob(d)
	c.Timer = late
	if c.Live() {
		c.Ready = now + uint8(d.TimeoutTicks)
	}
	return f
}

// lateRenewal is the renewal due at tick now that runs after the release
// with watchdog-stop=after-unlock (the tick it was due), or 0.
func (c *Client) lateRenewal(d *Design, now uint8) uint8 {
	if d.WatchdogStop == StopAfterUnlock && c.Timer != 0 && c.Timer <= now && c.Believes() {
		return c.Timer
	}
	return 0
}

// TakeAcquireReply is the client taking its acquire's reply that the
// network held (the acquire was applied at its send): left is the
// validity it has left by its own clock (TTL − time since the send −
// drift). It believes it holds the lock, unless check=acquire finds none
// left: then it gives the attempt up and tries again next tick
// (EvGiveUp), and the driver deletes its key if it is still its own; or,
// where that release is a request of its own (attemptRelease), it sends
// the release first, without believing, and tries again once it is
// answered (retryAttempt).
func (c *Client) TakeAcquireReply(d *Design, left int, now uint8) Taken {
	if d.Check == CheckAcquire && left <= 0 {
		c.Phase = firstPhase(d)
		c.Token = 0
		c.Ready = now + 1
		if attemptRelease(d) {
			c.Phase, c.Ready = PhaseRelease, 0
		}
		return Taken{Flags: EvGiveUp}
	}
	c.Flags |= FlagBelieves // the acquire reply says OK only now
	if d.RenewTicks > 0 && (d.Watchdog != WatchdogSession || c.Timer == 0) {
		// (a session's keep-alive has renewed from the acquire on: it
		// keeps its own beat)
		c.Timer = now + uint8(d.RenewTicks)
	}
	return Taken{}
}

// takeIncr: INCR lock:fence (or the external counter's) answered.
func (c *Client) takeIncr(d *Design, r Reply, now uint8) {
	if externalCounter(d) { // after the lock was won: on to the read
		c.Token = r.Token
		c.Phase = PhaseRead
		return
	}
	if r.Result != ResOK { // cut off, or the node is down: try again next tick
		c.Ready = now + 1
		return
	}
	c.Token = r.Token
	if d.Acquire == AcquireIncrBefore {
		c.Phase = PhaseAcquire
	} else {
		lockTaken(d, c)
	}
}

// takeAcquire: the acquire of one key (redis, replica, etcd, the database's
// row) or of ZooKeeper's queue answered.
func (c *Client) takeAcquire(d *Design, r Reply, now uint8) {
	if r.Token != 0 { // ZooKeeper: its node's sequence, told when the node is created
		c.Token = r.Token
	}
	switch r.Result {
	case ResOK:
		c.grant(d, now)
		switch d.Acquire {
		case AcquireIncrAfter:
			if d.Fence != FenceNone {
				c.Phase = PhaseIncr
			}
		case AcquireSetExpire:
			c.Phase = PhaseExpire
		}
	case ResRefused:
		switch {
		case sessionQueue(d): // it waits on the watch of its predecessor's node (key)
		case waitsForNotice(d):
			c.Flags |= FlagWaiting
		default:
			c.Ready = now + 1
		}
	case ResUnreachable: // cut off: it tries again next tick
		c.Ready = now + 1
	case ResNoop: // etcd-mutex: ErrSessionExpired; a new session, Lock again next tick
		c.Ready = now + 1
	}
}

// takeVote: Redlock's node r.Node answered the attempt's acquire; after the
// last node the client counts its votes and its validity.
func (c *Client) takeVote(d *Design, r Reply, now uint8) Taken {
	if c.Asked == 0 {
		c.Votes = 0
	}
	if r.Result == ResOK {
		c.Votes |= 1 << r.Node
	}
	c.Asked++
	t := Taken{Votes: uint8(popcount(c.Votes))}
	if int(c.Asked) < d.Nodes {
		return t
	}
	need := majority(d)
	if d.Quorum == QuorumAll {
		need = d.Nodes
	}
	c.Asked = 0
	if int(t.Votes) >= need && r.Left > 0 {
		t.Flags |= EvWon
		c.Votes = 0
		c.grant(d, now)
		return t
	}
	t.Unlock = c.Votes // lost: it unlocks what it got, and tries again next tick
	c.Votes = 0
	c.Ready = now + 1
	return t
}

// takeRead: the storage answered the job's read (a reader's read, which
// ends its job, Take handles: takeRead stays small enough to inline).
func (c *Client) takeRead(d *Design, r Reply, now uint8) {
	c.Flags &^= FlagChecked
	switch r.Result {
	case ResUnreachable: // cut off: its retries fail until the partition heals
		c.Ready = c.Cut
	case ResAccepted:
		c.Read, c.Version = r.Value, r.Version
		c.Phase = PhaseWrite
		if d.Reenter != ReenterNone {
			c.Phase = PhaseReenter
		}
		work := d.WorkTicks
		if c.Flags&FlagSlow != 0 {
			work = d.SlowWorkTicks
		}
		if work > 0 { // the work itself: it computes read+1
			c.Ready = now + uint8(work)
		}
	default: // refused (fencing, a killed session): it releases
		c.Phase = PhaseRelease
	}
}

// takeWrite: the storage answered the job's write (or the write held in
// the network arrived); with fence-check=two-step, the write applied after
// its token check (ActApply), or a check that failed (a check that passed
// Take handles: takeWrite stays small enough to inline).
func (c *Client) takeWrite(d *Design, r Reply) {
	c.Flags &^= FlagChecked
	if r.Result == ResUnreachable { // cut off: its retries fail until the partition heals
		c.Ready = c.Cut
		return
	}
	c.Phase = PhaseRelease
	if c.Flags&FlagLost != 0 { // it crashed while the write was on its way
		c.Phase = PhaseCrashed
	}
	if inTx(d) && r.Result == ResOK {
		c.Flags |= FlagBuffered // applied at COMMIT
	}
}

// grant makes the client the believer of a lock just won (ack=wait: it
// first waits for the replica; counter=external: it first takes its token).
func (c *Client) grant(d *Design, now uint8) {
	lockTaken(d, c)
	if externalCounter(d) {
		c.Phase = PhaseIncr // next: INCR fence on the counter node
	}
	if d.RenewTicks > 0 {
		c.Timer = now + uint8(d.RenewTicks)
	}
}

// lockTaken moves client c, whose acquire's last write was just applied,
// to its work: it believes it holds the lock, or (ack=wait) it first waits
// for the replica, and believes only once WAIT returns.
func lockTaken(d *Design, c *Client) {
	if d.Ack == AckWait {
		c.Phase = PhaseAck
		return
	}
	c.Flags |= FlagBelieves
	c.Phase = PhaseRead
}

// finishJob ends the client's job: its next job begins (jobs=N), or it is
// done. It returns EvJobDone.
func (c *Client) finishJob(d *Design) uint16 {
	if int(c.Job)+1 < d.Jobs {
		nextJob(d, c)
		return EvJobDone
	}
	if c.Stray != 0 { // the first copy of a resent request is still on its way
		*c = Client{Phase: PhaseDone, Token: c.Token, Read: c.Read, Version: c.Version, Stray: c.Stray, Flags: c.Flags & (FlagWrote | FlagStrayDel), Job: c.Job, Marks: c.Marks}
	} else {
		*c = Client{Phase: PhaseDone, Job: c.Job, Marks: c.Marks & (MarkRestarts | readerMark(d))}
	}
	return EvJobDone
}

// Faults of the process itself.

// Pause freezes the client (its watchdog and heartbeats too) from tick now
// for p ticks: it takes no step before now+p.
func (c *Client) Pause(now, p uint8) {
	c.Ready = now + p
	c.Flags |= FlagPaused
}

// Slow makes the client's work take slow-work ticks.
func (c *Client) Slow() { c.Flags |= FlagSlow }

// Crash ends the client for good; a write already on its way still
// arrives (FlagLost: the write's arrival then ends it). It returns the
// client as it was.
func (c *Client) Crash() (old Client) {
	old = *c
	if c.Phase == PhaseArrive {
		c.Flags = FlagStarted | FlagLost // its write is still on its way
		return old
	}
	*c = Client{Phase: PhaseCrashed}
	if old.Stray != 0 { // the first copy of a resent request is still on its way
		c.Token, c.Read, c.Version, c.Stray = old.Token, old.Read, old.Version, old.Stray
		c.Flags = old.Flags & (FlagWrote | FlagStrayDel)
		c.Marks = old.Marks
	}
	c.Job, c.Marks = old.Job, c.Marks|old.Marks&MarkRestarts
	return old
}

// DelayWrite sends the write and lets the network hold it until tick
// now+p: the client's next step is its arrival.
func (c *Client) DelayWrite(now, p uint8) {
	c.Phase = PhaseArrive
	c.Flags &^= FlagChecked
	c.Ready = now + p
}

// SendResent sends the client's request of kind k (a write or a release,
// resendable) that the network holds for p ticks, longer than its
// timeout: the client gives up waiting at the timeout and sends it
// again, and the first copy arrives at now+p (Stray), whatever the
// client has done since.
func (c *Client) SendResent(d *Design, k ActionKind, now, p uint8) {
	c.Stray = now + p
	if k != ActWrite {
		c.Flags |= FlagStrayDel
		straySent(d, c)
	}
	c.Ready = now + uint8(d.TimeoutTicks)
}

// StrayArrived is the client once the first copy of its resent request
// has arrived (strayArrive, which reads the marks first): nothing of it
// is on its way any more.
func (c *Client) StrayArrived() {
	c.Stray = 0
	c.Flags &^= FlagStrayDel
	strayDone(c)
}

// Tick is the start of tick now for the client: a wait that ends now (its
// work, a back-off, a pause) is over. It reports whether a pause ended.
func (c *Client) Tick(now uint8) (resumed bool) {
	if c.Ready != now {
		return false
	}
	c.Ready = 0
	if c.Flags&FlagPaused != 0 {
		c.Flags &^= FlagPaused
		return true
	}
	return false
}

// InCriticalSection is the client's InCriticalSection (it believes, and its
// next step is not its release).
func (c *Client) InCriticalSection() bool { return InCriticalSection(c.Believes(), c.Phase) }
