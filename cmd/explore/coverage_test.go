package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// -coverage prints the steps by action, fault and phase, and names what
// never fired; -json always carries them, the same for any number of
// workers.
func TestCheckCoverage(t *testing.T) {
	code, out, _ := runCheckArgs("-design", "redis/cad/none/plain,clients=2", "-steps", "1", "-coverage")
	require.Equal(t, exitIncomplete, code, out)
	require.Contains(t, out, "\ncoverage: the steps of the explored space (2 steps; a level cut short by a bound is not counted)\n"+
		"  actions       tick 0, acquire 2, read 0, write 0, release 0\n"+
		"  faults        pause 0\n"+
		"  client phases acquire 2, read 0, write 0, release 0, done 0 (clients met in each phase, over the states expanded)\n"+
		"  never fired   actions tick, read, write, release; faults pause; phases read, write, release, done\n")

	code, out, _ = runCheckArgs("-design", "demo2")
	require.Equal(t, exitViolated, code)
	require.NotContains(t, out, "coverage:") // only with -coverage

	var cov [2]checkCovJSON
	for i, w := range []string{"1", "2"} {
		code, out, _ = runCheckArgs("-design", "demo2", "-workers", w, "-json", "-symmetry=false")
		require.Equal(t, exitViolated, code)
		var got struct {
			Stats    checkStatsJSON `json:"stats"`
			Coverage checkCovJSON   `json:"coverage"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		require.Equal(t, got.Stats.Transitions, got.Coverage.Steps)
		cov[i] = got.Coverage
	}
	require.Equal(t, cov[0], cov[1])
	c := cov[0]
	require.Equal(t, []string{"tick", "acquire", "read", "write", "release"}, kindsOf(c.Actions))
	require.Len(t, c.Faults, 1)
	require.Equal(t, "pause", c.Faults[0].Kind)
	var inPhases int64
	for _, p := range c.Faults[0].ByPhase {
		inPhases += p.Steps
	}
	require.Equal(t, c.Faults[0].Steps, inPhases)
	require.Equal(t, covNeverJSON{Actions: []string{}, Faults: []string{}, Phases: []string{}}, c.Never)
}

func kindsOf(ks []covKindJSON) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Kind)
	}
	return out
}
