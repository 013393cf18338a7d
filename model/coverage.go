package model

// coverage.go: what a design's rules can do at all, so that a search's
// coverage can name what never fired (TLC's -coverage). An action kind or
// a client phase that the design can have but that no step of the explored
// space took says that part of the model was never exercised within the
// bounds: a fault whose budget never found a place to fall, a step no
// client reached.

// NumActionKinds and NumPhases bound ActionKind and Phase, for tables
// indexed by them.
const (
	NumActionKinds = int(numActionKinds)
	NumPhases      = int(numPhases)
)

// String is the phase's word: the step the client takes next ("read"), or
// where its job ended ("done", "crashed").
func (p Phase) String() string {
	if p < numPhases {
		return phaseWords[p]
	}
	return "phase?"
}

var phaseWords = [numPhases]string{
	PhaseIncr: "incr", PhaseAcquire: "acquire", PhaseExpire: "expire", PhaseRead: "read", PhaseWrite: "write",
	PhaseArrive: "arrive", PhaseRelease: "release", PhaseDel: "del", PhaseReenter: "reenter", PhaseAck: "wait",
	PhaseApply: "apply", PhaseDone: "done", PhaseCrashed: "crashed",
}

// CoverageWord is k's word in a coverage table: its String, but a client's
// own clock jump (ActSkew, "A clock-jump") is "client-clock-jump", apart
// from a lock node's (ActClockJump).
func (k ActionKind) CoverageWord() string {
	if k == ActSkew {
		return "client-clock-jump"
	}
	return k.String()
}

// PossibleKinds has bit k set for every action kind that design d's rules
// can generate: its client steps, its services' own steps, and each fault
// whose budget is at least one. A search whose steps never took one of
// them never exercised it within its bounds. (A superset: a kind here may
// still be unreachable, for instance a fault placed where no client stops;
// no kind outside it occurs, which TestPossibleCoversEverySearch checks
// over the catalogue.)
func PossibleKinds(d *Design) uint64 {
	var k uint64
	on := func(kind ActionKind, yes bool) {
		if yes {
			k |= 1 << kind
		}
	}
	on(ActTick, true)
	on(ActAcquire, true)
	on(ActIncr, d.Acquire == AcquireIncrBefore || d.Acquire == AcquireIncrAfter || d.Counter == CounterExternal)
	on(ActExpire, d.Acquire == AcquireSetExpire)
	on(ActCheck, d.Check == CheckValidity)
	on(ActRead, true)
	on(ActWrite, true)
	on(ActArrive, d.Delays > 0)
	on(ActRelease, true)
	on(ActDel, d.Release == ReleaseGetDel)
	on(ActRenew, d.RenewTicks > 0)
	on(ActReplicate, d.Lock == LockReplica)
	on(ActStorageSync, storageFaults(d))
	on(ActAck, d.Ack == AckWait)
	on(ActApply, twoStep(d))
	on(ActPause, d.Pauses > 0)
	on(ActSlow, d.SlowJobs > 0)
	on(ActCrash, d.Crashes > 0)
	on(ActDelay, d.Delays > 0)
	on(ActFailover, d.Lock == LockReplica && d.Failovers > 0)
	on(ActNodeCrash, d.NodeCrashes > 0)
	on(ActClockJump, d.ClockJumps > 0)
	on(ActLose, d.Losses > 0)
	on(ActPartition, d.Partitions > 0)
	on(ActSkew, d.ClientJumps > 0)
	on(ActStorageFailover, d.StorageFailovers > 0)
	on(ActStaleRead, d.StaleReads > 0)
	on(ActCounterCrash, d.CounterCrashes > 0)
	on(ActHang, d.Hangs > 0)
	on(ActRestart, d.Restarts > 0)
	return k
}

// PossiblePhases has bit p set for every phase a client of design d can be
// in (a superset, as PossibleKinds).
func PossiblePhases(d *Design) uint64 {
	kinds := PossibleKinds(d)
	var p uint64
	on := func(ph Phase, yes bool) {
		if yes {
			p |= 1 << ph
		}
	}
	on(PhaseIncr, kinds&(1<<ActIncr) != 0)
	on(PhaseAcquire, true)
	on(PhaseExpire, kinds&(1<<ActExpire) != 0)
	on(PhaseRead, true)
	on(PhaseWrite, true)
	on(PhaseArrive, d.Delays > 0)
	on(PhaseRelease, true)
	on(PhaseDel, d.Release == ReleaseGetDel)
	on(PhaseReenter, d.Reenter != ReenterNone)
	on(PhaseAck, d.Ack == AckWait)
	on(PhaseApply, twoStep(d))
	on(PhaseDone, true)
	on(PhaseCrashed, d.Crashes > 0 || d.Hangs > 0)
	return p
}
