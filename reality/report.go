package reality

import (
	"context"
	"fmt"
	"math/bits"
	"strings"
	"time"

	"lockcheck/model"
)

// Moment is a step at which something showed: a ✗, a removed lock, an
// expiry.
type Moment struct {
	Seq    int    `json:"seq"`
	Tick   int    `json:"tick"`
	Client string `json:"client"`
}

// Shown is a property's verdict on one side: Always properties are
// violated, Sometimes ones seen. Observed is false when the real run has no
// way to tell (a property this package does not know).
type Shown struct {
	Property string `json:"property"`
	Expect   string `json:"expect"`
	Shown    bool   `json:"shown"`
	Seq      int    `json:"seq,omitempty"`
	Observed bool   `json:"observed"`
}

// Side is one world's outcome of the schedule.
type Side struct {
	Counter       int      `json:"counter"`
	Accepted      int      `json:"accepted_writes"`
	Rejected      int      `json:"rejected_writes"`
	ReadsRejected int      `json:"rejected_reads"`
	Unsafe        []Moment `json:"unsafe"`        // ✗: storage accessed without the key
	RemovedOther  []Moment `json:"removed_other"` // releases that removed another's key
	Expired       []Moment `json:"expired"`       // keys that expired (tick, whose)
	AllEnded      bool     `json:"all_ended"`
	LostUpdate    bool     `json:"lost_update"`
	Properties    []Shown  `json:"properties"`
	// Linearizable is the linearizability package's verdict on the job
	// history with the final counter: ok, illegal, unknown; "" if not
	// checked.
	Linearizable string          `json:"linearizable,omitempty"`
	LinSummary   string          `json:"linearizable_summary,omitempty"`
	Timeline     []model.TickRow `json:"-"`
}

// StepPair is one step of the schedule in both worlds.
type StepPair struct {
	Seq    int    `json:"seq"`
	Tick   int    `json:"tick"`
	Action string `json:"action"`
	Model  string `json:"model"`
	Real   string `json:"real"`
	// Told is what the lock library told the caller at this step.
	Told  string `json:"told,omitempty"`
	Agree bool   `json:"agree"`
	// Diff names the fields that differ ("key after: model A's, real nobody").
	Diff string `json:"diff,omitempty"`
	// Real times of the step, milliseconds since tick 1 began.
	StartMS float64 `json:"start_ms"`
	EndMS   float64 `json:"end_ms"`
	view    view
}

// Comparison is a schedule played in the model and on real servers.
type Comparison struct {
	Source      string     `json:"source"`
	DesignName  string     `json:"design_name"`
	Design      string     `json:"design"`
	Server      string     `json:"server"`
	Lock        string     `json:"lock"`   // redis or etcd
	Client      string     `json:"client"` // the lock client: lockcheck (reference) or a library
	TickMS      int64      `json:"tick_ms"`
	PXMS        int64      `json:"px_ms"` // the TTL sent (etcd: the lease TTL)
	TokenOffset int        `json:"token_offset,omitempty"`
	WindowMS    float64    `json:"window_ms"`
	LatestMS    float64    `json:"latest_ms"`
	Late        bool       `json:"late"`
	LateSeq     int        `json:"late_seq,omitempty"`
	Steps       []StepPair `json:"steps"`
	Model       Side       `json:"model"`
	Real        Side       `json:"real"`
	Differences []string   `json:"differences"`
	Agree       bool       `json:"agree"`
	// Known names the documented difference between a library and the
	// model that the differences are, exactly ("" when they agree or
	// differ otherwise); Agree stays false.
	Known string `json:"known_difference,omitempty"`

	d    model.Design
	run  *model.Run
	play *Play
}

// Input is what to reproduce: a design and a schedule, with where they came
// from.
type Input struct {
	Source     string // file name, for the report
	Kind       string // "scenario" or "counterexample"
	DesignName string // as written ("demo2")
	Design     model.Design
	Trace      []model.Action
	Doc        string // the scenario's # paragraph, or the property broken
}

// Reproduce replays in.Trace in the model and plays it on the server at
// opts.Addr, and compares the two. server names the server for the report.
func Reproduce(ctx context.Context, in *Input, server string, opts Options) (*Comparison, error) {
	run, err := model.Replay(&in.Design, in.Trace)
	if err != nil {
		return nil, fmt.Errorf("%s: the schedule does not replay in the model: %v", in.Source, err)
	}
	p, err := PlaySchedule(ctx, &in.Design, in.Trace, opts)
	if err != nil {
		return nil, err
	}
	return Compare(in, server, run, p), nil
}

// Compare puts a model run and a real play of the same trace side by side.
func Compare(in *Input, server string, run *model.Run, p *Play) *Comparison {
	d := run.Design
	c := &Comparison{
		Source: in.Source, DesignName: in.DesignName, Design: d.Name(), Server: server,
		Lock: d.Lock.String(), Client: p.Client, TickMS: p.Tick.Milliseconds(), PXMS: p.PX.Milliseconds(), TokenOffset: p.TokenOffset,
		WindowMS: ms(p.Window), LatestMS: ms(p.Latest), Late: p.Late, LateSeq: p.LateSeq,
		d: d, run: run, play: p,
	}
	c.Model = modelSide(run)
	c.Real = realSide(&d, p)
	linearizable(c, run, p)

	// step by step
	for k := range run.Steps {
		st := &run.Steps[k]
		ob := &p.Steps[k+1]
		mv, rv := modelView(&d, st), realView(ob)
		if p.Client == ClientUser && d.Lock == model.LockRedlock {
			mv = userRedlockView(&d, st, mv)
		}
		sp := StepPair{
			Seq: st.Seq, Tick: ob.Tick, Action: st.Action.String(),
			Model: describe(&d, mv), Real: describe(&d, rv), Told: ob.Told, Agree: mv == rv,
			StartMS: ms(ob.Start), EndMS: ms(ob.End), view: rv,
		}
		if !sp.Agree {
			if len(c.Differences) == 0 && ob.Stuck && (!p.Late || sp.Seq < p.LateSeq) {
				// its first difference is a definite one, made before any
				// step was late: the steps after it waited behind it
				c.Late, c.LateSeq = false, 0
			}
			sp.Diff = diffViews(&d, mv, rv)
			c.Differences = append(c.Differences, fmt.Sprintf("step %d (t=%d %s): %s", sp.Seq, sp.Tick, sp.Action, sp.Diff))
		}
		c.Steps = append(c.Steps, sp)
	}
	if h := p.Steps[0].After; h != HolderNone {
		c.Differences = append(c.Differences, fmt.Sprintf("start: the key is %s, the model starts with none", holderName(h)))
	}
	// outcome
	m, r := &c.Model, &c.Real
	cmpInt := func(what string, a, b int) {
		if a != b {
			c.Differences = append(c.Differences, fmt.Sprintf("%s: model %d, real %d", what, a, b))
		}
	}
	cmpInt("counter", m.Counter, r.Counter)
	cmpInt("accepted writes", m.Accepted, r.Accepted)
	cmpInt("rejected writes", m.Rejected, r.Rejected)
	cmpInt("rejected reads", m.ReadsRejected, r.ReadsRejected)
	for k := range m.Properties {
		mp, rp := m.Properties[k], r.Properties[k]
		if !rp.Observed {
			continue
		}
		if mp.Shown != rp.Shown || mp.Seq != rp.Seq {
			c.Differences = append(c.Differences, fmt.Sprintf("%s: model %s, real %s", mp.Property, shownText(mp), shownText(rp)))
		}
	}
	if m.Linearizable != "" && r.Linearizable != "" && m.Linearizable != r.Linearizable {
		c.Differences = append(c.Differences, fmt.Sprintf("linearizable: model %s, real %s", m.Linearizable, r.Linearizable))
	}
	c.Agree = len(c.Differences) == 0 && !c.Late
	c.Known = knownDifference(c)
	return c
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func shownText(s Shown) string {
	if !s.Observed {
		return "not observed"
	}
	if !s.Shown {
		if s.Expect == model.Always.String() {
			return "holds"
		}
		return "not seen"
	}
	verb := "violated"
	if s.Expect == model.Sometimes.String() {
		verb = "seen"
	}
	return fmt.Sprintf("%s at step %d", verb, s.Seq)
}

func diffViews(d *model.Design, m, r view) string {
	var parts []string
	add := func(what string, a, b any) {
		parts = append(parts, fmt.Sprintf("%s: model %v, real %v", what, a, b))
	}
	if m.Took != r.Took || m.Skipped != r.Skipped {
		rt := r.Took.String()
		if r.Skipped {
			rt = "none (" + r.Why + ")"
		}
		add("step taken", m.Took, rt)
	}
	if !r.Skipped && (m.Result != r.Result || m.Value != r.Value || m.Token != r.Token || m.MaxTok != r.MaxTok) {
		// each side's text with its own key holder (a zero After would
		// read as A's: "nothing applied; key: A's" where the key was nobody's)
		add("reply", describe(d, view{Took: m.Took, Held: m.Held, Result: m.Result, Value: m.Value, Token: m.Token, MaxTok: m.MaxTok, After: m.After}),
			describe(d, view{Took: r.Took, Held: r.Held, Result: r.Result, Value: r.Value, Token: r.Token, MaxTok: r.MaxTok, After: r.After}))
	}
	if m.Unsafe != r.Unsafe {
		add("✗ (acted without the key)", m.Unsafe, r.Unsafe)
	}
	if m.RemovedOther != r.RemovedOther {
		add("removed another's key", m.RemovedOther, r.RemovedOther)
	}
	if m.After != r.After {
		add("key after", holderName(m.After), holderName(r.After))
	}
	if m.Held != r.Held {
		add("request held", m.Held, r.Held)
	}
	if m.Node != r.Node || m.Won != r.Won {
		add("node asked, won", fmt.Sprint(m.Node+1, " ", m.Won), fmt.Sprint(r.Node+1, " ", r.Won))
	}
	if m.Nodes != r.Nodes {
		add("nodes", m.Nodes, r.Nodes)
	}
	if m.NoExpiry != r.NoExpiry {
		add("key without expiry", m.NoExpiry, r.NoExpiry)
	}
	return strings.Join(parts, "; ")
}

// modelSide is the model's outcome.
func modelSide(run *model.Run) Side {
	d := &run.Design
	var s Side
	s.Counter = int(run.Final.Store.Counter)
	for k := range run.Steps {
		st := &run.Steps[k]
		ev := &st.Event
		who := model.ClientName(int(st.Action.Client))
		if ev.Flags&model.EvUnsafe != 0 {
			s.Unsafe = append(s.Unsafe, Moment{st.Seq, int(ev.Now), who})
		}
		if ev.Flags&model.EvRemovedOther != 0 {
			s.RemovedOther = append(s.RemovedOther, Moment{st.Seq, int(ev.Now), who})
		}
		for i := 0; i < d.Clients; i++ {
			if st.Action.Kind == model.ActTick && ev.ExpiredMask&(1<<i) != 0 {
				s.Expired = append(s.Expired, Moment{st.Seq, int(ev.Now), model.ClientName(i)})
			}
		}
		isWrite := st.Action.Kind == model.ActWrite || st.Action.Kind == model.ActArrive || st.Action.Kind == model.ActApply ||
			ev.Flags&model.EvCommit != 0 // a database transaction's COMMIT applies its write
		switch {
		case isWrite && ev.Result == model.ResAccepted:
			s.Accepted++
		case isWrite && ev.Result == model.ResRejected:
			s.Rejected++
		case (st.Action.Kind == model.ActRead || st.Action.Kind == model.ActStaleRead) && ev.Result == model.ResRejected:
			s.ReadsRejected++
		}
	}
	s.AllEnded = run.Final.Finished(d)
	s.LostUpdate = s.AllEnded && s.Counter != s.Accepted
	for _, p := range model.Properties {
		sh := Shown{Property: p.Name, Expect: p.Expect.String(), Observed: true}
		if seq, ok := run.Violated(p.Name); ok {
			sh.Shown, sh.Seq = true, seq
		}
		s.Properties = append(s.Properties, sh)
	}
	s.Timeline = run.Timeline
	return s
}

// realSide is reality's outcome, from what the clients got back and what
// the observer saw.
func realSide(d *model.Design, p *Play) Side {
	var s Side
	s.Counter = p.Counter
	all := uint8(1)<<d.Clients - 1
	first := map[string]int{}
	show := func(name string, seq int) {
		if _, ok := first[name]; !ok {
			first[name] = seq
		}
	}
	prev := &p.Steps[0]
	for k := 1; k < len(p.Steps); k++ {
		ob := &p.Steps[k]
		who := model.ClientName(int(ob.Action.Client))
		if ob.Unsafe {
			s.Unsafe = append(s.Unsafe, Moment{ob.Seq, ob.Tick, who})
			show("exclusive", ob.Seq)
		}
		readers := uint8(1)<<d.Readers - 1 // etcd's RWMutex: readers share the lock; mutex is a writer beside anyone (the model's rwConflict)
		if bits.OnesCount8(ob.Inside) >= 2 && ob.Inside&^readers != 0 {
			show("mutex", ob.Seq)
		}
		if ob.RemovedOther {
			s.RemovedOther = append(s.RemovedOther, Moment{ob.Seq, ob.Tick, who})
			show("own-release", ob.Seq)
		}
		if ob.Took == model.ActTick && d.Lock == model.LockRedlock {
			// per node, as the model counts: a client's key gone from a
			// node that is up, nobody having acted between the two looks
			for i := 0; i < d.Clients; i++ {
				if redlockKeyGone(prev.Nodes, ob.Nodes, i) {
					s.Expired = append(s.Expired, Moment{ob.Seq, ob.Tick, model.ClientName(i)})
					if prev.Believes&(1<<i) != 0 {
						show("expired-while-held", ob.Seq)
					}
				}
			}
		} else if ob.Took == model.ActTick && prev.After >= 0 && ob.After != prev.After && ob.After != HolderDown {
			// nobody acted between the two looks: the key expired
			s.Expired = append(s.Expired, Moment{ob.Seq, ob.Tick, model.ClientName(prev.After)})
			if prev.Believes&(1<<prev.After) != 0 {
				show("expired-while-held", ob.Seq)
			}
		}
		if ob.Took == model.ActAcquire && ob.Result == model.ResOK && !ob.Skipped && ob.After == HolderNone && ob.Believes&(1<<ob.Action.Client) != 0 {
			// granted, believed in, and gone before the step ended (a pooler's DISCARD ALL)
			show("expired-while-held", ob.Seq)
		}
		isWrite := ob.Took == model.ActWrite || ob.Took == model.ActArrive || ob.Took == model.ActApply || isCommit(d, ob)
		switch {
		case ob.Skipped:
		case isWrite && ob.Result == model.ResAccepted:
			s.Accepted++
		case isWrite && ob.Result == model.ResRejected:
			s.Rejected++
		case (ob.Took == model.ActRead || ob.Took == model.ActStaleRead) && ob.Result == model.ResRejected:
			s.ReadsRejected++
		}
		if ob.Took == model.ActAcquire && ob.Result == model.ResRefused {
			show("contended", ob.Seq)
		}
		if ob.Result == model.ResRejected {
			show("fenced", ob.Seq)
		}
		if ob.Done == all && ob.Crashed == 0 {
			show("all-done", ob.Seq)
		}
		// a key with no expiry (or renewed for ever by its crashed
		// holder's sidecar: Obs.Kept) whose holder is gone, while others wait; or,
		// with wait=notify, no key while every live client sleeps
		live := all &^ ob.Done
		// a ZooKeeper node lives with its session, which a crashed
		// holder's ends: it is not there for ever
		sessionEnds := d.Lock == model.LockZooKeeper && ob.After >= 0 && ob.Crashed&(1<<ob.After) != 0
		gone := ob.After >= 0 && (live&(1<<ob.After) == 0 || ob.Forgot&(1<<ob.After) != 0) // finished, crashed, or does not know it holds it
		if live != 0 && ((ob.After >= 0 && (ob.AfterPTTL == -1 || ob.Kept) && gone && !sessionEnds) ||
			(d.Wait == model.WaitNotify && ob.After == HolderNone && ob.Waiting&live == live)) {
			show("progress", ob.Seq)
		}
		if ob.Done == all && !s.AllEnded {
			s.AllEnded = true
			if s.Counter != s.Accepted {
				show("no-lost-update", ob.Seq)
			}
		}
		prev = ob
	}
	s.LostUpdate = s.AllEnded && s.Counter != s.Accepted
	known := map[string]bool{"exclusive": true, "mutex": true, "own-release": true, "no-lost-update": true, "progress": true,
		"expired-while-held": true, "contended": true, "fenced": true, "all-done": true}
	for _, pr := range model.Properties {
		sh := Shown{Property: pr.Name, Expect: pr.Expect.String(), Observed: known[pr.Name]}
		if seq, ok := first[pr.Name]; ok {
			sh.Shown, sh.Seq = true, seq
		}
		s.Properties = append(s.Properties, sh)
	}
	s.Timeline = realTimeline(d, p)
	return s
}

// isCommit reports whether a real release is a COMMIT that applied or
// rolled back a write (lock=db, tx=inside).
func isCommit(d *model.Design, ob *Obs) bool {
	return model.InTx(d) && ob.Took == model.ActRelease && (ob.Result == model.ResAccepted || ob.Result == model.ResRejected)
}

// realHistory is the real job history in the model's terms: each job
// starts with its read and ends with its write's reply (or the read's
// refusal, or a crash). Steps are ordered by the conductor, one after the
// other, so step numbers order them as their real times do.
func realHistory(d *model.Design, p *Play) []model.Job {
	var hist []model.Job
	inFlight := make([]bool, d.Clients) // a delayed write not yet arrived
	lost := make([]bool, d.Clients)     // … whose client crashed
	open := make([]int, d.Clients)
	for i := range open {
		open[i] = -1
	}
	for k := 1; k < len(p.Steps); k++ {
		ob := &p.Steps[k]
		if ob.Took == model.ActTick || ob.Skipped {
			continue
		}
		i := int(ob.Action.Client)
		if ob.Took == model.ActArrive {
			inFlight[i] = false
		}
		switch ob.Took {
		case model.ActRead, model.ActStaleRead: // a stale read is the job's read, served by the replica
			j := model.Job{Client: i, CallSeq: ob.Seq, CallTick: ob.Tick, Read: ob.Value, ReadOK: ob.Result == model.ResAccepted}
			if !j.ReadOK {
				j.ReturnSeq, j.ReturnTick, j.Outcome = ob.Seq, ob.Tick, model.OutcomeFailed
				hist = append(hist, j)
				continue
			}
			hist = append(hist, j)
			open[i] = len(hist) - 1
		case model.ActRelease:
			if isCommit(d, ob) && open[i] >= 0 { // the transaction's write lands (or not) at COMMIT
				j := &hist[open[i]]
				j.ReturnSeq, j.ReturnTick, j.Wrote = ob.Seq, ob.Tick, ob.Value
				j.Outcome = model.OutcomeFailed
				if ob.Result == model.ResAccepted {
					j.Outcome = model.OutcomeOK
				}
				open[i] = -1
			}
		case model.ActWrite, model.ActArrive, model.ActApply:
			if ob.Held == model.ActAcquire || ob.Held == model.ActRelease || ob.Held == model.ActDel {
				continue // a held acquire reply, or a held release: no write
			}
			if ob.Result == model.ResOK && (model.InTx(d) || d.FenceCheck == model.FenceCheckTwoStep) {
				continue // pending in the transaction until COMMIT; two-step: its check passed, the apply follows
			}
			if open[i] >= 0 {
				j := &hist[open[i]]
				j.ReturnSeq, j.ReturnTick = ob.Seq, ob.Tick
				j.Wrote, j.Token = ob.Value, ob.Token
				switch {
				case ob.Result != model.ResAccepted:
					j.Outcome = model.OutcomeFailed
				case lost[i]:
					j.Outcome = model.OutcomeUnknown // its client crashed: nobody saw the reply
				default:
					j.Outcome = model.OutcomeOK
				}
				open[i] = -1
			}
		case model.ActCheck:
			if open[i] >= 0 && ob.Result != model.ResOK { // gave up
				j := &hist[open[i]]
				j.ReturnSeq, j.ReturnTick, j.Outcome = ob.Seq, ob.Tick, model.OutcomeFailed
				open[i] = -1
			}
		case model.ActDelay:
			inFlight[i] = ob.Held == model.ActWrite
		case model.ActCrash:
			if inFlight[i] {
				lost[i] = true
				continue
			}
			if open[i] >= 0 {
				j := &hist[open[i]]
				j.ReturnSeq, j.ReturnTick, j.Outcome = ob.Seq, ob.Tick, model.OutcomeFailed
				j.Wrote = j.Read + 1
				open[i] = -1
			}
		}
	}
	for _, k := range open {
		if k >= 0 {
			hist[k].Outcome = model.OutcomePending
		}
	}
	return hist
}

// realTimeline draws reality the way the model's timeline is drawn: per
// tick, who believed they held the lock, who held the key (as the observer
// saw it, in order), and ✗.
func realTimeline(d *model.Design, p *Play) []model.TickRow {
	var rows []model.TickRow
	var prevBelieves uint8
	for k := range p.Steps {
		ob := &p.Steps[k]
		if len(rows) == 0 || rows[len(rows)-1].Tick != ob.Tick {
			rows = append(rows, model.TickRow{Tick: ob.Tick})
		}
		row := &rows[len(rows)-1]
		row.Believes |= ob.Believes
		// a client that believed until this step (its release) believed this tick
		if ob.Took == model.ActRelease || ob.Took == model.ActDel {
			row.Believes |= prevBelieves & (1 << ob.Action.Client)
		}
		prevBelieves = ob.Believes
		if ob.Took != model.ActTick && ob.Took != model.ActNodeCrash && ob.Took != model.ActStaleRead && (ob.Action.Kind.IsFault() || ob.Skipped) {
			continue
		}
		if len(row.Holders) == 0 || row.Holders[len(row.Holders)-1] != ob.After {
			row.Holders = append(row.Holders, ob.After)
		}
		if ob.Unsafe {
			row.Unsafe |= 1 << ob.Action.Client
		}
	}
	return rows
}
