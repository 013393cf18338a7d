package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// redlockAt is a Redlock state at t=3 in which client A (0) is about to
// release and node k's key is owners[k]'s (client+1; 0 no key).
func redlockAt(t *testing.T, name string, owners ...uint8) (Design, State) {
	t.Helper()
	d, err := ParseDesign(name)
	require.NoError(t, err)
	require.Equal(t, d.Nodes, len(owners))
	s := Init(&d)
	s.Now = 3
	for k, o := range owners {
		if o != 0 {
			s.Nodes[k].Owner, s.Nodes[k].Exp = o, 11
		}
	}
	a := &s.Clients[0]
	a.Phase, a.Flags = PhaseRelease, FlagStarted|FlagBelieves
	return d, s
}

// A Redlock release puts own-release to the test when it reaches another
// client's key on a node (up, not cut off from it), as own-release's
// violation is per node: the old rule asked node 1's owner only (StepTo's
// ev.Other), which saw a key the release never reached and missed a
// majority elsewhere.
func TestRedlockForeignReleaseWitness(t *testing.T) {
	const base = "redlock/cad/none/plain,clients=2,nodes=3"
	release := Action{Kind: ActRelease, Client: 0}
	wit := func(d Design, s State) (bool, Event) {
		t.Helper()
		require.True(t, Enabled(&d, &s, release))
		after, ev := Step(&d, s, release)
		return Witnesses(&d, &after, &ev)&WitForeignRelease != 0, ev
	}

	// B holds node 1, not a majority, A nodes 2 and 3: the release meets
	// B's vote and leaves it; a plain DEL in the same state removes it, and
	// B may then count a majority it does not hold
	d, s := redlockAt(t, base, 2, 1, 1)
	w, ev := wit(d, s)
	require.True(t, w)
	require.Equal(t, uint8(2), ev.Other) // B's key, reached
	dd, _ := redlockAt(t, "redlock/del/none/plain,clients=2,nodes=3", 2, 1, 1)
	_, ev = Step(&dd, s, release)
	require.NotZero(t, ev.Flags&EvRemovedOther)

	// the same key on node 1 with node 1 out of the release's reach: cut
	// off by a partition, or down (restarting, its key kept on disk). The
	// old rule counted both.
	d, s = redlockAt(t, base+",partition=node,partitions=1", 2, 1, 1)
	s.Clients[0].Cut, s.Clients[0].Group = 10, 1
	w, _ = wit(d, s)
	require.False(t, w)
	d, s = redlockAt(t, base+",node-crashes=1,persist=1,restart=10", 2, 1, 1)
	s.Nodes[0].Back, s.Used[FaultNodeCrash] = 12, 1
	w, _ = wit(d, s)
	require.False(t, w)

	// B holds a majority (nodes 2 and 3) without node 1, where A's stale key
	// is: the old rule saw A's own key on node 1 and no witness
	d, s = redlockAt(t, base, 1, 2, 2)
	w, ev = wit(d, s)
	require.True(t, w)
	require.Equal(t, uint8(2), ev.Other)

	// B's key on node 3 only (a vote won mid-acquire), not on node 1
	d, s = redlockAt(t, base, 1, 1, 2)
	w, _ = wit(d, s)
	require.True(t, w)

	// nobody else's key: no witness
	d, s = redlockAt(t, base, 1, 1, 0)
	w, _ = wit(d, s)
	require.False(t, w)
}

// ev.Other of a Redlock client step is the lock's holder: the acting
// client when its keys and the down nodes make a majority (so the holder is
// the actor exactly when the step has no ✗), else the first client whose
// do; node 1's key says nothing.
func TestRedlockOtherIsTheHolder(t *testing.T) {
	d, s := redlockAt(t, "redlock/cad/none/plain,clients=2,nodes=3", 1, 2, 2)
	a := &s.Clients[0]
	a.Phase = PhaseRead
	_, ev := Step(&d, s, Action{Kind: ActRead, Client: 0})
	require.Equal(t, uint8(2), ev.Other)
	require.NotZero(t, ev.Flags&EvUnsafe)

	// node 3 down: A (node 1) and B (node 2) each make a majority with it;
	// each one's step sees itself as the holder, and no ✗
	d, s = redlockAt(t, "redlock/cad/none/plain,clients=2,nodes=3,node-crashes=1,restart=10", 1, 2, 0)
	s.Nodes[2].Back, s.Used[FaultNodeCrash] = 12, 1
	for i := range 2 {
		c := &s.Clients[i]
		c.Phase, c.Flags = PhaseRead, FlagStarted|FlagBelieves
		_, ev = Step(&d, s, Action{Kind: ActRead, Client: uint8(i)})
		require.Equal(t, uint8(i+1), ev.Other)
		require.Zero(t, ev.Flags&EvUnsafe)
	}

	// every other lock service: node 1's key, as before
	d, err := ParseDesign("redis/cad/none/plain,clients=2")
	require.NoError(t, err)
	s = Init(&d)
	s.Nodes[0].Owner, s.Nodes[0].Exp = 2, 11
	s.Clients[0].Phase, s.Clients[0].Flags = PhaseRead, FlagStarted|FlagBelieves
	_, ev = Step(&d, s, Action{Kind: ActRead, Client: 0})
	require.Equal(t, uint8(2), ev.Other)
}

// A key kept on a down node (persist=1, restart=N) counts once for its
// owner, as the down node every client counts: A, whose only key is on the
// down node 1, does not hold the lock that B holds with nodes 2 and 3.
func TestRedlockDownNodeKeyCountsOnce(t *testing.T) {
	d, s := redlockAt(t, "redlock/cad/none/plain,clients=2,nodes=3,node-crashes=1,persist=1,restart=10", 1, 2, 2)
	s.Nodes[0].Back, s.Used[FaultNodeCrash] = 12, 1
	require.False(t, HoldsLock(&d, &s, 0))
	require.True(t, HoldsLock(&d, &s, 1))
	require.Equal(t, 1, LockHolder(&d, &s))
	s.Clients[0].Phase = PhaseWrite
	_, ev := Step(&d, s, Action{Kind: ActWrite, Client: 0})
	require.NotZero(t, ev.Flags&EvUnsafe)
	require.Equal(t, uint8(2), ev.Other)
}

// A Redlock release that removes another client's key says whose key on
// which node, and calls it a lock only when that client held one.
func TestRedlockRemovedWords(t *testing.T) {
	describe := func(owners ...uint8) string {
		d, s := redlockAt(t, "redlock/del/none/plain,clients=3", owners...)
		a := Action{Kind: ActRelease, Client: 0}
		after, ev := Step(&d, s, a)
		require.NotZero(t, ev.Flags&EvRemovedOther)
		return Describe(&d, &StepRecord{Seq: 1, Action: a, Event: ev, Before: s, After: after})
	}
	require.Contains(t, describe(1, 1, 2, 1, 1), "✗ deleted B's key on node 3")
	require.Contains(t, describe(1, 3, 2, 2, 2), "✗ deleted B's lock (its keys on nodes 3, 4 and 5) and C's key on node 2")
	require.Contains(t, describe(2, 2, 2, 2, 2), "✗ deleted B's lock (its keys on all 5 nodes)")
}
