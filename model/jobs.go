package model

import "fmt"

// jobs.go: repeated jobs (jobs=N) and the lock value a job writes
// (value=job|process). A client runs its jobs one after another: when a
// job's release is answered, the next job's acquire follows at once. The
// key holds the client's value: one of its own for each job (a fresh
// random value per acquire, as redsync and redislock do), or one for the
// whole process (Redisson's UUID:threadId, a hostname and pid). The value
// matters when a request of one job meets the lock of a later one: the
// late first copy of a resent release (delays with timeout=T). With
// value=process, check-and-delete finds its own value in the next job's
// key and deletes it; with value=job it leaves it alone.
//
// The state keeps what that needs in two bytes per client: Job (jobs
// finished) and Marks (MarkStrayKey, MarkStrayOld, MarkStrayProc). Designs
// with one job per client never set them, so their states are as many as
// before.

// tracksValues reports whether the design's clients keep Job and Marks:
// only designs with repeated jobs or restarts, or whose failed attempts'
// releases can arrive late (attemptRelease).
func tracksValues(d *Design) bool { return d.Jobs > 1 || d.Restarts > 0 || attemptRelease(d) }

// attemptRelease reports whether a failed acquire attempt's release
// (check=acquire: a late reply with no validity left) is a request of its
// own, which the network can hold past the timeout so that its first copy
// lands after the client's retry took the lock again: check=acquire with
// a budget of two delays or more at the lock call (delay-at=acquire or
// any: one for the acquire's reply, one for the release) and a timeout.
// Elsewhere the failed attempt's key is deleted with the reply, in one
// step, as before: nothing could hold the release, and those designs keep
// their states.
func attemptRelease(d *Design) bool {
	return d.Check == CheckAcquire && d.Delays >= 2 && d.TimeoutTicks > 0 && (d.DelayAt == PlaceAny || d.DelayAt == PlaceAcquire)
}

// releasingAttempt reports whether client c's next step is the release of
// its failed acquire attempt (attemptRelease): a release it sends without
// believing it holds the lock. A job's own release is sent by a believer.
func (c *Client) releasingAttempt(d *Design) bool {
	return (c.Phase == PhaseRelease || c.Phase == PhaseDel) && c.Flags&FlagBelieves == 0 && attemptRelease(d)
}

// retryAttempt: the failed attempt's release is answered; client c tries
// the lock again next tick (redsync: after its retry delay), with a value
// per job the same value. A late first copy of that release, still on
// its way, was sent by an earlier attempt.
func (c *Client) retryAttempt(d *Design, now uint8) {
	c.Phase = firstPhase(d)
	c.Flags &^= FlagSawMine
	c.Ready = now + 1
	if c.Stray != 0 {
		c.Marks |= MarkStrayOld
	}
}

// firstPhase is the first step of a job: INCR (acquire=incr-before) or the
// acquire.
func firstPhase(d *Design) Phase {
	if d.Acquire == AcquireIncrBefore {
		return PhaseIncr
	}
	return PhaseAcquire
}

// nextJob starts client c's next job at once: a fresh acquire. What
// outlives a job stays: a partition it is in, and the late first copy of
// its last release, now marked as sent by an earlier job.
func nextJob(d *Design, c *Client) {
	old := *c
	*c = Client{Phase: firstPhase(d), Flags: FlagStarted | old.Flags&(FlagOldSide|FlagStrayDel), Job: old.Job + 1, Cut: old.Cut, Group: old.Group, Stray: old.Stray, Marks: old.Marks & (MarkRestarts | MarkConfigB)}
	if old.Stray != 0 {
		c.Marks = old.Marks&^MarkCancelled | MarkStrayOld
	}
}

// restartActions: client i crashes and is restarted at once (restarts=N),
// while the budget lasts (the restarts used are counted in the clients'
// marks). Not while a request of its own is in the network.
func restartActions(d *Design, s *State, i int, buf []Action) []Action {
	c := &s.Clients[i]
	if c.Flags&FlagInFlight != 0 || c.Phase == PhaseArrive {
		return buf
	}
	used := 0
	for j := 0; j < d.Clients; j++ {
		used += int(s.Clients[j].Marks&MarkRestarts) / int(MarkRestarted)
	}
	if used < d.Restarts {
		buf = append(buf, Action{Kind: ActRestart, Client: uint8(i)})
	}
	return buf
}

// restart: client i's process dies and its supervisor starts it again at
// once, as a work queue redelivers an unacknowledged task: a new process,
// with a new lock value, runs the crashed job again from its acquire. The
// crashed attempt's lock stays until it expires (its watchdog died with
// it); a partition it was in, and the late copy of a release, outlive it.
func restart(d *Design, s *State, i int) {
	c := &s.Clients[i]
	old := *c
	*c = Client{Phase: firstPhase(d), Flags: FlagStarted | old.Flags&(FlagOldSide|FlagStrayDel), Job: old.Job, Cut: old.Cut, Group: old.Group, Stray: old.Stray, Marks: old.Marks + MarkRestarted}
	if old.Stray != 0 {
		c.Marks |= MarkStrayOld | MarkStrayProc
	}
	crashed(d, s, i, old)
}

// straySent marks client c's release held past its timeout: the key it set
// last is its own job's, the one the late copy names.
func straySent(d *Design, c *Client) {
	if tracksValues(d) {
		c.Marks = c.Marks&^(MarkStrayOld|MarkStrayProc) | MarkStrayKey
	}
}

// keySet records that client c has just set the lock key: once it has
// moved on from the job that sent its late release, the key holds a later
// job's lock.
func keySet(c *Client) {
	if c.Marks&MarkStrayOld != 0 {
		c.Marks &^= MarkStrayKey
	}
}

// laterOwnKey reports whether key, held by client i, is the lock of a later
// job of i than the one that sent i's late release.
func laterOwnKey(d *Design, s *State, i int, key *Node) bool {
	c := &s.Clients[i]
	return tracksValues(d) && key.Owner == uint8(i+1) && c.Marks&MarkStrayKey == 0
}

// lateReleaseMatches reports whether the late release of client i, meeting
// i's own lock of a later job, deletes it: DEL (and get-del's DEL) deletes
// any key; check-and-delete only a key with its value, that is, with
// value=process in the same process. A failed attempt's late release
// (attemptRelease, one job per client) meets the lock of a later attempt
// of the same job: with a value per job, the same value.
func lateReleaseMatches(d *Design, c *Client) bool {
	if d.Release != ReleaseCAD {
		return true
	}
	if c.Marks&MarkStrayProc != 0 {
		return false
	}
	return d.Value == ValueProcess || (d.Value == ValueJob && attemptRelease(d))
}

// strayDone clears the marks of client c's late release once it arrived.
func strayDone(c *Client) { c.Marks &^= MarkStrayKey | MarkStrayOld | MarkStrayProc }

// jobsApply refuses repeated-job parameters that would never act.
func (d Design) jobsApply() error {
	if d.Value == ValueProcess {
		switch {
		case d.Jobs < 2:
			return designErr("design parameter value=process applies only with jobs ≥ 2: with one job a client's value is its job's")
		case d.Lock != LockRedis && d.Lock != LockReplica && d.Lock != LockEtcd:
			return designErr("design parameter value=process applies only to locks redis, replica and etcd: a ZooKeeper node and a database transaction belong to one job, and Redlock's late releases are not modelled")
		case d.Release != ReleaseCAD:
			return designErr("design parameter value=process needs release=cad: del and get-del's DEL do not compare the value")
		case d.Delays == 0 || d.TimeoutTicks == 0 || (d.DelayAt != PlaceAny && d.DelayAt != PlaceRelease):
			return designErr("design parameter value=process acts on the late first copy of a release: it needs delays ≥ 1, timeout ≥ 1 and delay-at=release (or any)")
		}
	}
	if d.Value == ValueAcquire {
		switch {
		case d.Lock != LockRedis && d.Lock != LockReplica:
			return designErr("design parameter value=acquire applies only to locks redis and replica (check=acquire's)")
		case d.Release != ReleaseCAD:
			return designErr("design parameter value=acquire needs release=cad: del and get-del's DEL do not compare the value")
		case !attemptRelease(&d):
			return designErr("design parameter value=acquire acts on a failed attempt's late release: it needs check=acquire, delays ≥ 2, timeout ≥ 1 and delay-at=acquire (or any)")
		}
	}
	if attemptRelease(&d) && d.Jobs > 1 {
		return designErr("design parameter jobs=%d with check=acquire, delays ≥ 2 and timeout: a failed attempt's late release meeting a later job's lock is not modelled; set jobs=1", d.Jobs)
	}
	if d.Jobs > 1 && d.Delays > 0 && d.TimeoutTicks > 0 && (d.DelayAt == PlaceAny || d.DelayAt == PlaceWrite) {
		return designErr("design parameter jobs=%d with delays and timeout: a late first copy of a write would outlive its job, which is not modelled; set delay-at=release (or another request than the write)", d.Jobs)
	}
	if d.Restarts > 0 && d.Delays > 0 && d.TimeoutTicks > 0 && (d.DelayAt == PlaceAny || d.DelayAt == PlaceWrite) {
		return designErr("design parameter restarts with delays and timeout: a late first copy of a write would outlive its process, which is not modelled; set delay-at=release (or another request than the write)")
	}
	if d.Restarts > 0 && sessionQueue(&d) {
		return designErr("design parameter restarts does not apply to lock %s: the crashed process's %s lives on in its session beside the new process's, which is not modelled (use crashes)", d.Lock, Service(d.Lock).QueueEntry)
	}
	return nil
}

// TotalJobs is how many jobs the design's clients run between them.
func TotalJobs(d *Design) int { return d.Clients * d.Jobs }

// restartedAttempts counts the jobs of the run's history that a restart
// cut short: each is run again, so it adds to the jobs of the design.
func (r *Run) restartedAttempts() int {
	n := 0
	for _, j := range r.History {
		if j.ReturnSeq > 0 && r.Steps[j.ReturnSeq-1].Action.Kind == ActRestart {
			n++
		}
	}
	return n
}

// Words.

// ClientsText is "3 clients", or with repeated jobs "2 clients × 2 jobs
// (a lock value per job)".
func ClientsText(d *Design) string {
	s := fmt.Sprintf("%d clients", d.Clients)
	if d.Jobs > 1 {
		s += fmt.Sprintf(" × %d jobs (a lock value per %s)", d.Jobs, d.Value)
	}
	return s
}

// jobValue is the value client i (in state c) writes into the key:
// LockValue(i), followed by the process's number after a restart ("-p2")
// and the job's number for a later job's own value ("/2").
func jobValue(d *Design, i int, c *Client) string {
	v := LockValue(i)
	if r := c.Marks & MarkRestarts / MarkRestarted; r > 0 {
		v += fmt.Sprintf("-p%d", r+1)
	}
	if c.Job > 0 && d.Value == ValueJob {
		v += fmt.Sprintf("/%d", c.Job+1)
	}
	return v
}

// jobNote is "; job 2 begins" after a step that ended a job and started
// the client's next one.
func jobNote(st *StepRecord) string {
	i := st.Action.Client
	if st.Event.Flags&EvJobDone == 0 || st.After.Clients[i].Job == st.Before.Clients[i].Job {
		return ""
	}
	return fmt.Sprintf("; its job %d begins", st.After.Clients[i].Job+1)
}

func describeRestart(d *Design, st *StepRecord) string {
	i := int(st.Action.Client)
	s := "crashes; its supervisor restarts it at once: a new process, with a new lock value, runs the job again"
	switch {
	case HoldsLock(d, &st.Before, i) && d.Lock != LockRedlock && st.Before.Nodes[0].Exp == 0:
		s += "; its old key has no expiry: it stays for ever"
	case HoldsLock(d, &st.Before, i):
		s += "; its old lock stays until it expires"
	}
	return s
}

// describeLateOwn tells a late release meeting its own client's lock of a
// later job.
func describeLateOwn(d *Design, st *StepRecord) string {
	job := st.Before.Clients[st.Action.Client].Job + 1
	if d.Lock == LockEtcdMutex {
		if st.Event.Result == ResOK {
			return fmt.Sprintf("the key is its own lock of job %d (%s): deleted  ✗ it deleted its own newer lock", job, etcdMutexLateOwn(d, true))
		}
		return fmt.Sprintf("the key is its own lock of job %d (%s)", job, etcdMutexLateOwn(d, false))
	}
	if st.Event.Result == ResOK {
		why := "DEL does not compare values"
		if d.Release == ReleaseCAD {
			why = "the same value: one per process"
		}
		return fmt.Sprintf("the key is its own lock of job %d (%s): deleted  ✗ it deleted its own newer lock", job, why)
	}
	return fmt.Sprintf("the key is its own lock of job %d, another value (one per job): left alone", job)
}

// describeLateAttempt tells a failed attempt's late release meeting its
// own client's lock of a later attempt (attemptRelease).
func describeLateAttempt(d *Design, st *StepRecord) string {
	if st.Event.Result == ResOK {
		return "the key is its own retry's lock, with the same value (one per job): deleted  ✗ it deleted its own newer lock"
	}
	return "the key is its own retry's lock, another value (one per acquire): left alone"
}

// attemptNote is what follows the words of a failed attempt's release
// (attemptRelease) once it is answered: the retry.
func attemptNote(d *Design, st *StepRecord) string {
	i := st.Action.Client
	if !st.Before.Clients[i].releasingAttempt(d) || st.After.Clients[i].releasingAttempt(d) {
		return ""
	}
	return fmt.Sprintf("; that was its failed attempt's release: it tries again at t=%d", int(st.Event.Now)+1)
}
