package explore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

// TestCheckFrom: a search from a state the shortest counterexample passes
// through finds the rest of it, exactly as long (a shorter one from there
// would make a shorter one from the start); its trace replays from that
// state to the violation; an empty start is the initial state; a start
// that does not replay is an error.
func TestCheckFrom(t *testing.T) {
	d, err := model.ParseDesign("demo2")
	require.NoError(t, err)
	props, err := model.ParseProperties("exclusive")
	require.NoError(t, err)
	rep, err := Check(Config{Design: d, Properties: props})
	require.NoError(t, err)
	whole := rep.Results[0].Trace
	require.Equal(t, Violated, rep.Results[0].Status)

	again, err := Check(Config{Design: d, Properties: props, From: []model.Action{}})
	require.NoError(t, err)
	require.Equal(t, rep.Results, again.Results)
	require.Equal(t, rep.Stats.Distinct, again.Stats.Distinct)

	for _, k := range []int{1, 5, len(whole) / 2, len(whole) - 1} {
		from := whole[:k]
		rest, err := Check(Config{Design: d, Properties: props, From: from})
		require.NoError(t, err)
		res := rest.Results[0]
		require.Equal(t, Violated, res.Status, "from step %d", k)
		require.Len(t, res.Trace, len(whole)-k, "from step %d", k)
		r, err := model.Replay(&d, append(append([]model.Action(nil), from...), res.Trace...))
		require.NoError(t, err)
		at, ok := r.Violated("exclusive")
		require.True(t, ok)
		require.Equal(t, len(whole), at)
		require.Less(t, rest.Stats.Distinct, rep.Stats.Distinct, "from step %d: the search from there sees part of the space", k)
	}

	// a state past the violation: the property may hold from there
	done, err := Check(Config{Design: d, Properties: props, From: whole})
	require.NoError(t, err)
	require.NotEqual(t, Incomplete, done.Results[0].Status)

	_, err = Check(Config{Design: d, Properties: props, From: []model.Action{{Kind: model.ActWrite}}})
	require.ErrorContains(t, err, "explore: the start (Config.From): step 1 (A write) is not enabled")
}
