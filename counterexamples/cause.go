package counterexamples

import (
	"fmt"
	"strings"

	"lockcheck/explore"
	"lockcheck/model"
)

// Why a counterexample happens: which of its faults it needs, the fewest
// clients that show it, and one sentence that says the cause.

// FaultRole is one fault step of a trace and whether the violation needs
// it.
type FaultRole struct {
	Seq       int // 1-based step
	Action    model.Action
	Tick      int
	Necessary bool // without this step the violation does not happen
}

// maxCompletion bounds the steps a replay without a fault takes after the
// trace runs out.
const maxCompletion = 2000

// Faults finds the fault steps of trace and, for each, whether the
// violation of property survives without it: the step is dropped, the rest
// of the trace is replayed (a step that is no longer enabled is skipped),
// and the run is played to its end with no further fault (each time the
// first enabled step that is not a fault, in model.Actions' order). The
// violation survives if the property shows at any step of that run.
func Faults(d model.Design, trace []model.Action, property string) []FaultRole {
	p, _ := model.PropertyByName(property)
	var out []FaultRole
	s := model.Init(&d)
	for k, a := range trace {
		if a.Kind.IsFault() {
			out = append(out, FaultRole{Seq: k + 1, Action: a, Tick: int(s.Now), Necessary: !showsWithout(d, trace, k, p)})
		}
		s, _ = model.Step(&d, s, a)
	}
	return out
}

func showsWithout(d model.Design, trace []model.Action, drop int, p model.Property) bool {
	s := model.Init(&d)
	step := func(a model.Action) bool {
		ns, ev := model.Step(&d, s, a)
		s = ns
		return p.Bad(&d, &s, &ev)
	}
	for k, a := range trace {
		if k == drop || !model.Enabled(&d, &s, a) {
			continue
		}
		if step(a) {
			return true
		}
	}
	var buf []model.Action
	for n := 0; n < maxCompletion; n++ {
		buf = model.Actions(&d, &s, buf)
		next := -1
		for i, a := range buf {
			if !a.Kind.IsFault() {
				next = i
				break
			}
		}
		if next < 0 {
			return false
		}
		if step(buf[next]) {
			return true
		}
	}
	return false
}

// FewestClients searches d again with 1, 2, … clients (fewer than d has)
// and returns the smallest design that still breaks property, with its
// shortest trace; ok is false when only d's own number of clients shows it.
func FewestClients(d model.Design, property string, b explore.Bounds) (model.Design, []model.Action, bool, error) {
	p, _ := model.PropertyByName(property)
	for n := 1; n < d.Clients; n++ {
		dn := d
		dn.Clients = n
		if dn.SlowJobs > n {
			dn.SlowJobs = n
		}
		if dn.Crashes > n {
			dn.Crashes = n
		}
		if dn.Validate() != nil {
			continue
		}
		rep, err := explore.Check(explore.Config{Design: dn, Properties: []model.Property{p}, Bounds: b})
		if err != nil {
			return d, nil, false, err
		}
		if r := rep.Results[0]; r.Status == explore.Violated {
			return dn, r.Trace, true, nil
		}
	}
	return d, nil, false, nil
}

// Cause is one sentence that says why run breaks property at step at.
func Cause(run *model.Run, property string, at int, faults []FaultRole) string {
	d := &run.Design
	if at < 1 || at > len(run.Steps) {
		return property + " is violated in the initial state."
	}
	var parts []string
	if c := lossClause(run, at, faults); c != "" {
		parts = append(parts, c)
	}
	switch property {
	case "exclusive":
		parts = append(parts, actClause(d, &run.Steps[at-1]))
	case "own-release":
		st := &run.Steps[at-1]
		parts = append(parts, fmt.Sprintf("%s's release removed the key of %s, who still held it", name(st.Action.Client), ownerName(st.Before.Nodes[0].Owner)))
	case "no-lost-update":
		parts = append(parts, lostClause(run))
	case "progress":
		parts = append(parts, stuckClause(run, at))
	case "mutex":
		parts = append(parts, mutexClause(run, at))
	}
	s := strings.Join(parts, "; ")
	if s == "" {
		return property + " is violated at step " + fmt.Sprint(at) + "."
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func name(c uint8) string { return model.ClientName(int(c)) }

// lockNoun is what a client loses when its lock runs out, in the lock
// service's words.
func lockNoun(d *model.Design) string { return model.Service(d.Lock).Noun }

func ownerName(o uint8) string {
	if o == 0 {
		return "nobody"
	}
	return model.ClientName(int(o - 1))
}

// lossClause tells how a client came to believe in a lock it had lost:
// the first key that expired while its holder believed in it, with the
// fault that made it outlive the key.
func lossClause(run *model.Run, at int, faults []FaultRole) string {
	var need, all []string
	for _, f := range faults {
		all = append(all, faultWords(run, f))
		if f.Necessary {
			need = append(need, faultWords(run, f))
		}
	}
	need = once(need)
	if len(need) == 0 && len(all) > 0 {
		// no single fault is needed: any one of them suffices
		need = []string{strings.Join(once(all), " or ") + " (no one of them alone is needed)"}
	}
	if len(faults) == 0 {
		need = []string{"with no fault"}
		if run.Design.Clock == model.ClockFree {
			need[0] += " (time may pass at any moment)"
		}
	}
	var lost string
	for k := 0; k < at; k++ {
		st := &run.Steps[k]
		if st.Event.Flags&model.EvExpiredHeld == 0 {
			continue
		}
		for i := 0; i < run.Design.Clients; i++ {
			if st.Event.ExpiredMask&(1<<i) != 0 && st.Before.Clients[i].Believes() {
				verb := "expired"
				if run.Design.Lock == model.LockRedlock {
					verb = "expired on enough nodes"
				}
				lost = fmt.Sprintf("%s's %s %s at t=%d while %s still believed it held the lock", model.ClientName(i), lockNoun(&run.Design), verb, st.Event.Now, model.ClientName(i))
				if w := watchdogWords(run, i, k); w != "" {
					lost += " (" + w + ")"
				}
				break
			}
		}
		break
	}
	switch {
	case len(need) > 0 && lost != "":
		return strings.Join(need, " and ") + ": " + lost
	case len(need) > 0:
		return strings.Join(need, " and ")
	}
	return lost
}

// watchdogWords says that client i's watchdog renewed nothing while it was
// frozen, if the design renews and the client was paused when its key
// expired (step k).
func watchdogWords(run *model.Run, i, k int) string {
	d := &run.Design
	if d.RenewTicks == 0 || run.Steps[k].Before.Clients[i].Flags&model.FlagPaused == 0 {
		return ""
	}
	return fmt.Sprintf("its watchdog, due every %d ticks, was frozen with it", d.RenewTicks)
}

func faultWords(run *model.Run, f FaultRole) string {
	d := &run.Design
	a := f.Action
	c := name(a.Client)
	switch a.Kind {
	case model.ActPause:
		return fmt.Sprintf("%s paused for %d ticks at t=%d", c, a.Arg, f.Tick)
	case model.ActSlow:
		return fmt.Sprintf("%s's job was slow (%d ticks of work)", c, d.SlowWorkTicks)
	case model.ActCrash:
		return fmt.Sprintf("%s crashed for good at t=%d", c, f.Tick)
	case model.ActDelay:
		if st := &run.Steps[f.Seq-1]; model.RequestKind(d, st) == model.ActRelease && d.Jobs > 1 {
			return fmt.Sprintf("%s's release was held in the network for %d ticks at t=%d (its first copy arrived after the resent one)", c, a.Arg, f.Tick)
		}
		return fmt.Sprintf("%s's write was held in the network for %d ticks at t=%d", c, a.Arg, f.Tick)
	case model.ActFailover:
		switch {
		case d.Replicas == 1:
			return fmt.Sprintf("a failover at t=%d promoted the replica", f.Tick)
		case a.Arg == 0:
			return fmt.Sprintf("a failover at t=%d promoted the freshest replica", f.Tick)
		}
		return fmt.Sprintf("a failover at t=%d promoted replica %d, not the freshest", f.Tick, a.Arg+1)
	case model.ActNodeCrash:
		return fmt.Sprintf("lock node %d crashed at t=%d", a.Arg+1, f.Tick)
	case model.ActClockJump:
		return fmt.Sprintf("lock node %d's clock jumped %d ticks at t=%d", a.Arg+1, d.JumpTicks, f.Tick)
	case model.ActLose:
		s := fmt.Sprintf("%s's request at t=%d was applied but its reply was lost", c, f.Tick)
		if d.Lose == model.LoseRequest {
			s = fmt.Sprintf("%s's request at t=%d was lost before it reached the server", c, f.Tick)
		}
		if k := model.RequestKind(d, &run.Steps[f.Seq-1]); d.ForgetsRelease(k) {
			return s + " and it forgot its lock (release-fail=forget)"
		}
		if d.TimeoutTicks > 0 {
			s += fmt.Sprintf(" (it resends after %d ticks)", d.TimeoutTicks)
		}
		return s
	case model.ActPartition:
		return fmt.Sprintf("%s was cut off by a partition at t=%d for %d ticks", c, f.Tick, d.PartitionTicks)
	case model.ActSkew:
		if d.ClientJumpTicks < 0 {
			return fmt.Sprintf("%s's own clock jumped %d ticks back at t=%d", c, -d.ClientJumpTicks, f.Tick)
		}
		return fmt.Sprintf("%s's own clock jumped %d ticks forward at t=%d", c, d.ClientJumpTicks, f.Tick)
	case model.ActStorageFailover:
		if d.StorageLoses == model.LossFence {
			return fmt.Sprintf("the storage failed over at t=%d, keeping every write but losing the highest token its token check had seen", f.Tick)
		}
		return fmt.Sprintf("the storage failed over at t=%d to a replica that had not received every write", f.Tick)
	case model.ActStaleRead:
		return fmt.Sprintf("%s's read at t=%d was served by the storage's lagging replica", c, f.Tick)
	case model.ActCounterCrash:
		return fmt.Sprintf("the fencing counter's node crashed at t=%d and restarted empty", f.Tick)
	}
	return a.String()
}

// actClause tells the unsafe access of step st and why the storage let it
// through.
func actClause(d *model.Design, st *model.StepRecord) string {
	ev := &st.Event
	c := name(st.Action.Client)
	verb := "read the counter"
	if st.Action.Kind == model.ActWrite || st.Action.Kind == model.ActArrive || st.Action.Kind == model.ActApply {
		verb = fmt.Sprintf("wrote %d", ev.Value)
	}
	s := fmt.Sprintf("%s %s at t=%d while the lock was %s", c, verb, ev.Now, keyOwner(ev.Other))
	return s + storageWords(d, st)
}

func keyOwner(o uint8) string {
	if o == 0 {
		return "nobody's"
	}
	return model.ClientName(int(o-1)) + "'s"
}

// storageWords says why the storage accepted (or refused) a request.
func storageWords(d *model.Design, st *model.StepRecord) string {
	ev := &st.Event
	if ev.Result == model.ResRejected {
		return ", and the storage refused it"
	}
	before := st.Before.Store
	if st.Action.Kind == model.ActApply {
		return fmt.Sprintf(" with token %d, which the storage applied unchecked: its token check had passed earlier (fence-check=two-step; highest token seen by now: %d)", ev.Token, before.MaxTok)
	}
	write := st.Action.Kind == model.ActWrite || st.Action.Kind == model.ActArrive || st.Action.Kind == model.ActApply
	tok := ""
	if ev.Token != 0 && (write && d.Fence != model.FenceNone || d.Fence == model.FenceRW) {
		tok = fmt.Sprintf(" with token %d", ev.Token)
	}
	switch d.Storage {
	case model.StoragePlain:
		return ", which the storage accepted: it checks nothing"
	case model.StorageCAS:
		if write {
			return fmt.Sprintf(", which the storage accepted: the version was still %d, the one it read", before.Version)
		}
		return ", which a compare-and-set storage does not check"
	}
	if tok == "" {
		return ", which the storage accepted: the request carried no token"
	}
	why := ""
	if d.Fence == model.FenceWrite {
		why = " because the reads carry no token"
	}
	if d.Storage == model.StorageMaxWrite || d.Storage == model.StorageCondUpdate {
		why = " because only accepted writes raise it"
	}
	if !write && d.Storage == model.StorageCondUpdate {
		return ", which the storage accepted: a conditional update does not check reads"
	}
	return fmt.Sprintf("%s, which the storage accepted%s (highest token seen: %d)", tok, why, before.MaxTok)
}

// lostClause names the two jobs that read the same value and both wrote.
func lostClause(run *model.Run) string {
	d := &run.Design
	h := run.History
	for i := range h {
		for j := i + 1; j < len(h); j++ {
			a, b := &h[i], &h[j]
			if a.Outcome != model.OutcomeOK || b.Outcome != model.OutcomeOK || !a.ReadOK || !b.ReadOK || a.Read != b.Read {
				continue
			}
			first, second := a, b
			if second.ReturnSeq < first.ReturnSeq {
				first, second = second, first
			}
			s := fmt.Sprintf("%s and %s both read %d and both wrote %d, so one increment is lost", model.ClientName(first.Client), model.ClientName(second.Client), a.Read, a.Wrote)
			// tell the write made without the lock, else the later one
			stale, other := second, first
			if st := writeStep(run, first); st != nil && st.Event.Flags&model.EvUnsafe != 0 {
				stale, other = first, second
			}
			if st := writeStep(run, stale); st != nil {
				s += fmt.Sprintf(": %s's write at t=%d", model.ClientName(stale.Client), st.Event.Now)
				if st.Event.Flags&model.EvUnsafe != 0 {
					s += " (its lock already gone)"
				}
				w := storageWords(d, st)
				if d.Fence == model.FenceWrite && strings.Contains(w, "reads carry no token") {
					w = strings.Replace(w, "the reads carry no token", model.ClientName(other.Client)+"'s read carried no token", 1)
				}
				s += w
			}
			return s
		}
	}
	return fmt.Sprintf("the counter ended at %d after %d accepted writes", run.Final.Store.Counter, run.Final.Store.Accepted)
}

// stuckClause names who waits forever.
func stuckClause(run *model.Run, at int) string {
	d := &run.Design
	s := &run.Steps[at-1].After
	if w := model.HeldForEverWords(d, s); w != "" { // held by no client that believes in it
		return w
	}
	if k := model.StuckNode(d, s); k >= 0 {
		o := s.Nodes[k].Owner
		return fmt.Sprintf("the key is %s's, it never expires, and %s will never release it", ownerName(o), ownerName(o))
	}
	if d.Wait == model.WaitNotify {
		return "every live client sleeps until a release notice that nobody will send (an expiry publishes nothing)"
	}
	return "a live client waits for the lock forever"
}

// writeStep is the step at which job j's write reached the storage.
func writeStep(run *model.Run, j *model.Job) *model.StepRecord {
	if j.ReturnSeq < 1 || j.ReturnSeq > len(run.Steps) {
		return nil
	}
	st := &run.Steps[j.ReturnSeq-1]
	if st.Action.Kind != model.ActWrite && st.Action.Kind != model.ActArrive && st.Action.Kind != model.ActApply {
		return nil
	}
	return st
}

// once folds repeated phrases: "x, twice".
func once(xs []string) []string {
	var out []string
	count := map[string]int{}
	for _, x := range xs {
		if count[x] == 0 {
			out = append(out, x)
		}
		count[x]++
	}
	for i, x := range out {
		switch n := count[x]; {
		case n == 2:
			out[i] = x + ", twice"
		case n > 2:
			out[i] = fmt.Sprintf("%s, %d times", x, n)
		}
	}
	return out
}

// mutexClause names the clients that believed they held the lock at once.
func mutexClause(run *model.Run, at int) string {
	st := &run.Steps[at-1]
	var who []string
	for i := 0; i < run.Design.Clients; i++ {
		if st.After.Clients[i].Believes() {
			who = append(who, model.ClientName(i))
		}
	}
	if len(who) < 2 {
		return fmt.Sprintf("two clients believed they held the lock at t=%d", st.Event.Now)
	}
	return fmt.Sprintf("%s believed they held the lock at once at t=%d", strings.Join(who, " and "), st.Event.Now)
}
