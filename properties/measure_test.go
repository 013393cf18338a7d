package properties

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"lockcheck/model"
)

// Measurements, off by default (they take minutes, and their figures are
// for the report, not verdicts):
//
//	go test ./properties -run TestMeasureRates -properties.rates=2000
//	go test ./properties -run TestMeasureCatch -properties.seeds=7
var (
	ratesFlag = flag.Int("properties.rates", 0, "TestMeasureRates: schedules per design and strategy (0: skip)")
	seedsFlag = flag.Int("properties.seeds", 0, "TestMeasureCatch: rapid seeds per caught property (0: skip)")
)

// withFlag runs f with a rapid flag set to value, then restores it.
func withFlag(t *testing.T, name, value string, f func()) {
	old := flag.Lookup(name).Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = flag.Set(name, old) }()
	f()
}

// TestMeasureRates draws schedules of every catalogue design with every
// strategy and reports, per property that exhaustive search breaks, the
// share of schedules that show it: with share p, rapid catches it within n
// checks with probability 1-(1-p)^n.
func TestMeasureRates(t *testing.T) {
	if *ratesFlag == 0 {
		t.Skip("set -properties.rates=N to measure")
	}
	names, err := suiteDesigns()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "share of %d schedules that show each property exhaustive search breaks\n", *ratesFlag)
	fmt.Fprintf(&b, "%-62s %-15s", "design", "property")
	for _, s := range strategies {
		fmt.Fprintf(&b, " %8s", s.name)
	}
	b.WriteString("\n")
	worst := map[string]float64{}
	for _, name := range names {
		d, err := model.ParseDesign(name)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := expectationFor(d)
		if err != nil {
			t.Fatal(err)
		}
		var hs []*hunt
		for _, s := range strategies {
			h := newHunt(d, exp, -1, s)
			rec := newRecorder(t.Name())
			withFlag(t, "rapid.checks", strconv.Itoa(*ratesFlag), func() { rapid.Check(rec, h.prop) })
			if rec.Failed() {
				t.Fatalf("%s with %s: %s\n%s", d.Name(), s.name, rec.report(), h.explainBad())
			}
			hs = append(hs, h)
		}
		for _, v := range exp.violated() {
			fmt.Fprintf(&b, "%-62s %-15s", d.Name(), v.prop.Name)
			for k, h := range hs {
				p := float64(h.witnessed[v.index]) / float64(h.runs)
				fmt.Fprintf(&b, " %8.3f", p)
				if w, ok := worst[strategies[k].name]; !ok || p < w {
					worst[strategies[k].name] = p
				}
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "%-78s", "lowest share")
	for _, s := range strategies {
		fmt.Fprintf(&b, " %8.3f", worst[s.name])
	}
	b.WriteString("\n")
	t.Log("\n" + b.String())
}

// TestMeasureCatch runs the caught subtests of TestDesigns with rapid
// seeds 1 … N and reports per property the median checks and time to
// catch, the median shrink time, rapid's shrunk length (first), the
// length of the catch whose faults gave the final pass its result (from:
// the first or one of up to -properties.rounds more), and the final
// length (breadth-first search among that catch's kinds of fault) against
// breadth-first search's; then every seed and pair whose final length is
// not the shortest.
func TestMeasureCatch(t *testing.T) {
	if *seedsFlag == 0 {
		t.Skip("set -properties.seeds=N to measure")
	}
	names, err := suiteDesigns()
	if err != nil {
		t.Fatal(err)
	}
	strat := chosenStrategy(t)
	var b strings.Builder
	fmt.Fprintf(&b, "strategy %s, rapid seeds 1..%d, -properties.rounds=%d; medians over the seeds\n", strat.name, *seedsFlag, *roundsFlag)
	fmt.Fprintf(&b, "%-62s %-15s %6s %9s %8s %4s %6s %6s %8s %6s %8s\n", "design", "property", "checks", "catch", "shrink", "BFS", "first", "from", "rounds-t", "final", "final-t")
	var firstEq, bestEq, finalEq, total int
	var gaps []string
	var allChecks []int
	for _, name := range names {
		d, err := model.ParseDesign(name)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := expectationFor(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range exp.violated() {
			var checks, first, best, final []int
			var catch, shrink, more, pass []time.Duration
			for seed := 1; seed <= *seedsFlag; seed++ {
				var r catchResult
				ok := true
				withFlag(t, "rapid.seed", strconv.Itoa(seed), func() { r, ok = catchAndShrink(t, d, exp, v, strat) })
				if !ok {
					t.FailNow()
				}
				if r.final == nil {
					checks = append(checks, 1<<30) // missed
					continue
				}
				checks = append(checks, r.first.rec.checksToCatch())
				first, best, final = append(first, len(r.first.caught)), append(best, len(r.faultsOf)), append(final, len(r.final))
				catch, shrink, more, pass = append(catch, r.catch), append(shrink, r.shrink), append(more, r.more), append(pass, r.pass)
				total++
				if len(r.first.caught) == len(v.trace) {
					firstEq++
				}
				if len(r.faultsOf) == len(v.trace) {
					bestEq++
				}
				if len(r.final) == len(v.trace) {
					finalEq++
				} else {
					gaps = append(gaps, fmt.Sprintf("seed %d: %s %s: %d steps, shortest %d (faults of the catch: %s)", seed, d.Name(), v.prop.Name, len(r.final), len(v.trace), faultWords(r.faultsOf)))
				}
			}
			allChecks = append(allChecks, checks...)
			fmt.Fprintf(&b, "%-62s %-15s %6s %9v %8v %4d %6s %6s %8v %6s %8v\n", d.Name(), v.prop.Name, medianChecks(checks),
				median(catch).Round(time.Microsecond), median(shrink).Round(time.Millisecond), len(v.trace),
				fmt.Sprint(median(first)), fmt.Sprint(median(best)), median(more).Round(time.Millisecond),
				fmt.Sprint(median(final)), median(pass).Round(time.Millisecond))
		}
	}
	slices.Sort(allChecks)
	within := 0
	for _, c := range allChecks {
		if c <= 100 {
			within++
		}
	}
	fmt.Fprintf(&b, "at the BFS length: first shrink %d of %d, the catch used %d of %d, final %d of %d; caught within 100 checks: %d of %d hunts\n",
		firstEq, total, bestEq, total, finalEq, total, within, len(allChecks))
	for _, g := range gaps {
		fmt.Fprintf(&b, "gap: %s\n", g)
	}
	t.Log("\n" + b.String())
}

func median[T int | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return ys[len(ys)/2]
}

func medianChecks(xs []int) string {
	m := median(xs)
	if m >= 1<<30 {
		return "missed"
	}
	return strconv.Itoa(m)
}
