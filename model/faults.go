package model

import (
	"fmt"
	"strings"
)

// faults.go: the rules that say which fault parameters a design may set.
// A parameter that would never act is refused with a one-line error naming
// what it needs, never silently accepted.

// placeWord is a fault-placement parameter and the field it sets.
type placeWord struct {
	axis  axis
	place *Place
}

func placeWords(d *Design) [4]placeWord {
	return [4]placeWord{{pauseAtAxis, &d.PauseAt}, {delayAtAxis, &d.DelayAt}, {loseAtAxis, &d.LoseAt}, {crashAtAxis, &d.CrashAt}}
}

// faultParam ties a fault's parameters to its budget: they act only when
// the budget is at least one.
type faultParam struct {
	param, budget string
	set           func(d *Design) bool // the parameter differs from its default
	budgetOf      func(d *Design) int
}

var faultParams = []faultParam{
	{"max-pause", "pauses", func(d *Design) bool { return d.MaxPauseTicks != derivedDefault(d, "max-pause", 0) }, func(d *Design) int { return d.Pauses }},
	{"pause-at", "pauses", func(d *Design) bool { return d.PauseAt != PlaceAny }, func(d *Design) int { return d.Pauses }},
	{"slow-work", "slow", func(d *Design) bool { return d.SlowWorkTicks != derivedDefault(d, "slow-work", 0) }, func(d *Design) int { return d.SlowJobs }},
	{"crash-at", "crashes", func(d *Design) bool { return d.CrashAt != PlaceAny }, func(d *Design) int { return d.Crashes }},
	{"max-delay", "delays", func(d *Design) bool { return d.MaxDelayTicks != derivedDefault(d, "max-delay", 0) }, func(d *Design) int { return d.Delays }},
	{"delay-at", "delays", func(d *Design) bool { return d.DelayAt != PlaceAny }, func(d *Design) int { return d.Delays }},
	{"jump", "jumps", func(d *Design) bool { return d.JumpTicks != 5 }, func(d *Design) int { return d.ClockJumps }},
	{"restart", "node-crashes", func(d *Design) bool { return d.RestartTicks != 0 }, func(d *Design) int { return d.NodeCrashes }},
	{"persist", "node-crashes", func(d *Design) bool { return d.Persist != 0 }, func(d *Design) int { return d.NodeCrashes }},
	{"partition", "partitions", func(d *Design) bool { return d.Partition != PartitionService }, func(d *Design) int { return d.Partitions }},
	{"partition-ticks", "partitions", func(d *Design) bool { return d.PartitionTicks != derivedDefault(d, "partition-ticks", 0) }, func(d *Design) int { return d.Partitions }},
	{"lose-at", "losses", func(d *Design) bool { return d.LoseAt != PlaceAny }, func(d *Design) int { return d.Losses }},
	{"client-jump", "client-jumps", func(d *Design) bool { return d.ClientJumpTicks != -5 }, func(d *Design) int { return d.ClientJumps }},
}

// usesClientClock reports whether a client ever reads its own clock: for
// its validity (check=validity) or Redlock's validity after the votes.
func usesClientClock(d *Design) bool { return d.Check == CheckValidity || d.Lock == LockRedlock }

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
	for _, f := range faultParams {
		if f.set(&d) && f.budgetOf(&d) == 0 {
			return designErr("design parameter %s applies only with %s ≥ 1", f.param, f.budget)
		}
	}
	if d.SlowJobs > 0 && d.SlowWorkTicks == d.WorkTicks {
		return designErr("design parameter slow=%d: a slow job needs slow-work different from work (both %d)", d.SlowJobs, d.WorkTicks)
	}
	if d.Losses > 0 && d.TimeoutTicks == 0 {
		return designErr("design parameter losses=%d needs timeout ≥ 1: without a timeout a client waits for a lost reply for ever", d.Losses)
	}
	if d.TimeoutTicks > 0 && d.Losses == 0 && d.Delays == 0 {
		return designErr("design parameter timeout applies only with losses ≥ 1 or delays ≥ 1")
	}
	if d.DriftTicks != 1 && !usesClientClock(&d) {
		return designErr("design parameter drift applies only to check=validity or lock redlock (a client that reads its clock)")
	}
	if d.ClientJumps > 0 && !usesClientClock(&d) {
		return designErr("design parameter client-jumps applies only to check=validity or lock redlock (a client that reads its clock)")
	}
	if d.Watchdog != WatchdogWorker && d.RenewTicks == 0 {
		return designErr("design parameter watchdog=%s applies only with renew ≥ 1", d.Watchdog)
	}
	if d.Hangs > 0 && d.RenewTicks == 0 {
		return designErr("design parameter hangs applies only with renew ≥ 1: without a watchdog a hung worker is a crash (use crashes)")
	}
	if d.AckTimeoutTicks > 0 && d.Ack != AckWait {
		return designErr("design parameter ack-timeout applies only with ack=wait")
	}
	if d.FsyncTicks > 0 && d.Persist == 0 {
		return designErr("design parameter fsync applies only with persist=1: without persistence a crash loses everything")
	}
	if d.CounterCrashes > 0 && d.Counter != CounterExternal {
		return designErr("design parameter counter-crashes applies only with counter=external (redlock, db)")
	}
	if storageFaults(&d) && d.Lock == LockDB {
		return designErr("design parameters storage-failovers and stale-reads do not apply to lock db: the counter is in the lock's own database")
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
		if d.Lock == LockDB {
			return designErr("partition=storage does not apply to lock db: the counter is in the lock's own database (use partition=service)")
		}
	}
	for _, w := range placeWords(&d) {
		if err := d.placeApplies(w.axis.name, *w.place); err != nil {
			return err
		}
	}
	return d.jobsApply()
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
	pauses := budgetWords(d.Pauses, "pause", "pauses")
	if d.Pauses > 0 {
		pauses += fmt.Sprintf(" of up to %d ticks", d.MaxPauseTicks) + placeNote(d.PauseAt)
	}
	slow := budgetWords(d.SlowJobs, "slow job", "slow jobs")
	if d.SlowJobs > 0 {
		slow += fmt.Sprintf(" (work %d ticks)", d.SlowWorkTicks)
	}
	crashes := budgetWords(d.Crashes, "crash", "crashes")
	if d.Crashes > 0 {
		crashes += placeNote(d.CrashAt)
	}
	faults := []string{pauses, slow, crashes}
	if d.Restarts > 0 {
		faults = append(faults, budgetWords(d.Restarts, "client restart", "client restarts")+" (a new process runs the job again)")
	}
	if d.Lock == LockReplica {
		faults = append(faults, budgetWords(d.Failovers, "failover", "failovers"))
	}
	if d.NodeCrashes > 0 {
		restart := "restarting at once"
		if d.RestartTicks > 0 {
			restart = fmt.Sprintf("down for %d ticks", d.RestartTicks)
		}
		faults = append(faults, budgetWords(d.NodeCrashes, "lock-node crash", "lock-node crashes")+" ("+restart+")")
	}
	if d.ClockJumps > 0 {
		faults = append(faults, budgetWords(d.ClockJumps, "clock jump", "clock jumps")+fmt.Sprintf(" of %d ticks", d.JumpTicks))
	}
	if d.Delays > 0 {
		faults = append(faults, budgetWords(d.Delays, "network delay", "network delays")+fmt.Sprintf(" of up to %d ticks", d.MaxDelayTicks)+placeNote(d.DelayAt))
	}
	if d.Partitions > 0 {
		faults = append(faults, budgetWords(d.Partitions, "partition", "partitions")+fmt.Sprintf(" (%s) of %d ticks", d.Partition, d.PartitionTicks))
	}
	if d.Losses > 0 {
		faults = append(faults, budgetWords(d.Losses, "lost reply", "lost replies")+placeNote(d.LoseAt))
	}
	if d.TimeoutTicks > 0 {
		faults = append(faults, fmt.Sprintf("clients resend after a %d-tick timeout", d.TimeoutTicks))
	}
	if d.ClientJumps > 0 {
		faults = append(faults, budgetWords(d.ClientJumps, "client clock jump", "client clock jumps")+fmt.Sprintf(" of %+d ticks", d.ClientJumpTicks))
	}
	if d.Hangs > 0 {
		faults = append(faults, budgetWords(d.Hangs, "hung worker", "hung workers")+" (watchdog in the "+d.Watchdog.String()+")")
	}
	if d.CounterCrashes > 0 {
		faults = append(faults, budgetWords(d.CounterCrashes, "fencing-counter crash", "fencing-counter crashes")+" (restarting empty)")
	}
	if d.StorageFailovers > 0 {
		faults = append(faults, budgetWords(d.StorageFailovers, "storage failover", "storage failovers"))
	}
	if d.StaleReads > 0 {
		faults = append(faults, budgetWords(d.StaleReads, "stale read", "stale reads")+" (from the storage's lagging replica)")
	}
	return strings.Join(faults, ", ")
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
