package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReplicasFreshestFirst: a replica that catches up moves to the front
// (node 1, the freshest), WAIT counts the replicas that have the key, and
// a failover promotes node 1 while the stalest keeps its old copy.
func TestReplicasFreshestFirst(t *testing.T) {
	d, err := ParseDesign("replica/cad/rw/max-token,ack=wait,clients=2,pauses=0,replicas=3,acks=2")
	require.NoError(t, err)
	s := Init(&d)
	require.Equal(t, 4, lockNodes(&d))
	step := func(a Action) {
		t.Helper()
		require.True(t, Enabled(&d, &s, a), "%s at t=%d", a, s.Now)
		s, _ = Step(&d, s, a)
	}
	step(Action{Kind: ActAcquire, Client: A})
	var got []string
	for _, a := range Actions(&d, &s, nil) {
		if a.Kind == ActReplicate {
			got = append(got, a.String())
		}
	}
	require.Equal(t, []string{"replicate", "replicate 2", "replicate 3"}, got)

	step(Action{Kind: ActReplicate, Arg: 2}) // replica 3 catches up: now replica 1
	require.Equal(t, uint8(A+1), s.Nodes[1].Owner)
	require.Equal(t, uint8(0), s.Nodes[2].Owner)
	require.Equal(t, 2, lagging(&d, &s))
	require.Equal(t, 1, ackCount(&d, &s, A))
	require.False(t, Enabled(&d, &s, Action{Kind: ActAck, Client: A}), "WAIT 2 0 returned with one replica")

	step(Action{Kind: ActReplicate, Arg: 1})
	require.Equal(t, 3, lagging(&d, &s))
	require.Equal(t, 2, ackCount(&d, &s, A))
	step(Action{Kind: ActAck, Client: A})

	step(Action{Kind: ActFailover})
	require.Equal(t, uint8(A+1), s.Nodes[0].Owner, "the freshest replica is promoted")
	require.Equal(t, uint16(1), s.Nodes[0].Fence)
	require.Equal(t, uint8(0), s.Nodes[3].Owner, "the stalest keeps its old copy")
	require.Equal(t, 3, lagging(&d, &s))
}

// TestPromoteAny: promote=any offers a failover to each replica whose copy
// differs from the fresher one's; promoting replica p resyncs replicas
// 1 … p from it and leaves the staler ones alone.
func TestPromoteAny(t *testing.T) {
	d, err := ParseDesign("replica/cad/rw/max-token,promote=any,clients=2,pauses=0,replicas=3")
	require.NoError(t, err)
	s := Init(&d)
	failovers := func() []string {
		var out []string
		for _, a := range Actions(&d, &s, nil) {
			if a.Kind == ActFailover {
				out = append(out, a.String())
			}
		}
		return out
	}
	require.Equal(t, []string{"failover"}, failovers(), "three equal copies: one choice")
	s, _ = Step(&d, s, Action{Kind: ActAcquire, Client: A})
	s, _ = Step(&d, s, Action{Kind: ActReplicate})
	require.Equal(t, []string{"failover", "failover 2"}, failovers(), "replicas 2 and 3 hold the same older copy")
	s, _ = Step(&d, s, Action{Kind: ActFailover, Arg: 1})
	require.Equal(t, uint8(0), s.Nodes[0].Owner, "replica 2 had no key")
	require.Equal(t, uint16(0), s.Nodes[0].Fence)
	for k := 1; k <= 3; k++ {
		require.Equal(t, s.Nodes[0], s.Nodes[k], "replica %d", k)
	}
}

// TestWaitAnswersWhenItReturns: WAIT's answer is the count when it
// returned (ackSettle), not at the wait step that reads it: with acks=1
// the first replica to catch up returns it with 1, and a second one after
// that is not counted. A WAIT that has returned stays returned: when A's
// key has expired, a replica that caught up has acknowledged A's acquire
// (its copy comes after it), and B's acquire after that leaves the
// replica's copy neither the primary's nor A's; A's wait step is still
// there, and says 1.
func TestWaitAnswersWhenItReturns(t *testing.T) {
	d, err := ParseDesign("replica/cad/rw/max-token,ack=wait,clients=2,pauses=0,replicas=2")
	require.NoError(t, err)
	s := Init(&d)
	var ev Event
	step := func(a Action) {
		t.Helper()
		require.True(t, Enabled(&d, &s, a), "%s at t=%d", a, s.Now)
		s, ev = Step(&d, s, a)
	}
	step(Action{Kind: ActAcquire, Client: A})
	require.False(t, Enabled(&d, &s, Action{Kind: ActAck, Client: A}), "WAIT 1 0 returned with no replica")
	step(Action{Kind: ActReplicate})
	step(Action{Kind: ActReplicate, Arg: 1})
	require.Equal(t, 2, ackCount(&d, &s, A))
	step(Action{Kind: ActAck, Client: A})
	require.Equal(t, ResOK, ev.Result)
	require.Equal(t, uint8(1), ev.Value, "WAIT returned at the first replica's catch-up, with 1")
	require.Zero(t, s.Clients[A].Marks&MarkAcks, "the answer is read: none is kept")

	d, err = ParseDesign("replica/cad/rw/max-token,ack=wait,clients=2,pauses=0")
	require.NoError(t, err)
	s = Init(&d)
	step(Action{Kind: ActAcquire, Client: A})
	for s.Nodes[0].Owner != 0 { // A's key expires, B polling meanwhile
		if Enabled(&d, &s, Action{Kind: ActAcquire, Client: B}) {
			step(Action{Kind: ActAcquire, Client: B})
		}
		step(Action{Kind: ActTick})
	}
	step(Action{Kind: ActReplicate}) // the replica's copy comes after A's acquire: WAIT returns 1
	step(Action{Kind: ActAcquire, Client: B})
	require.Equal(t, uint8(B+1), s.Nodes[0].Owner)
	require.Equal(t, 0, ackCount(&d, &s, A), "the replica's copy is neither the primary's nor A's")
	step(Action{Kind: ActAck, Client: A})
	require.Equal(t, uint8(1), ev.Value)
}
