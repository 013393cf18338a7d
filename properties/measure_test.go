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

// TestMeasureCatch runs the caught subtests of TestDesigns with several
// rapid seeds and reports per property the median checks and time to
// catch, and rapid's shrunk length against breadth-first search's.
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
	fmt.Fprintf(&b, "strategy %s, seeds 1..%d: checks to catch, time to catch, shrunk length (BFS shortest), shrink time\n", strat.name, *seedsFlag)
	fmt.Fprintf(&b, "%-62s %-15s %7s %9s %5s %14s %s\n", "design", "property", "checks", "catch", "BFS", "shrunk min/med/max", "shrink")
	equal, total := 0, 0
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
			var checks, lens []int
			var catch, shrink []time.Duration
			for seed := 1; seed <= *seedsFlag; seed++ {
				h := newHunt(d, exp, v.index, strat)
				rec := newRecorder(t.Name())
				start := time.Now()
				withFlag(t, "rapid.seed", strconv.Itoa(seed), func() { rapid.Check(rec, h.prop) })
				end := time.Now()
				if h.caught == nil {
					checks = append(checks, 1<<30) // not caught
					continue
				}
				checks = append(checks, rec.checksToCatch())
				lens = append(lens, len(h.caught))
				catch = append(catch, h.firstHit.Sub(start))
				shrink = append(shrink, end.Sub(h.firstHit))
				total++
				if len(h.caught) == len(v.trace) {
					equal++
				}
			}
			slices.Sort(checks)
			slices.Sort(lens)
			slices.Sort(catch)
			slices.Sort(shrink)
			med := func(n int) int { return n / 2 }
			shrunk := "-"
			if len(lens) > 0 {
				shrunk = fmt.Sprintf("%d/%d/%d", lens[0], lens[med(len(lens))], lens[len(lens)-1])
			}
			mc := "missed"
			if c := checks[med(len(checks))]; c < 1<<30 {
				mc = strconv.Itoa(c)
			}
			var mcatch, mshrink time.Duration
			if len(catch) > 0 {
				mcatch, mshrink = catch[med(len(catch))], shrink[med(len(shrink))]
			}
			fmt.Fprintf(&b, "%-62s %-15s %7s %9v %5d %14s %v\n", d.Name(), v.prop.Name, mc,
				mcatch.Round(time.Microsecond), len(v.trace), shrunk, mshrink.Round(time.Millisecond))
		}
	}
	fmt.Fprintf(&b, "shrunk to the BFS length: %d of %d catches\n", equal, total)
	t.Log("\n" + b.String())
}
