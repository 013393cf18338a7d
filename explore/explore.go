// Package explore is bounded exhaustive search over the model: breadth-first,
// so the first counterexample it finds for a property is a shortest one.
//
// The search goes level by level, each level in chunks of frontier states
// taken in order (so that the work arrays stay the size of a chunk).
// Visited states are kept only as 64-bit fingerprints (of the state's
// class under client renaming when Symmetry is on: the classes of
// model.Canonical) in a compact ordered hash set; full states are kept
// only for the level being expanded and the next one, in blocks that go
// back to a pool as soon as their chunk is done. Each visited state also
// keeps the index of the action that reached it and the number of states
// first reached from it (2 bytes): its parent follows from these counts,
// and a trace is rebuilt by replaying from model.Init. With symmetry, the
// state kept for expansion is the one actually reached, not its canonical
// form, so the recorded actions replay as they are.
//
// Bounds.Bitstate replaces the fingerprint set by a bit array (SPIN's
// bitstate search): far less memory per state, but states may be missed,
// so that a verdict without a counterexample is only probable (see
// bitSet).
//
// With several workers the result is the same as with one: each level's
// successors are generated in parallel, then merged in the order of the
// level (the order one worker would have produced), and the first state to
// reach a new fingerprint in that order becomes its parent. Verdicts,
// traces, and every count except timing are identical for any Workers.
//
// Fingerprints can collide: two different states with the same 64-bit
// fingerprint count as one, which can only hide states, never invent a
// counterexample (every trace is rebuilt and replayed through model.Step).
// With the model's hash the chance is about n²/2⁶⁵ for n states: below
// 10⁻⁵ for 10⁷ states.
package explore

import (
	"context"
	"fmt"

	"lockcheck/model"
)

// Status is a property's verdict within the bounds.
type Status string

const (
	Holds      Status = "holds"      // Always: no reachable state violates it (within bounds)
	Violated   Status = "violated"   // Always: a counterexample was found
	Seen       Status = "seen"       // Sometimes: a witness was found
	NotSeen    Status = "not-seen"   // Sometimes: no reachable state shows it (within bounds)
	Incomplete Status = "incomplete" // a bound stopped the search before a verdict
	// A bitstate search (Bounds.Bitstate) that found no counterexample
	// (witness) proves nothing: it may have missed states (Stats.Bitstate).
	HoldsProbably   Status = "holds-probabilistic"
	NotSeenProbably Status = "not-seen-probabilistic"
)

// Bounds limit the search.
type Bounds struct {
	MaxSteps  int   // depth: actions from the initial state (0 = no limit; the horizon bounds time)
	MaxStates int   // distinct states (0 = no limit); reaching it gives incomplete
	MaxMemory int64 // bytes of search tables and frontiers, estimated (0 = no limit); reaching it gives incomplete
	Workers   int   // goroutines (0 = GOMAXPROCS)
	Symmetry  bool  // canonicalise interchangeable clients
	// Bitstate, if not 0, makes a bitstate search: the visited set is an
	// array of 2^Bitstate bits (MinBitstate to MaxBitstate), a verdict
	// without a counterexample is only probable (see bitSet).
	Bitstate int
	// FrontierDir, if not "", keeps the frontiers in two files in that
	// folder (unlinked at once) instead of memory: only one chunk of each
	// is in memory at a time. The same result, with the disk's time.
	FrontierDir string
	// Compact keeps the visited set in a compact table (a quotient filter
	// that stores about 40 of a fingerprint's 64 bits: 6.2 bytes a state
	// instead of 9.9 to 10.4) for about a quarter more CPU. The same
	// states and verdicts; only the bytes per state differ.
	Compact bool
}

// Config is one search.
type Config struct {
	Design     model.Design
	Properties []model.Property // nil = all
	Bounds     Bounds
	Progress   func(Progress) // called about once a second on long runs, from another goroutine; may be nil
	// Found is called as soon as a property is decided (a counterexample
	// or a witness), with the states visited so far, from the goroutine
	// that called Check; may be nil.
	Found func(r Result, states int64)
	// First stops the search at the end of the first level that violates
	// an always property; the undecided properties are incomplete.
	First bool
	// StopWhenViolated stops the search at the end of the first level by
	// which every one of these always properties is violated (StoppedBy
	// "all-violated"); the undecided properties are incomplete. The fix
	// search uses it: a neighbour that still breaks everything its design
	// breaks fixes nothing, whatever the other verdicts. nil: never.
	StopWhenViolated []string
	// Allow, if not nil, restricts the search to the actions it allows:
	// the others are never taken, so the verdicts are about that part of
	// the space only (Shorten uses it to search among the faults one
	// counterexample used). It must not depend on which client takes the
	// action when Bounds.Symmetry is on. nil: every enabled action.
	Allow func(model.Action) bool
	// From, if not nil, starts the search at the state this trace reaches
	// from model.Init instead of at the initial state (every step of it
	// must be enabled): "the shortest violation from here". Depths and
	// MaxSteps count from that state, the results' traces are the steps
	// after From, and From's own steps are not judged (the caller has
	// seen them); Coverage is of the part explored. nil: model.Init.
	From []model.Action
	// Context stops the search when done (StoppedBy "interrupted"), within
	// one work unit of the level being expanded; the level's partial
	// findings are dropped, what earlier levels proved stands. nil: never.
	Context context.Context
	// Checkpoint, if not nil, writes the search's state to a folder at
	// level boundaries (checkpoint.go), and its Stop ends the search at
	// the end of a level, after a checkpoint. nil: none.
	Checkpoint *Checkpoint
	// Resume, if not "", is a folder whose checkpoint the search goes on
	// from instead of the initial state: the same Design, Properties and
	// bounds (but Workers and FrontierDir) as the search that wrote it, or
	// an error wrapping ErrCheckpoint. The report is the one the search
	// would have given had it never stopped (but Seconds and the
	// memory's peak).
	Resume string
}

// Progress is a snapshot of a running search.
type Progress struct {
	States      int64
	Transitions int64
	Depth       int
	Seconds     float64 // since the search began
	MemoryBytes int64   // estimated memory of the search (see Stats.MemoryBytes)
	Level       int64   // states of the level being expanded
	LevelDone   int64   // of which expanded so far
}

// Result is one property's verdict. Trace is the shortest counterexample
// (Always) or witness (Sometimes) from the initial state (with
// Config.From: from the state it reaches, the steps after it); nil
// otherwise.
type Result struct {
	Property string
	Expect   model.Expectation
	Status   Status
	Trace    []model.Action
	// Vacuous, for an always property that holds, says why the verdict
	// exercised nothing ("no lock expired or was lost while held"); "" when
	// its witness occurred in the explored space (model.Vacuity).
	Vacuous string
}

// Stats describe the search. Every field but Seconds is the same for any
// number of workers.
type Stats struct {
	Distinct    int64
	Transitions int64
	Depth       int
	Complete    bool   // the reachable space within MaxSteps was exhausted
	StoppedBy   string // what stopped the search: "max-steps", "max-states", "max-memory", "first", "all-violated", "interrupted", or "" (every property decided)
	// Proved is the depth up to which every step was checked: no undecided
	// property has a counterexample (or witness) of Proved steps or fewer.
	Proved  int
	Seconds float64
	// VisitedBytes is what the search keeps per visited state: the
	// fingerprint table and the trail (parent and action). Divided by
	// Distinct, it is the bytes per visited state.
	VisitedBytes int64
	// MemoryBytes is the peak estimated memory of the search: VisitedBytes
	// plus the full states of the levels being expanded and built. This is
	// what Bounds.MaxMemory limits.
	MemoryBytes int64
	// Bitstate describes the bit array of a bitstate search and how many
	// states it is expected to have missed; nil for an exact search.
	Bitstate *Bitstate
}

// Report is the outcome of Check.
type Report struct {
	Design  model.Design
	Bounds  Bounds
	Results []Result
	Stats   Stats
	// Coverage is what the steps of the explored space did: the action
	// kinds that occurred (the faults used) and whether a lock was lost
	// while held. Levels cut short by a bound are not counted.
	Coverage model.Coverage
	// Counts are the explored space's steps by action kind and client
	// phase, and its clients by phase (TLC's -coverage); the same for any
	// number of workers.
	Counts Counts
}

// Result finds a property's result by name.
func (r *Report) Result(name string) (Result, bool) {
	for _, res := range r.Results {
		if res.Property == name {
			return res, true
		}
	}
	return Result{}, false
}

// String is a one-line verdict, for messages.
func (r Result) String() string {
	if r.Trace != nil {
		return fmt.Sprintf("%s: %s (%d steps)", r.Property, r.Status, len(r.Trace))
	}
	return fmt.Sprintf("%s: %s", r.Property, r.Status)
}
