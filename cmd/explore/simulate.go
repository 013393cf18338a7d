package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"lockcheck/counterexamples"
	"lockcheck/explore"
	"lockcheck/linearizability"
	"lockcheck/model"
)

func init() {
	register("simulate", "random runs of one design (swarm fault budgets, shrunk counterexamples), for designs too large to exhaust; -shard i/n for job runners", runSimulate)
}

// simArgs is what the flags of explore simulate ask for.
type simArgs struct {
	name    string
	design  model.Design
	props   []model.Property
	seed    uint64
	runs    int
	depth   int
	swarm   bool
	workers int
	shard   shard
	json    bool
	out     string
}

// shard is -shard i/n: the i-th of n equal, disjoint ranges of runs.
type shard struct{ index, count int }

// runs is the shard's range of the sweep's runs.
func (s shard) runs(total int) (from, to int) {
	return int(int64(total) * int64(s.index) / int64(s.count)), int(int64(total) * int64(s.index+1) / int64(s.count))
}

// parseShard reads "i/n" with 0 ≤ i < n ≤ 100000.
func parseShard(v string) (shard, error) {
	i, n, ok := strings.Cut(v, "/")
	a, err1 := strconv.Atoi(i)
	b, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || b < 1 || b > 100_000 || a < 0 || a >= b || strconv.Itoa(a) != i || strconv.Itoa(b) != n {
		return shard{}, fmt.Errorf("-shard %q: want i/n with 0 ≤ i < n ≤ 100000, e.g. 0/4 … 3/4", clip(v))
	}
	return shard{a, b}, nil
}

const (
	defaultSimRuns  = 1000
	defaultSimDepth = 1000
)

func parseSimArgs(args []string) (a simArgs, help bool, usage string, err error) {
	fs := flag.NewFlagSet("explore simulate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	name := fs.String("design", "redis/cad/none/plain", "design name or preset (see 'explore designs')")
	overrides := addDesignFlags(fs)
	props := fs.String("properties", "all", "comma-separated properties to check: "+strings.Join(model.PropertyNames(), ", ")+", or all")
	seed := fs.Uint64("seed", 1, "the sweep's seed: run r plays the schedule drawn from (seed, r)")
	runs := fs.Int("runs", defaultSimRuns, "runs in the whole sweep (1 to 1000000000); -shard plays a share of them")
	depth := fs.Int("depth", defaultSimDepth, fmt.Sprintf("steps per run at most (1 to %d); a run also ends when no step is enabled", explore.MaxSimDepth))
	swarm := fs.Bool("swarm", true, "vary the fault budget from run to run: each kind of fault off, or allowed 1 to 3 times (-swarm=false: the design's budget in every run)")
	workers := fs.Int("workers", 0, "goroutines (0 = GOMAXPROCS); the result is the same for any number")
	shardFlag := fs.String("shard", "0/1", "play only the i-th of n equal, disjoint ranges of the runs, and print one JSON line for 'explore merge'")
	asJSON := fs.Bool("json", false, "print one JSON object on one line instead of text (bad input too: {\"error\": ...})")
	out := fs.String("out", "", "write each violated property's shrunk counterexample (.txt, .html, -porcupine.html) into this folder")
	var u strings.Builder
	fs.SetOutput(&u)
	fmt.Fprintln(&u, "usage: explore simulate -design NAME [-seed S] [-runs N] [-depth D] [-shard i/n] [flags]")
	fmt.Fprintln(&u, "Exit codes: 0 no run broke an always property (not a proof), 1 one did, 2 bad input, 3 interrupted before every run was played.")
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	usage = u.String()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return a, true, usage, nil
		}
		return a, false, usage, errors.New(oneLine(flagHint(fs, err)))
	}
	if fs.NArg() != 0 {
		return a, false, usage, fmt.Errorf("unexpected argument %q (flags only; see explore simulate -h)", clip(fs.Arg(0)))
	}
	d, err := designFromFlags(fs, *name, overrides)
	if err != nil {
		return a, false, usage, err
	}
	if a.props, err = model.ParsePropertiesFor(&d, *props); err != nil {
		return a, false, usage, err
	}
	if *runs < 1 || *runs > 1_000_000_000 {
		return a, false, usage, fmt.Errorf("-runs %d: want 1 to 1000000000", *runs)
	}
	if *depth < 1 || *depth > explore.MaxSimDepth {
		return a, false, usage, fmt.Errorf("-depth %d: want 1 to %d", *depth, explore.MaxSimDepth)
	}
	if *workers < 0 || *workers > maxWorkersFlag {
		return a, false, usage, fmt.Errorf("-workers %d: want 0 (all cores) to %d", *workers, maxWorkersFlag)
	}
	if a.shard, err = parseShard(*shardFlag); err != nil {
		return a, false, usage, err
	}
	if a.shard.count > *runs {
		return a, false, usage, fmt.Errorf("-shard %d/%d with -runs %d: %d shards of %d runs leave shards with no run; want n from 1 to -runs", a.shard.index, a.shard.count, *runs, a.shard.count, *runs)
	}
	a.name, a.design, a.seed, a.runs, a.depth, a.swarm, a.workers = strings.TrimSpace(*name), d, *seed, *runs, *depth, *swarm, *workers
	a.json, a.out = *asJSON || a.shard.count > 1, *out
	return a, false, usage, nil
}

func runSimulate(args []string, stdout, stderr io.Writer) int {
	a, help, usage, err := parseSimArgs(args)
	if help {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if err != nil {
		return failUsage(stdout, stderr, "simulate", wantsJSON(args) || strings.Contains(strings.Join(args, " "), "-shard"), err.Error())
	}
	if a.out != "" {
		if err := checkOutDir(a.out); err != nil {
			return failUsage(stdout, stderr, "simulate", a.json, fmt.Sprintf("-out %s: %v", a.out, err))
		}
	}
	ctx, signalled, stopSignals := interruptible()
	defer stopSignals()
	pp := newProgressPrinter(stderr, "explore simulate: ")
	from, to := a.shard.runs(a.runs)
	start := time.Now()
	rep, err := explore.Simulate(explore.SimConfig{
		Design: a.design, Properties: a.props, Seed: a.seed, From: from, To: to, Depth: a.depth, Swarm: a.swarm,
		Workers: a.workers, Context: ctx,
		Progress: func(done int) { pp.runs(done, to-from, time.Since(start).Seconds()) },
	})
	pp.done()
	if err != nil {
		return failUsage(stdout, stderr, "simulate", a.json, err.Error())
	}
	sum := newSimSummary(&a, from, to, rep)
	if rep.Interrupted {
		sum.Stats.Signal = signalled()
		pp.line(fmt.Sprintf("stopped by %s after %d of %d runs: the partial result follows", sum.Stats.Signal, rep.Done, to-from))
	}
	return finishSim(stdout, stderr, "simulate", sum, a.json, a.out)
}

// simSummary is the result of a sweep or of one shard: the -json line, the
// input of explore merge, and what the text is printed from.
type simSummary struct {
	Kind       string         `json:"kind"` // "lockcheck-simulate"
	Design     string         `json:"design"`
	Properties []string       `json:"properties"`
	Seed       uint64         `json:"seed"`
	Runs       int            `json:"runs"` // in the whole sweep
	Depth      int            `json:"depth"`
	Swarm      bool           `json:"swarm"`
	Shards     []shardJSON    `json:"shards"` // the ranges of runs this covers, in order
	Budget     string         `json:"fault_budget"`
	Results    []simResJSON   `json:"results"`
	Faults     []faultUseJSON `json:"faults"` // runs that drew each kind of fault
	Stats      simStatsJSON   `json:"stats"`
}

type shardJSON struct {
	From int `json:"from"`
	To   int `json:"to"` // exclusive
	Done int `json:"done"`
}

type simResJSON struct {
	Property     string   `json:"property"`
	Expect       string   `json:"expect"`
	Status       string   `json:"status"` // violated, seen, not-found
	Runs         int      `json:"runs"`   // runs that showed it
	Run          *int     `json:"run,omitempty"`
	RawSteps     *int     `json:"raw_steps,omitempty"`
	Steps        []string `json:"steps,omitempty"` // shrunk (violated) or as played (seen)
	Linearizable *string  `json:"linearizable"`
}

type faultUseJSON struct {
	Kind string `json:"kind"`
	Runs int    `json:"runs"`
}

type simStatsJSON struct {
	Steps   int64   `json:"steps"`
	Seconds float64 `json:"seconds"`
	Signal  string  `json:"signal,omitempty"`
}

func newSimSummary(a *simArgs, from, to int, rep *explore.SimReport) *simSummary {
	s := &simSummary{
		Kind: "lockcheck-simulate", Design: a.design.Name(), Seed: a.seed, Runs: a.runs, Depth: a.depth, Swarm: a.swarm,
		Shards: []shardJSON{{from, to, rep.Done}}, Budget: model.BudgetText(&a.design),
		Results: []simResJSON{}, Faults: []faultUseJSON{},
		Stats: simStatsJSON{Steps: rep.Steps, Seconds: rep.Seconds},
	}
	for _, p := range a.props {
		s.Properties = append(s.Properties, p.Name)
	}
	for _, r := range rep.Results {
		res := simResJSON{Property: r.Property, Expect: r.Expect.String(), Status: string(r.Status), Runs: r.Runs}
		if r.Trace != nil {
			run, raw := r.Run, r.RawSteps
			res.Run, res.RawSteps = &run, &raw
			res.Steps = []string{}
			for _, act := range r.Trace {
				res.Steps = append(res.Steps, act.String())
			}
		}
		s.Results = append(s.Results, res)
	}
	for _, f := range rep.Faults {
		s.Faults = append(s.Faults, faultUseJSON{f.Kind, f.Runs})
	}
	return s
}

// done is the runs played; complete whether every run of the sweep was.
func (s *simSummary) done() (done int, complete bool) {
	n := 0
	for _, sh := range s.Shards {
		done += sh.Done
		n += sh.To - sh.From
	}
	return done, done == s.Runs && n == s.Runs
}

// played reports whether every run of the ranges listed was played.
func (s *simSummary) played() bool {
	for _, sh := range s.Shards {
		if sh.Done != sh.To-sh.From {
			return false
		}
	}
	return true
}

// finishSim adds porcupine's verdicts, writes -out, prints and picks the
// exit code (simulate and merge alike). A shard is complete when it played
// its runs; a merge when its shards cover the sweep.
func finishSim(stdout, stderr io.Writer, cmd string, s *simSummary, asJSON bool, out string) int {
	d, err := model.ParseDesign(s.Design)
	if err != nil {
		return failUsage(stdout, stderr, cmd, asJSON, err.Error())
	}
	code := exitOK
	var violated []simResJSON
	var runs []*model.Run
	var writeErr error
	var files []string
	for i, r := range s.Results {
		if r.Status != string(explore.Violated) {
			continue
		}
		code = exitViolated
		trace, err := parseSteps(&d, r.Steps)
		if err != nil {
			return failUsage(stdout, stderr, cmd, asJSON, fmt.Sprintf("%s: %v", r.Property, err))
		}
		run, err := model.Replay(&d, trace)
		if err != nil {
			return failUsage(stdout, stderr, cmd, asJSON, fmt.Sprintf("the counterexample for %s does not replay: %v", r.Property, err))
		}
		if at, ok := run.Violated(r.Property); !ok || at != len(trace) {
			return failUsage(stdout, stderr, cmd, asJSON, fmt.Sprintf("the counterexample for %s does not end at its violation", r.Property))
		}
		if lr, err := linearizability.CheckRun(run, linearizability.Options{Timeout: 10 * time.Second}); err == nil {
			w := linWord(lr.Verdict)
			s.Results[i].Linearizable = &w
		}
		violated = append(violated, s.Results[i])
		runs = append(runs, run)
		if out != "" && writeErr == nil {
			p, err := counterexamples.WriteCounterexample(out, counterexamples.Counterexample{
				Design: d, Property: r.Property, Trace: trace, Bounds: simBoundsText(s),
				Regenerate: fmt.Sprintf("go run ./cmd/explore simulate -design %s -seed %d -runs %d -depth %d -swarm=%v -out %s", d.Name(), s.Seed, s.Runs, s.Depth, s.Swarm, out),
				FoundBy:    fmt.Sprintf("random simulation, run %d of %d (seed %d), %d steps shrunk to %d: not breadth-first search, so it may not be the shortest", *r.Run, s.Runs, s.Seed, *r.RawSteps, len(trace)),
			})
			if err != nil {
				writeErr = err
			} else {
				files = append(files, p)
			}
		}
	}
	complete := s.played()
	if cmd == "merge" {
		_, complete = s.done()
	}
	if !complete && code == exitOK {
		code = exitIncomplete
	}
	if asJSON {
		line, err := json.Marshal(s)
		if err != nil {
			return failUsage(stdout, stderr, cmd, false, err.Error())
		}
		fmt.Fprintf(stdout, "%s\n", line)
	} else {
		writeSimText(stdout, s, violated, runs)
		for _, p := range files {
			fmt.Fprintln(stdout, "wrote", counterexamples.ShellQuote(p))
		}
	}
	if writeErr != nil {
		fmt.Fprintf(stderr, "explore %s: -out %s: %v (the verdict above stands; not every file was written)\n", cmd, out, writeErr)
		return exitUsage
	}
	return code
}

// maxSimSteps bounds a result's trace, as a scenario's is bounded.
const maxSimSteps = 100000

func parseSteps(d *model.Design, steps []string) ([]model.Action, error) {
	trace := []model.Action{}
	for i, st := range steps {
		a, n, err := model.ParseStep(d, st)
		if err != nil {
			return nil, fmt.Errorf("step %d: %v", i+1, err)
		}
		if len(trace)+n > maxSimSteps {
			return nil, fmt.Errorf("step %d: more than %d steps", i+1, maxSimSteps)
		}
		for ; n > 0; n-- {
			trace = append(trace, a)
		}
	}
	return trace, nil
}

func simBoundsText(s *simSummary) string {
	swarm := "the design's fault budget in every run"
	if s.Swarm {
		swarm = "swarm: each kind of fault off or allowed 1 to 3 times per run"
	}
	return fmt.Sprintf("%d random runs (seed %d) of at most %d steps, %s; fault budget: %s", s.Runs, s.Seed, s.Depth, swarm, s.Budget)
}

func writeSimText(w io.Writer, s *simSummary, violated []simResJSON, runs []*model.Run) {
	fmt.Fprintf(w, "design %s\n", s.Design)
	fmt.Fprintf(w, "simulation: %s\n", simBoundsText(s))
	done, complete := s.done()
	if !complete {
		var ranges []string
		for _, sh := range s.Shards {
			ranges = append(ranges, fmt.Sprintf("%d of runs %d…%d", sh.Done, sh.From, sh.To-1))
		}
		fmt.Fprintf(w, "played: %d of the %d runs (%s)\n", done, s.Runs, strings.Join(ranges, ", "))
	}
	fmt.Fprintln(w)
	for _, r := range s.Results {
		var v string
		switch r.Status {
		case string(explore.Violated):
			v = fmt.Sprintf("violated (%d steps, shrunk from %d in run %d; %d of %d runs)", len(r.Steps), *r.RawSteps, *r.Run, r.Runs, done)
		case string(explore.Seen):
			v = fmt.Sprintf("seen (%d steps in run %d; %d of %d runs)", len(r.Steps), *r.Run, r.Runs, done)
		default:
			what := "counterexample"
			if r.Expect == model.Sometimes.String() {
				what = "witness"
			}
			v = fmt.Sprintf("no %s in %d runs (not a proof)", what, done)
		}
		fmt.Fprintf(w, "  %-19s %s\n", r.Property, v)
	}
	var used []string
	for _, f := range s.Faults {
		used = append(used, fmt.Sprintf("%s in %d", f.Kind, f.Runs))
	}
	if len(used) == 0 {
		used = []string{"none"}
	}
	fmt.Fprintf(w, "\nfaults drawn (runs): %s\n", strings.Join(used, ", "))
	if len(violated) > 0 {
		fmt.Fprintf(w, "\nshrunk counterexample for %s (%d steps):\n\n%s", violated[0].Property, len(violated[0].Steps), model.Render(runs[0]))
		if violated[0].Linearizable != nil {
			fmt.Fprintf(w, "linearizable: %s\n", *violated[0].Linearizable)
		}
		if len(violated) > 1 {
			var others []string
			for _, r := range violated[1:] {
				others = append(others, fmt.Sprintf("%s (%d steps)", r.Property, len(r.Steps)))
			}
			fmt.Fprintf(w, "\nalso violated: %s; show one with -properties NAME\n", strings.Join(others, ", "))
		}
	}
	fmt.Fprintf(w, "\nsimulation: %s steps; time: %.2f s\n", thousands(s.Stats.Steps), s.Stats.Seconds)
}
