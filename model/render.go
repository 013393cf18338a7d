package model

import (
	"fmt"
	"strings"
)

// LockKey is the Redis key of the lock, as in the seed.
const LockKey = "lock:order-42"

// lockValues are the random values clients write into the key (the seed's
// B:91ab), fixed so that output is the same on every run.
var lockValues = [MaxClients]string{"7c2e", "91ab", "3f5d", "a4e0", "5b19", "e86c", "2d73", "c0f4"}

// LockValue is client i's value in the lock key, e.g. "B:91ab".
func LockValue(i int) string { return ClientName(i) + ":" + lockValues[i] }

// Describe tells one step in words, the way the seed does:
// "t=11 B: SET lock:order-42 B:91ab NX PX 10000 → OK, INCR lock:fence → 34".
// Each service's and fault family's words live in its own file.
func Describe(d *Design, st *StepRecord) string {
	ev := &st.Event
	a := st.Action
	at := fmt.Sprintf("t=%d ", ev.Now)
	switch a.Kind {
	case ActTick:
		return describeTick(d, st)
	case ActReplicate:
		return at + describeReplicate(d, st)
	case ActFailover:
		return at + describeFailover(d, st)
	case ActNodeCrash:
		return at + describeNodeCrash(d, st, int(a.Arg))
	case ActClockJump:
		return at + describeClockJump(d, ev, int(a.Arg))
	case ActCounterCrash:
		return at + describeCounterCrash(st)
	case ActStorageSync:
		return at + describeStorageSync(d, st)
	case ActStorageFailover:
		return at + describeStorageFailover(d, st)
	}
	return at + ClientName(int(a.Client)) + ": " + describeClientStep(d, st) + jobNote(st) + bypassNote(d, st)
}

func describeTick(d *Design, st *StepRecord) string {
	ev := &st.Event
	var notes []string
	for i := 0; i < d.Clients; i++ {
		if ev.ExpiredMask&(1<<i) == 0 {
			continue
		}
		n := expiryWords(d, i)
		lost := true
		if d.Lock == LockRedlock {
			var w string
			w, lost = redlockExpiryNodes(d, st, i)
			n += w
		}
		if st.Before.Clients[i].Believes() && lost {
			n += " while " + ClientName(i) + " still believes it holds the lock"
			if w := frozenRenewWords(d, &st.Before, i, ev.Now); w != "" {
				n += " (" + w + ")"
			}
		}
		notes = append(notes, n)
	}
	if ev.Flags&EvNodeBack != 0 {
		switch {
		case d.Lock == LockReplica && d.RejoinTicks > 0 && st.Before.Nodes[0].Back == ev.Now:
			notes = append(notes, "the primary is back, restarted, and the replica rejoins it with a full resync")
		case d.Lock == LockReplica && d.RejoinTicks > 0:
			notes = append(notes, "the old primary is back: it rejoins as a replica, resynced in full from the primary")
		default:
			notes = append(notes, "a crashed node is back")
		}
	}
	for i := 0; i < d.Clients; i++ {
		if ev.ResumedMask&(1<<i) != 0 {
			notes = append(notes, ClientName(i)+" resumes")
		}
	}
	for i := 0; i < d.Clients; i++ {
		if ev.HealedMask&(1<<i) != 0 {
			notes = append(notes, ClientName(i)+"'s partition heals")
		}
	}
	s := fmt.Sprintf("t=%d", ev.Now)
	if len(notes) > 0 {
		s += "  " + strings.Join(notes, "; ")
	}
	return s
}

func owner(o uint8) string {
	if o == 0 {
		return "nobody"
	}
	return ClientName(int(o-1)) + "'s"
}

func describeClientStep(d *Design, st *StepRecord) string {
	ev := &st.Event
	a := st.Action
	switch a.Kind {
	case ActPause:
		return describePause(d, st, a.Arg)
	case ActSlow:
		return describeSlow(d)
	case ActHang:
		return describeHang(d, st)
	case ActCrash:
		return describeCrash(d, st)
	case ActRestart:
		return describeRestart(d, st)
	case ActDelay:
		return describeDelay(d, st, a.Arg)
	case ActLose:
		return describeLose(d, st)
	case ActPartition:
		return describePartition(d, st)
	case ActSkew:
		return describeSkew(d)
	case ActArrive:
		return describeArrive(d, st)
	case ActIncr:
		if externalCounter(d) {
			return describeCounterIncr(ev)
		}
		return describeIncr(ev)
	case ActCheck:
		if ev.Flags&EvGiveUp != 0 {
			return "checks its lock: no validity left, gives the job up"
		}
		return fmt.Sprintf("checks its lock: %d ticks of validity left", ev.Value)
	case ActRenew:
		return describeRenew(d, st)
	case ActAck:
		return describeAck(d, st)
	case ActAcquire:
		return describeAcquire(d, st)
	case ActExpire:
		return describeExpire(d, ev)
	case ActRead, ActStaleRead:
		return describeRead(d, st, unsafeNote(d, ev))
	case ActWrite:
		return describeWrite(d, st, unsafeNote(d, ev))
	case ActApply:
		return describeApply(st, unsafeNote(d, ev))
	case ActRelease, ActDel:
		return describeRelease(d, st)
	}
	return a.Kind.String()
}

func tokenSuffix(d *Design, tok uint16, name string) string {
	if d.Fence == FenceNone || tok == 0 {
		return ""
	}
	return fmt.Sprintf(", token (%s) %d", name, tok)
}

// RenderSteps is the story, one line per step. Quiet ticks (nothing
// expires, nobody resumes) say nothing: the next line's t= shows time moved.
// Runs of ticks in which the same clients only poll a key held by the same
// client fold into one line.
func RenderSteps(r *Run) string {
	var b strings.Builder
	d := &r.Design
	steps := r.Steps
	for k := 0; k < len(steps); {
		if from, to, who, holder, next := pollRun(steps, k); next > k {
			what := "the key is " + owner(holder)
			if n := &steps[k].Before.Nodes[0]; holder == 0 && n.Hold != 0 {
				what = fmt.Sprintf("no key, but lock-delay holds the lock back until t=%d", n.Hold)
			}
			fmt.Fprintf(&b, "t=%d..%d %s: %s every tick, %s\n", from, to, who, pollWords(d), what)
			k = next
			continue
		}
		st := &steps[k]
		k++
		if st.Action.Kind == ActTick && st.Event.ExpiredMask == 0 && st.Event.ResumedMask == 0 && st.Event.HealedMask == 0 {
			continue
		}
		b.WriteString(Describe(d, st))
		b.WriteByte('\n')
	}
	return b.String()
}

// pollRun finds, from step k, a run of at least two ticks in which the only
// steps are quiet ticks and refused acquires by the same clients against the
// same holder. It returns the run's first and last tick and the index after
// it; next == k when there is no such run.
func pollRun(steps []StepRecord, k int) (from, to int, who string, holder uint8, next int) {
	next = k
	ticks := 0
	var mask uint8
	j := k
	for j < len(steps) {
		// one tick's worth: refused acquires, then a quiet tick (or the end)
		var m uint8
		h := uint8(0)
		start := j
		for j < len(steps) && steps[j].Action.Kind == ActAcquire && steps[j].Event.Result == ResRefused {
			m |= 1 << steps[j].Action.Client
			h = steps[j].Event.Other
			j++
		}
		if j == start || (ticks > 0 && (m != mask || h != holder)) {
			break
		}
		if ticks == 0 {
			from, mask, holder = int(steps[start].Event.Now), m, h
		}
		ticks++
		to = int(steps[start].Event.Now)
		next = j
		if j < len(steps) && steps[j].Action.Kind == ActTick && steps[j].Event.ExpiredMask == 0 && steps[j].Event.ResumedMask == 0 && steps[j].Event.HealedMask == 0 {
			j++
			continue
		}
		break
	}
	if ticks < 2 {
		return 0, 0, "", 0, k
	}
	var names []string
	for i := 0; i < MaxClients; i++ {
		if mask&(1<<i) != 0 {
			names = append(names, ClientName(i))
		}
	}
	return from, to, strings.Join(names, ", "), holder, next
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func letters(d *Design, mask uint8, none string) string {
	var s string
	for i := 0; i < d.Clients; i++ {
		if mask&(1<<i) != 0 {
			s += ClientName(i)
		}
	}
	if s == "" {
		return none
	}
	return s
}

// RenderSummary is the ending: the counter against accepted writes, and the
// properties the run shows.
func RenderSummary(r *Run) string {
	var b strings.Builder
	ok, failed := r.Outcomes()
	jobs := TotalJobs(&r.Design) + r.restartedAttempts()
	reads := 0
	for _, j := range r.History {
		if j.Outcome == OutcomeRead {
			reads++
		}
	}
	others := jobs - ok - failed - reads
	fmt.Fprintf(&b, "counter %d; %s accepted by the storage; of %d jobs: %d ok, %d failed", r.Final.Store.Counter,
		plural(int(r.Final.Store.Accepted), "write", "writes"), jobs, ok, failed)
	if reads > 0 {
		fmt.Fprintf(&b, ", %d read only (readers)", reads)
	}
	if others > 0 {
		fmt.Fprintf(&b, ", %d unknown or unfinished", others)
	}
	b.WriteString("\n")
	if r.Final.Finished(&r.Design) && int(r.Final.Store.Counter) != int(r.Final.Store.Accepted) {
		fmt.Fprintf(&b, "lost update: counter %d ≠ %d accepted writes\n", r.Final.Store.Counter, r.Final.Store.Accepted)
	}
	for _, v := range r.Found {
		p, _ := PropertyByName(v.Property)
		verb := "violated"
		if p.Expect == Sometimes {
			verb = "seen"
		}
		fmt.Fprintf(&b, "%-19s %s at step %d: %s\n", v.Property, verb, v.Seq, p.DocFor(&r.Design))
	}
	return b.String()
}

// Render is steps, timeline and summary together.
func Render(r *Run) string {
	return RenderSteps(r) + "\n" + RenderTimeline(r) + "\n" + RenderSummary(r)
}
