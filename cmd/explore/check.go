package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"lockcheck/counterexamples"
	"lockcheck/explore"
	"lockcheck/linearizability"
	"lockcheck/model"
)

func init() {
	register("check", "exhaustive breadth-first search of one design: verdicts and shortest counterexamples", runCheck)
}

// checkArgs is what the flags of explore check ask for.
type checkArgs struct {
	name   string // as given: a preset stays "demo2"
	design model.Design
	props  []model.Property
	bounds explore.Bounds
	json   bool
	first  bool
	out    string // folder for the counterexample files; "" = none
	signal string // the signal that stopped the search, if one did
	cover  bool   // -coverage: the text output counts the steps (-json always does)
	ck     ckArgs // -checkpoint, -checkpoint-every, -resume (checkpoint.go)
}

// Limits on the numeric flags (the design's own numbers are checked by
// Design.Validate).
const (
	maxStepsFlag   = 1 << 20
	maxStatesFlag  = 4_000_000_000 // state numbers are 32 bits
	maxMemoryFlag  = 1 << 24       // MB: 16 TB
	maxWorkersFlag = 256
)

// designFlags are the flags that override a number of the design, each a
// design parameter of the same name.
var designFlags = []struct{ name, usage string }{
	{"horizon", "last tick (design parameter horizon)"},
	{"pauses", "fault budget: pauses per run (design parameter pauses)"},
	{"max-pause", "longest pause in ticks (design parameter max-pause)"},
	{"crashes", "fault budget: client crashes per run (design parameter crashes)"},
	{"slow", "fault budget: slow jobs per run (design parameter slow)"},
	{"clients", "clients, one job each (design parameter clients)"},
}

// addDesignFlags declares designFlags on fs.
func addDesignFlags(fs *flag.FlagSet) []*int {
	overrides := make([]*int, len(designFlags))
	for i, f := range designFlags {
		overrides[i] = fs.Int(f.name, 0, f.usage+"; default: the design's")
	}
	return overrides
}

// designFromFlags parses the design name, then applies the design flags
// that were given (model.Override: a derived default such as the horizon
// follows a longer -max-pause as it would follow max-pause= in the name).
func designFromFlags(fs *flag.FlagSet, name string, overrides []*int) (model.Design, error) {
	d, err := model.ParseDesign(name)
	if err != nil {
		return d, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	inName := map[string]string{} // the parameters the name gives, as written
	for _, kv := range strings.Split(strings.TrimSpace(name), ",")[1:] {
		if k, v, ok := strings.Cut(kv, "="); ok {
			inName[k] = v
		}
	}
	var given []model.Setting
	for i, f := range designFlags {
		if set[f.name] {
			if v, ok := inName[f.name]; ok && v != strconv.Itoa(*overrides[i]) {
				return d, fmt.Errorf("-%s %d conflicts with %s=%s in the design name %q: give the number once", f.name, *overrides[i], f.name, clip(v), clip(strings.TrimSpace(name)))
			}
			given = append(given, model.Setting{Name: f.name, Value: *overrides[i]})
		}
	}
	return model.Override(d, given...)
}

// parseCheckArgs reads the flags. help is true for -h; err is a one-line
// description of bad input.
func parseCheckArgs(args []string) (a checkArgs, help bool, usage string, err error) {
	fs := flag.NewFlagSet("explore check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	name := fs.String("design", "redis/cad/none/plain", "design name or preset (see 'explore designs')")
	steps := fs.Int("steps", 0, "at most this many steps from the initial state (0 = no limit; the horizon bounds time)")
	overrides := addDesignFlags(fs)
	props := fs.String("properties", "all", "comma-separated properties to check: "+strings.Join(model.PropertyNames(), ", ")+", or all")
	workers := fs.Int("workers", 0, "search goroutines (0 = GOMAXPROCS); the result is the same for any number")
	sym := fs.Bool("symmetry", true, "symmetry reduction over interchangeable clients (-symmetry=false to turn off)")
	maxStates := fs.Int64("max-states", 0, "stop after this many distinct states: incomplete (0 = no limit)")
	maxMemory := fs.Int64("max-memory", 0, "stop before the process's resident memory would pass this many MB: incomplete (0 = no limit; at least 64)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text (bad input too: {\"error\": ...})")
	first := fs.Bool("first", false, "stop at the first violation of any always property (the others are then incomplete)")
	bitstate := fs.Bool("bitstate", false, "bitstate search (SPIN's -DBITSTATE): visited states are 3 bits each in an array of 2^bits, for state spaces larger than memory; a property not violated then holds only probably (exit 5), a violation found is real")
	bitsLog := fs.Int("bits", 32, fmt.Sprintf("with -bitstate: the bit array has 2^bits bits (%d to %d; 32 = 512 MB)", explore.MinBitstate, explore.MaxBitstate))
	frontierDir := fs.String("frontier-dir", "", "keep the frontiers (the states of the level being searched and of the next) in a file in this folder, deleted at once, instead of memory: only a chunk of each is in memory")
	compact := fs.Bool("compact", false, "keep the visited states in a compact table (about 6.2 bytes a state instead of 10, for about a quarter more CPU): the same states and verdicts")
	out := fs.String("out", "", "write each violated property's shortest counterexample (.txt, .html, -porcupine.html) into this folder")
	ckFlags := addCheckpointFlags(fs)
	cover := fs.Bool("coverage", false, "print the coverage: the explored space's steps by action, fault and client phase, and what the design can do but never did (always in -json)")
	var u bytes.Buffer
	fs.SetOutput(&u)
	fmt.Fprintln(&u, "usage: explore check -design NAME [flags]")
	fmt.Fprintln(&u, "Exit codes: 0 every always-property holds within the bounds, 1 one is violated (even if the search was then stopped), 2 bad input, 3 incomplete, 4 every always-property holds but some only vacuously (no lock was ever lost while held: the fault budget never bit), 5 no always-property is violated in a -bitstate search (probable, not a proof).")
	fmt.Fprintln(&u, "Each violation is printed on stderr as soon as found. SIGINT (Ctrl-C) or SIGTERM stops the search and prints the partial result; a second one kills.")
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
		return a, false, usage, fmt.Errorf("unexpected argument %q (flags only; see explore check -h)", clip(fs.Arg(0)))
	}
	d, err := designFromFlags(fs, *name, overrides)
	if err != nil {
		return a, false, usage, err
	}
	a.design = d
	if a.props, err = model.ParsePropertiesFor(&d, *props); err != nil {
		return a, false, usage, err
	}
	for _, n := range []struct {
		flag, zero string
		v, limit   int64
	}{
		{"steps", "no limit", int64(*steps), maxStepsFlag},
		{"workers", "all cores", int64(*workers), maxWorkersFlag},
		{"max-states", "no limit", *maxStates, maxStatesFlag},
		{"max-memory", "no limit", *maxMemory, maxMemoryFlag},
	} {
		if n.v < 0 || n.v > n.limit {
			return a, false, usage, fmt.Errorf("-%s %d: want 0 (%s) to %d", n.flag, n.v, n.zero, n.limit)
		}
	}
	if *maxMemory != 0 && *maxMemory < minMaxMemory {
		return a, false, usage, fmt.Errorf("-max-memory %d: want 0 (no limit) or %d to %d MB (the process itself takes about %d)", *maxMemory, minMaxMemory, int64(maxMemoryFlag), processReserve>>20)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["bits"] && !*bitstate {
		return a, false, usage, fmt.Errorf("-bits %d: only with -bitstate", *bitsLog)
	}
	if *bitstate && (*bitsLog < explore.MinBitstate || *bitsLog > explore.MaxBitstate) {
		return a, false, usage, fmt.Errorf("-bits %d: want %d to %d (the bit array has 2^bits bits)", *bitsLog, explore.MinBitstate, explore.MaxBitstate)
	}
	if arrayMB := int64(1) << max(*bitsLog-23, 0); *bitstate && *maxMemory != 0 && arrayMB >= *maxMemory {
		return a, false, usage, fmt.Errorf("-bits %d: the bit array (%d MB) does not fit in -max-memory %d", *bitsLog, arrayMB, *maxMemory)
	}
	a.name = strings.TrimSpace(*name)
	a.bounds = explore.Bounds{
		MaxSteps:  *steps,
		MaxStates: int(*maxStates),
		MaxMemory: *maxMemory << 20,
		Workers:   *workers,
		Symmetry:  *sym,
	}
	if *bitstate {
		a.bounds.Bitstate = *bitsLog
	}
	if *compact && *bitstate {
		return a, false, usage, fmt.Errorf("-compact and -bitstate: choose one (-bitstate has no table of states)")
	}
	a.bounds.Compact = *compact
	if set["frontier-dir"] {
		if *frontierDir == "" {
			return a, false, usage, fmt.Errorf("-frontier-dir: empty (want a folder)")
		}
		if fi, err := os.Stat(*frontierDir); err != nil || !fi.IsDir() {
			return a, false, usage, fmt.Errorf("-frontier-dir %s: not a folder", clip(*frontierDir))
		}
		a.bounds.FrontierDir = *frontierDir
	}
	a.json = *asJSON
	a.first = *first
	a.out = *out
	a.cover = *cover
	if a.ck, err = ckFlags.parse(set); err != nil {
		return a, false, usage, err
	}
	return a, false, usage, nil
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	a, help, usage, err := parseCheckArgs(args)
	if help {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if err != nil {
		return failUsage(stdout, stderr, "check", wantsJSON(args), err.Error())
	}
	d := a.design
	if a.out != "" { // before the search: a bad folder is bad input, not a late failure
		if err := checkOutDir(a.out); err != nil {
			return failUsage(stdout, stderr, "check", a.json, fmt.Sprintf("-out %s: %v", a.out, err))
		}
	}
	// the search's memory is a few large arrays without pointers: collecting
	// often costs little and keeps the process near its live size (on the
	// SPIN configuration without symmetry: peak RSS 850 MB at the default
	// GOGC, 610 MB at 25, 500 MB at 10 for 3% more CPU)
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	ctx, signalled, stopSignals := interruptible()
	defer stopSignals()
	pp := newProgressPrinter(stderr, "explore check: ")
	start := time.Now()
	bounds := processBounds(a.bounds)
	if a.bounds.MaxMemory > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(a.bounds.MaxMemory))
	}
	cfg := explore.Config{
		Design: d, Properties: a.props, Bounds: bounds, First: a.first, Context: ctx,
		Progress: pp.progress,
		Found: func(r explore.Result, states int64) {
			if r.Status != explore.Violated {
				return // witnesses are in the result; violations are news
			}
			pp.line(fmt.Sprintf("%s %s (%d steps) after %s states, %.1fs", r.Property, r.Status, len(r.Trace), thousands(states), time.Since(start).Seconds()))
		},
	}
	a.ck.configure(&cfg, ctx, signalled, pp)
	rep, err := explore.Check(cfg)
	pp.done()
	if err != nil {
		return failUsage(stdout, stderr, "check", a.json, err.Error())
	}
	if rep.Stats.StoppedBy == "interrupted" {
		a.signal = signalled()
		pp.line(fmt.Sprintf("stopped by %s: the partial result follows", a.signal))
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	peak := uint64(peakResidentBytes())
	if peak == 0 {
		peak = ms.Sys
	}
	if err := addHint(rep, a.bounds, stderr); err != nil {
		return failUsage(stdout, stderr, "check", a.json, err.Error())
	}
	code := exitOK
	for _, r := range rep.Results {
		if r.Vacuous != "" && code == exitOK {
			code = exitVacuous
		}
		if (r.Status == explore.HoldsProbably || r.Status == explore.NotSeenProbably) && (code == exitOK || code == exitVacuous) {
			code = exitProbable
		}
		if r.Status == explore.Incomplete && (code == exitOK || code == exitVacuous || code == exitProbable) {
			code = exitIncomplete
		}
		if r.Status == explore.Violated {
			code = exitViolated // a counterexample is final, however the search ended
		}
	}
	var runs []*model.Run // replays of the violated Always properties, in order
	var violated []explore.Result
	for _, r := range rep.Results {
		if r.Status != explore.Violated {
			continue
		}
		run, err := model.Replay(&d, r.Trace)
		if err != nil {
			return failUsage(stdout, stderr, "check", a.json, fmt.Sprintf("internal error: the counterexample for %s does not replay: %v", r.Property, err))
		}
		runs = append(runs, run)
		violated = append(violated, r)
	}
	lins := make([]*linearizability.Result, len(runs)) // porcupine's verdict on each counterexample
	for i, run := range runs {
		if lr, err := linearizability.CheckRun(run, linearizability.Options{Timeout: 10 * time.Second}); err == nil {
			lins[i] = &lr
		}
	}
	var files []string
	var writeErr error
	if a.out != "" {
		for _, r := range violated {
			write := writeCounterexample
			if rep.Stats.Bitstate != nil {
				// not "shortest": a missed state may have hidden a shorter one
				write = func(dir string, d model.Design, property string, trace []model.Action, bounds string) (string, error) {
					return counterexamples.WriteCounterexample(dir, counterexamples.Counterexample{Design: d, Property: property, Trace: trace, Bounds: bounds,
						FoundBy: fmt.Sprintf("bitstate breadth-first search (2^%d bits; a real trace, maybe not a shortest one), within bounds: %s", a.bounds.Bitstate, bounds)})
				}
			}
			p, err := write(a.out, d, r.Property, r.Trace, counterexamples.BoundsText(d, a.bounds))
			if err != nil {
				// the verdict is still printed: the search's work is not lost
				writeErr = err
				break
			}
			files = append(files, counterexamples.Files(p)...) // its pages too
		}
	}
	if a.json {
		if err := writeCheckJSON(stdout, &a, rep, violated, lins, peak, files); err != nil {
			if !outputLost(stdout) { // else run says so, once
				fmt.Fprintln(stderr, "explore check:", err)
			}
			return exitUsage
		}
	} else {
		writeCheckText(stdout, &a, rep, violated, runs, lins, peak)
		for _, p := range files {
			fmt.Fprintln(stdout, "wrote", counterexamples.ShellQuote(p))
		}
	}
	if writeErr != nil {
		fmt.Fprintf(stderr, "explore check: -out %s: %v (the verdict above stands; not every file was written)\n", a.out, writeErr)
		return exitUsage
	}
	return code
}

// searchShare is the share of -max-memory (less what the process holds
// before the search) that the search's own estimate may take. The rest is
// what the estimate does not see: the collector's headroom (GOGC 10), the
// old arrays of grown set segments until they are collected, and freed
// pages not yet returned to the system. Measured on the 4-client Redlock
// design, peak resident against -max-memory: see the README.
const searchShare = 0.6

// minMaxMemory is the smallest -max-memory accepted, in MB: below it the
// process's own footprint leaves the search nothing.
const minMaxMemory = 64

// processReserve is what the process holds besides the search, in bytes:
// the runtime, the program, the model's tables (26 to 30 MB resident
// before a search begins). A constant rather than a measure, so that the
// same -max-memory stops the search at the same state on every run.
const processReserve = 32 << 20

// processBounds turns -max-memory, a bound on the process's resident
// memory, into the search's budget (Bounds.MaxMemory bounds only the
// search's tables and frontiers). The caller also sets the runtime's soft
// memory limit to -max-memory, so that the collector runs harder and
// returns freed pages as the process nears it.
func processBounds(b explore.Bounds) explore.Bounds {
	if b.MaxMemory == 0 {
		return b
	}
	b.MaxMemory = int64(float64(b.MaxMemory-processReserve) * searchShare)
	return b
}

// writeCounterexample is counterexamples.Write; tests replace it.
var writeCounterexample = counterexamples.Write

// checkOutDir makes the -out folder if needed and checks that a file can be
// created in it, before a search that may take hours.
func checkOutDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".lockcheck-probe-*")
	if err != nil {
		return fmt.Errorf("cannot create a file there: %v", err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// statusText is a verdict in the report's words. An incomplete verdict
// says what the search proved.
func statusText(r explore.Result, rep *explore.Report) string {
	st := rep.Stats
	switch r.Status {
	case explore.Holds:
		if r.Vacuous != "" {
			return fmt.Sprintf("holds, vacuously: %s (faults used: %s)", r.Vacuous, rep.Coverage.FaultWords())
		}
		return fmt.Sprintf("holds (within bounds; faults used: %s)", rep.Coverage.FaultWords())
	case explore.Violated, explore.Seen:
		if st.Bitstate != nil {
			return fmt.Sprintf("%s (%d steps, replayed; a bitstate search may have missed a shorter one; faults: %s)", r.Status, len(r.Trace), traceFaults(r.Trace))
		}
		return fmt.Sprintf("%s (%d steps; faults: %s)", r.Status, len(r.Trace), traceFaults(r.Trace))
	case explore.NotSeen:
		return fmt.Sprintf("not seen (faults used: %s)", rep.Coverage.FaultWords())
	case explore.HoldsProbably:
		vac := ""
		if r.Vacuous != "" {
			vac = ", vacuously: " + r.Vacuous
		}
		return fmt.Sprintf("holds (probabilistic: %s%s; faults used: %s)", bitstateWords(st), vac, rep.Coverage.FaultWords())
	case explore.NotSeenProbably:
		return fmt.Sprintf("not seen (probabilistic: %s; faults used: %s)", bitstateWords(st), rep.Coverage.FaultWords())
	case explore.Incomplete:
		what := "counterexample"
		if r.Expect == model.Sometimes {
			what = "witness"
		}
		return fmt.Sprintf("incomplete: no %s up to depth %d (%s states)", what, st.Proved, thousands(st.Distinct))
	}
	return string(r.Status)
}

// bitstateWords says what a bitstate search may have missed.
func bitstateWords(st explore.Stats) string {
	b := st.Bitstate
	missed := "under 1 state expected missed"
	if b.Missed >= 0.5 {
		missed = fmt.Sprintf("about %s states expected missed (coverage about %s)", thousands(int64(math.Round(b.Missed))), coverageText(b.Coverage(st.Distinct)))
	}
	return fmt.Sprintf("bitstate search of 2^%d bits, %d per state, %.1f%% set; %s, and what only they lead to; not a proof",
		b.LogBits, b.Hashes, 100*b.Fill, missed)
}

// coverageText writes a share below 1 with the digits that matter.
func coverageText(c float64) string {
	for prec := 1; prec < 9; prec++ {
		if t := strconv.FormatFloat(100*c, 'f', prec, 64); t != strconv.FormatFloat(100, 'f', prec, 64) {
			return t + "%"
		}
	}
	return "99.99999999%"
}

func writeCheckText(w io.Writer, a *checkArgs, rep *explore.Report, violated []explore.Result, runs []*model.Run, lins []*linearizability.Result, peak uint64) {
	d := a.design
	if a.name != d.Name() {
		fmt.Fprintf(w, "design %s (-design %s)\n", d.Name(), a.name)
	} else {
		fmt.Fprintf(w, "design %s\n", d.Name())
	}
	fmt.Fprintf(w, "bounds: %s\n\n", counterexamples.BoundsText(d, a.bounds))
	sum := explore.Summarize(rep)
	fmt.Fprintf(w, "verdict: %s: %s (within the bounds above)\n\n", sum.Verdict, sum.Text)
	for _, r := range rep.Results {
		fmt.Fprintf(w, "  %-19s %s\n", r.Property, statusText(r, rep))
	}
	if len(violated) > 0 {
		shortest := "shortest counterexample"
		if rep.Stats.Bitstate != nil {
			shortest = "counterexample (bitstate search: maybe not a shortest one)"
		}
		fmt.Fprintf(w, "\n%s for %s (%d steps):\n\n%s", shortest, violated[0].Property, len(violated[0].Trace), model.Render(runs[0]))
		if lins[0] != nil {
			fmt.Fprintln(w, lins[0].Summary)
		}
		if len(violated) > 1 {
			var others []string
			for _, r := range violated[1:] {
				others = append(others, fmt.Sprintf("%s (%d steps)", r.Property, len(r.Trace)))
			}
			fmt.Fprintf(w, "\nalso violated: %s; show one with -properties NAME\n", strings.Join(others, ", "))
		}
	}
	st := rep.Stats
	end := "complete"
	if !st.Complete {
		switch st.StoppedBy {
		case "":
			end = "stopped: every property decided"
		case "max-states":
			end = fmt.Sprintf("stopped by -max-states %d", a.bounds.MaxStates)
		case "max-steps":
			end = fmt.Sprintf("stopped by -steps %d", a.bounds.MaxSteps)
		case "max-memory":
			end = fmt.Sprintf("stopped by -max-memory %d", a.bounds.MaxMemory>>20)
		case "first":
			end = "stopped at the first violation (-first)"
		case "interrupted":
			end = "interrupted"
			if a.signal != "" {
				end += " by " + a.signal
			}
		default:
			end = "stopped by " + st.StoppedBy
		}
		end += fmt.Sprintf("; every step checked up to depth %d", st.Proved)
	}
	fmt.Fprintf(w, "\nsearch: %s distinct states, %s transitions, depth %d, %s\n", thousands(st.Distinct), thousands(st.Transitions), st.Depth, end)
	fmt.Fprintf(w, "time: %.2f s, %s states/s; memory: %s MB peak resident, %.1f bytes per visited state\n",
		st.Seconds, thousands(int64(float64(st.Distinct)/max(st.Seconds, 1e-9))), thousands(int64(peak>>20)), bytesPerState(st))
	if a.cover {
		writeCoverageText(w, &d, rep)
	}
}

func bytesPerState(st explore.Stats) float64 {
	if st.Distinct == 0 {
		return 0
	}
	return float64(st.VisitedBytes) / float64(st.Distinct)
}

// checkJSON is the -json object. Every field but the stats' seconds,
// states_per_second and peak_memory_bytes is the same from run to run.
type checkJSON struct {
	Design         string          `json:"design"`
	Bounds         checkBoundsJSON `json:"bounds"`
	Summary        checkSumJSON    `json:"summary"` // the verdict in one line (explore.Summarize)
	Results        []checkResJSON  `json:"results"`
	Stats          checkStatsJSON  `json:"stats"`
	Coverage       checkCovJSON    `json:"coverage"`
	Counterexample *checkCexJSON   `json:"counterexample"` // the first violated property's; null if none
	// Counterexamples: every violated property's shortest counterexample,
	// in the order of results ([] if none)
	Counterexamples []checkCexJSON `json:"counterexamples"`
	Files           []string       `json:"files,omitempty"` // counterexample files written (-out)
}

// checkSumJSON is the design's verdict: verdict is one of "safe within
// bounds", "probably safe", "lock-unsafe, data-safe", "lock-unsafe",
// "loses updates", "stuck", "holds only vacuously",
// "incomplete"; text names the properties behind it and the bounds.
type checkSumJSON struct {
	Verdict string `json:"verdict"`
	Text    string `json:"text"`
}

// checkBoundsJSON is every bound the text's bounds line shows: the
// search's limits, the design's time and the whole fault budget.
type checkBoundsJSON struct {
	Steps        int `json:"steps"` // 0: no limit
	Horizon      int `json:"horizon"`
	TTL          int `json:"ttl"`
	Work         int `json:"work"`
	Clients      int `json:"clients"`
	Pauses       int `json:"pauses"`
	MaxPause     int `json:"max_pause"`
	Crashes      int `json:"crashes"`
	Slow         int `json:"slow"`
	SlowWork     int `json:"slow_work"`
	NodeCrashes  int `json:"node_crashes"`
	RestartTicks int `json:"restart"`
	ClockJumps   int `json:"clock_jumps"`
	JumpTicks    int `json:"jump"`
	Delays       int `json:"delays"`
	MaxDelay     int `json:"max_delay"`
	Failovers    int `json:"failovers"`
	// the faults from the field (issue 11): what a partition cuts and for
	// how long, lost replies and the resend timeout, client clock jumps,
	// and where each placed fault may fall ("any" or a step)
	Partitions     int    `json:"partitions"`
	Partition      string `json:"partition"`
	PartitionTicks int    `json:"partition_ticks"`
	Losses         int    `json:"losses"`
	Timeout        int    `json:"timeout"`
	ClientJumps    int    `json:"client_jumps"`
	ClientJump     int    `json:"client_jump"`
	PauseAt        string `json:"pause_at"`
	DelayAt        string `json:"delay_at"`
	LoseAt         string `json:"lose_at"`
	CrashAt        string `json:"crash_at"`
	Jobs           int    `json:"jobs,omitempty"`         // jobs per client, when more than one
	Value          string `json:"value,omitempty"`        // the lock value per job or per process, with jobs
	Restarts       int    `json:"restarts,omitempty"`     // client restarts
	Lose           string `json:"lose,omitempty"`         // with losses, when not the default: what a loss loses, "reply" or "request"
	ReleaseFail    string `json:"release_fail,omitempty"` // with losses, when not the default: a release that got no answer, "retry" or "forget"
	MaxStates      int    `json:"max_states"`             // 0: no limit
	MaxMemoryMB    int64  `json:"max_memory_mb"`          // 0: no limit
	BitstateBits   int    `json:"bitstate_bits"`          // log2 of a bitstate search's bit array; 0: exact search
	Symmetry       bool   `json:"symmetry"`
	First          bool   `json:"first"`
}

type checkResJSON struct {
	Property    string `json:"property"`
	Expect      string `json:"expect"` // always or sometimes
	Status      string `json:"status"` // holds, violated, seen, not-seen, incomplete; holds-probabilistic, not-seen-probabilistic (-bitstate)
	Verdict     string `json:"verdict"`
	TraceLength *int   `json:"trace_length,omitempty"`
	// Linearizable is porcupine's verdict on the counterexample's job
	// history (yes, no, unknown); null without a counterexample.
	Linearizable *string `json:"linearizable"`
	// Vacuous: the property holds but its witness never occurred (no lock
	// expired or was lost while held); Vacuity says why and how to make
	// the budget bite.
	Vacuous bool   `json:"vacuous"`
	Vacuity string `json:"vacuity,omitempty"`
	// Faults are the fault kinds the verdict used: its trace's for a
	// counterexample or witness, else those that occurred in the explored
	// space.
	Faults []string `json:"faults_used"`
}

type checkStatsJSON struct {
	Distinct        int64   `json:"distinct"`
	Transitions     int64   `json:"transitions"`
	Depth           int     `json:"depth"`
	ProvedDepth     int     `json:"proved_depth"` // every step checked up to this depth
	Complete        bool    `json:"complete"`
	StoppedBy       string  `json:"stopped_by,omitempty"`
	Signal          string  `json:"signal,omitempty"`
	BytesPerState   float64 `json:"bytes_per_state"`
	Seconds         float64 `json:"seconds"`
	StatesPerSecond int64   `json:"states_per_second"`
	PeakMemoryBytes uint64  `json:"peak_memory_bytes"` // peak resident memory of the process
	// Bitstate: a bitstate search's array and what it is expected to have
	// missed; absent for an exact search.
	Bitstate *checkBitstateJSON `json:"bitstate,omitempty"`
}

type checkBitstateJSON struct {
	LogBits        int     `json:"log_bits"`
	Hashes         int     `json:"hashes"`
	Fill           float64 `json:"fill"`
	ExpectedMissed float64 `json:"expected_missed"`
	Coverage       float64 `json:"coverage"`
}

// checkCovJSON is what the explored space's steps did (levels cut short by
// a bound not counted): the fault kinds that occurred and whether a lock was
// ever lost while its holder believed in it (without which every safety
// verdict is vacuous).
type checkCovJSON struct {
	FaultsUsed        []string `json:"faults_used"`
	LockLostWhileHeld bool     `json:"lock_lost_while_held"`
	// the steps counted (coverage.go): by action kind (the design's, in
	// action order, 0 included), by fault and the client phases it fell
	// in, the clients met in each phase, and what never fired
	Steps   int64            `json:"steps"`
	Actions []covKindJSON    `json:"actions"`
	Faults  []covFaultJSON   `json:"faults"`
	Phases  []covClientsJSON `json:"phases"`
	Never   covNeverJSON     `json:"never"`
}

type checkCexJSON struct {
	Property string   `json:"property"`
	Steps    []string `json:"steps"`
}

func linWord(v linearizability.Verdict) string {
	switch v {
	case linearizability.Ok:
		return "yes"
	case linearizability.Illegal:
		return "no"
	}
	return "unknown"
}

func writeCheckJSON(w io.Writer, a *checkArgs, rep *explore.Report, violated []explore.Result, lins []*linearizability.Result, peak uint64, files []string) error {
	d := a.design
	out := checkJSON{
		Design: d.Name(),
		Bounds: checkBoundsJSON{
			Steps: a.bounds.MaxSteps, Horizon: d.HorizonTicks, TTL: d.TTLTicks, Work: d.WorkTicks, Clients: d.Clients,
			Pauses: d.Pauses, MaxPause: d.MaxPauseTicks, Crashes: d.Crashes, Slow: d.SlowJobs, SlowWork: d.SlowWorkTicks,
			NodeCrashes: d.NodeCrashes, RestartTicks: d.RestartTicks, ClockJumps: d.ClockJumps, JumpTicks: d.JumpTicks,
			Delays: d.Delays, MaxDelay: d.MaxDelayTicks, Failovers: d.Failovers,
			Partitions: d.Partitions, Partition: d.Partition.String(), PartitionTicks: d.PartitionTicks,
			Losses: d.Losses, Timeout: d.TimeoutTicks, ClientJumps: d.ClientJumps, ClientJump: d.ClientJumpTicks,
			PauseAt: d.PauseAt.String(), DelayAt: d.DelayAt.String(), LoseAt: d.LoseAt.String(), CrashAt: d.CrashAt.String(),
			MaxStates: a.bounds.MaxStates, MaxMemoryMB: a.bounds.MaxMemory >> 20, BitstateBits: a.bounds.Bitstate, Symmetry: a.bounds.Symmetry, First: a.first,
		},
		Summary:  summaryJSON(rep, counterexamples.BoundsText(d, a.bounds)),
		Results:  []checkResJSON{},
		Coverage: checkCovJSON{FaultsUsed: resultFaults(explore.Result{}, rep), LockLostWhileHeld: rep.Coverage.LockLost},
		Files:    files,
	}
	fillCoverageJSON(&out.Coverage, &d, rep)
	if d.Jobs > 1 {
		out.Bounds.Jobs, out.Bounds.Value = d.Jobs, d.Value.String()
	}
	if d.Lose != model.LoseReply || d.ReleaseFail != model.ReleaseFailRetry { // absent: a lost reply, a release sent again
		out.Bounds.Lose, out.Bounds.ReleaseFail = d.Lose.String(), d.ReleaseFail.String()
	}
	out.Bounds.Restarts = d.Restarts
	for _, r := range rep.Results {
		res := checkResJSON{Property: r.Property, Expect: r.Expect.String(), Status: string(r.Status), Verdict: statusText(r, rep), Vacuous: r.Vacuous != "", Vacuity: r.Vacuous, Faults: resultFaults(r, rep)}
		if r.Trace != nil {
			n := len(r.Trace)
			res.TraceLength = &n
		}
		for i, v := range violated {
			if v.Property == r.Property && lins[i] != nil {
				word := linWord(lins[i].Verdict)
				res.Linearizable = &word
			}
		}
		out.Results = append(out.Results, res)
	}
	st := rep.Stats
	out.Stats = checkStatsJSON{
		Distinct: st.Distinct, Transitions: st.Transitions, Depth: st.Depth, ProvedDepth: st.Proved, Complete: st.Complete,
		StoppedBy: st.StoppedBy, Signal: a.signal,
		BytesPerState: float64(int(bytesPerState(st)*100)) / 100,
		Seconds:       st.Seconds, StatesPerSecond: int64(float64(st.Distinct) / max(st.Seconds, 1e-9)), PeakMemoryBytes: peak,
	}
	if b := st.Bitstate; b != nil {
		out.Stats.Bitstate = &checkBitstateJSON{LogBits: b.LogBits, Hashes: b.Hashes, Fill: b.Fill, ExpectedMissed: b.Missed, Coverage: b.Coverage(st.Distinct)}
	}
	out.Counterexamples = []checkCexJSON{}
	for _, v := range violated {
		cex := checkCexJSON{Property: v.Property, Steps: []string{}}
		for _, act := range v.Trace {
			cex.Steps = append(cex.Steps, act.String())
		}
		out.Counterexamples = append(out.Counterexamples, cex)
	}
	if len(out.Counterexamples) > 0 {
		out.Counterexample = &out.Counterexamples[0]
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func summaryJSON(rep *explore.Report, bounds string) checkSumJSON {
	sum := explore.Summarize(rep)
	return checkSumJSON{Verdict: sum.Verdict, Text: sum.Text + "; within bounds: " + bounds}
}

// traceFaults names the fault kinds of a trace, in action order, or none.
func traceFaults(trace []model.Action) string {
	var c model.Coverage
	for _, a := range trace {
		c.Note(a)
	}
	return c.FaultWords()
}

// resultFaults lists a verdict's fault kinds for -json.
func resultFaults(r explore.Result, rep *explore.Report) []string {
	c := rep.Coverage
	if r.Trace != nil {
		c = model.Coverage{}
		for _, a := range r.Trace {
			c.Note(a)
		}
	}
	out := []string{}
	for _, k := range c.Faults() {
		out = append(out, k.String())
	}
	return out
}

// addHint appends to each vacuous verdict how to make it meaningful, found
// by search (explore.Hint); the hint is the design's, shared by its
// properties.
func addHint(rep *explore.Report, b explore.Bounds, stderr io.Writer) error {
	hint := ""
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.Vacuous == "" {
			continue
		}
		if hint == "" {
			fmt.Fprintln(stderr, "explore check: a verdict is vacuous: searching for the least pause that would test it")
			h, err := explore.Hint(rep.Design, b)
			if err != nil {
				return err
			}
			hint = h
		}
		r.Vacuous += "; " + hint
	}
	return nil
}

// thousands writes n with commas: 10,649,237.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
