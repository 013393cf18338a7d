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
	fmt.Fprintln(&u, "with the same bounds and fault budget, and lists the fixes: those on which the properties hold,")
	fmt.Fprintln(&u, "put to the test by a fault, storage-side protection first (a fencing token the storage checks,")
	fmt.Fprintln(&u, "a compare-and-set, the database's transaction), then a client's validity check, other changes")
	fmt.Fprintln(&u, "to the lock, and a longer or renewed lease last. A longer TTL (session) is checked against")
	fmt.Fprintln(&u, "faults that grow with it, as no real pause is bounded by the TTL. When the lock breaks and no")
	fmt.Fprintln(&u, "neighbour keeps it exclusive, it says so and lists the data-safe designs (no-lost-update holds:")
	fmt.Fprintln(&u, "lock-unsafe, data-safe). A property that holds only vacuously is never counted as fixed.")
	fmt.Fprintln(&u, "Exit codes: 0 a fix put to the test was found (or the design holds, put to the test), 1 no fix")
	fmt.Fprintln(&u, "within the distance (data-safe designs may be listed), 2 bad input, 4 the design holds only")
	fmt.Fprintln(&u, "vacuously (nothing to fix, nothing tested), 3 stopped by a signal (SIGINT, SIGTERM) before a verdict.")
	fs.SetOutput(&u)
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
	switch {
	case rep.VacuouslySafe():
		code = exitVacuous
	case !rep.Safe() && len(rep.Fixes) == 0:
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
	fmt.Fprintf(w, "bounds: %s (every neighbour is searched with the same bounds and fault budget; a longer %s against faults grown with it)\n", counterexamples.BoundsText(d, counterexamples.SearchBounds), leaseWord(&d))
	fmt.Fprintf(w, "properties: %s\n\n", strings.Join(rep.Properties, ", "))
	if rep.Safe() {
		if rep.VacuouslySafe() {
			var vac []string
			why := ""
			for _, p := range rep.Properties {
				if r, ok := rep.Original.Result(p); ok && r.Vacuous != "" {
					vac = append(vac, p)
					if why == "" {
						why = r.Vacuous
					}
				}
			}
			fmt.Fprintf(w, "nothing to fix, and nothing tested: %s hold only vacuously (%s); no fault of the budget reached them, so this is no verdict on the design (explore check -design %s says what fault would test it)\n",
				strings.Join(vac, ", "), why, a.name)
			return
		}
		fmt.Fprintf(w, "already safe: %s hold within the bounds", strings.Join(rep.Properties, ", "))
		if r, ok := rep.Original.Result("all-done"); ok && r.Status == explore.Seen {
			fmt.Fprintln(w, " (and every job can finish: all-done seen); nothing to fix")
		} else {
			fmt.Fprintln(w, ", but no run finishes every job (all-done not seen): the verdict may be vacuous")
		}
		return
	}
	sum := explore.Summarize(rep.Original)
	fmt.Fprintf(w, "verdict: %s: %s\n", sum.Verdict, sum.Text)
	fmt.Fprintf(w, "violated: %s\n\n", classified(rep.Violated))
	lock := rep.ViolatedOf(model.LockSafety)
	data := rep.ViolatedOf(model.DataSafety)
	var held []string // the lock-safety properties a lease's expiry breaks
	for _, p := range lock {
		if p != "own-release" {
			held = append(held, p)
		}
	}
	if len(held) > 0 {
		writeLeaseParagraph(w, rep, held, data)
	}
	if len(rep.Fixes) == 0 && len(held) == 0 {
		fmt.Fprintf(w, "no design within %d change(s) makes %s hold, put to the test.\n", rep.Distance, strings.Join(rep.Properties, ", "))
	} else if len(rep.Fixes) > 0 {
		fmt.Fprintf(w, "fixes: designs on which %s hold, each put to the test by a fault of the budget; storage-side protection first, then fewest changes, cheapest:\n\n", strings.Join(rep.Properties, ", "))
		for i, c := range rep.Fixes {
			if i == a.show {
				fmt.Fprintf(w, "… and %d more (-show N)\n", len(rep.Fixes)-i)
				break
			}
			writeCandidate(w, i+1, &c, rep)
		}
	}
	if len(rep.DataSafe) > 0 {
		if len(rep.Fixes) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "data-safe designs: %s (data safety) holds, put to the test, nothing else breaks, every job can finish; the lock itself may still break (lock-unsafe, data-safe). Storage-side protection first:\n\n", strings.Join(data, ", "))
		for i, c := range rep.DataSafe {
			if i == a.show {
				fmt.Fprintf(w, "… and %d more (-show N)\n", len(rep.DataSafe)-i)
				break
			}
			writeCandidate(w, i+1, &c, rep)
		}
	}
	writeLeases(w, rep)
	if len(rep.Vacuous) > 0 {
		fmt.Fprintf(w, "\nnot fixes: on these a fixed property holds only vacuously (no fault of the budget reached it, so the verdict says nothing):\n")
		for i, c := range rep.Vacuous {
			if i == a.show {
				fmt.Fprintf(w, "  … and %d more\n", len(rep.Vacuous)-i)
				break
			}
			fmt.Fprintf(w, "  %s (cost %d): %s: %s holds only vacuously (%s)\n", c.ChangesText(), c.Cost, c.Name(), strings.Join(c.Vacuous, ", "), c.Vacuity(c.Vacuous[0]))
		}
	}
	if len(rep.Violated) > 1 || len(rep.Fixes) == 0 {
		fmt.Fprintln(w, "\nnearest fix per property (put to the test; a vacuous one is marked):")
		for _, p := range rep.Violated {
			if cs := rep.PerProperty[p]; len(cs) > 0 {
				vac := ""
				if why := cs[0].Vacuity(p); why != "" {
					vac = " (holds only vacuously: " + why + "; not a fix)"
				}
				fmt.Fprintf(w, "  %-15s %s (cost %d; %s): %s%s\n", p, cs[0].ChangesText(), cs[0].Cost, cs[0].Protection(), cs[0].Name(), vac)
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
	fmt.Fprintf(w, "\nsearched %d neighbour designs within %d change(s) (%d names skipped: invalid combinations, changes that cannot act under this fault budget, or a lease whose faults cannot grow with it; %d undecided at the state cap), %.1f s\n",
		len(rep.Checked), rep.Distance, rep.Skipped, rep.Undecided, rep.Seconds)
}

// classified writes properties with what they protect: "exclusive, mutex
// (lock safety), no-lost-update (data safety)".
func classified(props []string) string {
	var parts []string
	for _, c := range []model.Class{model.LockSafety, model.DataSafety, model.Liveness} {
		var in []string
		for _, p := range props {
			if model.ClassOf(p) == c {
				in = append(in, p)
			}
		}
		if len(in) > 0 {
			parts = append(parts, strings.Join(in, ", ")+" ("+c.String()+")")
		}
	}
	return strings.Join(parts, ", ")
}

// leaseWord is what bounds a holder's lock in d: its TTL, lease, session
// or idle-session timeout.
func leaseWord(d *model.Design) string { return model.Service(d.Lock).Bound }

// writeLeaseParagraph says the honest thing about a lease-based lock
// whose lock safety broke: whether any neighbour keeps it exclusive, why
// not, and what protects the data instead.
func writeLeaseParagraph(w io.Writer, rep *explore.FixReport, lock, data []string) {
	d := rep.Design
	lw := leaseWord(&d)
	faults := "a fault"
	if r, ok := rep.Original.Result(lock[0]); ok && r.Status == explore.Violated {
		faults = "the fault of its counterexample (" + traceFaults(r.Trace) + ")"
	}
	if rep.LockKept() {
		fmt.Fprintf(w, "Within this fault budget a neighbour keeps the lock (%s hold there, put to the test). Still, no lease-based lock stays exclusive against a pause longer than its %s: only the storage can refuse the late write, so for correctness protect the data as well (fencing tokens checked by the storage, a compare-and-set, or the database's own transaction).\n\n",
			strings.Join(lock, ", "), lw)
		return
	}
	if grant, ok := faultFreeGrant(rep); ok {
		fmt.Fprintf(w, "No design within %d change(s) keeps the lock exclusive against this fault budget: on every neighbour %s still break, or hold only because no fault reached them. The reason: its counterexample needs no fault, as the lock service itself grants the lock while an earlier grant is still believed in (%s); no longer or renewed %s changes that, and on the neighbours that do not grant it twice, a fault lets a holder outlive its %s while it still believes it holds the lock. Only the storage can refuse the late write: for correctness protect the data, with fencing tokens checked by the storage (max-token), a compare-and-set (cas), or the database's own transaction.",
			rep.Distance, strings.Join(lock, ", "), grant, lw, lw)
	} else {
		fmt.Fprintf(w, "No design within %d change(s) keeps the lock exclusive against this fault budget: on every neighbour %s still break, or hold only because no fault reached them. The reason: %s lets a holder outlive its %s while it still believes it holds the lock, and no lease-based lock stays exclusive against a pause longer than its lease; a longer %s only moves the bound, as a real pause (GC, VM migration, swapping) is not bounded by it (each longer %s below is checked against faults that outlast it by as much, and breaks again). Only the storage can refuse the late write: for correctness protect the data, with fencing tokens checked by the storage (max-token), a compare-and-set (cas), or the database's own transaction.",
			rep.Distance, strings.Join(lock, ", "), faults, lw, lw, lw)
	}
	switch {
	case len(data) > 0 && len(rep.DataSafe) > 0:
		fmt.Fprintf(w, " The nearest data-safe designs follow.\n\n")
	case len(data) > 0:
		fmt.Fprintf(w, " No design within %d change(s) keeps the data safe either (%s).\n\n", rep.Distance, strings.Join(data, ", "))
	default:
		fmt.Fprintf(w, " The data is safe already (%s): this design is lock-unsafe, data-safe, and no change to the lock makes it more.\n", dataHeld(rep))
	}
}

// faultFreeGrant is the step of a fault-free mutex counterexample at which
// the service grants a lock that another client still believes it holds
// (a pooled backend re-entering its session's lock, say): there, no lease
// was outlived, and the lease paragraph's reason would be wrong.
func faultFreeGrant(rep *explore.FixReport) (string, bool) {
	r, ok := rep.Original.Result("mutex")
	if !ok || r.Status != explore.Violated || len(r.Trace) == 0 || traceFaults(r.Trace) != "none" {
		return "", false
	}
	run, err := model.Replay(&rep.Design, r.Trace)
	if err != nil || len(run.Steps) == 0 {
		return "", false
	}
	return model.Describe(&run.Design, &run.Steps[len(run.Steps)-1]), true
}

// dataHeld names the data-safety properties that hold on the design.
func dataHeld(rep *explore.FixReport) string {
	var out []string
	for _, r := range rep.Original.Results {
		if r.Expect == model.Always && model.ClassOf(r.Property) == model.DataSafety && r.Status == explore.Holds {
			s := r.Property + " holds (data safety)"
			if r.Vacuous != "" {
				s += ", only vacuously"
			}
			out = append(out, s)
		}
	}
	return orNone(out)
}

// writeLeases lists the lease changes and their verdicts against grown
// faults.
func writeLeases(w io.Writer, rep *explore.FixReport) {
	if len(rep.Leases) == 0 && len(rep.Ungrown) == 0 {
		return
	}
	d := rep.Design
	fmt.Fprintf(w, "\nlonger or renewed leases, ranked last: a longer %s is checked against faults that grow with it (each pause, slow job, held request, partition and clock jump outlasts the new %s by as many ticks as it outlasted the old), as no real pause is bounded by the %s; a renewal keeps the same faults, as a pause freezes it with its worker:\n", leaseWord(&d), leaseWord(&d), leaseWord(&d))
	for i, c := range rep.Leases {
		if i == 8 {
			fmt.Fprintf(w, "  … and %d more\n", len(rep.Leases)-i)
			break
		}
		grown := ""
		if c.Grown > 0 {
			grown = fmt.Sprintf(" (faults %d ticks longer)", c.Grown)
		}
		if c.Design.Watchdog == model.WatchdogSidecar && d.Watchdog != model.WatchdogSidecar && d.Crashes == 0 {
			grown += " (and a worker crash: its sidecar renews a dead worker's lock)"
		}
		fmt.Fprintf(w, "  %s%s: %s\n", c.ChangesText(), grown, leaseVerdict(&c, rep))
	}
	for _, u := range rep.Ungrown {
		fmt.Fprintf(w, "  %s: not judged (a fault of the budget would have to last longer than %d ticks, the model's limit)\n", u, model.MaxWaitTicks)
	}
}

func leaseVerdict(c *explore.Candidate, rep *explore.FixReport) string {
	switch {
	case c.Real():
		return "holds, put to the test (a fix for this budget: listed above)"
	case c.Holds:
		return "holds only vacuously: " + c.Vacuity(c.Vacuous[0])
	case c.Undecided():
		return "undecided (state cap)"
	}
	var broke []string
	for _, p := range rep.Violated {
		if r, ok := c.Result(p); ok && r.Status == explore.Violated {
			broke = append(broke, p)
		}
	}
	if len(c.Breaks) > 0 {
		broke = append(broke, c.Breaks...)
	}
	if len(broke) == 0 {
		return "no fix (the jobs cannot all finish)"
	}
	return "still violates " + strings.Join(broke, ", ")
}

func writeCandidate(w io.Writer, n int, c *explore.Candidate, rep *explore.FixReport) {
	fmt.Fprintf(w, "%d. %s (cost %d; %s)\n", n, c.ChangesText(), c.Cost, c.Protection())
	fmt.Fprintf(w, "   design: %s\n", c.Name())
	for _, ch := range c.Changes {
		fmt.Fprintf(w, "   costs:  %s\n", ch.What)
	}
	fmt.Fprintf(w, "   fixes:  %s\n", orNone(c.Fixes))
	var still []string
	for _, p := range rep.Violated {
		if r, ok := c.Result(p); ok && r.Status != explore.Holds {
			still = append(still, p)
		}
	}
	if len(still) > 0 {
		fmt.Fprintf(w, "   still violated: %s\n", classified(still))
	}
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
