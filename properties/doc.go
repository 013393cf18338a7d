// Package properties is lockcheck's property-based suite: rapid
// (pgregory.net/rapid) draws schedules of the model, one enabled action at
// a time, for every design of the catalogue (lockcheck/catalogue) and a few
// more, and judges them against exhaustive search (lockcheck/explore). All
// of it is in the tests; run
//
//	go test ./properties
//
// For each design, breadth-first search first decides which properties
// the design breaks and finds the shortest counterexample of each. Then:
//
//   - TestDesigns/DESIGN/holds: -rapid.checks schedules (100 by default)
//     must never show a property that search says the design cannot show;
//     after every action, every property of the model is evaluated
//     (model.Properties, Bad). Every finished schedule's job history also
//     goes to the linearizability checker, whose verdict must agree with
//     no-lost-update on the same run.
//   - TestDesigns/DESIGN/PROPERTY, for each property search breaks: rapid
//     must catch it (the schedule stops at the first step that shows it),
//     shrink it, and the shrunk schedule must replay through model.Replay
//     to the violation. The log compares its length with search's shortest
//     ("SHRINK GAP" when longer); a shorter one fails the test. Up to
//     -properties.rounds more rounds (5) then hunt for a shorter violation.
//
// A failure prints rapid's report (with the -run and -rapid.seed that
// reproduce it), the shrunk schedule as the timeline `explore` prints, and
// writes a counterexample file that `go run ./cmd/explore replay FILE`
// replays, into $TMPDIR/lockcheck-properties.
//
// Flags (after the package: go test ./properties -args … or directly):
//
//	-rapid.checks=N        schedules per holds check (default 100); a hunt
//	                       may take 10×N, and at least 1000
//	-rapid.seed=N          replay one seed
//	-short                 a fifth of the checks, the first shrink only
//	-properties.rounds=N   more rounds hunting a shorter violation
//	-properties.strategy=S how steps are drawn: swarm (default), stable,
//	                       uniform
//	-properties.only=holds only the holds subtests (or caught: only the
//	                       hunts); design names hold slashes, so -run
//	                       cannot pick subtests by level
//	-properties.timelines  log the timeline of every caught violation
//	-properties.rapidlog   print rapid's log (with -rapid.debug: shrinking)
//	-properties.rates=N    TestMeasureRates: share of N schedules that show
//	                       each broken property, per strategy
//	-properties.seeds=N    TestMeasureCatch: checks and time to catch and
//	                       shrunk length, median over seeds 1..N
//
// FuzzSchedules is the holds check as a go test -fuzz target
// (rapid.MakeFuzz). TestPlantedBugs plants each of the model's bugs
// (bug=…) and checks that the suite fails; TestPlantedProperties checks
// the shrinker against properties whose shortest schedules are known.
package properties
