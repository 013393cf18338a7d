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
// only designs with repeated jobs.
func tracksValues(d *Design) bool { return d.Jobs > 1 }

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
	*c = Client{Phase: firstPhase(d), Flags: FlagStarted | old.Flags&(FlagOldSide|FlagStrayDel), Job: old.Job + 1, Cut: old.Cut, Group: old.Group, Stray: old.Stray}
	if old.Stray != 0 {
		c.Marks = old.Marks | MarkStrayOld
	}
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
// value=process in the same process.
func lateReleaseMatches(d *Design, c *Client) bool {
	return d.Release != ReleaseCAD || (d.Value == ValueProcess && c.Marks&MarkStrayProc == 0)
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
	if d.Jobs > 1 && d.Delays > 0 && d.TimeoutTicks > 0 && (d.DelayAt == PlaceAny || d.DelayAt == PlaceWrite) {
		return designErr("design parameter jobs=%d with delays and timeout: a late first copy of a write would outlive its job, which is not modelled; set delay-at=release (or another request than the write)", d.Jobs)
	}
	return nil
}

// TotalJobs is how many jobs the design's clients run between them.
func TotalJobs(d *Design) int { return d.Clients * d.Jobs }

// Words.

// jobValue is the value client i writes into the key in its job job+1:
// LockValue(i), followed by the job's number for a later job's own value.
func jobValue(d *Design, i int, job uint8) string {
	if job == 0 || d.Value == ValueProcess {
		return LockValue(i)
	}
	return fmt.Sprintf("%s/%d", LockValue(i), job+1)
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

// describeLateOwn tells a late release meeting its own client's lock of a
// later job.
func describeLateOwn(d *Design, st *StepRecord) string {
	job := st.Before.Clients[st.Action.Client].Job + 1
	if st.Event.Result == ResOK {
		why := "DEL does not compare values"
		if d.Release == ReleaseCAD {
			why = "the same value: one per process"
		}
		return fmt.Sprintf("the key is its own lock of job %d (%s): deleted  ✗ it deleted its own newer lock", job, why)
	}
	return fmt.Sprintf("the key is its own lock of job %d, another value (one per job): left alone", job)
}
