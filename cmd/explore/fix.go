package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"lockcheck/counterexamples"
	"lockcheck/explore"
	"lockcheck/model"
)

func init() {
	register("fix", "the nearest designs on which the chosen properties hold: one change, then two, cheapest first", runFix)
}

type fixArgs struct {
	name    string
	design  model.Design
	props   []model.Property
	changes int
	all     bool
	show    int
	json    bool
}

func parseFixArgs(args []string) (a fixArgs, help bool, usage string, err error) {
	fs := flag.NewFlagSet("explore fix", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	name := fs.String("design", "redis/cad/none/plain", "design name or preset (see 'explore designs')")
	props := fs.String("properties", "all", "comma-separated always properties that must hold: "+strings.Join(alwaysPropertyNames(), ", ")+", or all")
	changes := fs.Int("changes", 2, "look this many changes away at most: 1 or 2 (the search stops at the first distance with a fix unless -all)")
	all := fs.Bool("all", false, "search every distance up to -changes even when a nearer fix exists")
	show := fs.Int("show", 10, "list at most this many fixes (1 to 1000)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	var u strings.Builder
	fmt.Fprintln(&u, "usage: explore fix -design NAME [flags]")
	fmt.Fprintln(&u, "Searches the designs one changed axis value or parameter away (then two), each exhaustively")
	fmt.Fprintln(&u, "with the same bounds and fault budget, and lists those on which the properties hold; those")
	fmt.Fprintln(&u, "on which a fixed property holds only vacuously (no fault of the budget puts it to the test,")
	fmt.Fprintln(&u, "as when a longer TTL outlasts every pause) are listed last.")
	fmt.Fprintln(&u, "Exit codes: 0 the design is safe or a fix was found, 1 no fix within the distance, 2 bad input, 3 stopped by a signal (SIGINT, SIGTERM) before a verdict.")
	fs.SetOutput(&u)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	usage = u.String()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return a, true, usage, nil
		}
		return a, false, usage, errors.New(strings.ReplaceAll(err.Error(), "\n", " "))
	}
	if fs.NArg() != 0 {
		return a, false, usage, fmt.Errorf("unexpected argument %q (flags only; see explore fix -h)", clip(fs.Arg(0)))
	}
	if a.design, err = model.ParseDesign(*name); err != nil {
		return a, false, usage, err
	}
	a.name = strings.TrimSpace(*name)
	if a.props, err = model.ParseProperties(*props); err != nil {
		return a, false, usage, err
	}
	if strings.TrimSpace(*props) == "all" {
		a.props = nil // every always property
	} else {
		for _, p := range a.props {
			if p.Expect != model.Always {
				return a, false, usage, fmt.Errorf("property %s is a sometimes property (allowed: %s, or all)", p.Name, strings.Join(alwaysPropertyNames(), ", "))
			}
		}
	}
	if *changes < 1 || *changes > 2 {
		return a, false, usage, fmt.Errorf("-changes %d: want 1 or 2", *changes)
	}
	if *show < 1 || *show > 1000 {
		return a, false, usage, fmt.Errorf("-show %d: want 1 to 1000", *show)
	}
	a.changes, a.all, a.show, a.json = *changes, *all, *show, *asJSON
	return a, false, usage, nil
}

func alwaysPropertyNames() []string {
	var out []string
	for _, p := range model.Properties {
		if p.Expect == model.Always {
			out = append(out, p.Name)
		}
	}
	return out
}

func runFix(args []string, stdout, stderr io.Writer) int {
	a, help, usage, err := parseFixArgs(args)
	if help {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if err != nil {
		return failUsage(stdout, stderr, "fix", wantsJSON(args), err.Error())
	}
	ctx, signalled, stopSignals := interruptible()
	defer stopSignals()
	rep, err := explore.Fix(explore.FixConfig{
		Design: a.design, Properties: a.props, Bounds: counterexamples.SearchBounds,
		MaxChanges: a.changes, All: a.all, Context: ctx,
		Progress: progressEvery(func(p explore.FixProgress) {
			fmt.Fprintf(stderr, "explore fix: %d change(s) away: %d of %d neighbours checked, %.0fs\n", p.Distance, p.Done, p.Total, p.Seconds)
		}),
	})
	if err != nil {
		if sig := signalled(); sig != "" && errors.Is(err, context.Canceled) {
			return failInterrupted(stdout, stderr, "fix", a.json, sig, err, "no fix decided")
		}
		return failUsage(stdout, stderr, "fix", a.json, err.Error())
	}
	code := exitOK
	if !rep.Safe() && len(rep.Fixes) == 0 {
		code = exitViolated
	}
	if a.json {
		if err := writeFixJSON(stdout, &a, rep); err != nil {
			if !outputLost(stdout) { // else run says so, once
				fmt.Fprintln(stderr, "explore fix:", err)
			}
			return exitUsage
		}
		return code
	}
	writeFixText(stdout, &a, rep)
	return code
}

// progressEvery calls f at most about once a second (and never from two
// goroutines at once: Fix serialises its calls).
func progressEvery(f func(explore.FixProgress)) func(explore.FixProgress) {
	last := -1.0
	return func(p explore.FixProgress) {
		if p.Seconds-last >= 1 {
			last = p.Seconds
			f(p)
		}
	}
}

func writeFixText(w io.Writer, a *fixArgs, rep *explore.FixReport) {
	d := rep.Design
	if a.name != d.Name() {
		fmt.Fprintf(w, "design %s (-design %s)\n", d.Name(), a.name)
	} else {
		fmt.Fprintf(w, "design %s\n", d.Name())
	}
	fmt.Fprintf(w, "bounds: %s (every neighbour is searched with the same bounds and fault budget)\n", counterexamples.BoundsText(d, counterexamples.SearchBounds))
	fmt.Fprintf(w, "properties: %s\n\n", strings.Join(rep.Properties, ", "))
	if rep.Safe() {
		fmt.Fprintf(w, "already safe: %s hold within the bounds", strings.Join(rep.Properties, ", "))
		if r, ok := rep.Original.Result("all-done"); ok && r.Status == explore.Seen {
			fmt.Fprintln(w, " (and every job can finish: all-done seen); nothing to fix")
		} else {
			fmt.Fprintln(w, ", but no run finishes every job (all-done not seen): the verdict may be vacuous")
		}
		return
	}
	fmt.Fprintf(w, "violated: %s\n\n", strings.Join(rep.Violated, ", "))
	if len(rep.Fixes) == 0 {
		fmt.Fprintf(w, "no design within %d change(s) makes %s hold.\n", rep.Distance, strings.Join(rep.Properties, ", "))
	} else {
		fmt.Fprintf(w, "designs on which %s hold, nearest first (fewest changes, then cheapest)", strings.Join(rep.Properties, ", "))
		switch n := vacuousFixes(rep.Fixes); {
		case n == len(rep.Fixes):
			fmt.Fprintf(w, "; on every one a fixed property holds only vacuously (no fault of the budget puts it to the test)")
		case n > 0:
			fmt.Fprintf(w, "; the %d on which a fixed property holds only vacuously (no fault of the budget puts it to the test) come last", n)
		}
		fmt.Fprint(w, ":\n\n")
		for i, c := range rep.Fixes {
			if i == a.show {
				fmt.Fprintf(w, "… and %d more (-show N)\n", len(rep.Fixes)-i)
				break
			}
			writeCandidate(w, i+1, &c)
		}
	}
	if len(rep.Violated) > 1 || len(rep.Fixes) == 0 {
		fmt.Fprintln(w, "\nnearest fix per property:")
		for _, p := range rep.Violated {
			if cs := rep.PerProperty[p]; len(cs) > 0 {
				vac := ""
				if why := cs[0].Vacuity(p); why != "" {
					vac = " (holds only vacuously: " + why + ")"
				}
				fmt.Fprintf(w, "  %-15s %s (cost %d): %s%s\n", p, cs[0].ChangesText(), cs[0].Cost, cs[0].Name(), vac)
			} else {
				fmt.Fprintf(w, "  %-15s none within %d change(s)\n", p, rep.Distance)
			}
		}
	}
	var undecided []string
	for _, c := range rep.Checked {
		if c.Undecided() {
			undecided = append(undecided, c.Name())
		}
	}
	if len(undecided) > 0 {
		fmt.Fprintf(w, "\nundecided (the search reached the cap of %s states): %s\n", thousands(int64(rep.NeighbourStates)), strings.Join(undecided, "; "))
	}
	fmt.Fprintf(w, "\nsearched %d neighbour designs within %d change(s) (%d names skipped: invalid combinations or changes that cannot act under this fault budget; %d undecided at the state cap), %.1f s\n",
		len(rep.Checked), rep.Distance, rep.Skipped, rep.Undecided, rep.Seconds)
}

func writeCandidate(w io.Writer, n int, c *explore.Candidate) {
	fmt.Fprintf(w, "%d. %s (cost %d)\n", n, c.ChangesText(), c.Cost)
	fmt.Fprintf(w, "   design: %s\n", c.Name())
	for _, ch := range c.Changes {
		fmt.Fprintf(w, "   costs:  %s\n", ch.What)
	}
	fmt.Fprintf(w, "   fixes:  %s\n", strings.Join(c.Fixes, ", "))
	if len(c.Vacuous) > 0 {
		verb := "holds"
		if len(c.Vacuous) > 1 {
			verb = "hold"
		}
		fmt.Fprintf(w, "   vacuous: %s %s here only vacuously: %s; no fault of the budget puts this fix to the test, so it ranks after those it does\n",
			strings.Join(c.Vacuous, ", "), verb, c.Vacuity(c.Vacuous[0]))
	}
	var seen, not []string
	for _, r := range c.Results {
		switch r.Status {
		case explore.Seen:
			seen = append(seen, r.Property)
		case explore.NotSeen:
			not = append(not, r.Property)
		}
	}
	fmt.Fprintf(w, "   witnesses seen: %s", orNone(seen))
	if len(not) > 0 {
		fmt.Fprintf(w, "; not seen: %s", strings.Join(not, ", "))
	}
	fmt.Fprintln(w)
}

// vacuousFixes counts the fixes on which a fixed property holds only
// vacuously.
func vacuousFixes(cs []explore.Candidate) int {
	n := 0
	for _, c := range cs {
		if len(c.Vacuous) > 0 {
			n++
		}
	}
	return n
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

type fixJSON struct {
	Design     string            `json:"design"`
	Bounds     string            `json:"bounds"`
	Properties []string          `json:"properties"`
	Safe       bool              `json:"safe"`
	Violated   []string          `json:"violated"`
	Fixes      []fixCandJSON     `json:"fixes"`
	Nearest    map[string]string `json:"nearest_per_property"` // property → design ("" if none)
	Distance   int               `json:"distance"`
	Checked    int               `json:"checked"`
	Skipped    int               `json:"skipped"`
	Undecided  int               `json:"undecided"`
	Seconds    float64           `json:"seconds"`
}

type fixCandJSON struct {
	Design  string          `json:"design"`
	Cost    int             `json:"cost"`
	Changes []fixChangeJSON `json:"changes"`
	Fixes   []string        `json:"fixes"`
	// Vacuous are the fixed properties that hold here only vacuously (no
	// lock expired or was lost while held): such fixes are listed last.
	Vacuous []string       `json:"vacuous"`
	Results []checkResJSON `json:"results"`
}

type fixChangeJSON struct {
	Key  string `json:"key"`
	From string `json:"from"`
	To   string `json:"to"`
	Cost int    `json:"cost"`
	What string `json:"what"`
}

func writeFixJSON(w io.Writer, a *fixArgs, rep *explore.FixReport) error {
	out := fixJSON{
		Design: rep.Design.Name(), Bounds: counterexamples.BoundsText(rep.Design, counterexamples.SearchBounds),
		Properties: rep.Properties, Safe: rep.Safe(), Violated: append([]string{}, rep.Violated...),
		Fixes: []fixCandJSON{}, Nearest: map[string]string{},
		Distance: rep.Distance, Checked: len(rep.Checked), Skipped: rep.Skipped, Undecided: rep.Undecided, Seconds: rep.Seconds,
	}
	for i, c := range rep.Fixes {
		if i == a.show {
			break
		}
		cj := fixCandJSON{Design: c.Name(), Cost: c.Cost, Fixes: append([]string{}, c.Fixes...), Vacuous: append([]string{}, c.Vacuous...)}
		for _, ch := range c.Changes {
			cj.Changes = append(cj.Changes, fixChangeJSON{ch.Key, ch.From, ch.To, ch.Cost, ch.What})
		}
		for _, r := range c.Results {
			cj.Results = append(cj.Results, checkResJSON{Property: r.Property, Expect: r.Expect.String(), Status: string(r.Status), Vacuous: r.Vacuous != "", Vacuity: r.Vacuous})
		}
		out.Fixes = append(out.Fixes, cj)
	}
	for _, p := range rep.Violated {
		out.Nearest[p] = ""
		if cs := rep.PerProperty[p]; len(cs) > 0 {
			out.Nearest[p] = cs[0].Name()
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
