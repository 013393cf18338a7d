package properties

import (
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"lockcheck/model"
)

// FuzzSchedules is the suite's "holds" check as a go test -fuzz target:
// the input picks a suite design and a schedule, and no property that
// exhaustive search says the design cannot show may show.
//
//	go test ./properties -run '^$' -fuzz FuzzSchedules -fuzztime 1m
//
// Go's fuzzer mutates and minimises the input bytes; rapid reads them as
// its data. Go's minimiser knows nothing of the schedule, so a failure
// found here is best replayed and shrunk by rapid: run TestDesigns on the
// design it names.
func FuzzSchedules(f *testing.F) {
	names, err := suiteDesigns()
	if err != nil {
		f.Fatal(err)
	}
	var designs []model.Design
	var exps []*expectation
	for _, name := range names {
		d, err := model.ParseDesign(name)
		if err != nil {
			f.Fatal(err)
		}
		exp, err := expectationFor(d)
		if err != nil {
			f.Fatal(err)
		}
		designs, exps = append(designs, d), append(exps, exp)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{8, 512, 4096, 4096, 8192} {
		seed := make([]byte, n)
		for i := range seed {
			seed[i] = byte(rng.Uint32())
		}
		f.Add(seed)
	}
	strat := chosenStrategy(f)
	pickDesign := rapid.IntRange(0, len(designs)-1)
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) {
		i := pickDesign.Draw(t, "design")
		h := newHunt(designs[i], exps[i], -1, strat)
		h.prop(t)
	}))
}
