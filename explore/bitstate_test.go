package explore

import (
	"fmt"
	"testing"

	"lockcheck/model"
)

// A bitstate search never says holds: with room to spare it finds the
// same states as the exact search and says holds-probabilistic, with an
// expected number of missed states; a planted bug is found with a real
// trace that replays and shows the property at its last step; a cramped
// array misses states and says so; and the result is the same for any
// number of workers.
func TestBitstate(t *testing.T) {
	for _, c := range []struct {
		name string
		sym  bool
	}{
		{"redis/cad/rw/max-token,clock=free,horizon=14", true},
		{"demo6,bug=no-token-check", true},
		{"demo2,bug=set-without-nx", false},
		{"demo4", true},
	} {
		d := design(t, c.name)
		exact := check(t, Config{Design: d, Bounds: Bounds{Symmetry: c.sym}})
		if exact.Stats.Bitstate != nil {
			t.Fatalf("%s: exact search with bitstate stats", c.name)
		}
		var first *Report
		for _, w := range []int{1, 3} {
			got := check(t, Config{Design: d, Bounds: Bounds{Symmetry: c.sym, Bitstate: 26, Workers: w}})
			what := fmt.Sprintf("%s bitstate 2^26 workers=%d", c.name, w)
			bs := got.Stats.Bitstate
			if bs == nil || bs.LogBits != 26 || bs.Hashes != bitHashes || bs.Fill <= 0 || bs.Missed < 0 {
				t.Fatalf("%s: bitstate stats %+v", what, bs)
			}
			if got.Stats.Distinct != exact.Stats.Distinct || bs.Missed > 0.01 {
				t.Errorf("%s: %d states (exact %d), %.3g expected missed", what, got.Stats.Distinct, exact.Stats.Distinct, bs.Missed)
			}
			for i, r := range got.Results {
				want := exact.Results[i]
				switch want.Status {
				case Holds:
					if r.Status != HoldsProbably || r.Vacuous != want.Vacuous {
						t.Errorf("%s: %s %s (vacuous %q), want %s", what, r.Property, r.Status, r.Vacuous, HoldsProbably)
					}
				case NotSeen:
					if r.Status != NotSeenProbably {
						t.Errorf("%s: %s %s, want %s", what, r.Property, r.Status, NotSeenProbably)
					}
				default:
					// a roomy array misses nothing here: the same shortest trace
					if r.Status != want.Status || model.FormatTrace(r.Trace) != model.FormatTrace(want.Trace) {
						t.Errorf("%s: %v, exact %v", what, r, want)
					}
					replayShows(t, what, d, r)
				}
			}
			if first == nil {
				first = got
			} else {
				sameReport(t, what, first, got)
				if *first.Stats.Bitstate != *got.Stats.Bitstate {
					t.Errorf("%s: %+v, with 1 worker %+v", what, *got.Stats.Bitstate, *first.Stats.Bitstate)
				}
			}
		}
	}
}

// A cramped array (2^20 bits for about 80,000 states) misses states, says
// so in its estimate, and still never says holds; what it reports as a
// violation replays.
func TestBitstateCramped(t *testing.T) {
	d := design(t, "redis/cad/rw/max-token,clock=free,horizon=14")
	exact := check(t, Config{Design: d, Bounds: Bounds{}})
	got := check(t, Config{Design: d, Bounds: Bounds{Bitstate: MinBitstate}})
	bs := got.Stats.Bitstate
	if got.Stats.Distinct >= exact.Stats.Distinct || bs.Missed < 1 || bs.Coverage(got.Stats.Distinct) >= 1 {
		t.Errorf("2^%d bits: %d states of %d, %.1f expected missed, coverage %.4f", MinBitstate, got.Stats.Distinct, exact.Stats.Distinct, bs.Missed, bs.Coverage(got.Stats.Distinct))
	}
	t.Logf("2^%d bits: %d states of %d, %.1f expected missed, fill %.3f", MinBitstate, got.Stats.Distinct, exact.Stats.Distinct, bs.Missed, bs.Fill)
	for _, r := range got.Results {
		switch r.Status {
		case Holds, NotSeen:
			t.Errorf("bitstate: %v", r)
		case Violated, Seen:
			replayShows(t, "cramped", d, r)
		}
	}
	if _, err := Check(Config{Design: d, Bounds: Bounds{Bitstate: MinBitstate - 1}}); err == nil {
		t.Errorf("bitstate 2^%d accepted", MinBitstate-1)
	}
}

// replayShows checks that r's trace replays from the initial state and
// shows r's property first at its last step.
func replayShows(t *testing.T, what string, d model.Design, r Result) {
	t.Helper()
	run, err := model.Replay(&d, r.Trace)
	if err != nil {
		t.Fatalf("%s: %s: trace does not replay: %v", what, r.Property, err)
	}
	if seq, ok := run.Violated(r.Property); !ok || seq != len(r.Trace) {
		t.Errorf("%s: %s: replay shows it at step %d (%v), want %d", what, r.Property, seq, ok, len(r.Trace))
	}
}
