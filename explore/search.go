package explore

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"lockcheck/model"
)

// Check explores every state reachable within the bounds, breadth-first,
// checking every property on every state and step.
func Check(cfg Config) (*Report, error) {
	d := cfg.Design
	if err := d.Validate(); err != nil {
		return nil, err
	}
	props := cfg.Properties
	if props == nil {
		props = model.PropertiesFor(&d)
	}
	for _, p := range props {
		if p.Bad == nil {
			return nil, fmt.Errorf("explore: property %q has no Bad function", p.Name)
		}
	}
	if cfg.Bounds.MaxSteps < 0 || cfg.Bounds.MaxStates < 0 || cfg.Bounds.MaxMemory < 0 || cfg.Bounds.Workers < 0 {
		return nil, fmt.Errorf("explore: bounds must not be negative")
	}
	workers := cfg.Bounds.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers > maxWorkers {
		workers = maxWorkers
	}
	root := model.Init(&d)
	if cfg.From != nil {
		r, err := model.Replay(&d, cfg.From)
		if err != nil {
			return nil, fmt.Errorf("explore: the start (Config.From): %v", err)
		}
		root = r.Final
	}
	pk := newPacking(&d)
	if cfg.Resume != "" && checkpointPacking(cfg.Resume) == packingDigest(model.WidePacking(&d)) {
		pk = model.WidePacking(&d) // the checkpoint's search had fallen back to it
	}
	rep, err := search(cfg, props, workers, pk, root)
	if err == errBadPack {
		// a state set a field its design's features should not (a model
		// bug, or a rule of model.NewPacking that missed a feature): the
		// frontier cannot hold it packed narrowly, so search again with
		// every field of the used slots (same states, same verdicts)
		rep, err = search(cfg, props, workers, model.WidePacking(&d), root)
	}
	return rep, err
}

// newPacking is the frontier's packing (tests replace it with one that
// leaves out a field, to see Check fall back to the wide packing).
var newPacking = model.NewPacking

// search is one run of the engine with frontier packing pk, from state
// root.
func search(cfg Config, props []model.Property, workers int, pk model.Packing, root model.State) (*Report, error) {
	d := cfg.Design
	e := &engine{
		d:       d,
		root:    root,
		props:   props,
		bounds:  cfg.Bounds,
		workers: workers,
		pk:      pk,
		trail:   newTrail(),
		done:    make([]bool, len(props)),
		found:   cfg.Found,
		allow:   cfg.Allow,
	}
	if dir := cfg.Bounds.FrontierDir; dir != "" {
		defer e.cur.close()
		defer e.next.close()
		if err := e.cur.spillTo(dir); err != nil {
			return nil, err
		}
		if err := e.next.spillTo(dir); err != nil {
			return nil, err
		}
	}
	if cfg.Bounds.Compact {
		e.cset = newCPSet()
	} else {
		e.set = newFPSet()
	}
	if cfg.Bounds.Bitstate != 0 {
		var err error
		if e.bits, err = newBitSet(cfg.Bounds.Bitstate); err != nil {
			return nil, err
		}
	}
	e.rep = &Report{Design: d, Bounds: cfg.Bounds, Results: make([]Result, len(props))}
	for i, p := range props {
		e.rep.Results[i] = Result{Property: p.Name, Expect: p.Expect}
	}
	e.start = time.Now()
	if cfg.Progress != nil {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.progressLoop(cfg.Progress, stop)
		}()
		defer func() {
			close(stop)
			wg.Wait()
		}()
	}
	e.first = cfg.First
	for _, name := range cfg.StopWhenViolated {
		i := slices.IndexFunc(props, func(p model.Property) bool { return p.Name == name })
		if i < 0 || props[i].Expect != model.Always {
			return nil, fmt.Errorf("explore: StopWhenViolated: %q is not an always property of the search", name)
		}
		e.stopAll = append(e.stopAll, i)
	}
	if cfg.Context != nil {
		stop := context.AfterFunc(cfg.Context, func() { e.interrupted.Store(true) })
		defer stop()
	}
	e.boundsKey = boundsKey(cfg.Bounds, &cfg)
	if cfg.Checkpoint != nil || cfg.Resume != "" {
		if cfg.Allow != nil {
			return nil, fmt.Errorf("explore: a checkpoint cannot record Config.Allow")
		}
		e.modelDigest = modelDigest(&d, pk)
		e.ckpt = cfg.Checkpoint
		e.resumeDir = cfg.Resume
	}
	if err := e.run(); err != nil {
		return nil, err
	}
	return e.rep, nil
}

// maxWorkers bounds the goroutines: the merge hands out mergeRanges ranges
// of segments, so more would idle.
const maxWorkers = mergeRanges

// maxIDs is the most states a search numbers (ids are uint32, and
// rootParent is reserved); past it the search stops as at MaxStates.
const maxIDs = 1<<32 - 2

// maxLevelSteps is the most steps one level may generate: bucket positions
// are uint32.
const maxLevelSteps = 1<<32 - 1

// unitStates is how many frontier states one work unit expands.
const unitStates = 256

// mergeStepBytes is the memory one generated step takes in the merge's
// arrays: a copy of its fingerprint in the bucket of its segment with a
// new-or-not flag, its bucket position, and the flag again in generation
// order. Its unit holds its fingerprint and action index, and room for
// its packed successor (see unit.bytes).
const mergeStepBytes = 8 + 1 + 4 + 1

// engine is one search. Each level is taken in chunks of chunkStates
// frontier states, in frontier order, and each chunk goes through three
// phases:
//
//  1. expand (parallel over units of the frontier): every enabled action of
//     every frontier state is stepped, the live properties are checked on
//     the step, and the successor's fingerprint and action index are kept,
//     in generation order (frontier order, then action order), with the
//     successor packed unless the worker's cache knows it is not new;
//  2. merge: the fingerprints are bucketed by set segment, keeping
//     generation order, and each bucket is inserted into its segment (in
//     parallel over segments; a bucket's home slots are loaded together
//     first, so the inserts find them in cache). The first step to reach a
//     fingerprint absent from the set is the one that makes a new state;
//  3. collect (parallel over units): the new states are numbered in
//     generation order and their packed bytes copied to the next frontier,
//     with their parent and action in the trail.
//
// The verdicts (the first step of the level, in generation order, that
// shows each property) and the coverage are taken when the whole level has
// been expanded, so that a level cut short drops its partial findings.
type engine struct {
	d       model.Design
	root    model.State // the state the search starts from (model.Init, or Config.From's end)
	props   []model.Property
	bounds  Bounds
	workers int
	set     *fpSet
	cset    *cpSet  // the compact visited set instead of set (Bounds.Compact)
	bits    *bitSet // a bitstate search's visited set instead of set (Bounds.Bitstate)
	trail   *trail
	rep     *Report
	done    []bool         // property decided
	cov     model.Coverage // what the finished levels' steps did (vacuity)
	counts  Counts         // the finished levels' steps and states, counted (coverage)

	levelCounts Counts // the level's, until it is finished

	// checkpoints (checkpoint.go)
	ckpt        *Checkpoint
	lastCkpt    time.Time
	ckCleaned   bool    // stale temporary files removed
	resumeDir   string  // Config.Resume
	boundsKey   string  // what of the bounds a checkpoint must match
	modelDigest string  // the model's steps on the design, hashed
	prevSeconds float64 // the checkpoint's search's time before it

	// The frontiers hold states packed to the bytes the design uses (see
	// model.Packing), stride bytes each: state k of cur has id base+k.
	pk       model.Packing
	stride   int
	cur      frontier // the level being expanded
	base     uint32
	next     frontier
	pool     blockPool
	units    []*unit     // the chunk's
	allUnits []*unit     // every unit made, with its buffers, for the next chunks
	dups     []*dupCache // per worker (dedup.go)
	badPack  atomic.Bool // a state used a slot its design does not (a model bug)
	hits     []hit       // per property: the first step of the level that showed it
	seen     int         // states numbered before the level (for Found)

	// the merge's buffers, reused from level to level
	steps     int64    // steps generated in the chunk
	unitsCap  int64    // the units' buffers' capacity in bytes, summed before the chunk
	unitsUsed int64    // the bytes of the units' buffers that the chunk's steps use
	bfp       []uint64 // fingerprints bucketed by segment
	bnew      []bool   // by bucket position: the first of its fingerprint and not yet visited
	kOf       []uint32 // by generation index: its bucket position
	isNew     []bool   // by generation index: bnew[kOf[·]], gathered by unit
	hist      [][]int  // per group of units: steps per segment, then the write cursors
	bucketT   []int    // start of each segment's bucket, and the end

	start       time.Time
	transitions atomic.Int64
	distinct    atomic.Int64
	depth       atomic.Int64
	memory      atomic.Int64 // current estimate
	peak        int64
	abort       atomic.Bool // the memory bound was reached inside a level
	tooMany     atomic.Bool // a state has more actions than an index holds
	interrupted atomic.Bool // Config.Context is done
	level       atomic.Int64
	levelDone   atomic.Int64
	first       bool
	found       func(Result, int64)
	allow       func(model.Action) bool // nil: every action
	stopAll     []int                   // Config.StopWhenViolated, as indices into props
}

// unit is one range of the frontier and its steps, in generation order.
type unit struct {
	_      [128]byte // apart from the unit before it in memory: two workers writing
	lo, hi int       // neighbouring units must not share a cache line (or its pair)
	fps    []uint64  // per step: the successor's fingerprint (dupStep: not new)
	acts   []uint16  // per step: its action's index among its state's actions
	packed []byte    // the successors of the steps not marked dupStep, packed (room for all)
	first  int64     // generation index of fps[0]
	fresh  int       // new states among its steps (after the merge)
	id     int       // position of its first new state in the next frontier
	found  []hit     // per property: the first step in this unit that showed it
	buf    []model.Action
	nacts  []uint16           // per frontier state of the unit: its steps
	cur    model.State        // the frontier state being expanded, unpacked
	ns     model.State        // the successor being checked (fields, so that
	ev     model.Event        // passing them to Bad does not allocate)
	steps  stepTable          // its steps by action kind and acting client's phase (coverage)
	phases [phasesPow2]uint32 // its frontier states' clients by phase
	wit    uint8              // witness bits its steps showed (model.Witnesses)
	_      [128]byte
}

type hit struct {
	ok   bool
	from uint32 // frontier index
	act  uint16 // action index
}

func (e *engine) run() error {
	d := &e.d
	init := e.root
	e.stride = e.pk.Size()
	e.pool.stride = e.stride
	e.seen = 1
	depth := 0
	proved := 0 // every step of the levels before depth was checked
	if e.resumeDir != "" {
		var err error
		if depth, proved, err = e.resume(e.resumeDir); err != nil {
			return err
		}
		e.start = e.start.Add(-time.Duration(e.prevSeconds * float64(time.Second)))
		e.seen = e.trail.n
		e.rep.Coverage, e.rep.Counts = e.cov, e.counts
		e.distinct.Store(int64(e.trail.n))
		e.depth.Store(int64(depth))
	} else {
		var scratch [256]byte // more than a packed state and its room
		e.visit(e.fingerprint(&init, scratch[:e.stride+packRoom]))
		if e.badPack.Load() {
			return errBadPack
		}
		for i, p := range e.props {
			if p.Bad(d, &init, nil) {
				e.record(i, []model.Action{})
			}
		}
		e.cur.grow(1, &e.pool)
		if !e.pk.Pack(&init, e.cur.state(0, e.stride)) {
			return errBadPack
		}
		e.base = 0
		e.distinct.Store(1)
	}
	e.lastCkpt = time.Now()
	complete := false
	stopped := ""
	for {
		if e.badPack.Load() {
			return errBadPack
		}
		if e.cur.n == 0 {
			complete = true
			break
		}
		if e.remaining() == 0 {
			break
		}
		if e.interrupted.Load() {
			stopped = "interrupted"
			break
		}
		if e.bounds.MaxSteps > 0 && depth >= e.bounds.MaxSteps {
			stopped = "max-steps"
			break
		}
		e.noteUnitsCap()
		if e.overMemory(0, 0, 0) {
			stopped = "max-memory"
			break
		}
		if c := e.ckpt; c != nil {
			stop := c.Stop != nil && c.Stop.Err() != nil
			if stop || (c.Every > 0 && time.Since(e.lastCkpt) >= c.Every) {
				if err := e.writeCheckpoint(depth, proved); err != nil {
					return err
				}
				e.lastCkpt = time.Now()
			}
			if stop {
				stopped = "interrupted"
				break
			}
		}
		live := e.live()
		lv, err := e.runLevel(live)
		if err != nil {
			return err
		}
		if lv.cut != "" {
			// the level did not finish: its partial findings are dropped so
			// that the outcome does not depend on timing
			stopped = lv.cut
			break
		}
		proved = depth + 1
		if lv.stop != "" {
			// the level's verdicts stand; its new states are not kept
			stopped = lv.stop
			break
		}
		if e.next.n > 0 {
			depth++
			e.depth.Store(int64(depth))
		}
		if levelDone != nil {
			levelDone(depth)
		}
		e.base = uint32(lv.start)
		if err := e.next.flush(true, &e.pool); err != nil {
			return err
		}
		if err := e.cur.reset(&e.pool); err != nil {
			return err
		}
		e.cur, e.next = e.next, e.cur
		e.noteMemory(0, 0, 0)
		if lv.full {
			stopped = "max-states"
			break
		}
	}
	e.rep.Stats.Distinct = int64(e.trail.n)
	e.rep.Stats.Depth = depth
	if complete {
		proved = depth
	}
	e.rep.Stats.Proved = proved
	e.rep.Stats.Complete = complete
	e.rep.Stats.StoppedBy = stopped
	e.rep.Stats.Seconds = time.Since(e.start).Seconds()
	e.rep.Stats.VisitedBytes = e.visitedBytes()
	e.noteMemory(0, 0, 0)
	e.rep.Stats.MemoryBytes = e.peak
	for i := range e.rep.Results {
		if e.done[i] {
			continue
		}
		switch {
		case !complete:
			e.rep.Results[i].Status = Incomplete
		case e.props[i].Expect == model.Always:
			e.rep.Results[i].Status = Holds
			if e.bits != nil {
				e.rep.Results[i].Status = HoldsProbably
			}
			e.rep.Results[i].Vacuous = model.Vacuity(&e.props[i], &e.cov)
		case e.bits != nil:
			e.rep.Results[i].Status = NotSeenProbably
		default:
			e.rep.Results[i].Status = NotSeen
		}
	}
	if e.bits != nil {
		e.rep.Stats.Bitstate = e.bits.stats()
	}
	return nil
}

// fingerprint hashes s: its class under client renaming with symmetry
// (model.Packing.SymmetricFingerprint, the classes of model.Canonical),
// its packed bytes without (model.Packing.PackHash, which packs s into
// dst, stride+packRoom bytes, and checks that the bytes it leaves out are
// zero; expand calls it on every step, so a step the dedup cache drops was
// checked too).
func (e *engine) fingerprint(s *model.State, dst []byte) uint64 {
	var fp uint64
	var ok bool
	if e.bounds.Symmetry {
		fp, ok = e.pk.SymmetricFingerprint(s)
	} else {
		fp, ok = e.pk.PackHash(s, dst)
	}
	if !ok {
		e.badPack.Store(true)
	}
	return normFP(fp)
}

var errBadPack = fmt.Errorf("explore: internal error: a state sets a byte its design's packing leaves out (a client or node slot past its design's: model.Packing)")

// load unpacks the frontier's state i into s.
func (e *engine) load(i int, s *model.State) {
	e.pk.Unpack(e.cur.roomy(i, e.stride), s)
}

// noteUnitsCap sums the capacity of the units' buffers, for the memory
// estimate.
func (e *engine) noteUnitsCap() {
	e.unitsCap = 0
	for _, u := range e.allUnits {
		e.unitsCap += int64(cap(u.fps))*8 + int64(cap(u.acts))*2 + int64(cap(u.packed))
	}
}

// bytes is what the unit's steps may take of its buffers: u.packed
// has room for every step (see expand).
func (u *unit) bytes(stride int) int64 {
	return int64(len(u.fps)) * int64(8+2+stride)
}

// levelEnd is how a level ended.
type levelEnd struct {
	cut   string // the level was cut short ("interrupted", "max-memory"): nothing of it stands
	stop  string // the level was checked but the search stops ("first", "max-memory"): its new states are dropped
	full  bool   // MaxStates was reached: the next frontier holds the states up to it
	start int    // id of the next frontier's first state
}

// runLevel expands the frontier chunk by chunk (chunkStates states each,
// in frontier order), merging and collecting each chunk's new states into
// the next frontier as it goes; then it records the level's verdicts and
// coverage. Once the search is to stop after the level (First with a
// violation, MaxStates, the memory bound after a merge), the remaining
// chunks are only expanded and checked.
func (e *engine) runLevel(live []int) (levelEnd, error) {
	var end levelEnd
	nf := e.cur.n
	e.level.Store(int64(nf))
	e.levelDone.Store(0)
	e.seen = e.trail.n
	start := e.trail.n // id of the next level's first state
	end.start = start
	if cap(e.hits) < len(e.props) {
		e.hits = make([]hit, len(e.props))
	}
	e.hits = e.hits[:len(e.props)]
	clear(e.hits)
	var cov model.Coverage
	lc := &e.levelCounts
	*lc = Counts{}
	var steps int64
	keep := true // new states are still merged and collected
	drop := func() {
		e.trail.truncate(start)
		e.next.reset(&e.pool) // the search stops: an error here changes nothing
		e.distinct.Store(int64(e.trail.n))
	}
	chunk := e.chunkStates()
	for lo := 0; lo < nf; lo += chunk {
		hi := min(lo+chunk, nf)
		e.noteUnitsCap()
		if err := e.cur.load(lo, hi, &e.pool); err != nil {
			return end, err
		}
		e.expandChunk(live, lo, hi)
		if e.tooMany.Load() {
			return end, fmt.Errorf("explore: a state has more than %d enabled actions", 1<<16-1)
		}
		if e.interrupted.Load() || e.abort.Load() {
			drop()
			end.cut = "interrupted"
			if !e.interrupted.Load() {
				end.cut = "max-memory"
			}
			return end, nil
		}
		if e.steps > maxLevelSteps {
			return end, fmt.Errorf("explore: a level of %d steps is more than the merge indexes (%d)", e.steps, int64(maxLevelSteps))
		}
		steps += e.steps
		e.transitions.Add(e.steps)
		for _, u := range e.units {
			lc.add(u)
			cov.AddWitnesses(u.wit)
			for _, pi := range live {
				if !e.hits[pi].ok && u.found[pi].ok {
					e.hits[pi] = u.found[pi]
				}
			}
		}
		if keep && e.first {
			for _, pi := range live {
				if e.hits[pi].ok && e.props[pi].Expect == model.Always {
					keep = false
				}
			}
		}
		if keep && len(e.stopAll) > 0 && e.allViolatedBy(e.stopAll, e.hits) {
			keep = false // the search stops after this level
		}
		if keep {
			e.noteUnitsCap()
			e.merge()
			fresh := e.count()
			if e.bits != nil {
				e.bits.account(fresh)
			}
			e.noteMemory(e.unitsUsed, e.steps, int64(fresh))
			if e.overMemory(e.unitsUsed, e.steps, int64(fresh)) {
				keep, end.stop = false, "max-memory"
			} else if e.collect(fresh, start) {
				keep, end.full = false, true
			}
			if err := e.next.flush(false, &e.pool); err != nil {
				return end, err
			}
			if e.badPack.Load() {
				return end, errBadPack
			}
		}
		e.cur.release(lo, hi, &e.pool)
	}
	e.rep.Stats.Transitions += steps
	if err := e.recordLevel(live); err != nil {
		return end, err
	}
	e.counts.addCounts(lc)
	e.cov.Kinds |= e.counts.kinds()
	e.cov.AddWitnesses(cov.Witnessed())
	e.rep.Coverage = e.cov
	e.rep.Counts = e.counts
	if e.first && e.anyViolated() {
		end.stop = "first"
	}
	if end.stop == "" && len(e.stopAll) > 0 && e.allViolatedBy(e.stopAll, nil) {
		end.stop = "all-violated"
	}
	if end.stop != "" {
		end.full = false
		drop()
	} else {
		e.trail.seal(start)
	}
	e.seen = e.trail.n
	return end, nil
}

// chunkStates is the number of frontier states a chunk expands:
// chunkStates, or under a memory bound (Bounds.MaxMemory) at most one
// block, so that the memory goes to states rather than to the units'
// buffers (a quarter as much; the merge then loses some locality).
func (e *engine) chunkStates() int {
	if e.bounds.MaxMemory > 0 {
		return min(chunkStates, blockStates())
	}
	return chunkStates
}

func (e *engine) remaining() int {
	n := 0
	for _, ok := range e.done {
		if !ok {
			n++
		}
	}
	return n
}

func (e *engine) live() []int {
	var live []int
	for i, ok := range e.done {
		if !ok {
			live = append(live, i)
		}
	}
	return live
}

func (e *engine) record(i int, trace []model.Action) {
	e.done[i] = true
	e.rep.Results[i].Trace = trace
	if e.props[i].Expect == model.Always {
		e.rep.Results[i].Status = Violated
	} else {
		e.rep.Results[i].Status = Seen
	}
	if e.found != nil {
		e.found(e.rep.Results[i], int64(e.seen))
	}
}

// anyViolated reports whether an always property has a counterexample.
func (e *engine) anyViolated() bool {
	for _, r := range e.rep.Results {
		if r.Status == Violated {
			return true
		}
	}
	return false
}

// allViolatedBy reports whether every property of idx is violated, in an
// earlier level or (hits, if not nil) in this one.
func (e *engine) allViolatedBy(idx []int, hits []hit) bool {
	for _, i := range idx {
		if e.rep.Results[i].Status != Violated && (hits == nil || !hits[i].ok) {
			return false
		}
	}
	return true
}

// parallel runs f(w) for w in 0..workers-1 and waits.
func (e *engine) parallel(f func(w int)) {
	if e.workers == 1 {
		f(0)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < e.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w)
		}()
	}
	wg.Wait()
}

// forUnits runs f on every unit, the workers taking units in turn, and
// stops early once stop reports true.
func (e *engine) forUnits(f func(w int, u *unit), stop func() bool) {
	var next atomic.Int64
	n := len(e.units)
	e.parallel(func(w int) {
		for !stop() {
			k := int(next.Add(1) - 1)
			if k >= n {
				return
			}
			f(w, e.units[k])
		}
	})
}

// expandChunk is phase 1: every step of frontier states lo to hi-1, in
// units.
func (e *engine) expandChunk(live []int, lo, hi int) {
	n := (hi - lo + unitStates - 1) / unitStates
	for len(e.allUnits) < n {
		e.allUnits = append(e.allUnits, &unit{})
	}
	e.units = e.allUnits[:n] // the units of a short chunk keep the others' buffers
	for k, u := range e.units {
		u.lo, u.hi = lo+k*unitStates, min(lo+(k+1)*unitStates, hi)
	}
	var total, bytes atomic.Int64
	for len(e.dups) < e.workers {
		e.dups = append(e.dups, &dupCache{})
	}
	e.forUnits(func(w int, u *unit) {
		e.expand(u, live, e.dups[w])
		e.levelDone.Add(int64(u.hi - u.lo))
		if e.overMemory(bytes.Add(u.bytes(e.stride)), total.Add(int64(len(u.fps))), 0) {
			e.abort.Store(true)
		}
	}, func() bool { return e.abort.Load() || e.tooMany.Load() || e.interrupted.Load() })
	e.steps, e.unitsUsed = 0, 0
	for _, u := range e.units {
		u.first = e.steps
		e.steps += int64(len(u.fps))
		e.unitsUsed += u.bytes(e.stride)
	}
}

func (e *engine) expand(u *unit, live []int, dups *dupCache) {
	d := &e.d
	u.fps, u.acts, u.packed = u.fps[:0], u.acts[:0], u.packed[:0]
	st := e.stride
	if cap(u.found) < len(e.props) {
		u.found = make([]hit, len(e.props))
	}
	u.found = u.found[:len(e.props)]
	clear(u.found)
	props := e.props
	u.wit = 0
	clear(u.steps[:])
	clear(u.phases[:])
	u.nacts = u.nacts[:0]
	wit := e.cov.Witnessed() | model.Unwitnessable(d) // once every witness is seen, none is asked
	for i := u.lo; i < u.hi; i++ {
		s := &u.cur
		e.load(i, s)
		for c := range s.Clients[:d.Clients] {
			u.phases[s.Clients[c].Phase&(phasesPow2-1)]++
		}
		u.buf = model.Actions(d, s, u.buf)
		if len(u.buf) > 1<<16-1 {
			e.tooMany.Store(true)
			return
		}
		before := len(u.fps)
		// room for every step's successor, dropped by the cache or not, so
		// that the buffer's size (in the memory estimate) does not depend
		// on which worker took the unit
		if need := (before+len(u.buf))*st + packRoom; cap(u.packed) < need {
			u.packed = slices.Grow(u.packed, max(need, cap(u.packed)+cap(u.packed)/4)-len(u.packed))
		}
		for k, a := range u.buf {
			if e.allow != nil && !e.allow(a) {
				continue
			}
			u.ns = *s
			col := uint8(noClient)
			if byClient[a.Kind&(kindsPow2-1)] {
				col = uint8(s.Clients[a.Client%model.MaxClients].Phase)
			}
			model.StepTo(d, &u.ns, a, &u.ev)
			u.steps[a.Kind&(kindsPow2-1)][col&(phasesPow2-1)]++
			if wit != model.AllWitnesses {
				w := model.Witnesses(d, &u.ns, &u.ev)
				wit, u.wit = wit|w, u.wit|w
			}
			for _, pi := range live {
				if !u.found[pi].ok && props[pi].Bad(d, &u.ns, &u.ev) {
					u.found[pi] = hit{true, uint32(i), uint16(k)}
				}
			}
			p := len(u.packed)
			// without symmetry this packs the successor too
			fp := e.fingerprint(&u.ns, u.packed[p:p+st+packRoom])
			if dups.seen(fp) {
				// not new: the merge skips it. Its state was packed, and
				// checked, when the cache first saw its fingerprint, which
				// covers the bytes that Pack leaves out.
				fp = dupStep
			} else {
				// kept packed for the collect phase (packed already
				// without symmetry)
				if e.bounds.Symmetry && !e.pk.Pack(&u.ns, u.packed[p:p+st+packRoom]) {
					e.badPack.Store(true)
				}
				u.packed = u.packed[:p+st]
			}
			u.fps = append(u.fps, fp)
			u.acts = append(u.acts, uint16(k))
		}
		u.nacts = append(u.nacts, uint16(len(u.fps)-before)) // the steps taken (Allow may skip some)
	}
}

// recordLevel turns the first step of the level that showed each live
// property (in frontier order, then action order) into a trace.
func (e *engine) recordLevel(live []int) error {
	for _, pi := range live {
		h := e.hits[pi]
		if !h.ok {
			continue
		}
		path, s, err := e.trail.path(&e.d, e.root, e.base+h.from)
		if err != nil {
			return err
		}
		acts := model.Actions(&e.d, &s, nil)
		e.record(pi, append(path, acts[h.act]))
	}
	return nil
}

// merge is phase 2: bucket the level's fingerprints by segment (a stable
// counting sort over fixed groups of units), then insert each bucket into
// its segment in generation order. Groups and segment ranges are handed
// out to the workers as they come free, so a worker that the machine
// delays does not hold the others up; the groups do not depend on the
// number of workers. Each worker writes only its own ranges of the arrays
// (the verdicts go by bucket position, not by generation index), so that
// workers do not share cache lines.
func (e *engine) merge() {
	steps := int(e.steps)
	if cap(e.bfp) < steps {
		e.bfp = make([]uint64, steps)
		e.bnew = make([]bool, steps)
		e.kOf = make([]uint32, steps)
		e.isNew = make([]bool, steps)
	}
	e.bfp, e.bnew, e.kOf, e.isNew = e.bfp[:steps], e.bnew[:steps], e.kOf[:steps], e.isNew[:steps]
	units := e.units
	groups := min(mergeGroups, groupsPerWorker*e.workers, max(1, len(units)/unitsPerGroup))
	for len(e.hist) < groups {
		e.hist = append(e.hist, make([]int, numSegs))
	}
	if e.bucketT == nil {
		e.bucketT = make([]int, numSegs+1)
	}
	group := func(c int) []*unit { return units[c*len(units)/groups : (c+1)*len(units)/groups] }
	e.forEach(groups, func(c int) {
		h := e.hist[c]
		clear(h)
		for _, u := range group(c) {
			for _, fp := range u.fps {
				if fp != dupStep {
					h[segOf(fp)]++
				}
			}
		}
	})
	// cursors: segment by segment, group by group, so that each bucket
	// stays in generation order
	at := 0
	for g := 0; g < numSegs; g++ {
		e.bucketT[g] = at
		for c := 0; c < groups; c++ {
			n := e.hist[c][g]
			e.hist[c][g] = at
			at += n
		}
	}
	e.bucketT[numSegs] = at
	e.forEach(groups, func(c int) {
		h := e.hist[c]
		for _, u := range group(c) {
			pos := u.first
			for _, fp := range u.fps {
				if fp != dupStep {
					g := segOf(fp)
					k := h[g]
					e.bfp[k], e.kOf[pos] = fp, uint32(k)
					h[g] = k + 1
				}
				pos++
			}
		}
	})
	const span = numSegs / mergeRanges
	e.forEach(mergeRanges, func(r int) {
		var sink uint64
		for g := r * span; g < (r+1)*span; g++ {
			lo, hi := e.bucketT[g], e.bucketT[g+1]
			if e.bits != nil {
				for k := lo; k < hi; k++ {
					e.bnew[k] = e.bits.insert(g, e.bfp[k])
				}
				continue
			}
			if e.cset != nil {
				seg := &e.cset.segs[g]
				sink += seg.touch(e.bfp[lo:hi])
				for k := lo; k < hi; k++ {
					e.bnew[k] = seg.insert(e.bfp[k])
				}
				continue
			}
			seg := &e.set.segs[g]
			// touch every home slot first: independent loads that the CPU
			// overlaps, so that the inserts below find them in cache
			sink += seg.touch(e.bfp[lo:hi])
			for k := lo; k < hi; k++ {
				e.bnew[k] = seg.insert(e.bfp[k])
			}
		}
		touchSink.Add(sink)
	})
}

// The merge's work items: groups of units for the counting sort (at most
// mergeGroups, and groupsPerWorker a worker, of at least unitsPerGroup
// units but in a small chunk), ranges of segments for the inserts. Each
// group costs the serial cursor pass a slot per segment, and its
// histogram is a table of numSegs counters that the pass reads across:
// on two workers 8 groups instead of 32 cost 3.7% less CPU and 6% less
// time on the SPIN design without symmetry (benchstat n=6, p=0.041). The
// groups do not change the result: each bucket keeps generation order.
const (
	mergeGroups     = 64
	groupsPerWorker = 4
	unitsPerGroup   = 8
	mergeRanges     = 128
)

// forEach runs f(0) … f(n-1), the workers taking indices as they come free.
func (e *engine) forEach(n int, f func(i int)) {
	var next atomic.Int64
	e.parallel(func(int) {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			f(i)
		}
	})
}

// touchSink keeps the touch loads from being optimised away.
var touchSink atomic.Uint64

// count gathers the merge's verdicts in generation order and returns the
// number of new states.
func (e *engine) count() int {
	e.forUnits(func(_ int, u *unit) {
		u.fresh = 0
		lo, hi := u.first, u.first+int64(len(u.fps))
		flags := e.isNew[lo:hi]
		for j, k := range e.kOf[lo:hi] {
			ok := u.fps[j] != dupStep && e.bnew[k]
			flags[j] = ok
			if ok {
				u.fresh++
			}
		}
	}, func() bool { return false })
	fresh := 0
	for _, u := range e.units {
		u.id = fresh
		fresh += u.fresh
	}
	return fresh
}

// collect is phase 3: number the chunk's fresh new states in generation
// order (up to MaxStates), copy them from their units into the next
// frontier (whose first state has id start), and record parent and action.
// It reports whether MaxStates stopped it.
func (e *engine) collect(fresh, start int) bool {
	full := false
	limit := e.bounds.MaxStates
	if limit == 0 || limit > maxIDs {
		limit = maxIDs // state numbers are 32 bits
	}
	if e.trail.n+fresh > limit {
		fresh, full = limit-e.trail.n, true
	}
	first := e.trail.n
	e.trail.grow(fresh)
	e.next.grow(fresh, &e.pool)
	e.forUnits(func(_ int, u *unit) { e.copyNew(u, first, first-start, fresh) }, func() bool { return false })
	e.distinct.Store(int64(e.trail.n))
	return full
}

// copyNew copies the new states of unit u into the next frontier: the
// chunk's first new state has id first and is state pos of the next
// frontier.
func (e *engine) copyNew(u *unit, first, pos, limit int) {
	if u.fresh == 0 || u.id >= limit {
		return
	}
	flags := e.isNew[u.first : u.first+int64(len(u.fps))]
	g := 0
	at := u.id
	st := e.stride
	p := 0 // u.packed's next state
	for i := u.lo; i < u.hi && at < limit; i++ {
		kids := at
		for end := g + int(u.nacts[i-u.lo]); g < end; g++ {
			if u.fps[g] == dupStep {
				continue
			}
			if flags[g] && at < limit {
				copy(e.next.state(pos+at, st), u.packed[p:p+st])
				e.trail.set(uint32(first+at), u.acts[g])
				at++
			}
			p += st
		}
		if at > kids {
			e.trail.setKids(e.base+uint32(i), at-kids)
		}
	}
}

func (e *engine) visitedBytes() int64 { return e.tableBytes() + e.trail.bytes() }

// memoryAt is the estimated memory of the search with steps generated
// steps in the chunk, taking units bytes of the units' buffers, and fresh
// new states to copy into the next frontier: the visited set and trail,
// the frontiers' blocks (and those the fresh states need beyond the free
// ones), the units' buffers and the merge's arrays. Buffers only grow; one
// that must grow is counted twice, old and new, as both are live until the
// collector frees the old one.
func (e *engine) memoryAt(units, steps, fresh int64) int64 {
	grown := func(have, need int64) int64 {
		if need > have {
			return have + need
		}
		return have
	}
	m := e.visitedBytes()
	m += e.pool.bytes()
	if fresh > 0 {
		ls := int64(blockStates())
		need := (int64(e.next.n) + fresh + ls - 1) / ls
		if more := need - int64(len(e.next.blocks)) - int64(len(e.pool.free)); more > 0 {
			m += more * ls * int64(e.stride)
		}
	}
	m += grown(e.unitsCap, units)
	m += grown(int64(cap(e.bfp)), steps) * mergeStepBytes
	return m
}

// noteMemory updates the estimate and its peak. Not for the workers.
func (e *engine) noteMemory(units, steps, fresh int64) int64 {
	m := e.memoryAt(units, steps, fresh)
	e.memory.Store(m)
	e.peak = max(e.peak, m)
	return m
}

// overMemory reports whether the estimate passes MaxMemory. The workers
// call it while they expand: nothing it reads changes then.
func (e *engine) overMemory(units, steps, fresh int64) bool {
	if e.bounds.MaxMemory <= 0 {
		return false
	}
	return e.memoryAt(units, steps, fresh) > e.bounds.MaxMemory
}

// progressInterval is how often Config.Progress is called.
var progressInterval = time.Second

// levelDone, when not nil, is called after each finished level, from the
// search's goroutine (a test seam: TestProgress holds the search there
// until a progress report has come, so that a fast machine cannot end the
// search before the first one).
var levelDone func(depth int)

func (e *engine) progressLoop(f func(Progress), stop <-chan struct{}) {
	t := time.NewTicker(progressInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			f(Progress{
				States:      e.distinct.Load(),
				Transitions: e.transitions.Load(),
				Depth:       int(e.depth.Load()),
				Seconds:     time.Since(e.start).Seconds(),
				MemoryBytes: e.memory.Load(),
				Level:       e.level.Load(),
				LevelDone:   e.levelDone.Load(),
			})
		}
	}
}
