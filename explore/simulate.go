package explore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"lockcheck/model"
)

// NotFound is simulation's verdict when no run showed the property: never a
// proof, only "not in these runs".
const NotFound Status = "not-found"

// SimConfig is one random simulation, or one shard of it: runs From … To-1
// of a sweep. Run r draws its schedule from its own generator, seeded by
// (Seed, r), so that a run's schedule does not depend on the other runs,
// on the workers or on the shard that plays it: shards of a sweep, merged,
// give what the whole sweep gives.
type SimConfig struct {
	Design     model.Design
	Properties []model.Property // nil = all
	Seed       uint64
	From, To   int // the runs to play
	Depth      int // steps per run at most (a run also ends when nothing is enabled)
	// Swarm varies the fault budget from run to run (swarm testing): in
	// each run each kind of fault is off with probability 1/2, or allowed
	// 1 to 3 times (the design's budget still applies). Runs without some
	// faults reach states that runs full of faults rarely do.
	Swarm    bool
	Workers  int             // goroutines (0 = GOMAXPROCS)
	Context  context.Context // done: stop taking runs (nil: never)
	Progress func(done int)  // called about once a second with the runs done; may be nil
}

// SimResult is one property's verdict over the runs. For a property that
// some run showed, Run is the run with the shortest trace (the lowest run
// number among equals), RawSteps its length there, and Trace the prefix of
// that run up to the step that showed it, shrunk for an always property
// (Trace then still replays and still violates the property). Runs counts
// the runs that showed it.
type SimResult struct {
	Property string
	Expect   model.Expectation
	Status   Status // Violated, Seen or NotFound
	Run      int
	RawSteps int
	Trace    []model.Action
	Runs     int
}

// FaultUse is how many runs drew a kind of fault at least once.
type FaultUse struct {
	Kind string
	Runs int
}

// SimReport is the outcome of Simulate.
type SimReport struct {
	Results     []SimResult
	Done        int   // runs played (To-From unless interrupted)
	Steps       int64 // steps over all runs
	Faults      []FaultUse
	Interrupted bool
	Seconds     float64
}

// MaxSimRuns bounds a sweep's runs; MaxSimDepth the steps of a run.
const (
	MaxSimRuns  = 1 << 40
	MaxSimDepth = 100_000
)

// Simulate plays random runs of the design, checking every property on
// every step.
func Simulate(cfg SimConfig) (*SimReport, error) {
	d := cfg.Design
	if err := d.Validate(); err != nil {
		return nil, err
	}
	props := cfg.Properties
	if props == nil {
		props = model.PropertiesFor(&d)
	}
	if cfg.From < 0 || cfg.To < cfg.From || cfg.To > MaxSimRuns || cfg.Depth < 1 || cfg.Depth > MaxSimDepth {
		return nil, fmt.Errorf("explore: simulation runs %d…%d, depth %d out of range", cfg.From, cfg.To, cfg.Depth)
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	start := time.Now()
	var stop atomic.Bool
	if cfg.Context != nil {
		defer context.AfterFunc(cfg.Context, func() { stop.Store(true) })()
	}
	var next, done atomic.Int64
	next.Store(int64(cfg.From))
	tallies := make([]*simTally, workers)
	var wg sync.WaitGroup
	for w := range workers {
		t := newSimTally(len(props))
		tallies[w] = t
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sim simRunner
			for !stop.Load() {
				r := int(next.Add(1) - 1)
				if r >= cfg.To {
					return
				}
				sim.play(&d, props, &cfg, r, t)
				done.Add(1)
			}
		}()
	}
	if cfg.Progress != nil {
		fin := make(chan struct{})
		go func() {
			tk := time.NewTicker(progressInterval)
			defer tk.Stop()
			for {
				select {
				case <-fin:
					return
				case <-tk.C:
					cfg.Progress(int(done.Load()))
				}
			}
		}()
		defer close(fin)
	}
	wg.Wait()
	total := newSimTally(len(props))
	for _, t := range tallies {
		total.add(t)
	}
	rep := &SimReport{Done: int(done.Load()), Steps: total.steps, Interrupted: stop.Load() && int(done.Load()) < cfg.To-cfg.From}
	for i, p := range props {
		res := SimResult{Property: p.Name, Expect: p.Expect, Status: NotFound, Runs: total.runs[i]}
		if b := total.best[i]; b.trace != nil {
			res.Status, res.Run, res.RawSteps, res.Trace = Seen, b.run, len(b.trace), b.trace
			if p.Expect == model.Always {
				res.Status = Violated
				res.Trace = Shrink(&d, p, b.trace)
			}
		}
		rep.Results = append(rep.Results, res)
	}
	for k, n := range total.faults {
		if n > 0 {
			rep.Faults = append(rep.Faults, FaultUse{model.ActionKind(k).String(), n})
		}
	}
	sort.Slice(rep.Faults, func(i, j int) bool { return rep.Faults[i].Kind < rep.Faults[j].Kind })
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// simTally is what one worker saw.
type simTally struct {
	best   []simBest // per property
	runs   []int     // per property: runs that showed it
	faults [256]int  // per action kind: runs that drew it
	steps  int64
}

type simBest struct {
	run   int
	trace []model.Action // nil: not shown
}

func newSimTally(n int) *simTally {
	return &simTally{best: make([]simBest, n), runs: make([]int, n)}
}

// better reports whether a trace of n steps in run r comes before b.
func (b simBest) better(n, r int) bool {
	return b.trace == nil || n < len(b.trace) || (n == len(b.trace) && r < b.run)
}

func (t *simTally) add(o *simTally) {
	for i, b := range o.best {
		if b.trace != nil && t.best[i].better(len(b.trace), b.run) {
			t.best[i] = b
		}
		t.runs[i] += o.runs[i]
	}
	for k, n := range o.faults {
		t.faults[k] += n
	}
	t.steps += o.steps
}

// simRunner plays runs, reusing its buffers.
type simRunner struct {
	buf, cand, trace []model.Action
	shown            []bool
	used             [256]int // per action kind: times drawn in this run
}

// swarmCap is how many times run r of the sweep may draw fault kind k: 0
// (off) with probability 1/2, else 1 to 3. A hash of (seed, run, kind), so
// that it does not depend on the order faults come up in.
func swarmCap(seed uint64, r int, k model.ActionKind) int {
	h := mix64(seed ^ mix64(uint64(r)<<8|uint64(k)))
	if h&1 == 0 {
		return 0
	}
	return 1 + int(h>>1%3)
}

// mix64 is SplitMix64's finaliser.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func (sim *simRunner) play(d *model.Design, props []model.Property, cfg *SimConfig, r int, t *simTally) {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(r)))
	if cap(sim.shown) < len(props) {
		sim.shown = make([]bool, len(props))
	}
	shown := sim.shown[:len(props)]
	clear(shown)
	clear(sim.used[:])
	sim.trace = sim.trace[:0]
	s := model.Init(d)
	note := func(ev *model.Event) {
		for i, p := range props {
			if !shown[i] && p.Bad(d, &s, ev) {
				shown[i] = true
				t.runs[i]++
				if t.best[i].better(len(sim.trace), r) {
					t.best[i] = simBest{r, append([]model.Action{}, sim.trace...)}
				}
			}
		}
	}
	note(nil)
	for step := 0; step < cfg.Depth; step++ {
		sim.buf = model.Actions(d, &s, sim.buf)
		sim.cand = sim.cand[:0]
		for _, a := range sim.buf {
			if cfg.Swarm && a.Kind.IsFault() && sim.used[a.Kind] >= swarmCap(cfg.Seed, r, a.Kind) {
				continue
			}
			sim.cand = append(sim.cand, a)
		}
		if len(sim.cand) == 0 {
			break
		}
		a := sim.cand[rng.IntN(len(sim.cand))]
		var ev model.Event
		s, ev = model.Step(d, s, a)
		sim.trace = append(sim.trace, a)
		sim.used[a.Kind]++
		t.steps++
		note(&ev)
	}
	for k, n := range sim.used {
		if n > 0 && model.ActionKind(k).IsFault() {
			t.faults[k]++
		}
	}
}

// violates reports whether trace replays in d (every action enabled when
// taken) and breaks p; it returns the step that does.
func violates(d *model.Design, p model.Property, trace []model.Action, buf []model.Action) (int, bool) {
	s := model.Init(d)
	if p.Bad(d, &s, nil) {
		return 0, true
	}
	for i, a := range trace {
		buf = model.Actions(d, &s, buf)
		ok := false
		for _, b := range buf {
			if b == a {
				ok = true
				break
			}
		}
		if !ok {
			return 0, false
		}
		var ev model.Event
		s, ev = model.Step(d, s, a)
		if p.Bad(d, &s, &ev) {
			return i + 1, true
		}
	}
	return 0, false
}

// Shrink makes a counterexample of p shorter: it cuts the trace at the step
// that breaks p, then deletes chunks of steps (halves, quarters, … single
// steps, as in delta debugging) while the rest still replays and still
// breaks p, until no single step can go. Deterministic; the result is
// 1-minimal (no one step can be deleted), not necessarily a shortest
// counterexample, which only breadth-first search finds.
func Shrink(d *model.Design, p model.Property, trace []model.Action) []model.Action {
	var buf []model.Action
	at, ok := violates(d, p, trace, buf)
	if !ok {
		return trace // not a counterexample: nothing to keep it valid against
	}
	cur := append([]model.Action{}, trace[:at]...)
	try := make([]model.Action, 0, len(cur))
	for chunk := max(len(cur)/2, 1); ; chunk /= 2 {
		for changed := true; changed; {
			changed = false
			for lo := 0; lo < len(cur); {
				hi := min(lo+chunk, len(cur))
				try = append(append(try[:0], cur[:lo]...), cur[hi:]...)
				if at, ok := violates(d, p, try, buf); ok {
					cur = append(cur[:0], try[:at]...)
					changed = true
					continue // the same lo, now with other steps
				}
				lo = hi
			}
		}
		if chunk == 1 {
			return cur
		}
	}
}
