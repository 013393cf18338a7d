package model

import (
	"fmt"
	"strings"
)

// faults.go: the rules that say which fault parameters a design may set.
// A parameter that would never act is refused with a one-line error naming
// what it needs, never silently accepted.

// Fault is a fault family drawn from a budget: one row of faultTable,
// which drives its budget's parameter, the words of the bounds line
// (BudgetText), the parameters that act only with the budget (faultsApply),
// the packing of its used count, the client faults' order in Actions and
// whether the real-server player plays it (reality.Playable). A new fault
// is a row here, a value below and its family's file (fault_*.go).
type Fault uint8

// The faults counted in State.Used come first, in the order of its bytes;
// the others count their use elsewhere (the storage's replica, by client).
const (
	FaultPause        Fault = iota // pauses: a client frozen for up to max-pause ticks
	FaultSlow                      // slow: a job whose work takes slow-work ticks
	FaultCrash                     // crashes: a client crashes for good
	FaultFailover                  // failovers: the replica is promoted
	FaultNodeCrash                 // node-crashes: a lock node crashes
	FaultClockJump                 // jumps: a lock node's clock jumps forward
	FaultDelay                     // delays: a request held in the network
	FaultPartition                 // partitions: a client cut off
	FaultLoss                      // losses: a request applied whose reply is lost
	FaultClientJump                // client-jumps: a client's own clock jumps
	FaultCounterCrash              // counter-crashes: the external fencing counter restarts empty
	// counted in StoreCopy
	FaultStorageFailover // storage-failovers: the storage's replica is promoted
	FaultStaleRead       // stale-reads: a read served by the storage's lagging replica
	// counted by client (Marks, FlagHung)
	FaultRestart // restarts: a client crashes and restarts at once
	FaultHang    // hangs: a worker hangs for good
	NumFaults
)

// numUsed is how many faults State.Used counts.
const numUsed = FaultCounterCrash + 1

// faultShown says when the bounds line names a fault.
type faultShown uint8

const (
	shownUsed    faultShown = iota // when its budget is at least one
	shownAlways                    // always ("no pauses")
	shownReplica                   // always for lock replica ("no failovers"), never for the others
)

// faultRow is one fault's facts.
type faultRow struct {
	param     string     // its budget's design parameter
	one, many string     // the budget's words: "pause", "pauses"
	action    ActionKind // the action that draws it
	params    []string   // the parameters that act only with the budget ≥ 1
	shown     faultShown
	counter   string // the state inspector's name of its used count ("" none: counted by client)
	counted   string // the inspector's words for it
	unplayed  string // why the real-server player does not play it; "" it does
}

var faultTable = [NumFaults]faultRow{
	FaultPause:        {"pauses", "pause", "pauses", ActPause, []string{"max-pause", "pause-at"}, shownAlways, "PausesUsed", "pauses", ""},
	FaultSlow:         {"slow", "slow job", "slow jobs", ActSlow, []string{"slow-work"}, shownAlways, "SlowUsed", "slow jobs", ""},
	FaultCrash:        {"crashes", "crash", "crashes", ActCrash, []string{"crash-at"}, shownAlways, "CrashesUsed", "crashes", ""},
	FaultFailover:     {"failovers", "failover", "failovers", ActFailover, nil, shownReplica, "Failed", "failovers", ""},
	FaultNodeCrash:    {"node-crashes", "lock-node crash", "lock-node crashes", ActNodeCrash, []string{"restart", "persist"}, shownUsed, "NodeCrashed", "node crashes", ""},
	FaultClockJump:    {"jumps", "clock jump", "clock jumps", ActClockJump, []string{"jump"}, shownUsed, "Jumped", "clock jumps", "clock jumps are not played for real (Debian's redis-server will not run under libfaketime)"},
	FaultDelay:        {"delays", "network delay", "network delays", ActDelay, []string{"max-delay", "delay-at"}, shownUsed, "Delayed", "delays", ""},
	FaultPartition:    {"partitions", "partition", "partitions", ActPartition, []string{"partition", "partition-ticks"}, shownUsed, "Partitioned", "partitions", "partitions are played for real on one Redis node only, cutting the client off from the lock service (lock=redis, partition=service)"},
	FaultLoss:         {"losses", "lost reply", "lost replies", ActLose, []string{"lose-at", "lose", "release-fail"}, shownUsed, "LostReplies", "lost replies", "lost replies and requests are played for real at a release to one Redis node (lock=redis, lose-at=release, delays=0) and at a ZooKeeper create only (lock=zookeeper, lose-at=acquire, delays=0)"},
	FaultClientJump:   {"client-jumps", "client clock jump", "client clock jumps", ActSkew, []string{"client-jump"}, shownUsed, "ClockSkewed", "client clock jumps", "client clock jumps are not played for real yet"},
	FaultCounterCrash: {"counter-crashes", "fencing-counter crash", "fencing-counter crashes", ActCounterCrash, nil, shownUsed, "CounterCrashed", "fence counter crashes", ""},

	FaultStorageFailover: {"storage-failovers", "storage failover", "storage failovers", ActStorageFailover, nil, shownUsed, "StoreCopy.FailedOver", "storage failovers", ""},
	FaultStaleRead:       {"stale-reads", "stale read", "stale reads", ActStaleRead, nil, shownUsed, "StoreCopy.StaleReads", "stale reads", ""},
	FaultRestart:         {"restarts", "client restart", "client restarts", ActRestart, nil, shownUsed, "", "", "client restarts are not played for real yet"},
	FaultHang:            {"hangs", "hung worker", "hung workers", ActHang, nil, shownUsed, "", "", "hung workers are not played for real yet"},
}

// budgetOrder is the order of the bounds line's words (every verdict's,
// so every golden file's).
var budgetOrder = [NumFaults]Fault{FaultPause, FaultSlow, FaultCrash, FaultRestart, FaultFailover, FaultNodeCrash, FaultClockJump,
	FaultDelay, FaultPartition, FaultLoss, FaultClientJump, FaultHang, FaultCounterCrash, FaultStorageFailover, FaultStaleRead}

// clientFaultOrder is the order in which Actions draws a client's faults
// (every trace's and golden file's); a partition may fall before the
// client's first step, the others only between two of its steps.
var clientFaultOrder = [...]Fault{FaultPause, FaultSlow, FaultDelay, FaultCrash, FaultLoss, FaultClientJump, FaultStaleRead, FaultHang, FaultRestart, FaultPartition}

func (f Fault) String() string { return faultTable[f].param }

// Faults lists every fault, in the bounds line's order.
func Faults() []Fault { return budgetOrder[:] }

// Param is the fault's budget parameter ("pauses").
func (f Fault) Param() string { return faultTable[f].param }

// Action is the kind of action that draws the fault.
func (f Fault) Action() ActionKind { return faultTable[f].action }

// Unplayed is why the real-server player does not play the fault, or ""
// if it does.
func (f Fault) Unplayed() string { return faultTable[f].unplayed }

// Counter is the state inspector's name of the fault's used count and its
// words for it ("" when the fault is counted by client).
func (f Fault) Counter() (name, words string) { return faultTable[f].counter, faultTable[f].counted }

// Budget is d's budget of fault f.
func (f Fault) Budget(d *Design) int {
	switch f {
	case FaultPause:
		return d.Pauses
	case FaultSlow:
		return d.SlowJobs
	case FaultCrash:
		return d.Crashes
	case FaultFailover:
		return d.Failovers
	case FaultNodeCrash:
		return d.NodeCrashes
	case FaultClockJump:
		return d.ClockJumps
	case FaultDelay:
		return d.Delays
	case FaultPartition:
		return d.Partitions
	case FaultLoss:
		return d.Losses
	case FaultClientJump:
		return d.ClientJumps
	case FaultCounterCrash:
		return d.CounterCrashes
	case FaultStorageFailover:
		return d.StorageFailovers
	case FaultStaleRead:
		return d.StaleReads
	case FaultRestart:
		return d.Restarts
	case FaultHang:
		return d.Hangs
	}
	return 0
}

// Used is how many of fault f's budget s has used.
func (f Fault) Used(d *Design, s *State) int {
	switch {
	case f < numUsed:
		return int(s.Used[f])
	case f == FaultStorageFailover:
		return int(s.StoreCopy.FailedOver)
	case f == FaultStaleRead:
		return int(s.StoreCopy.StaleReads)
	}
	n := 0
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		switch {
		case f == FaultHang && c.Flags&FlagHung != 0:
			n++
		case f == FaultRestart:
			n += int(c.Marks&MarkRestarts) / int(MarkRestarted)
		}
	}
	return n
}

// left reports whether a client fault family of Actions has budget left in
// s; hangs and restarts count theirs by client, and their actions check it.
func left(d *Design, s *State, f Fault) bool {
	switch f {
	case FaultStaleRead:
		return int(s.StoreCopy.StaleReads) < d.StaleReads
	case FaultHang, FaultRestart:
		return f.Budget(d) > 0
	}
	return int(s.Used[f]) < f.Budget(d)
}

// budgetText is fault f's part of the bounds line, or "".
func budgetText(d *Design, f Fault) string {
	row := &faultTable[f]
	n := f.Budget(d)
	if f == FaultLoss && d.Lose == LoseRequest {
		shadow := *row
		shadow.one, shadow.many = "lost request", "lost requests"
		row = &shadow
	}
	switch {
	case row.shown == shownReplica && d.Lock != LockReplica: // a budget only the replica draws
		return ""
	case f == FaultLoss && d.TimeoutTicks > 0: // the resends follow the losses
		timeout := fmt.Sprintf("clients resend after a %d-tick timeout", d.TimeoutTicks)
		if d.ReleaseFail == ReleaseFailForget && (d.LoseAt == PlaceRelease || d.LoseAt == PlaceDel) && d.Delays == 0 {
			timeout = fmt.Sprintf("clients wait %d ticks for a reply", d.TimeoutTicks) // nothing is resent
		}
		if n == 0 {
			return timeout
		}
		return budgetWords(n, row.one, row.many) + placeNote(d.LoseAt) + forgetNote(d) + ", " + timeout
	case n == 0 && row.shown != shownUsed:
		return budgetWords(n, row.one, row.many)
	case n == 0:
		return ""
	}
	s := budgetWords(n, row.one, row.many)
	switch f {
	case FaultPause:
		s += fmt.Sprintf(" of up to %d ticks", d.MaxPauseTicks) + placeNote(d.PauseAt)
	case FaultSlow:
		s += fmt.Sprintf(" (work %d ticks)", d.SlowWorkTicks)
	case FaultCrash:
		s += placeNote(d.CrashAt)
	case FaultRestart:
		s += " (a new process runs the job again)"
	case FaultNodeCrash:
		restart := "restarting at once"
		if d.RestartTicks > 0 {
			restart = fmt.Sprintf("down for %d ticks", d.RestartTicks)
		}
		s += " (" + restart + ")" + nodeNote(d)
	case FaultClockJump:
		s += fmt.Sprintf(" of %d ticks", d.JumpTicks) + nodeNote(d)
	case FaultFailover:
		s += nodeNote(d)
	case FaultDelay:
		s += fmt.Sprintf(" of up to %d ticks", d.MaxDelayTicks) + placeNote(d.DelayAt)
	case FaultPartition:
		s += fmt.Sprintf(" (%s) of %d ticks", d.Partition, d.PartitionTicks)
	case FaultLoss:
		s += placeNote(d.LoseAt) + forgetNote(d)
	case FaultClientJump:
		s += fmt.Sprintf(" of %+d ticks", d.ClientJumpTicks)
	case FaultHang:
		s += " (watchdog in the " + d.Watchdog.String() + ")"
	case FaultCounterCrash:
		s += " (restarting empty)"
	case FaultStaleRead:
		s += " (from the storage's lagging replica)"
	}
	return s
}

// usesClientClock reports whether a client ever reads its own clock: for
// its validity (check=validity) or Redlock's validity after the votes.
func usesClientClock(d *Design) bool {
	return d.Check != CheckTrust || d.Lock == LockRedlock || d.Lock == LockLease
}

// partitionGroups is how many groups "A partition K" may name.
func partitionGroups(d *Design) int {
	if d.Partition == PartitionNode || d.Partition == PartitionMinority {
		return d.Nodes
	}
	return 1
}

// minority is how many Redlock nodes a minority partition cuts.
func minority(d *Design) int { return d.Nodes - majority(d) }

// faultsApply refuses fault parameters that would never act.
func (d Design) faultsApply() error {
	for _, f := range budgetOrder {
		for _, p := range faultTable[f].params {
			if !atDefault(&d, p) && f.Budget(&d) == 0 {
				return designErr("design parameter %s applies only with %s ≥ 1", p, f.Param())
			}
		}
	}
	if d.SlowJobs > 0 && d.SlowWorkTicks == d.WorkTicks {
		return designErr("design parameter slow=%d: a slow job needs slow-work different from work (both %d)", d.SlowJobs, d.WorkTicks)
	}
	if d.Losses > 0 && d.TimeoutTicks == 0 {
		return designErr("design parameter losses=%d needs timeout ≥ 1: without a timeout a client waits for a lost reply for ever", d.Losses)
	}
	if err := d.releaseFailApplies(); err != nil {
		return err
	}
	if d.TimeoutTicks > 0 && d.Losses == 0 && d.Delays == 0 {
		return designErr("design parameter timeout applies only with losses ≥ 1 or delays ≥ 1")
	}
	if d.DriftTicks != 1 && !usesClientClock(&d) {
		return designErr("design parameter drift applies only to check=validity or acquire, or lock redlock (a client that reads its clock)")
	}
	if d.ClientJumps > 0 && !usesClientClock(&d) {
		return designErr("design parameter client-jumps applies only to check=validity or acquire, or lock redlock (a client that reads its clock)")
	}
	if d.RenewTicks > 0 && d.RenewTicks >= lifetime(&d) {
		// the key (the lease) is gone before the first renewal is due
		return designErr("design parameter renew=%d with ttl=%d: the key expires before the first renewal, so the watchdog never acts; want renew below the TTL (Redisson's watchdog and etcd's keep-alive renew at a third of it)", d.RenewTicks, d.TTLTicks)
	}
	if d.FirstToken != 1 && d.Fence == FenceNone {
		return designErr("design parameter token=%d applies only with fence=write or rw: with fence=none no token is taken", d.FirstToken)
	}
	if d.Watchdog != WatchdogWorker && d.RenewTicks == 0 {
		return designErr("design parameter watchdog=%s applies only with renew ≥ 1", d.Watchdog)
	}
	if d.Watchdog == WatchdogSession && d.Lock != LockEtcd {
		return designErr("design parameter watchdog=session applies only to lock etcd (a key put with the session's lease: etcd's concurrency.Session); allowed for %s: worker, thread, sidecar", d.Lock)
	}
	if err := d.renewApplies(); err != nil {
		return err
	}
	if d.Watchdog == WatchdogSidecar && d.Restarts > 0 {
		return designErr("design parameter restarts does not apply with watchdog=sidecar (which lock the sidecar renews after its worker restarts is not modelled)")
	}
	if d.Hangs > 0 && d.RenewTicks == 0 {
		return designErr("design parameter hangs applies only with renew ≥ 1: without a watchdog a hung worker is a crash (use crashes)")
	}
	if d.AckTimeoutTicks > 0 && d.Ack != AckWait {
		return designErr("design parameter ack-timeout applies only with ack=wait")
	}
	if err := d.replicasApply(); err != nil { // lock_replica.go
		return err
	}
	if d.FsyncTicks > 0 && d.Persist == 0 {
		return designErr("design parameter fsync applies only with persist=1: without persistence a crash loses everything")
	}
	if d.CounterCrashes > 0 && d.Counter != CounterExternal {
		return designErr("design parameter counter-crashes applies only with counter=external (redlock, db)")
	}
	if d.StorageLoses == LossFence {
		switch {
		case d.StorageFailovers == 0:
			return designErr("design parameter storage-loses=fence applies only with storage-failovers=1 (what a storage failover loses)")
		case d.StaleReads > 0:
			return designErr("design parameter storage-loses=fence does not apply with stale-reads: its replica holds only the fencing state, not the counter a read returns")
		}
	}
	if storageFaults(&d) && SameDatabase(&d) {
		return designErr("design parameters storage-failovers and stale-reads do not apply to lock %s: the counter is in the lock's own database", d.Lock)
	}
	switch d.Partition {
	case PartitionNode, PartitionMinority:
		if d.Lock != LockRedlock {
			return designErr("partition=%s applies only to lock redlock (allowed for %s: service, storage)", d.Partition, d.Lock)
		}
	case PartitionPrimary:
		if d.Lock != LockReplica {
			return designErr("partition=primary applies only to lock replica")
		}
	case PartitionStorage:
		if SameDatabase(&d) {
			return designErr("partition=storage does not apply to lock %s: the counter is in the lock's own database (use partition=service)", d.Lock)
		}
	}
	for _, w := range wordParams {
		if w.place {
			if err := d.placeApplies(w.axis.name, Place(*w.field(&d))); err != nil {
				return err
			}
		}
	}
	if err := d.nodeFaultsApply(); err != nil { // fault_node.go
		return err
	}
	if err := d.abandonApplies(); err != nil { // fault_network.go
		return err
	}
	return d.jobsApply()
}

// releaseFailApplies refuses release-fail=forget where no release can be
// lost or where what the client forgets is not modelled.
func (d Design) releaseFailApplies() error {
	if d.ReleaseFail != ReleaseFailForget {
		return nil
	}
	switch {
	case d.LoseAt != PlaceAny && d.LoseAt != PlaceRelease && d.LoseAt != PlaceDel:
		return designErr("design parameter release-fail=forget with lose-at=%s: no release is ever lost; want lose-at any, release or del", d.LoseAt)
	case d.Watchdog == WatchdogSidecar:
		return designErr("design parameter release-fail=forget does not apply with watchdog=sidecar (what a sidecar renews after a release its worker forgot is not modelled)")
	case d.Lock == LockZooKeeper && tracksValues(&d):
		return designErr("design parameter release-fail=forget does not apply to lock zookeeper with jobs ≥ 2 or restarts (a forgotten node of an earlier job is not modelled)")
	}
	return nil
}

// renewApplies refuses the renewal's parameters where they cannot act,
// and check=acquire where it does not apply.
func (d Design) renewApplies() error {
	for _, w := range []struct {
		name string
		set  bool
	}{{"extend", d.Extend != ExtendCheck}, {"renew-fail", d.RenewFail != RenewFailIgnore}, {"watchdog-stop", d.WatchdogStop != StopBeforeUnlock}} {
		if w.set && d.RenewTicks == 0 {
			return designErr("design parameter %s applies only with renew ≥ 1 (a watchdog that renews)", w.name)
		}
	}
	if d.RenewFail == RenewFailStop && d.Reenter != ReenterNone {
		return designErr("design parameter renew-fail=stop does not apply with reenter=%s (a nested acquire's reply is not taken as the worker's: not modelled)", d.Reenter)
	}
	if d.WatchdogStop == StopAfterUnlock && tracksValues(&d) {
		return designErr("design parameter watchdog-stop=after-unlock does not apply with jobs ≥ 2 or restarts (which job's value a late renewal carries is not modelled)")
	}
	if d.WatchdogStop == StopAfterUnlock && d.Watchdog == WatchdogSidecar {
		return designErr("design parameter watchdog-stop=after-unlock does not apply with watchdog=sidecar (when a sidecar learns of the release is not modelled)")
	}
	if d.Check == CheckAcquire {
		switch {
		case d.Lock != LockRedis && d.Lock != LockReplica:
			return designErr("check=acquire applies only to lock redis or replica (redlock always checks its validity at acquire; allowed for %s: trust, validity)", d.Lock)
		case d.Acquire != AcquireScript:
			return designErr("check=acquire applies only with acquire=script (redsync's one SET NX PX), not acquire=%s", d.Acquire)
		case d.Ack == AckWait:
			return designErr("check=acquire does not apply with ack=wait (the validity after WAIT is not modelled; use check=validity)")
		case d.DriftTicks >= d.TTLTicks:
			return designErr("check=acquire with drift=%d and ttl=%d: no acquire ever has validity left; want drift below the TTL", d.DriftTicks, d.TTLTicks)
		}
	}
	return nil
}

// placeApplies refuses a place at which the design's clients take no step.
func (d Design) placeApplies(name string, p Place) error {
	ok := true
	switch p {
	case PlaceIncr:
		ok = d.Acquire == AcquireIncrBefore || d.Acquire == AcquireIncrAfter || d.Counter == CounterExternal
	case PlaceExpire:
		ok = d.Acquire == AcquireSetExpire
	case PlaceCheck:
		ok = d.Check == CheckValidity && name != "delay-at" && name != "lose-at"
	case PlaceDel:
		ok = d.Release == ReleaseGetDel
	}
	if !ok {
		return designErr("%s=%s: this design's clients send no such request (it needs %s)", name, p, placeNeeds[p])
	}
	return nil
}

var placeNeeds = [numPlaces]string{PlaceIncr: "acquire=incr-before or incr-after, or counter=external", PlaceExpire: "acquire=set-expire",
	PlaceCheck: "check=validity, and the check is no request: pause-at or crash-at only", PlaceDel: "release get-del"}

// BudgetText is the design's fault budget in words, for the bounds line of
// every verdict: "1 pause of up to 15 ticks, no slow jobs, no crashes, …".
func BudgetText(d *Design) string {
	var faults []string
	for _, f := range budgetOrder {
		if t := budgetText(d, f); t != "" {
			faults = append(faults, t)
		}
	}
	return strings.Join(faults, ", ")
}

// forgetNote is release-fail=forget's part of the losses' words.
func forgetNote(d *Design) string {
	if d.ReleaseFail == ReleaseFailForget {
		return " (a release that gets no answer is forgotten)"
	}
	return ""
}

func placeNote(p Place) string {
	if p == PlaceAny {
		return ""
	}
	return " (before " + placeKinds[p].String() + ")"
}

func budgetWords(n int, one, many string) string {
	switch n {
	case 0:
		return "no " + many
	case 1:
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
