package explore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"lockcheck/model"
)

// The fix search: the designs around a design (one changed axis value or
// parameter, then two), each checked exhaustively with the same bounds and
// the same fault budget, and those on which the chosen properties hold,
// nearest first (fewest changes, then cheapest).
//
// Neighbours are made from the design grammar: a change replaces one path
// part (lock/release/fence/storage) or sets one parameter in the design's
// canonical name, and model.ParseDesign judges the result; a name it refuses
// (release del on ZooKeeper, nodes on a single Redis) is skipped, not an
// error. The fault budget and the bounds (clients, horizon, pauses,
// max-pause, crashes, slow jobs, failovers, node crashes, clock jumps,
// delays) are never changed: a fix must hold against the same faults. The
// job (work, first token), the clock semantics and planted bugs are not
// design choices either.

// Change is one changed axis value or parameter.
type Change struct {
	Key  string // the axis or parameter: storage, ttl, …
	From string // its value in the design
	To   string // its value in the neighbour
	Cost int    // in cost units (see Fix); every change costs at least 1
	What string // what the change asks of the user, in a phrase
}

func (c Change) String() string { return c.Key + " " + c.From + " → " + c.To }

// Candidate is one neighbour and its verdicts.
type Candidate struct {
	Design  model.Design
	Changes []Change
	Cost    int      // sum of the changes' costs
	Results []Result // every property of model.Properties, in that order
	// Fixes are the always properties violated by the design that hold
	// here; Breaks are those the design satisfies and this one violates (or
	// leaves undecided). A neighbour with Breaks fixes nothing: a lost update
	// prevented by clients that never get the lock is no fix.
	Fixes  []string
	Breaks []string
	// Holds: every chosen property holds, nothing breaks, and the jobs can
	// all finish (all-done is seen), so the verdict is not vacuous.
	Holds bool
	// Stopped: the search of this neighbour stopped once it broke every
	// property its design breaks (Config.StopWhenViolated), as it then
	// fixes nothing; its other verdicts are incomplete and not judged.
	Stopped bool
	// Vacuous are the properties of Fixes that hold here only vacuously
	// (Result.Vacuous: no lock expired or was lost while held, as when a
	// longer TTL outlasts every fault of the budget). Such a fix says
	// nothing about the design, only that the faults no longer hurt it: it
	// is listed after those put to the test.
	Vacuous []string
	// Grown is how many ticks the faults of the budget grew for this
	// neighbour: a longer TTL (ZooKeeper: session) is checked against
	// faults that outlast it by as much as they outlasted the old one
	// (model.GrowBudget), as no real pause is bounded by the TTL.
	Grown int
	// DataSafe: every data-safety property (model.DataSafety) the design
	// violates holds here, put to the test, nothing the design kept
	// breaks and every job can finish; the lock itself may still break.
	DataSafe bool
}

// Real reports whether c is a fix put to the test: every chosen property
// holds, none of the fixed ones only vacuously.
func (c *Candidate) Real() bool { return c.Holds && len(c.Vacuous) == 0 }

// Protection is what c's changes protect, the first rank of the fixes:
// the storage refusing a late write (ProtectStorage) before a client's
// own check (ProtectCheck), before other changes to the lock
// (ProtectLock), before a longer lease (ProtectLease).
func (c *Candidate) Protection() Protection {
	best := ProtectLease
	for _, ch := range c.Changes {
		best = min(best, protectionOf(ch))
	}
	return best
}

// Protection ranks what a change protects.
type Protection uint8

const (
	// ProtectStorage: the storage refuses the late write (a fencing token
	// it checks, a compare-and-set, the database's own transaction).
	ProtectStorage Protection = iota
	// ProtectCheck: the client checks its lock's validity before acting.
	ProtectCheck
	// ProtectLock: another way to take, hold or release the lock.
	ProtectLock
	// ProtectLease: a longer or renewed lease (ttl, session, renew,
	// watchdog): no lease outlasts a pause that is longer than it.
	ProtectLease
)

func (p Protection) String() string {
	switch p {
	case ProtectStorage:
		return "storage-side protection"
	case ProtectCheck:
		return "a client-side check"
	case ProtectLock:
		return "a change to the lock"
	}
	return "a longer or renewed lease"
}

func protectionOf(ch Change) Protection {
	switch ch.Key {
	case "storage", "fence", "counter", "tx":
		return ProtectStorage
	case "fence-check":
		if ch.To == "atomic" {
			return ProtectStorage // the storage checks the token at the write itself
		}
	case "lock":
		if ch.To == "db" {
			return ProtectStorage // the work runs in the database's own transaction
		}
	case "level":
		if ch.To == "xact" {
			return ProtectStorage // the write runs in the advisory lock's own transaction
		}
	case "check":
		if ch.To == "validity" || ch.To == "acquire" {
			return ProtectCheck
		}
	case "renew-fail":
		if ch.To == "stop" {
			return ProtectCheck // the worker checks what its watchdog learnt
		}
	case "ttl", "session", "renew", "watchdog":
		return ProtectLease
	}
	return ProtectLock
}

// Vacuity is why the fixed property holds only vacuously here, "" if it
// was put to the test.
func (c *Candidate) Vacuity(property string) string {
	if r, ok := c.Result(property); ok && r.Status == Holds {
		return r.Vacuous
	}
	return ""
}

// Name is the neighbour's design name.
func (c *Candidate) Name() string { return c.Design.Name() }

// ChangesText is the changes joined: "storage plain → cas, ttl 10 → 20".
func (c *Candidate) ChangesText() string {
	var out []string
	for _, ch := range c.Changes {
		out = append(out, ch.String())
	}
	return strings.Join(out, ", ")
}

// Result finds a property's verdict.
func (c *Candidate) Result(name string) (Result, bool) {
	for _, r := range c.Results {
		if r.Property == name {
			return r, true
		}
	}
	return Result{}, false
}

// FixConfig is one fix search.
type FixConfig struct {
	Design     model.Design
	Properties []model.Property // always properties to make hold; nil = every always property
	Bounds     Bounds           // for the design and every neighbour
	// MaxChanges is how far to look: 1 or 2 (0 = 2). The search stops at
	// the first distance where every chosen property has a fix, unless All
	// is set.
	MaxChanges int
	All        bool
	// NeighbourStates caps each neighbour's search (0 = 2× the design's
	// own distinct states, at least 200,000): a neighbour that reaches it
	// is left undecided, never suggested.
	NeighbourStates int
	Progress        func(FixProgress) // called after each neighbour; may be nil
	// Context stops the search when done (nil: never): no further
	// neighbour is started, those running stop within a work unit, and Fix
	// returns an error that wraps the context's error (no partial report:
	// a fix is a verdict over every neighbour of a distance).
	Context context.Context
}

// FixProgress is how far a fix search has come.
type FixProgress struct {
	Distance, Done, Total int
	Seconds               float64
}

// rankFixes orders fixes: those put to the test first (a candidate on
// which property, or any fixed property if "", holds only vacuously goes
// last), then by what they protect (Candidate.Protection: the storage
// first, a longer lease last), then fewest changes, cheapest, by name.
func rankFixes(cs []Candidate, property string) []Candidate {
	vacuous := func(c *Candidate) bool {
		if property == "" {
			return len(c.Vacuous) > 0
		}
		return c.Vacuity(property) != ""
	}
	out := append([]Candidate(nil), cs...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if va, vb := vacuous(a), vacuous(b); va != vb {
			return vb
		}
		if pa, pb := a.Protection(), b.Protection(); pa != pb {
			return pa < pb
		}
		return less(a, b)
	})
	return out
}

// FixReport is the outcome of Fix.
type FixReport struct {
	Design     model.Design
	Properties []string // the chosen always properties
	Original   *Report  // the design's own search
	Violated   []string // chosen properties the design violates
	// Checked are every valid neighbour searched, nearest first (changes,
	// cost, name). Fixes are those on which every chosen property holds,
	// put to the test (Candidate.Real), storage-side protection first
	// (rankFixes); Vacuous are those on which a fixed property holds only
	// vacuously (no fault of the budget reached it): never a fix.
	Checked []Candidate
	Fixes   []Candidate
	Vacuous []Candidate
	// DataSafe are the neighbours, not among Fixes, on which the data stays
	// safe though the lock may not (Candidate.DataSafe), ranked as Fixes;
	// empty when the design violates no data-safety property. Here and in
	// Fixes and Vacuous, two changes of which one alone is already a fix
	// (or, for DataSafe, data-safe) are left out: the other is not needed.
	DataSafe []Candidate
	// Leases are the neighbours that change only the lease, by one change
	// (ttl, session, renew, watchdog), nearest first, each checked against faults grown
	// with it (Candidate.Grown); Ungrown are the lease changes not judged,
	// as a fault of the budget could not grow past model.MaxWaitTicks.
	Leases  []Candidate
	Ungrown []string
	// Per property violated by the design: the neighbours on which it
	// holds (all-done seen), ranked as Fixes, those on which it holds only
	// vacuously last.
	PerProperty map[string][]Candidate
	Distance    int // the most changes searched (0: the design is safe)
	Skipped     int // neighbour names the grammar refused, and changes that cannot act (restart without node crashes)
	Undecided   int // neighbours whose search reached NeighbourStates
	// NeighbourStates is the cap each neighbour's search had.
	NeighbourStates int
	Seconds         float64
}

// Safe reports whether the design itself already satisfies every chosen
// property.
func (r *FixReport) Safe() bool { return len(r.Violated) == 0 }

// VacuouslySafe reports whether the design satisfies every chosen
// property, some only vacuously: nothing to fix, and nothing tested.
func (r *FixReport) VacuouslySafe() bool {
	if !r.Safe() {
		return false
	}
	for _, p := range r.Properties {
		if res, ok := r.Original.Result(p); ok && res.Vacuous != "" {
			return true
		}
	}
	return false
}

// ViolatedOf are the chosen properties the design violates that protect c.
func (r *FixReport) ViolatedOf(c model.Class) []string {
	var out []string
	for _, p := range r.Violated {
		if model.ClassOf(p) == c {
			out = append(out, p)
		}
	}
	return out
}

// LockKept reports whether some neighbour keeps every lock-safety property
// the design violates, put to the test (every other property apart).
func (r *FixReport) LockKept() bool {
	lock := r.ViolatedOf(model.LockSafety)
	for i := range r.Checked {
		c := &r.Checked[i]
		if c.Stopped || len(c.Breaks) > 0 || !allDone(c) {
			continue
		}
		ok := true
		for _, p := range lock {
			if res, found := c.Result(p); !found || res.Status != Holds || res.Vacuous != "" {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// witness is the sometimes property a fix must show: the jobs can finish.
const witness = "all-done"

// Fix searches the neighbours of cfg.Design.
func Fix(cfg FixConfig) (*FixReport, error) {
	start := time.Now()
	d := cfg.Design
	if err := d.Validate(); err != nil {
		return nil, err
	}
	props := cfg.Properties
	if props == nil {
		for _, p := range model.Properties {
			if p.Expect == model.Always {
				props = append(props, p)
			}
		}
	}
	if len(props) == 0 {
		return nil, errors.New("no property to fix")
	}
	for _, p := range props {
		if p.Expect != model.Always {
			return nil, fmt.Errorf("property %s is a sometimes property: a fix makes always properties hold (allowed: %s)", p.Name, strings.Join(alwaysNames(), ", "))
		}
	}
	maxChanges := cfg.MaxChanges
	if maxChanges == 0 {
		maxChanges = 2
	}
	if maxChanges < 1 || maxChanges > 2 {
		return nil, fmt.Errorf("changes %d: want 1 or 2", maxChanges)
	}
	checked := model.Properties
	ctx := cfg.Context
	if ctx == nil {
		ctx = context.Background()
	}
	orig, err := Check(Config{Design: d, Properties: checked, Bounds: cfg.Bounds, Context: ctx})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("during the search of %s itself: %w", d.Name(), err)
	}
	rep := &FixReport{Design: d, Original: orig, PerProperty: map[string][]Candidate{}}
	for _, p := range props {
		rep.Properties = append(rep.Properties, p.Name)
	}
	chosen := map[string]bool{}
	for _, p := range props {
		chosen[p.Name] = true
	}
	var held []string // always properties the design satisfies
	for _, r := range orig.Results {
		switch {
		case r.Status == Incomplete:
			return nil, fmt.Errorf("the search of %s itself is incomplete within the bounds: raise them first", d.Name())
		case r.Status == Violated && chosen[r.Property]:
			rep.Violated = append(rep.Violated, r.Property)
		case r.Status == Holds:
			held = append(held, r.Property)
		}
	}
	if rep.Safe() {
		rep.Seconds = time.Since(start).Seconds()
		return rep, nil
	}
	limit := cfg.NeighbourStates
	if limit == 0 {
		limit = int(min(max(2*orig.Stats.Distinct, 200_000), maxIDs))
	}
	rep.NeighbourStates = limit
	nb := cfg.Bounds
	nb.MaxStates = limit
	nb.Workers = 1 // neighbours run side by side instead
	seen := map[string]bool{d.Name(): true}
	need := map[string]bool{}
	for _, v := range rep.Violated {
		need[v] = true
	}
	data := rep.ViolatedOf(model.DataSafety)
	for dist := 1; dist <= maxChanges; dist++ {
		cands, skipped, ungrown := neighbours(d, dist, seen)
		rep.Skipped += skipped
		rep.Ungrown = append(rep.Ungrown, ungrown...)
		rep.Distance = dist
		finished := 0
		checkAll(ctx, cands, checked, nb, rep.Violated, func(done int) {
			finished = done
			if cfg.Progress != nil {
				cfg.Progress(FixProgress{Distance: dist, Done: done, Total: len(cands), Seconds: time.Since(start).Seconds()})
			}
		})
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%d of %d neighbours %d change(s) away searched: %w", finished, len(cands), dist, err)
		}
		sortCandidates(cands)
		for i := range cands {
			c := &cands[i]
			judge(c, rep.Violated, held, data)
			if c.Undecided() {
				rep.Undecided++
			}
			rep.Checked = append(rep.Checked, *c)
			switch {
			case c.Real():
				rep.Fixes = append(rep.Fixes, *c)
			case c.Holds:
				rep.Vacuous = append(rep.Vacuous, *c)
			case c.DataSafe:
				rep.DataSafe = append(rep.DataSafe, *c)
			}
			if c.Protection() == ProtectLease && len(c.Changes) == 1 {
				rep.Leases = append(rep.Leases, *c)
			}
			if allDone(c) && len(c.Breaks) == 0 {
				for _, f := range c.Fixes {
					rep.PerProperty[f] = append(rep.PerProperty[f], *c)
					if c.Vacuity(f) == "" {
						delete(need, f)
					}
				}
			}
		}
		if !cfg.All && len(rep.Fixes) > 0 && len(need) == 0 {
			break
		}
	}
	rep.Fixes = rankFixes(rep.Fixes, "")
	fixed := singles(rep.Fixes)
	rep.DataSafe = rankFixes(undominated(rep.DataSafe, fixed, singles(rep.DataSafe)), "")
	rep.Vacuous = undominated(rep.Vacuous, fixed)
	rep.Fixes = undominated(rep.Fixes, fixed)
	for p, cs := range rep.PerProperty {
		rep.PerProperty[p] = rankFixes(cs, p)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// singles are the changes that are, alone, one of cs.
func singles(cs []Candidate) map[string]bool {
	out := map[string]bool{}
	for _, c := range cs {
		if len(c.Changes) == 1 {
			out[c.Changes[0].String()] = true
		}
	}
	return out
}

// undominated drops the candidates of two changes of which one alone is
// already in one of the sets: the other change is not needed for it.
func undominated(cs []Candidate, sets ...map[string]bool) []Candidate {
	out := cs[:0:0]
	for _, c := range cs {
		dominated := false
		if len(c.Changes) > 1 {
			for _, ch := range c.Changes {
				for _, set := range sets {
					dominated = dominated || set[ch.String()]
				}
			}
		}
		if !dominated {
			out = append(out, c)
		}
	}
	return out
}

func alwaysNames() []string {
	var out []string
	for _, p := range model.Properties {
		if p.Expect == model.Always {
			out = append(out, p.Name)
		}
	}
	return out
}

// checkAll searches every candidate, GOMAXPROCS at a time; the results do
// not depend on the order they finish in. A candidate's search stops once
// every property of stop is violated (Candidate.Stopped).
// When ctx is done, no further candidate is started and those running stop.
func checkAll(ctx context.Context, cands []Candidate, props []model.Property, b Bounds, stop []string, progress func(done int)) {
	var next, done atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cands) || ctx.Err() != nil {
					return
				}
				rep, err := Check(Config{Design: cands[i].Design, Properties: props, Bounds: b, StopWhenViolated: stop, Context: ctx})
				if err != nil { // cannot happen: the design was validated
					panic(fmt.Sprintf("explore: fix: %s: %v", cands[i].Name(), err))
				}
				cands[i].Results = rep.Results
				cands[i].Stopped = rep.Stats.StoppedBy == "all-violated"
				n := int(done.Add(1))
				mu.Lock()
				progress(n)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// judge fills Fixes, Breaks, Holds and DataSafe from the results; data
// are the data-safety properties among violated.
func judge(c *Candidate, violated, held, data []string) {
	if c.Stopped {
		return // it breaks every violated property: no fix
	}
	for _, v := range violated {
		if r, ok := c.Result(v); ok && r.Status == Holds {
			c.Fixes = append(c.Fixes, v)
			if r.Vacuous != "" {
				c.Vacuous = append(c.Vacuous, v)
			}
		}
	}
	for _, h := range held {
		if r, ok := c.Result(h); ok && r.Status != Holds {
			c.Breaks = append(c.Breaks, h)
		}
	}
	c.Holds = allDone(c) && len(c.Breaks) == 0 && len(c.Fixes) == len(violated)
	c.DataSafe = len(data) > 0 && allDone(c) && len(c.Breaks) == 0
	for _, p := range data {
		if r, ok := c.Result(p); !ok || r.Status != Holds || r.Vacuous != "" {
			c.DataSafe = false
		}
	}
}

func allDone(c *Candidate) bool {
	r, ok := c.Result(witness)
	return ok && r.Status == Seen
}

// Undecided reports whether a bound (the state cap) left a verdict of c
// open.
func (c *Candidate) Undecided() bool {
	if c.Stopped {
		return false
	}
	for _, r := range c.Results {
		if r.Status == Incomplete {
			return true
		}
	}
	return false
}

func sortCandidates(cs []Candidate) {
	sort.SliceStable(cs, func(i, j int) bool { return less(&cs[i], &cs[j]) })
}

// less is the nearest-first order: fewest changes, cheapest, by name.
func less(a, b *Candidate) bool {
	if len(a.Changes) != len(b.Changes) {
		return len(a.Changes) < len(b.Changes)
	}
	if a.Cost != b.Cost {
		return a.Cost < b.Cost
	}
	return a.Name() < b.Name()
}

// Neighbours are the valid designs exactly dist changes (1 or 2) from d,
// nearest first, each with its cheapest list of changes; skipped counts
// the names the grammar refused.
func Neighbours(d model.Design, dist int) (cands []Candidate, skipped int) {
	cands, skipped, _ = neighbours(d, dist, map[string]bool{d.Name(): true})
	return cands, skipped
}

// neighbours lists the designs dist changes from d whose names are not in
// seen (and adds them); ungrown are the changes whose faults could not
// grow with the lease (model.GrowBudget), not judged.
func neighbours(d model.Design, dist int, seen map[string]bool) ([]Candidate, int, []string) {
	singles := changes(d)
	best := map[string]*Candidate{}
	var order []string
	var ungrown []string
	skipped := 0
	try := func(chs []Change) {
		n, grown, err := apply(d, chs)
		if err == errUngrown {
			if len(chs) == 1 {
				ungrown = append(ungrown, chs[0].String())
			}
			skipped++
			return
		}
		if err != nil || inert(&n, chs) {
			skipped++
			return
		}
		name := n.Name()
		if seen[name] {
			return
		}
		cost := 0
		for _, c := range chs {
			cost += c.Cost
		}
		if c, ok := best[name]; ok {
			if cost < c.Cost {
				c.Changes, c.Cost = chs, cost
			}
			return
		}
		best[name] = &Candidate{Design: n, Changes: chs, Cost: cost, Grown: grown}
		order = append(order, name)
	}
	switch dist {
	case 1:
		for _, c := range singles {
			try([]Change{c})
		}
	case 2:
		for i, a := range singles {
			for _, b := range singles[i+1:] {
				if a.Key != b.Key {
					try([]Change{a, b})
				}
			}
		}
	}
	out := make([]Candidate, 0, len(order))
	for _, name := range order {
		seen[name] = true
		out = append(out, *best[name])
	}
	sortCandidates(out)
	return out, skipped, ungrown
}

// inert reports whether a change cannot act on n at all, so that n
// behaves exactly as without it: a restart delay or persistence without
// node crashes in the fault budget, a drift allowance that nothing
// subtracts (neither Redlock nor check=validity), a token-checking storage
// that is sent no token (fence=none: every request carries token 0, which
// max-token, max-write and cond-update accept without recording, as plain
// storage does), a token sent to a plain storage, which ignores it.
func inert(n *model.Design, chs []Change) bool {
	for _, c := range chs {
		switch c.Key {
		case "storage":
			if n.Fence == model.FenceNone && n.Storage != model.StorageCAS && (c.From == "plain" || c.From == "max-token" || c.From == "max-write" || c.From == "cond-update") {
				return true
			}
		case "fence":
			if n.Storage == model.StoragePlain && n.Counter != model.CounterExternal {
				return true // a plain storage ignores every token
			}
		case "restart":
			if n.NodeCrashes == 0 {
				return true
			}
		case "persist": // rejoin=K: a second failure with no replica up restarts the primary
			if n.NodeCrashes == 0 && n.RejoinTicks == 0 {
				return true
			}
		case "rejoin":
			if n.Lock != model.LockReplica || n.Failovers == 0 {
				return true
			}
		case "drift":
			if n.Lock != model.LockRedlock && n.Check == model.CheckTrust {
				return true
			}
		}
	}
	return false
}

// errUngrown: a lease change whose faults cannot grow with it.
var errUngrown = errors.New("the faults cannot grow with the lease")

// apply writes the changes into d's canonical name and parses it back,
// with d's fault budget, grown by as many ticks as the lock now lives
// longer (grown; model.GrowBudget).
func apply(d model.Design, chs []Change) (n model.Design, grown int, err error) {
	parts := strings.Split(d.Name(), ",")
	segs := strings.Split(parts[0], "/")
	params := parts[1:]
	for _, c := range chs {
		if i := segIndex(c.Key); i >= 0 {
			segs[i] = c.To
			continue
		}
		kept := params[:0:0]
		for _, p := range params {
			if !strings.HasPrefix(p, c.Key+"=") {
				kept = append(kept, p)
			}
		}
		params = append(kept, c.Key+"="+c.To)
	}
	n, err = model.ParseDesign(strings.Join(append([]string{strings.Join(segs, "/")}, params...), ","))
	if err != nil {
		return n, 0, err
	}
	// a longer TTL would re-derive the fault lengths and the horizon: the
	// neighbour keeps d's, then grows them by as much as the lock now
	// lives longer, so that each fault outlasts the new lease as it
	// outlasted the old (a longer TTL checked against the same pause holds
	// only because the pause stayed short)
	keys := map[string]bool{}
	for _, c := range chs {
		keys[c.Key] = true
	}
	model.KeepBudget(&n, &d, keys)
	grown, ok := model.GrowBudget(&n, &d)
	if !ok {
		return n, 0, errUngrown
	}
	if n.Watchdog == model.WatchdogSidecar && d.Watchdog != model.WatchdogSidecar && n.Crashes == 0 {
		// a renewer outside the worker's process outlives the worker's
		// pauses, and its crashes too: it is judged against the fault
		// that defeats it, a worker that crashes while its sidecar keeps
		// renewing (the lock is never freed), as a longer TTL is judged
		// against a pause that outlasts it
		n.Crashes = 1
		grown = max(grown, 0)
	}
	if err := n.Validate(); err != nil {
		return n, 0, err
	}
	return n, grown, nil
}

func segIndex(key string) int {
	for i, k := range []string{"lock", "release", "fence", "storage"} {
		if k == key {
			return i
		}
	}
	return -1
}

// knob is one axis or parameter a fix may change.
type knob struct {
	key string
	cur func(d *model.Design) string
	// values are the candidate values other than the current one
	values func(d *model.Design) []string
	cost   func(d *model.Design, from, to string) (int, string)
}

// words lists an axis's values: mk(i).String() for i = 0, 1, … until the
// type prints as out of range ("lock(6)").
func words[T fmt.Stringer](mk func(int) T) []string {
	var out []string
	for i := 0; i < 64; i++ {
		s := mk(i).String()
		if strings.HasSuffix(s, ")") && strings.Contains(s, "(") {
			break
		}
		out = append(out, s)
	}
	return out
}

func wordKnob(key string, all []string, cur func(d *model.Design) string, cost func(d *model.Design, from, to string) (int, string)) knob {
	return knob{key: key, cur: cur, values: func(d *model.Design) []string {
		var out []string
		c := cur(d)
		for _, v := range all {
			if v != c {
				out = append(out, v)
			}
		}
		return out
	}, cost: cost}
}

func intKnob(key string, field func(d *model.Design) *int, ladder func(cur int, d *model.Design) []int, cost func(d *model.Design, from, to int) (int, string)) knob {
	return knob{key: key,
		cur: func(d *model.Design) string { return strconv.Itoa(*field(d)) },
		values: func(d *model.Design) []string {
			c := *field(d)
			vals := ladder(c, d)
			sort.Ints(vals)
			var out []string
			last := -1
			for _, v := range vals {
				if v != c && v != last && v >= 0 && v <= model.MaxWaitTicks {
					out = append(out, strconv.Itoa(v))
					last = v
				}
			}
			return out
		},
		cost: func(d *model.Design, from, to string) (int, string) {
			f, _ := strconv.Atoi(from)
			t, _ := strconv.Atoi(to)
			return cost(d, f, t)
		}}
}

// knobs are what a fix may change, with what each change costs. Costs are
// a ranking in small whole units, not a measurement: 1 for a change in the
// client's code (another release or acquire, an extra check), 2 to 3 for
// what another component must do (a storage that checks tokens, a request
// on every write, every node answering, fsync), more for another lock
// service; a longer TTL costs more the longer it gets.
var knobs = []knob{
	wordKnob("lock", words(func(i int) model.LockKind { return model.LockKind(i) }),
		func(d *model.Design) string { return d.Lock.String() },
		func(d *model.Design, from, to string) (int, string) {
			return 6, "move to another lock service (" + to + "): another system to run"
		}),
	wordKnob("release", words(func(i int) model.ReleaseMode { return model.ReleaseMode(i) }),
		func(d *model.Design) string { return d.Release.String() },
		func(d *model.Design, from, to string) (int, string) {
			switch {
			case d.Lock == model.LockEtcdMutex && to == "cad":
				return 1, "delete the key in a transaction fenced on its create revision (If CreateRevision = its revision, Mutex.IsOwner's compare)"
			case d.Lock == model.LockEtcdMutex:
				return 1, "delete the key by its name (Mutex.Unlock)"
			}
			switch to {
			case "cad":
				return 1, "release with the atomic check-and-delete script"
			case "get-del":
				return 1, "release with GET, then DEL if the key is ours (two requests)"
			}
			return 1, "release with a plain DEL"
		}),
	wordKnob("fence", words(func(i int) model.FenceMode { return model.FenceMode(i) }),
		func(d *model.Design) string { return d.Fence.String() },
		func(d *model.Design, from, to string) (int, string) {
			switch to {
			case "write":
				return 2, "send the fencing token with every write"
			case "rw":
				return 2, "send the fencing token with every read and write"
			}
			return 1, "send no fencing token"
		}),
	wordKnob("storage", words(func(i int) model.StorageMode { return model.StorageMode(i) }),
		func(d *model.Design) string { return d.Storage.String() },
		func(d *model.Design, from, to string) (int, string) {
			switch to {
			case "max-token":
				return 3, "a storage that checks tokens: it refuses one below the highest it has seen, reads included"
			case "max-write":
				return 3, "a storage that checks tokens: it refuses one below the highest accepted write's"
			case "cond-update":
				return 3, "a storage that writes only with a strictly greater token (UPDATE … WHERE last_token < t)"
			case "cas":
				return 3, "a storage with a version column: a write fails if the row changed since the read (the job must retry)"
			}
			return 1, "a storage that checks nothing"
		}),
	wordKnob("acquire", words(func(i int) model.AcquireMode { return model.AcquireMode(i) }),
		func(d *model.Design) string { return d.Acquire.String() },
		func(d *model.Design, from, to string) (int, string) {
			switch to {
			case "script":
				return 1, "take the lock and its token in one script"
			case "set-expire":
				return 1, "SET NX, then EXPIRE as a second request"
			}
			return 1, "take the token in a second request (" + to + ")"
		}),
	wordKnob("quorum", words(func(i int) model.Quorum { return model.Quorum(i) }),
		func(d *model.Design) string { return d.Quorum.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "all" {
				return 2, "win every node: one node down stops every client"
			}
			return 1, "win a majority of the nodes"
		}),
	wordKnob("check", words(func(i int) model.CheckMode { return model.CheckMode(i) }),
		func(d *model.Design) string { return d.Check.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "validity" {
				return 1, "check the lock's remaining validity before each read and write (an extra step each)"
			}
			if to == "acquire" {
				return 1, "check the validity once, when the acquire's reply comes, measured from its send (redsync)"
			}
			return 1, "trust the acquire reply until the release"
		}),
	wordKnob("wait", words(func(i int) model.WaitMode { return model.WaitMode(i) }),
		func(d *model.Design) string { return d.Wait.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "poll" {
				return 1, "retry SET NX every tick instead of waiting for a notice"
			}
			return 1, "wait for a release notice (pub/sub)"
		}),
	wordKnob("tx", words(func(i int) model.TxMode { return model.TxMode(i) }),
		func(d *model.Design) string { return d.Tx.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "inside" {
				return 1, "do the work inside the lock's transaction"
			}
			return 1, "do the work on another connection"
		}),
	wordKnob("reenter", words(func(i int) model.ReenterMode { return model.ReenterMode(i) }),
		func(d *model.Design) string { return d.Reenter.String() },
		func(d *model.Design, from, to string) (int, string) {
			switch to {
			case "owner":
				return 1, "make the lock reentrant (a nested acquire by the owner succeeds)"
			case "none":
				return 1, "take the lock once: no nested acquire"
			}
			return 1, "a nested plain SET NX"
		}),
	wordKnob("watchdog", words(func(i int) model.WatchdogMode { return model.WatchdogMode(i) }),
		func(d *model.Design) string { return d.Watchdog.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "thread" {
				return 1, "renew in a thread of its own (it outlives a hung worker: that lock is never freed)"
			}
			if to == "session" {
				return 1, "renew with the session's keep-alive (etcd's concurrency.Session: the key's lease is renewed while the acquire's reply is still held too)"
			}
			if to == "sidecar" {
				return 1, "renew in a sidecar process (it renews through the worker's pauses; a crashed or hung worker's lock is never freed, so it is checked against a worker crash too)"
			}
			return 1, "renew in the worker (it stops when the worker hangs)"
		}),
	wordKnob("extend", words(func(i int) model.ExtendMode { return model.ExtendMode(i) }),
		func(d *model.Design) string { return d.Extend.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "check" {
				return 1, "renew only a key that is still the client's own (drop WithSetNXOnExtend)"
			}
			return 1, "set a missing key again on renewal (redsync's WithSetNXOnExtend)"
		}),
	wordKnob("watchdog-stop", words(func(i int) model.WatchdogStop { return model.WatchdogStop(i) }),
		func(d *model.Design) string { return d.WatchdogStop.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "before-unlock" {
				return 1, "stop the watchdog before sending the unlock"
			}
			return 1, "stop the watchdog after the unlock (a renewal may follow the release)"
		}),
	wordKnob("renew-fail", words(func(i int) model.RenewFailMode { return model.RenewFailMode(i) }),
		func(d *model.Design) string { return d.RenewFail.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "stop" {
				return 1, "stop the worker when its renewal fails (it gives the job up before its next read or write)"
			}
			return 1, "let the worker go on after a failed renewal"
		}),
	// a client that forgets a release that got no answer is never a fix:
	// the knob only goes back to retrying
	{key: "release-fail", cur: func(d *model.Design) string { return d.ReleaseFail.String() },
		values: func(d *model.Design) []string {
			if d.ReleaseFail == model.ReleaseFailForget {
				return []string{model.ReleaseFailRetry.String()}
			}
			return nil
		},
		cost: func(d *model.Design, from, to string) (int, string) {
			return 1, "send a release that got no answer again until it is answered (keep the lock value until then)"
		}},
	wordKnob("value", words(func(i int) model.ValueMode { return model.ValueMode(i) }),
		func(d *model.Design) string { return d.Value.String() },
		func(d *model.Design, from, to string) (int, string) {
			switch to {
			case "job":
				return 1, "write a fresh lock value for each job: a late release of one job cannot match the next"
			case "acquire":
				return 1, "write a fresh lock value for each acquire attempt: a failed attempt's late release cannot match the retry's lock"
			}
			return 1, "one lock value per process: every job of a client writes the same"
		}),
	wordKnob("abandon", words(func(i int) model.AbandonMode { return model.AbandonMode(i) }),
		func(d *model.Design) string { return d.Abandon.String() },
		func(d *model.Design, from, to string) (int, string) {
			switch to {
			case "none":
				return 1, "wait for the acquire's reply instead of abandoning it at a deadline (a late SET NX then has a caller that reads it)"
			case "retry":
				return 1, "try the lock again when an acquire is abandoned at its deadline"
			}
			return 1, "give the job up when an acquire is abandoned at its deadline"
		}),
	wordKnob("counter", words(func(i int) model.CounterMode { return model.CounterMode(i) }),
		func(d *model.Design) string { return d.Counter.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "external" {
				return 2, "take the fencing token from a separate counter node (one more request per acquire, one more server to run)"
			}
			return 1, "no separate fencing counter"
		}),
	wordKnob("ack", words(func(i int) model.AckMode { return model.AckMode(i) }),
		func(d *model.Design) string { return d.Ack.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "wait" {
				return 2, "WAIT for the replica before the acquire returns (one more round trip per acquire; it blocks while the replica lags, and may return after the TTL)"
			}
			return 1, "return from the acquire without waiting for the replica"
		}),
	wordKnob("promote", words(func(i int) model.PromoteMode { return model.PromoteMode(i) }),
		func(d *model.Design) string { return d.Promote.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "freshest" {
				return 1, "give every replica the same replica-priority and keep them monitored, so that Sentinel promotes the one with the highest replication offset"
			}
			return 1, "let Sentinel promote any replica (a replica-priority that prefers another)"
		}),
	wordKnob("storage-loses", words(func(i int) model.StorageLoss { return model.StorageLoss(i) }),
		func(d *model.Design) string { return d.StorageLoses.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "fence" {
				return 2, "replicate the counter's row synchronously, the token check's state apart and asynchronously"
			}
			return 1, "replicate the token check's state with the counter's row, asynchronously (a failover loses recent writes and tokens alike)"
		}),
	wordKnob("fence-check", words(func(i int) model.FenceCheck { return model.FenceCheck(i) }),
		func(d *model.Design) string { return d.FenceCheck.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "atomic" {
				return 1, "check the token and write in one step (one Lua script, one UPDATE … WHERE): no write lands between the check and the write"
			}
			return 1, "check the token in one request and write in a second (SELECT max_token, then an unconditional UPDATE)"
		}),
	wordKnob("session-check", words(func(i int) model.SessionCheck { return model.SessionCheck(i) }),
		func(d *model.Design) string { return d.SessionCheck.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "get" {
				return 1, "Get its own key once waitDeletes returns (Mutex.Lock): a session that expired in the queue gets ErrSessionExpired"
			}
			return 1, "take waitDeletes' return as the lock, without the Get"
		}),
	wordKnob("duration", words(func(i int) model.LeaseDuration { return model.LeaseDuration(i) }),
		func(d *model.Design) string { return d.Duration.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "record" {
				return 1, "judge the Lease's expiry by the duration its holder wrote in the record (client-go v0.31)"
			}
			return 1, "judge the Lease's expiry by the candidate's own configured duration (client-go v0.20)"
		}),
	wordKnob("level", words(func(i int) model.AdvisoryLevel { return model.AdvisoryLevel(i) }),
		func(d *model.Design) string { return d.Level.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "xact" {
				return 1, "take a transaction-level lock (BEGIN; pg_advisory_xact_lock) and write inside its transaction: COMMIT fails if the session was killed"
			}
			return 1, "take a session-level lock (pg_try_advisory_lock), the work on another connection"
		}),
	wordKnob("end", words(func(i int) model.SessionEnd { return model.SessionEnd(i) }),
		func(d *model.Design) string { return d.End.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "keepalive" {
				return 1, "end a session only when TCP keepalive finds its client gone (idle_session_timeout off; tcp_keepalives_* on the server)"
			}
			return 1, "end a session idle for the TTL (idle_session_timeout)"
		}),
	wordKnob("protect", words(func(i int) model.Protect { return model.Protect(i) }),
		func(d *model.Design) string { return d.Protect.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "yes" {
				return 1, "create the lock node in protected mode (a GUID in its name: Curator's withProtection, go-zookeeper's Lock), so that a retry after a lost reply finds it again"
			}
			return 1, "create the lock node plainly, and again when a reply is lost"
		}),
	wordKnob("behavior", words(func(i int) model.ConsulBehavior { return model.ConsulBehavior(i) }),
		func(d *model.Design) string { return d.Behavior.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "release" {
				return 1, "create the session with Behavior release: an invalidated session's key stays, and its LockIndex keeps growing"
			}
			return 1, "create the session with Behavior delete: an invalidated session's key is deleted"
		}),
	wordKnob("index", words(func(i int) model.ConsulIndex { return model.ConsulIndex(i) }),
		func(d *model.Design) string { return d.Index.String() },
		func(d *model.Design, from, to string) (int, string) {
			if to == "modify" {
				return 1, "take the key's ModifyIndex (the Raft index of its last write) as the fencing token: it never repeats"
			}
			return 1, "take the key's LockIndex as the fencing token"
		}),
	wordKnob("pool", words(func(i int) model.PoolMode { return model.PoolMode(i) }),
		func(d *model.Design) string { return d.Pool.String() },
		func(d *model.Design, from, to string) (int, string) {
			switch to {
			case "none":
				return 1, "give each client a session of its own (no transaction pooler between it and the server)"
			case "tx":
				return 1, "go through PgBouncer in transaction pooling mode"
			}
			return 1, "go through PgBouncer in transaction pooling mode, with DISCARD ALL after each transaction"
		}),
	intKnob("deadline", func(d *model.Design) *int { return &d.RenewDeadlineTicks },
		func(c int, d *model.Design) []int { return []int{d.RenewTicks + 1, (c + d.RenewTicks + 1) / 2} },
		func(d *model.Design, from, to int) (int, string) {
			return 1, fmt.Sprintf("a renew deadline of %d ticks instead of %d: the leader gives up sooner, before another candidate's clock judges its lease expired", to, from)
		}),
	intKnob("ack-timeout", func(d *model.Design) *int { return &d.AckTimeoutTicks },
		func(c int, d *model.Design) []int {
			if c == 0 {
				return nil // a timed-out WAIT goes on regardless: a timeout is never a fix
			}
			return []int{0}
		},
		func(d *model.Design, from, to int) (int, string) {
			return 1, fmt.Sprintf("WAIT without a timeout instead of %d ticks (the acquire blocks until the replica has the key)", from)
		}),
	intKnob("acks", func(d *model.Design) *int { return &d.Acks },
		func(c int, d *model.Design) []int {
			if d.Ack != model.AckWait || c >= d.Replicas {
				return nil
			}
			return []int{d.Replicas}
		},
		func(d *model.Design, from, to int) (int, string) {
			return 1, fmt.Sprintf("WAIT %d instead of WAIT %d: the acquire returns once every replica has the key (it blocks while any one lags)", to, from)
		}),
	intKnob("replicas", func(d *model.Design) *int { return &d.Replicas },
		func(c int, d *model.Design) []int {
			if d.Lock != model.LockReplica || c >= model.MaxNodes-1 {
				return nil
			}
			return []int{c + 1}
		},
		func(d *model.Design, from, to int) (int, string) {
			return 3, fmt.Sprintf("%d replicas instead of %d (one more server to run; Sentinel promotes the freshest)", to, from)
		}),
	intKnob("ttl", func(d *model.Design) *int { return &d.TTLTicks },
		// ×1.5, ×2, ×3: each checked against faults grown with it, so a
		// longer one only costs a longer search
		func(c int, d *model.Design) []int { return []int{c + (c+1)/2, 2 * c, 3 * c} },
		func(d *model.Design, from, to int) (int, string) {
			if to < from {
				return 1, fmt.Sprintf("a shorter TTL (%d ticks)", to)
			}
			return 1 + (to-from)/10, fmt.Sprintf("a longer TTL (%d ticks): a crashed holder keeps the others waiting %d ticks longer; checked against faults %d ticks longer too (%s), as no real pause is bounded by the TTL", to, to-from, to-from, outlasts(d, to-from))
		}),
	intKnob("renew", func(d *model.Design) *int { return &d.RenewTicks },
		func(c int, d *model.Design) []int {
			out := []int{1, 2, 3, d.TTLTicks / 2, d.TTLTicks - 1}
			if c > 0 {
				out = append(out, 0)
			}
			return out
		},
		func(d *model.Design, from, to int) (int, string) {
			if to == 0 {
				return 1, "no watchdog"
			}
			c := 2
			if to <= 2 {
				c = 3
			}
			return c, fmt.Sprintf("a watchdog that extends the TTL every %d ticks (a request every %d ticks while held)", to, to)
		}),
	intKnob("nodes", func(d *model.Design) *int { return &d.Nodes },
		func(c int, d *model.Design) []int { return []int{3, 4, 5} },
		func(d *model.Design, from, to int) (int, string) {
			if to > from {
				return 2 * (to - from), fmt.Sprintf("%d Redis nodes instead of %d", to, from)
			}
			return 1, fmt.Sprintf("%d Redis nodes instead of %d", to, from)
		}),
	intKnob("drift", func(d *model.Design) *int { return &d.DriftTicks },
		func(c int, d *model.Design) []int { return []int{0, c + 1, c + 2, 2*c + 3} },
		func(d *model.Design, from, to int) (int, string) {
			return 1, fmt.Sprintf("a drift allowance of %d ticks (the validity window shrinks by %d)", to, to)
		}),
	intKnob("session", func(d *model.Design) *int { return &d.SessionTicks },
		func(c int, d *model.Design) []int { return []int{c / 2, 2 * c, 3 * c} },
		func(d *model.Design, from, to int) (int, string) {
			if to > from {
				return 1, fmt.Sprintf("a session timeout of %d ticks: checked against faults %d ticks longer too (%s), as no real pause is bounded by the session", to, to-from, outlasts(d, to-from))
			}
			return 1, fmt.Sprintf("a session timeout of %d ticks", to)
		}),
	intKnob("persist", func(d *model.Design) *int { return &d.Persist },
		func(c int, d *model.Design) []int { return []int{1 - c} },
		func(d *model.Design, from, to int) (int, string) {
			if to == 1 {
				return 2, "keep the lock nodes' keys on disk (AOF with fsync on every write: slower writes)"
			}
			return 1, "no persistence on the lock nodes"
		}),
	intKnob("fsync", func(d *model.Design) *int { return &d.FsyncTicks },
		func(c int, d *model.Design) []int {
			if c == 0 {
				return nil // fsyncing less often is never a fix
			}
			return []int{0}
		},
		func(d *model.Design, from, to int) (int, string) {
			return 2, fmt.Sprintf("fsync the lock node's append-only file on every write (appendfsync always: every write waits for the disk) instead of every %d ticks", from)
		}),
	intKnob("rejoin", func(d *model.Design) *int { return &d.RejoinTicks },
		func(c int, d *model.Design) []int {
			if d.Lock != model.LockReplica || d.Failovers == 0 || c == 0 {
				return nil // rejoin=0 is how the replica design began; a failed primary that rejoins later is never a fix by itself
			}
			return []int{d.TTLTicks, 2 * d.TTLTicks}
		},
		func(d *model.Design, from, to int) (int, string) {
			return 1, fmt.Sprintf("a failed primary stays down %d ticks before it restarts (delayed restart: the keys it had have expired by then)", to)
		}),
	intKnob("restart", func(d *model.Design) *int { return &d.RestartTicks },
		func(c int, d *model.Design) []int { return []int{d.TTLTicks, 2 * d.TTLTicks} },
		func(d *model.Design, from, to int) (int, string) {
			return 1, fmt.Sprintf("a crashed lock node stays down %d ticks before it rejoins (delayed restart)", to)
		}),
}

// changes are every single change of d, in knob order.
func changes(d model.Design) []Change {
	var out []Change
	for _, k := range knobs {
		from := k.cur(&d)
		for _, to := range k.values(&d) {
			c, what := k.cost(&d, from, to)
			out = append(out, Change{Key: k.key, From: from, To: to, Cost: c, What: what})
		}
	}
	return out
}

// Knobs lists the axes and parameters a fix may change, in order.
func Knobs() []string {
	out := make([]string, len(knobs))
	for i, k := range knobs {
		out[i] = k.key
	}
	return out
}

// outlasts names the longest waits of d's fault budget grown by delta
// ticks, which a longer lease is checked against.
func outlasts(d *model.Design, delta int) string {
	var out []string
	if d.Pauses > 0 {
		out = append(out, fmt.Sprintf("pauses up to %d ticks", d.MaxPauseTicks+delta))
	}
	if d.SlowJobs > 0 {
		out = append(out, fmt.Sprintf("slow work %d ticks", d.SlowWorkTicks+delta))
	}
	if d.Delays > 0 {
		out = append(out, fmt.Sprintf("delays up to %d ticks", d.MaxDelayTicks+delta))
	}
	if d.Partitions > 0 {
		out = append(out, fmt.Sprintf("partitions of %d ticks", d.PartitionTicks+delta))
	}
	if d.ClockJumps > 0 {
		out = append(out, fmt.Sprintf("clock jumps of %d ticks", d.JumpTicks+delta))
	}
	if len(out) == 0 {
		return "no pause, slow job, delay, partition or clock jump in the budget"
	}
	return strings.Join(out, ", ")
}
