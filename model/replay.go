package model

import (
	"fmt"
	"strings"
)

// StepRecord is one step of a replayed trace.
type StepRecord struct {
	Seq    int    // 1-based position in the trace
	Action Action // what happened
	Event  Event  // what it caused
	Before State
	After  State
}

// Violation is the first step at which an Always property failed, or a
// Sometimes property was witnessed.
type Violation struct {
	Property string
	Seq      int // 0: the initial state
}

// TickRow is one column of the seed's timeline.
type TickRow struct {
	Tick     int
	Believes uint8 // clients that believed they held the lock during the tick
	Holders  []int // who held the key during the tick, in order (-1: nobody)
	Unsafe   uint8 // clients that acted on storage without the key (✗)
}

// Outcome is how a job's increment ended.
type Outcome uint8

const (
	OutcomeOK      Outcome = iota // write accepted
	OutcomeFailed                 // read or write rejected, or crashed before writing: no effect
	OutcomeUnknown                // crashed with its write in flight: may or may not have applied
	OutcomePending                // the trace ended before the job did
	OutcomeRead                   // a reader's job (readers=K): its read was accepted, and it writes nothing
)

func (o Outcome) String() string {
	if int(o) >= 5 {
		return fmt.Sprintf("outcome(%d)", o)
	}
	return [...]string{"ok", "failed", "unknown", "pending", "read"}[o]
}

// Job is one client's increment as the linearizability checker sees it:
// it starts with the read and ends with the write's reply.
type Job struct {
	Client     int
	CallSeq    int // step of the read
	CallTick   int
	ReturnSeq  int // step of the write's reply (or of the crash, or the read's refusal)
	ReturnTick int
	Read       int // value read (valid when the read was accepted)
	ReadOK     bool
	Wrote      int  // value written (Read+1)
	Token      int  // token sent with the write (0: none)
	Landed     bool // a copy of its write was applied though its client saw no reply to it
	Outcome    Outcome
}

// Run is a replayed trace: the steps, the timeline, the job history, and
// the first step at which each property showed.
type Run struct {
	Design   Design
	Steps    []StepRecord
	Init     State
	Final    State
	Timeline []TickRow
	History  []Job
	Found    []Violation // Always violations and Sometimes witnesses, by property order
}

// TraceError is a trace that does not replay: step Seq is not enabled.
type TraceError struct {
	Seq    int
	Action Action
	Tick   int
	Enable []Action
}

func (e *TraceError) Error() string {
	var names []string
	for _, a := range e.Enable {
		names = append(names, a.String())
	}
	if len(names) > 12 {
		names = append(names[:12], "…")
	}
	return fmt.Sprintf("step %d (%s) is not enabled at t=%d (enabled: %s)", e.Seq, e.Action, e.Tick, strings.Join(names, ", "))
}

// Replay runs trace from Init through Step, checking that each action is
// enabled, and derives the timeline, the history and the properties shown.
func Replay(d *Design, trace []Action) (*Run, error) {
	s := Init(d)
	r := &Run{Design: *d, Init: s, Steps: make([]StepRecord, 0, len(trace))}
	open := make([]int, d.Clients)
	for i := range open {
		open[i] = -1
	}
	props := PropertiesFor(d)
	found := make([]bool, len(props))
	check := func(st *State, ev *Event, seq int) {
		for i, p := range props {
			if !found[i] && p.Bad(d, st, ev) {
				found[i] = true
				r.Found = append(r.Found, Violation{p.Name, seq})
			}
		}
	}
	check(&s, nil, 0)
	tl := &timelineBuilder{d: d}
	tl.observe(&s, nil)
	var buf []Action
	for i, a := range trace {
		buf = Actions(d, &s, buf)
		ok := false
		for _, b := range buf {
			ok = ok || b == a
		}
		if !ok {
			return nil, &TraceError{Seq: i + 1, Action: a, Tick: int(s.Now), Enable: append([]Action(nil), buf...)}
		}
		next, ev := Step(d, s, a)
		seq := i + 1
		r.Steps = append(r.Steps, StepRecord{Seq: seq, Action: a, Event: ev, Before: s, After: next})
		recordJob(d, open, &r.History, &r.Steps[len(r.Steps)-1])
		tl.observe(&next, &ev)
		s = next
		check(&s, &ev, seq)
	}
	for _, k := range open {
		if k >= 0 {
			r.History[k].Outcome = OutcomePending
			if r.History[k].Landed { // its write took effect; only the reply is still to come
				r.History[k].Outcome = OutcomeOK
			}
		}
	}
	r.Final = s
	r.Timeline = tl.rows
	// sort Found by property order, for a stable report
	sorted := r.Found[:0:0]
	for _, p := range props {
		for _, v := range r.Found {
			if v.Property == p.Name {
				sorted = append(sorted, v)
			}
		}
	}
	r.Found = sorted
	return r, nil
}

// RequestKind is the client step that st performed: for a lost reply, a
// delay or an arrival, the request underneath (a stray first copy is a write or a
// release); otherwise the step's own kind.
func RequestKind(d *Design, st *StepRecord) ActionKind {
	a := st.Action
	if !a.Kind.ByClient() {
		return a.Kind
	}
	c := &st.Before.Clients[a.Client]
	switch a.Kind {
	case ActLose, ActDelay:
		k, _ := mainStep(d, &st.Before, int(a.Client))
		return k
	case ActStaleRead:
		return ActRead
	case ActArrive:
		switch {
		case c.Phase == PhaseArrive:
			return ActWrite
		case c.Flags&FlagReply != 0:
			return ActAcquire
		case c.Flags&FlagInFlight != 0:
			return phaseAction[c.Phase]
		case c.Flags&FlagStrayDel != 0:
			return ActRelease
		case d.Abandon != AbandonNone: // an abandoned acquire lands (delay-at=acquire: no other stray)
			return ActAcquire
		}
		return ActWrite
	}
	return a.Kind
}

// recordJob follows each client's job through the events. open[i] is the
// index in hist of client i's unfinished job, or -1.
func recordJob(d *Design, open []int, hist *[]Job, st *StepRecord) {
	a, ev, seq := st.Action, &st.Event, st.Seq
	if !a.Kind.ByClient() {
		return
	}
	i := int(a.Client)
	var j *Job
	if open[i] >= 0 {
		j = &(*hist)[open[i]]
	}
	end := func(o Outcome) {
		if j != nil {
			if o != OutcomeOK && j.Landed {
				o = OutcomeOK // told it failed, but an earlier copy of its write took effect
			}
			j.ReturnSeq, j.ReturnTick, j.Outcome = seq, int(ev.Now), o
			open[i] = -1
		}
	}
	kind := RequestKind(d, st)
	stray := a.Kind == ActArrive && kind == ActWrite && st.Before.Clients[i].Phase != PhaseArrive
	switch {
	case a.Kind == ActDelay:
		return // the request's outcome comes when it (or its resent copy) is answered
	case ev.Result == ResUnreachable && a.Kind != ActLose:
		return // the request never got through: it is tried again
	case a.Kind == ActLose || stray:
		// applied, but its client saw no reply: its job goes on
		if j != nil && ev.Result == ResAccepted && (kind == ActWrite || ev.Flags&EvCommit != 0) {
			j.Wrote, j.Token, j.Landed = int(ev.Value), int(ev.Token), true
			j.ReturnSeq, j.ReturnTick = seq, int(ev.Now) // took effect by now, whatever its client hears later
		}
		return
	}
	switch kind {
	case ActRead:
		*hist = append(*hist, Job{Client: i, CallSeq: seq, CallTick: int(ev.Now), Read: int(ev.Value), ReadOK: ev.Result == ResAccepted})
		open[i] = len(*hist) - 1
		j = &(*hist)[open[i]]
		switch {
		case ev.Result == ResRejected:
			end(OutcomeFailed)
		case ev.Result == ResAccepted && isReader(d, &st.Before, i):
			end(OutcomeRead) // a read-only job: it returns at its read
		}
	case ActWrite, ActApply:
		if j == nil {
			return
		}
		j.Wrote, j.Token = int(ev.Value), int(ev.Token)
		switch {
		case ev.Result == ResOK: // db: buffered until COMMIT; fence-check=two-step: the check passed, the apply follows
		case ev.Result != ResAccepted:
			end(OutcomeFailed)
		case st.Before.Clients[i].Flags&FlagLost != 0:
			end(OutcomeUnknown) // its client crashed: nobody saw the reply
		default:
			end(OutcomeOK)
		}
	case ActRelease:
		switch {
		case ev.Flags&EvCommit != 0:
			if ev.Result == ResAccepted {
				end(OutcomeOK)
			} else {
				end(OutcomeFailed)
			}
		case d.RenewFail == RenewFailStop && j != nil && !j.Landed:
			// the worker was stopped by a failed renewal after its read
			// came back (renew-fail=stop): its write was never sent
			end(OutcomeFailed)
		}
	case ActCheck:
		if ev.Flags&EvGiveUp != 0 {
			end(OutcomeFailed)
		}
	case ActRenew:
		if ev.Flags&EvGiveUp != 0 && d.RenewFail == RenewFailStop { // the worker gives its job up
			end(OutcomeFailed)
		}
	case ActCrash, ActHang, ActRestart:
		switch c := &st.Before.Clients[i]; {
		case j == nil || c.Phase == PhaseArrive:
		case c.Stray != 0: // the first copy of its write is still on its way
			j.Wrote = j.Read + 1
			end(OutcomeUnknown)
		default:
			j.Wrote = j.Read + 1
			end(OutcomeFailed)
		}
	}
}

type timelineBuilder struct {
	d    *Design
	rows []TickRow
}

func (t *timelineBuilder) observe(s *State, ev *Event) {
	if len(t.rows) == 0 || t.rows[len(t.rows)-1].Tick != int(s.Now) {
		t.rows = append(t.rows, TickRow{Tick: int(s.Now)})
	}
	row := &t.rows[len(t.rows)-1]
	for i := 0; i < t.d.Clients; i++ {
		if s.Clients[i].Believes() {
			row.Believes |= 1 << i
		}
	}
	// a client that believed until this step (its release) believed this tick
	if ev != nil && ev.Action.Kind != ActTick && ev.Flags&EvJobDone != 0 {
		row.Believes |= 1 << ev.Action.Client
	}
	owner := LockHolder(t.d, s)
	if len(row.Holders) == 0 || row.Holders[len(row.Holders)-1] != owner {
		row.Holders = append(row.Holders, owner)
	}
	if ev != nil && ev.Flags&EvUnsafe != 0 {
		row.Unsafe |= 1 << ev.Action.Client
	}
}

// Violated reports whether the run shows property name (Always: violated;
// Sometimes: witnessed), and at which step.
func (r *Run) Violated(name string) (int, bool) {
	for _, v := range r.Found {
		if v.Property == name {
			return v.Seq, true
		}
	}
	return 0, false
}

// Outcomes counts the jobs' results: accepted writes, failed jobs.
func (r *Run) Outcomes() (ok, failed int) {
	for _, j := range r.History {
		switch j.Outcome {
		case OutcomeOK:
			ok++
		case OutcomeFailed:
			failed++
		}
	}
	return ok, failed
}
