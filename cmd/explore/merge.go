package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"lockcheck/model"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"lockcheck/explore"
)

func init() {
	register("merge", "combine the JSON lines of 'explore simulate -shard i/n' jobs into the sweep's result", runMerge)
}

// mergeMaxBytes bounds what merge reads in all.
const mergeMaxBytes = 256 << 20

// runMerge reads shard lines from the files given, or from stdin, and
// prints what one 'explore simulate' of the whole sweep would print (but
// the time). Exit codes as simulate's; 3 when shards are missing.
func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("merge", stderr)
	asJSON := fs.Bool("json", false, "print the merged result as one JSON line (the shape of a shard's)")
	out := fs.String("out", "", "write each violated property's counterexample into this folder")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: explore merge [-json] [-out DIR] [FILE ...]   (JSON lines of explore simulate -shard i/n; none: stdin)")
		fmt.Fprintln(fs.Output(), "exit 0: no run broke an always property; 1: one did; 2: bad input; 3: shards are missing")
		fs.PrintDefaults()
	}
	if code, ok := parseFlagsJSON(fs, args, stdout); !ok {
		return code
	}
	bad := func(format string, a ...any) int {
		return failUsage(stdout, stderr, "merge", *asJSON, fmt.Sprintf(format, a...))
	}
	var data []byte
	if fs.NArg() == 0 {
		b, err := io.ReadAll(io.LimitReader(stdinReader, mergeMaxBytes+1))
		if err != nil {
			return bad("stdin: %v", err)
		}
		data = b
	} else {
		for _, name := range fs.Args() {
			b, err := readLimited(name, mergeMaxBytes, "a file of shard lines of explore simulate")
			if err != nil {
				return bad("%v", err)
			}
			data = append(data, b...)
			if len(data) > 0 && data[len(data)-1] != '\n' {
				data = append(data, '\n')
			}
		}
	}
	if len(data) > mergeMaxBytes {
		return bad("more than %d bytes of input", mergeMaxBytes)
	}
	var shards []*simSummary
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), mergeMaxBytes)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var s simSummary
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return bad("line %d: not a shard line of explore simulate: %v", line, err)
		}
		if off := dec.InputOffset(); strings.TrimSpace(text[off:]) != "" { // two lines pasted into one?
			return bad("line %d: more after the shard's JSON object (from byte %d): want one JSON object per line", line, off+1)
		}
		if s.Kind != "lockcheck-simulate" {
			return bad("line %d: kind %q: want a line of explore simulate -shard i/n", line, clip(s.Kind))
		}
		if err := checkShard(&s); err != nil {
			return bad("line %d: %v", line, err)
		}
		shards = append(shards, &s)
	}
	if err := sc.Err(); err != nil {
		return bad("%v", err)
	}
	if len(shards) == 0 {
		return bad("no shard lines (give the files of explore simulate -shard i/n, or pipe them in)")
	}
	m, err := mergeShards(shards)
	if err != nil {
		return bad("%v", err)
	}
	if _, complete := m.done(); !complete {
		fmt.Fprintf(stderr, "explore merge: %s\n", missingRuns(m))
	}
	return finishSim(stdout, stderr, "merge", m, *asJSON, *out)
}

// stdinReader is os.Stdin; tests replace it.
var stdinReader io.Reader = os.Stdin

// mergeShards combines shards of one sweep: the same design, properties,
// seed, runs, depth and swarm, disjoint ranges of runs. Per property the
// counterexample kept is the one of the shortest raw trace, the lowest run
// among equals: the one the whole sweep keeps.
func mergeShards(shards []*simSummary) (*simSummary, error) {
	f := shards[0]
	m := &simSummary{Kind: f.Kind, Design: f.Design, Properties: f.Properties, Seed: f.Seed, Runs: f.Runs, Depth: f.Depth, Swarm: f.Swarm, Budget: f.Budget,
		Results: []simResJSON{}, Faults: []faultUseJSON{}}
	faults := map[string]int{}
	for k, s := range shards {
		if field, this, first := sweepDiff(s, f); field != "" {
			return nil, fmt.Errorf("line %d is another sweep than line 1: %s %s, line 1 %s", k+1, field, this, first)
		}
		if len(s.Results) != len(f.Properties) {
			return nil, fmt.Errorf("line %d: %d results for %d properties", k+1, len(s.Results), len(f.Properties))
		}
		for _, sh := range s.Shards {
			if sh.From < 0 || sh.To < sh.From || sh.To > s.Runs || sh.Done < 0 || sh.Done > sh.To-sh.From {
				return nil, fmt.Errorf("line %d: runs %d…%d (%d done) out of the sweep's %d", k+1, sh.From, sh.To, sh.Done, s.Runs)
			}
			m.Shards = append(m.Shards, sh)
		}
		for i, r := range s.Results {
			if r.Property != f.Properties[i] {
				return nil, fmt.Errorf("line %d: result %d is %q, want %q", k+1, i+1, clip(r.Property), f.Properties[i])
			}
			if (r.Steps == nil) != (r.Run == nil) || (r.Run == nil) != (r.RawSteps == nil) {
				return nil, fmt.Errorf("line %d: %s: run, raw_steps and steps go together", k+1, r.Property)
			}
			found := r.Status == string(explore.Violated) || r.Status == string(explore.Seen)
			if !found && r.Status != string(explore.NotFound) || found != (r.Run != nil) || r.Runs < 0 || r.Runs > s.Runs ||
				r.Expect != "always" && r.Expect != "sometimes" ||
				r.Status == string(explore.Violated) && r.Expect != "always" || r.Status == string(explore.Seen) && r.Expect != "sometimes" {
				return nil, fmt.Errorf("line %d: %s: status %q with expect %q, %d runs: not a result of explore simulate", k+1, clip(r.Property), clip(r.Status), clip(r.Expect), r.Runs)
			}
			if r.Run != nil && (*r.Run < 0 || *r.Run >= s.Runs || *r.RawSteps < len(r.Steps)) {
				return nil, fmt.Errorf("line %d: %s: run %d, %d raw steps: out of range", k+1, clip(r.Property), *r.Run, *r.RawSteps)
			}
			if k == 0 {
				m.Results = append(m.Results, simResJSON{Property: r.Property, Expect: r.Expect, Status: string(explore.NotFound)})
			}
			cur := &m.Results[i]
			cur.Runs += r.Runs
			if r.Run == nil {
				continue
			}
			if cur.Run == nil || *r.RawSteps < *cur.RawSteps || (*r.RawSteps == *cur.RawSteps && *r.Run < *cur.Run) {
				runs := cur.Runs
				*cur = r
				cur.Runs = runs
				cur.Linearizable = nil // finishSim judges it again
			}
		}
		for _, fu := range s.Faults {
			faults[fu.Kind] += fu.Runs
		}
		m.Stats.Steps += s.Stats.Steps
		m.Stats.Seconds += s.Stats.Seconds
	}
	sort.Slice(m.Shards, func(i, j int) bool { return m.Shards[i].From < m.Shards[j].From })
	for i := 1; i < len(m.Shards); i++ {
		if m.Shards[i].From < m.Shards[i-1].To {
			return nil, fmt.Errorf("runs %d…%d come twice (the same shard given twice?)", m.Shards[i].From, min(m.Shards[i].To, m.Shards[i-1].To)-1)
		}
	}
	// adjacent complete ranges become one, so that the merged line reads
	// as the whole sweep's
	var joined []shardJSON
	for _, sh := range m.Shards {
		if n := len(joined); n > 0 && joined[n-1].To == sh.From && joined[n-1].Done == joined[n-1].To-joined[n-1].From && sh.Done == sh.To-sh.From {
			joined[n-1].To, joined[n-1].Done = sh.To, joined[n-1].Done+sh.Done
			continue
		}
		joined = append(joined, sh)
	}
	m.Shards = joined
	kinds := make([]string, 0, len(faults))
	for k := range faults {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		m.Faults = append(m.Faults, faultUseJSON{k, faults[k]})
	}
	return m, nil
}

// checkShard refuses a line that explore simulate could not have written:
// a design that does not parse, a property it does not know or lists
// twice, runs, depth or fault budget out of what simulate accepts.
func checkShard(s *simSummary) error {
	d, err := model.ParseDesign(s.Design)
	if err != nil {
		return fmt.Errorf("design: %v", err)
	}
	if s.Design != d.Name() {
		return fmt.Errorf("design %q: simulate writes the canonical name %q", clip(s.Design), d.Name())
	}
	if len(s.Properties) == 0 {
		return fmt.Errorf("properties: none (simulate lists those it checked: %s)", strings.Join(model.PropertyNames(), ", "))
	}
	seen := map[string]bool{}
	for _, p := range s.Properties {
		if _, ok := model.PropertyByName(p); !ok {
			return fmt.Errorf("properties: unknown property %q (allowed: %s)", clip(p), strings.Join(model.PropertyNames(), ", "))
		}
		if seen[p] {
			return fmt.Errorf("properties: %s listed twice", p)
		}
		seen[p] = true
	}
	if s.Runs < 1 || s.Runs > 1_000_000_000 {
		return fmt.Errorf("runs %d: want 1 to 1000000000", s.Runs)
	}
	if s.Depth < 1 || s.Depth > explore.MaxSimDepth {
		return fmt.Errorf("depth %d: want 1 to %d", s.Depth, explore.MaxSimDepth)
	}
	if want := model.BudgetText(&d); s.Budget != want {
		return fmt.Errorf("fault_budget %q: design %s has %q", clip(s.Budget), d.Name(), want)
	}
	if len(s.Shards) == 0 {
		return errors.New("shards: none (a shard line names the runs it covers)")
	}
	return nil
}

// sweepDiff names the first field in which s is another sweep than f, with
// both values; "" when they are the same sweep.
func sweepDiff(s, f *simSummary) (field, this, first string) {
	q := func(v string) string { return strconv.Quote(clip(v)) }
	switch {
	case s.Design != f.Design:
		return "design", q(s.Design), q(f.Design)
	case !slices.Equal(s.Properties, f.Properties):
		return "properties", q(strings.Join(s.Properties, ",")), q(strings.Join(f.Properties, ","))
	case s.Seed != f.Seed:
		return "seed", fmt.Sprint(s.Seed), fmt.Sprint(f.Seed)
	case s.Runs != f.Runs:
		return "runs", fmt.Sprint(s.Runs), fmt.Sprint(f.Runs)
	case s.Depth != f.Depth:
		return "depth", fmt.Sprint(s.Depth), fmt.Sprint(f.Depth)
	case s.Swarm != f.Swarm:
		return "swarm", fmt.Sprint(s.Swarm), fmt.Sprint(f.Swarm)
	case s.Budget != f.Budget:
		return "fault_budget", q(s.Budget), q(f.Budget)
	}
	return "", "", ""
}

// missingRuns names the runs no shard played.
func missingRuns(m *simSummary) string {
	var gaps []string
	at := 0
	for _, sh := range m.Shards {
		if sh.From > at {
			gaps = append(gaps, fmt.Sprintf("%d…%d", at, sh.From-1))
		}
		if sh.Done < sh.To-sh.From {
			gaps = append(gaps, fmt.Sprintf("%d of %d…%d (interrupted)", sh.To-sh.From-sh.Done, sh.From, sh.To-1))
		}
		at = sh.To
	}
	if at < m.Runs {
		gaps = append(gaps, fmt.Sprintf("%d…%d", at, m.Runs-1))
	}
	return "runs not played: " + strings.Join(gaps, ", ") + "; the result is partial"
}
