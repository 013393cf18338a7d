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
//     must catch it (the schedule stops at the first step that shows it)
//     and shrink it. A final pass then searches breadth-first among the
//     kinds of fault the shrunk schedule used (explore.Shorten: a pause of
//     any length, by any client, at any moment), which finds the shortest
//     counterexample with those faults; rapid's shrinker deletes and
//     lowers, but cannot trade a fault for another or move a pause to
//     another client. While the result is longer than search's shortest,
//     up to -properties.rounds more rounds (5) hunt for a shorter
//     violation, each shortened the same way. The result must replay
//     through model.Replay to the violation and be exactly as long as
//     search's shortest: longer is a "SHRINK GAP", shorter a search bug;
//     both fail the test (with -properties.rounds=0 a gap is only
//     logged).
//
// A failure prints rapid's report (with the -run and -rapid.seed that
// reproduce it), the shrunk schedule as the timeline `explore` prints, and
// writes a counterexample file that `go run ./cmd/explore replay FILE`
// replays, into $TMPDIR/lockcheck-properties.
//
// Flags (after the package: go test ./properties -args … or directly):
//
//	-rapid.checks=N        schedules per holds check (default 100); a hunt
//	                       may take 20×N, and at least 2000
//	-rapid.seed=N          replay one seed
//	-short                 a fifth of the checks, the first shrink only
//	-properties.design=D   run TestDesigns (and FuzzSchedules) on design
//	                       D, a name or preset as explore check takes it,
//	                       instead of the catalogue; exhaustive search
//	                       must complete on it within 2^21 states
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
// (bug=…) and checks that the suite fails, with a schedule as short as
// the bugged design's shortest; TestPlantedProperties checks
// the shrinker against properties whose shortest schedules are known.
package properties
