package properties

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"pgregory.net/rapid"

	"lockcheck/model"
)

// A schedule is drawn by rapid one enabled action at a time: the driver
// asks model.Actions what may happen next and rapid picks one of them. The
// model stays the single source of truth; the driver never decides what is
// enabled or what an action does, and knows the actions only by the
// model's words for them (model.ActionKind: its String, IsFault).
//
// Every step draws three numbers, whatever is enabled: what kind of thing
// happens (kind), which one (which), to which client (who); a fault that
// takes an argument draws a fourth (arg: the tick a pause or delay ends
// at, or a node). A step is one group of rapid's data (a rapid.Custom
// generator), so deleting a step's group leaves the other steps' draws
// aligned; and as steps are nearly alike in size, rapid's shrinker, which
// prefers less data, prefers fewer steps.
//
// A stable strategy reads the numbers in absolute terms that mean the same
// thing in any state:
//   - kind picks a category by fixed shares of its 16 slots (a profile):
//     a client's step, a tick, another step of the world (replication), or
//     a fault;
//   - which picks one of the design's fault kinds (or world kinds), or one
//     of a client's steps (its main step, a renewal);
//   - who is a client, spread over the clients by their speeds;
//   - arg is the tick at which a pause or delay ends, or a node.
//
// A fault (or world step) is taken only if that kind with that argument
// is enabled, for who or, if who cannot take it, the next client that can
// (cyclically); otherwise the step is a client's step. A client's step
// goes to who, or to the next client that can step; if none can, time
// moves. A pause or delay is drawn by the tick it ends at. So when the
// shrinker deletes or changes a step, the steps after it still mean "a
// pause until t=15" or "A's next step", and every number at zero means
// "the lowest client's next step, or else a tick". (Falling back to the
// nearest enabled kind of fault instead would let the shrinker's smallest
// numbers for "A crashes" mean "A pauses" once earlier steps change.)
//
// rapid's integer generators favour small values: a number from [0, 16)
// is 0 or 1 a quarter of the time, 2 or 3 16%, 4 … 7 22%, and 8 … 15 get
// 4.4% each; shares are of slots, not of probability. (Drawing each number
// as unbiased digits or bits spreads it evenly but costs rapid's shrinker
// two to six times more work for the same shrunk length; one draw per
// number is the fastest.) TestMeasureRates reports what the shares give.
//
// A stable strategy with several profiles draws one per schedule, before
// its first step, and which clients are slow (swarm testing): a schedule
// where time runs fast while one client is slow can starve that client for
// ten ticks, which per-step coin flips almost never do.
//
// The uniform strategy is the naive baseline: an index into the enabled
// actions, meaningful only in the state it was drawn in.

// category is what kind of thing a step does.
type category uint8

const (
	catStep  category = iota // a client's next step (acquire, read, write, release, renew, …)
	catTick                  // time moves
	catWorld                 // a step of the world that is neither a tick nor a fault (replication)
	catFault                 // a fault from the design's budget
	numCats
)

// kinds describes every action kind of the model, from its words.
var kinds = describeKinds()

type kindInfo struct {
	kind     model.ActionKind
	cat      category
	byClient bool // written "A verb …": a client's action
}

func describeKinds() []kindInfo {
	var out []kindInfo
	for k := model.ActionKind(0); k < 255; k++ {
		word := model.Action{Kind: k}.String()
		if strings.HasPrefix(word, "action(") {
			break
		}
		info := kindInfo{kind: k, byClient: len(word) > 2 && word[0] >= 'A' && word[0] <= 'Z' && word[1] == ' '}
		switch {
		case k == model.ActTick:
			info.cat = catTick
		case k.IsFault():
			info.cat = catFault
		case info.byClient:
			info.cat = catStep
		default:
			info.cat = catWorld
		}
		out = append(out, info)
	}
	return out
}

// menu groups the enabled actions: a group is the consecutive enabled
// actions of one kind and client (model.Actions lists them together),
// which differ only in their argument, in increasing order.
type menu struct {
	en     []model.Action
	groups []group
	inCat  [numCats]int // groups in each category
}

type group struct {
	cat      category
	kind     model.ActionKind
	client   int
	from, to int // en[from:to], ordered by argument
}

func (m *menu) build(en []model.Action) {
	m.en = en
	m.groups = m.groups[:0]
	m.inCat = [numCats]int{}
	for i, a := range en {
		if n := len(m.groups); n > 0 {
			g := &m.groups[n-1]
			if g.kind == a.Kind && g.client == int(a.Client) && g.to == i {
				g.to++
				continue
			}
		}
		c := kinds[a.Kind].cat
		m.groups = append(m.groups, group{cat: c, kind: a.Kind, client: int(a.Client), from: i, to: i + 1})
		m.inCat[c]++
	}
}

// strategy turns the numbers drawn for a step into one enabled action.
type strategy struct {
	name     string
	doc      string
	profiles []profile // nil: uniform
	speeds   bool      // draw which clients are slow, per schedule
}

// profile gives each category a number of kind's 16 slots, in category
// order.
type profile struct {
	name  string
	share [numCats]int
	// planned: the faults come from a plan drawn before the first step,
	// either "right after the k-th time some client takes a step of this
	// kind, this fault hits it" or "the k-th time some client is about
	// to take a step of this kind that goes through, this fault hits it
	// first" (plan; its share of slots is 0)
	planned bool
	// time: only for designs where a tick can compete with a client's
	// step (clock=free)
	time bool
}

const (
	slots    = 16 // kind is drawn from [0, slots)
	whoSlots = 8  // who from [0, whoSlots), spread over the clients by speed
	// a slow client's share of who's range, against normalSpeed for the others
	slowSpeed, normalSpeed = 1, 4
)

var (
	balanced = profile{name: "balanced", share: [numCats]int{11, 1, 1, 3}}
	timeRuns = profile{name: "time", share: [numCats]int{4, 9, 1, 2}, time: true}
	planned  = profile{name: "planned", share: [numCats]int{13, 2, 1, 0}, planned: true}

	strategies = []strategy{
		{"swarm", "stable draws; per schedule a profile (balanced; planned faults; time runs fast, if ticks compete with steps) and which clients are slow",
			[]profile{balanced, planned, timeRuns}, true},
		{"stable", "stable draws, the balanced profile only, all clients alike", []profile{balanced}, false},
		{"uniform", "an index into the enabled actions (every pause length is its own action)", nil, false},
	}
)

func strategyByName(name string) (strategy, error) {
	var names []string
	for _, s := range strategies {
		if s.name == name {
			return s, nil
		}
		names = append(names, s.name)
	}
	return strategy{}, fmt.Errorf("unknown strategy %q (allowed: %s)", name, strings.Join(names, ", "))
}

// designInfo is what the picker learns about a design, before any
// schedule, from its zero schedule (the one that numbers all zero name:
// always the lowest client's next step, or else a tick, or else another
// step of the world): which kinds of client steps and of faults it has,
// and whether a tick can compete with a client's step. It is the same for
// every schedule, so a schedule's draws always mean the same thing.
type designInfo struct {
	zeroRun                           []model.Action
	stepKinds, worldKinds, faultKinds []model.ActionKind
	tickCompetes                      bool
	// before[f]: the kinds of client step that fault kind f was enabled
	// next to in the zero run (for the client's own fault, that client's
	// steps): the steps a fault can come just before (a delay at
	// acquire: the acquire); nil: f was never enabled there (all kinds)
	before [256][]model.ActionKind
	// argful: kinds whose actions differ by their argument (pause and
	// delay lengths, Redlock's nodes); maxArg: the largest argument seen
	argful [256]bool
	maxArg int
}

func learn(d *model.Design) designInfo {
	var info designInfo
	var seen [256]bool
	var arg0 [256]int
	var extra []model.ActionKind // fault kinds seen only one fault ahead of the zero run
	s := model.Init(d)
	var buf []model.Action
	for n := 0; n < 100000; n++ {
		buf = model.Actions(d, &s, buf)
		if len(buf) == 0 {
			break
		}
		step, tick := false, false
		for _, a := range buf {
			ki := kinds[a.Kind]
			step = step || ki.cat == catStep
			tick = tick || ki.cat == catTick
			if seen[a.Kind] {
				if int(a.Arg) != arg0[a.Kind] {
					info.argful[a.Kind] = true
				}
				info.maxArg = max(info.maxArg, int(a.Arg))
				continue
			}
			seen[a.Kind], arg0[a.Kind] = true, int(a.Arg)
			info.maxArg = max(info.maxArg, int(a.Arg))
			switch ki.cat {
			case catStep:
				info.stepKinds = append(info.stepKinds, a.Kind)
			case catWorld:
				info.worldKinds = append(info.worldKinds, a.Kind)
			case catFault:
				info.faultKinds = append(info.faultKinds, a.Kind)
			}
		}
		info.tickCompetes = info.tickCompetes || (step && tick)
		for _, f := range buf {
			if kinds[f.Kind].cat != catFault {
				continue
			}
			for _, a := range buf {
				if kinds[a.Kind].cat == catStep && (!kinds[f.Kind].byClient || a.Client == f.Client) && !slices.Contains(info.before[f.Kind], a.Kind) {
					info.before[f.Kind] = append(info.before[f.Kind], a.Kind)
				}
			}
		}
		// a fault can enable another (a partition, then a split-brain
		// failover): look one fault ahead for kinds the zero run never shows
		for _, a := range buf {
			if kinds[a.Kind].cat != catFault {
				continue
			}
			next, _ := model.Step(d, s, a)
			for _, b := range model.Actions(d, &next, nil) {
				if kinds[b.Kind].cat == catFault && !seen[b.Kind] && !slices.Contains(info.faultKinds, b.Kind) && !slices.Contains(extra, b.Kind) {
					extra = append(extra, b.Kind)
				}
			}
		}
		a := zeroAction(buf)
		info.zeroRun = append(info.zeroRun, a)
		s, _ = model.Step(d, s, a)
	}
	for _, k := range extra {
		if !seen[k] {
			info.faultKinds = append(info.faultKinds, k)
		}
	}
	slices.Sort(info.stepKinds)
	slices.Sort(info.worldKinds)
	slices.Sort(info.faultKinds)
	for _, f := range info.faultKinds {
		if info.before[f] == nil {
			info.before[f] = info.stepKinds
		}
		slices.Sort(info.before[f])
	}
	return info
}

// zeroAction is the action that numbers all zero name among en: the first
// client step (model.Actions lists them by client), or else a tick, or
// else the first step of the world, or else the first fault.
func zeroAction(en []model.Action) model.Action {
	for c := catStep; c < numCats; c++ {
		for _, a := range en {
			if kinds[a.Kind].cat == c {
				return a
			}
		}
	}
	return en[0]
}

// plan is a planned fault, of one of two forms:
//   - after: right after the (nth+1)-th step of kind trigger (by any
//     client), fault hits the client that took it (or, for a fault of the
//     world, the node arg picks), as soon as it is enabled;
//   - before: the (nth+1)-th time some client is about to take a step of
//     kind trigger that is not refused (model.ResRefused: the model says
//     it will be tried again) while fault (with arg) is enabled for it,
//     the fault hits it instead, and the step waits (a delayed acquire
//     is the one that wins the lock, not a retry; a pause falls just
//     before the write). trigger is one of the kinds fault can come just
//     before (designInfo.before).
//
// A plan that counts every step of its kind mostly counts retries where
// clients contend (each refused SET NX is an acquire step): "after the
// second acquire" is then B's first refused attempt, and a fault that
// only applies before an acquire never meets the acquire that wins.
type plan struct {
	before  bool
	trigger model.ActionKind
	nth     int
	fault   model.ActionKind
	arg     int
	seen    int // trigger steps so far
	target  int // after: the client, once armed; -1 before
	done    bool
}

// picker draws one action per step with rapid.
type picker struct {
	strat    strategy
	d        *model.Design
	info     designInfo
	profiles []*profile // the strategy's profiles that apply to the design
	prof     *profile
	plan     plan
	speed    [model.MaxClients]int // cumulative: client i owns [speed[i-1], speed[i])
	m        menu
	now      int          // the tick of the state being drawn in
	s        *model.State // the state being drawn in
	// exhausted: rapid's data ran out; every number is zero from here on
	exhausted bool

	gen                *rapid.Generator[model.Action] // one step
	slot, digit, eight *rapid.Generator[uint]
	bit                *rapid.Generator[uint]
	arg, end           *rapid.Generator[uint]
	slow               *rapid.Generator[uint]
	profile            *rapid.Generator[uint]
	ints               []*rapid.Generator[uint] // uniform: ints[n-1] draws from [0, n)
}

func newPicker(strat strategy, d *model.Design) *picker {
	p := &picker{strat: strat, d: d, info: learn(d)}
	for i := range strat.profiles {
		if pr := &strat.profiles[i]; (!pr.time || p.info.tickCompetes) && (!pr.planned || len(p.info.faultKinds) > 0) {
			p.profiles = append(p.profiles, pr)
		}
	}
	p.gen = rapid.Custom(p.draw)
	p.digit = rapid.UintRange(0, 3)
	p.slot = rapid.UintRange(0, slots-1)
	p.arg = rapid.UintRange(0, uint(p.info.maxArg))
	p.end = rapid.UintRange(0, uint(d.HorizonTicks+p.info.maxArg))
	p.eight = rapid.UintRange(0, 7)
	p.bit = rapid.UintRange(0, 1)
	p.profile = rapid.UintRange(0, uint(max(len(p.profiles), 1)-1))
	p.slow = rapid.UintRange(0, 1<<d.Clients-1)
	for _, g := range []interface{ String() string }{p.gen, p.slot, p.arg, p.end, p.digit, p.eight, p.bit, p.profile, p.slow} {
		_ = g.String() // fix the labels of rapid's groups, so that every step's group is alike
	}
	return p
}

// start begins a schedule: its profile, slow clients and plan are drawn
// (with no data left, the first profile, no slow client, no plan).
func (p *picker) start(t *rapid.T) {
	p.exhausted = false
	if p.strat.profiles == nil {
		return
	}
	p.prof = p.profiles[0]
	p.plan = plan{done: true}
	for i := 0; i < p.d.Clients; i++ {
		p.speed[i] = (i + 1) * normalSpeed
	}
	defer func() {
		if r := recover(); r != nil {
			if !outOfData(r) {
				panic(r)
			}
			p.exhausted = true
			p.prof, p.plan = p.profiles[0], plan{done: true}
			for i := 0; i < p.d.Clients; i++ {
				p.speed[i] = (i + 1) * normalSpeed
			}
		}
	}()
	if len(p.profiles) > 1 {
		p.prof = p.profiles[p.profile.Draw(t, "profile")]
	}
	slow := uint(0)
	if p.strat.speeds {
		slow = p.slow.Draw(t, "slow clients")
	}
	total := 0
	for i := 0; i < p.d.Clients; i++ {
		w := normalSpeed
		if slow&(1<<i) != 0 {
			w = slowSpeed
		}
		total += w
		p.speed[i] = total
	}
	p.plan = plan{done: true}
	if p.prof.planned {
		in := &p.info
		if p.bit.Draw(t, "plan: before") == 0 {
			p.plan = plan{
				trigger: in.stepKinds[int(p.eight.Draw(t, "plan: after"))%len(in.stepKinds)],
				nth:     max(int(p.digit.Draw(t, "plan: nth"))-1, 0), // the first one half the time
				fault:   in.faultKinds[int(p.eight.Draw(t, "plan: fault"))%len(in.faultKinds)],
				arg:     int(p.arg.Draw(t, "plan: arg")),
				target:  -1,
			}
		} else {
			fault := in.faultKinds[int(p.eight.Draw(t, "plan: fault"))%len(in.faultKinds)]
			p.plan = plan{
				before:  true,
				fault:   fault,
				trigger: in.before[fault][int(p.eight.Draw(t, "plan: before step"))%len(in.before[fault])],
				nth:     max(int(p.digit.Draw(t, "plan: nth"))-1, 0),
				arg:     int(p.arg.Draw(t, "plan: arg")),
				target:  -1,
			}
		}
	}
}

// observe follows the schedule, to arm the plan.
func (p *picker) observe(a model.Action) {
	pl := &p.plan
	if pl.done || pl.before || pl.target >= 0 || a.Kind != pl.trigger {
		return
	}
	if pl.seen == pl.nth {
		pl.target = int(a.Client)
	}
	pl.seen++
}

// pick draws the next action among en (never empty), enabled in s.
//
// When rapid's data runs out (the shrinker replays a shorter prefix of the
// data than the schedule needs), the schedule goes on as if every number
// after it were zero: each step is the lowest client's next step, or a
// tick. So the shrinker can delete a step even when the schedule then
// needs one more step at its end ("A read, tick, A pause until t=11, A
// write" can become "A pause until t=11, A read": two steps deleted, one
// default step at the end), where otherwise rapid would reject the
// shorter data as invalid.
func (p *picker) pick(t *rapid.T, s *model.State, en []model.Action) (a model.Action) {
	p.now, p.s = int(s.Now), s
	p.m.build(en)
	if p.exhausted {
		return p.zero()
	}
	defer func() {
		if r := recover(); r != nil {
			if !outOfData(r) {
				panic(r)
			}
			p.exhausted = true
			a = p.zero()
		}
	}()
	return p.gen.Draw(t, "action")
}

// drawArg draws the argument of an action of kind: nothing if the kind
// has none; for a client's pause or delay, the tick at which it ends, in
// absolute time (so that when the shrinker deletes steps before a pause,
// the pause still ends when it did, and is longer), as one number (so that
// the shrinker lowers it numerically: as digits it could not go from 8 to
// 6); else (a node) a number.
func (p *picker) drawArg(t *rapid.T, kind model.ActionKind) int {
	switch {
	case !p.info.argful[kind]:
		return 0
	case kinds[kind].byClient:
		return int(p.end.Draw(t, "ends at")) - p.now
	}
	return int(p.arg.Draw(t, "node"))
}

// nextClient is the first client at or after who, cyclically, with a group
// in category cat (and of kind, if kind >= 0), or -1.
func (p *picker) nextClient(cat category, kind, who int) int {
	best := -1
	for i := range p.m.groups {
		g := &p.m.groups[i]
		if g.cat != cat || (kind >= 0 && int(g.kind) != kind) {
			continue
		}
		if best < 0 || (best < who && g.client >= who) {
			best = g.client
		}
	}
	return best
}

// nth is the n-th group in category cat (of kind, if kind >= 0; of client,
// if client >= 0), or nil.
func (p *picker) nth(cat category, kind, client, n int) *group {
	for i := range p.m.groups {
		g := &p.m.groups[i]
		if g.cat != cat || (kind >= 0 && int(g.kind) != kind) || (client >= 0 && g.client != client) {
			continue
		}
		if n == 0 {
			return g
		}
		n--
	}
	return nil
}

// index draws a number from [0, n) with rapid's integer generator.
func (p *picker) index(t *rapid.T, n int, label string) int {
	for len(p.ints) < n {
		p.ints = append(p.ints, rapid.UintRange(0, uint(len(p.ints))))
	}
	return int(p.ints[n-1].Draw(t, label))
}

func (p *picker) draw(t *rapid.T) model.Action {
	if p.prof == nil {
		return p.m.en[p.index(t, len(p.m.en), "index")]
	}
	k := int(p.slot.Draw(t, "kind"))
	which := int(p.eight.Draw(t, "which"))
	w := int(p.eight.Draw(t, "who")) * p.speed[p.d.Clients-1] / whoSlots
	who := 0
	for who < p.d.Clients-1 && w >= p.speed[who] {
		who++
	}
	cat := catStep
	for c := category(0); c < numCats; c++ {
		if k < p.prof.share[c] {
			cat = c
			break
		}
		k -= p.prof.share[c]
	}
	kind, arg := -1, 0
	var list []model.ActionKind
	switch cat {
	case catWorld:
		list = p.info.worldKinds
	case catFault:
		list = p.info.faultKinds
	}
	if len(list) > 0 {
		kind = int(list[which%len(list)])
		arg = p.drawArg(t, model.ActionKind(kind))
	}
	return p.decode(cat, which, who, kind, arg)
}

// decode is the action the numbers drawn for a step name (kind: a fault's
// or world step's kind, or -1).
func (p *picker) decode(cat category, which, who, kind, arg int) model.Action {
	if a, ok := p.planned(); ok {
		return a
	}
	a := p.decodeDraw(cat, which, who, kind, arg)
	if f, ok := p.plannedBefore(a); ok {
		return f
	}
	return a
}

// decodeDraw is decode without the plan.
func (p *picker) decodeDraw(cat category, which, who, kind, arg int) model.Action {
	m := &p.m
	if cat == catTick {
		if g := p.nth(catTick, -1, -1, 0); g != nil {
			return m.en[g.from]
		}
	}
	if kind >= 0 {
		if a, ok := p.exact(model.ActionKind(kind), who, arg); ok {
			return a
		}
	}
	// a client's step: the client first (who, or the next one with a
	// step, cyclically), then which of its steps (main step, renewal)
	if c := p.nextClient(catStep, -1, who); c >= 0 {
		n := 0
		for i := range m.groups {
			if g := &m.groups[i]; g.cat == catStep && g.client == c {
				n++
			}
		}
		return m.en[p.nth(catStep, -1, c, which%n).from]
	}
	// no client can step: time moves, or else the world or a fault
	for c := catTick; c < numCats; c++ {
		if g := p.nth(c, -1, -1, 0); g != nil {
			return m.en[g.from]
		}
	}
	panic("no enabled action") // pick is never called with none
}

// zero is the step that numbers all zero name: the lowest client's next
// step, or else a tick.
func (p *picker) zero() model.Action {
	if p.prof == nil {
		return p.m.en[0]
	}
	return p.decode(catStep, 0, 0, -1, 0)
}

// outOfData reports whether r, recovered from a draw, is rapid saying that
// its data ran out (rapid.invalidData: "overrun", or a generator that could
// not find a value in the data left).
func outOfData(r any) bool {
	t := reflect.TypeOf(r)
	return t != nil && t.PkgPath() == "pgregory.net/rapid" && t.Name() == "invalidData"
}

// exact is the action of kind with argument arg (if the kind has one),
// by client who or, if who cannot take it, the next client that can
// (cyclically), if there is one. A draw that names a fault that is not
// enabled is a client's step instead: were it the nearest enabled fault,
// the numbers the shrinker leaves would name another fault once the steps
// before it change ("A pause 1" where it was "A crash").
func (p *picker) exact(kind model.ActionKind, who, arg int) (model.Action, bool) {
	best, bestClient := -1, -1
	for i := range p.m.groups {
		g := &p.m.groups[i]
		if g.kind != kind {
			continue
		}
		for j := g.from; j < g.to; j++ {
			if p.info.argful[kind] && int(p.m.en[j].Arg) != arg {
				continue
			}
			if best < 0 || (bestClient < who && g.client >= who) {
				best, bestClient = j, g.client
			}
			break
		}
	}
	if best < 0 {
		return model.Action{}, false
	}
	return p.m.en[best], true
}

// planned is an after-plan's fault, if it is armed and enabled now.
func (p *picker) planned() (model.Action, bool) {
	pl := &p.plan
	if pl.done || pl.before || pl.target < 0 {
		return model.Action{}, false
	}
	a, ok := p.faultFor(pl.fault, pl.target, pl.arg)
	pl.done = ok
	return a, ok
}

// plannedBefore is a before-plan's fault in place of a, the step about to
// be taken, if a is its (nth+1)-th counted step (plan).
func (p *picker) plannedBefore(a model.Action) (model.Action, bool) {
	pl := &p.plan
	if pl.done || !pl.before || a.Kind != pl.trigger {
		return model.Action{}, false
	}
	f, ok := p.faultFor(pl.fault, int(a.Client), pl.arg)
	if !ok {
		return model.Action{}, false
	}
	if _, ev := model.Step(p.d, *p.s, a); ev.Result == model.ResRefused {
		return model.Action{}, false
	}
	if pl.seen < pl.nth {
		pl.seen++
		return model.Action{}, false
	}
	pl.done = true
	return f, true
}

// faultFor is the enabled action of fault kind with argument arg (if the
// kind has one) that hits client, or for a fault of the world any such
// action.
func (p *picker) faultFor(kind model.ActionKind, client, arg int) (model.Action, bool) {
	for i := range p.m.groups {
		g := &p.m.groups[i]
		if g.kind != kind || (kinds[kind].byClient && g.client != client) {
			continue
		}
		for j := g.from; j < g.to; j++ {
			if !p.info.argful[kind] || int(p.m.en[j].Arg) == arg {
				return p.m.en[j], true
			}
		}
	}
	return model.Action{}, false
}
