package explore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

// resultOf is property name's result in rep (Report.Result), failing the
// test if there is none.
func resultOf(t *testing.T, rep *Report, name string) Result {
	t.Helper()
	r, ok := rep.Result(name)
	require.True(t, ok, "no result for %s", name)
	return r
}

// Bounded bypass, from the search: a polling lock lets a client that asked
// later in between a waiter's polls (Redis SET NX retried every tick, and
// the pub/sub wake-up race of wait=notify); a first-come, first-served
// queue (ZooKeeper's sequential nodes, etcd's queued Mutex) never does,
// under the same pause budget, and its holds is put to the test: clients
// waited (contended is seen) and sessions expired while they did.
func TestBoundedBypass(t *testing.T) {
	for _, c := range []struct {
		design string
		steps  int // the shortest violation of bypass; 0: it holds
	}{
		{"redis/cad/none/plain,jobs=2,pauses=0,bypass=0", 11},
		{"redis/cad/none/plain,jobs=2,pauses=0,bypass=1", 21},
		{"redis/cad/none/plain,wait=notify,jobs=2,pauses=0,bypass=0", 9},
		{"replica/cad/none/plain,jobs=2,pauses=0,bypass=0", 4}, // the failover loses A's key: C, who asked after B, gets it
		{"zookeeper/cad/none/plain,jobs=2,bypass=0", 0},
		{"etcd-mutex/cad/none/plain,jobs=2,bypass=0", 0},
	} {
		for _, sym := range []bool{true, false} {
			d, err := model.ParseDesign(c.design)
			require.NoError(t, err)
			rep, err := Check(Config{Design: d, Bounds: Bounds{Symmetry: sym}})
			require.NoError(t, err)
			r, w := resultOf(t, rep, "bypass"), resultOf(t, rep, "bypassed")
			if c.steps == 0 {
				require.Equal(t, Holds, r.Status, c.design)
				require.Equal(t, NotSeen, w.Status, "%s: nobody who asked later is served first", c.design)
				require.Equal(t, Seen, resultOf(t, rep, "contended").Status, c.design)
				require.True(t, rep.Stats.Complete, c.design)
				continue
			}
			require.Equal(t, Violated, r.Status, c.design)
			require.Len(t, r.Trace, c.steps, "%s (symmetry %v)", c.design, sym)
			require.Equal(t, Seen, w.Status, c.design)
			run, err := model.Replay(&d, r.Trace)
			require.NoError(t, err)
			most := 0
			for i := 0; i < d.Clients; i++ {
				most = max(most, model.Bypasses(&d, &run.Final, i))
			}
			require.Equal(t, d.Bypass+1, most, "%s: the counterexample ends at the bypass past the bound", c.design)
		}
	}
}

// The planted unfairness: Redis polling, two clients of one job each and
// A with a second job, no fault. The minimal case is A taking the lock
// back for its second job between B's polls: B asked at t=1, A's job 2
// asked at t=3, after B, and is served first.
func TestBypassShortestCase(t *testing.T) {
	rep := checkName(t, "redis/cad/none/plain,clients=2,jobs=2,pauses=0,bypass=0")
	r := resultOf(t, rep, "bypass")
	require.Equal(t, Violated, r.Status)
	want := []string{"A acquire", "A read", "B acquire", "tick", "B acquire", "tick", "A write", "A release", "A acquire"}
	var got []string
	for _, a := range r.Trace {
		got = append(got, a.String())
	}
	require.Equal(t, want, got)
	s := Summarize(rep)
	require.Equal(t, VerdictUnfair, s.Verdict)
	require.Contains(t, s.Text, "bypass violated (fairness)")
}

// A design without bypass= keeps its state count: the bypass bytes stay
// zero (pinned for the seed's design, whose count the golden files hold
// for the catalogue).
func TestBypassLeavesOtherDesignsAlone(t *testing.T) {
	plain := checkName(t, "redis/cad/none/plain,jobs=2")
	for _, r := range plain.Results {
		require.NotEqual(t, "bypass", r.Property)
	}
	counted := checkName(t, "zookeeper/cad/none/plain,jobs=2,bypass=0")
	uncounted := checkName(t, "zookeeper/cad/none/plain,jobs=2")
	require.Equal(t, uncounted.Stats.Distinct, counted.Stats.Distinct,
		"a first-come queue: every waiter keeps its place, so ranks add no states")
}
