package explore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The one-line verdict comes from the explored results: a fenced design
// is lock-unsafe, data-safe; demo2 loses updates; demo1 holds only
// vacuously; a restart that leaves a key for ever is stuck.
func TestSummarize(t *testing.T) {
	for _, c := range []struct{ design, verdict, text string }{
		{"demo6", VerdictDataSafe, "no-lost-update holds, put to the test (data safety); exclusive, mutex violated (lock safety)"},
		{"redlock/cad/rw/max-token,counter=external,clients=2,nodes=3", VerdictDataSafe, "no-lost-update holds, put to the test (data safety); exclusive, mutex violated (lock safety)"},
		{"demo2", VerdictLosesUpdate, "no-lost-update violated (data safety); exclusive, mutex violated (lock safety)"},
		{"demo1", VerdictVacuous, "exclusive, mutex, own-release, no-lost-update, progress only vacuously: no fault of the budget reached them"},
		{"redis/cad/none/plain,acquire=set-expire,clients=2,pauses=0,restarts=1", VerdictStuck, "no-lost-update holds only vacuously (data safety); progress violated (liveness)"},
		{"redis/cad/none/plain,lock-delay=8", VerdictDataSafe, "no-lost-update holds, put to the test (data safety); exclusive violated (lock safety)"},
	} {
		rep := checkName(t, c.design)
		s := Summarize(rep)
		require.Equal(t, c.verdict, s.Verdict, c.design)
		require.Equal(t, c.text, s.Text, c.design)
	}
	// every always property of demo6 but the violated ones, put to the test
	rep := checkName(t, "demo6")
	var kept []Result
	for _, r := range rep.Results {
		if r.Status != Violated {
			kept = append(kept, r)
		}
	}
	rep.Results = kept
	require.Equal(t, Summary{VerdictSafe, "every property holds, put to the test"}, Summarize(rep))
}
