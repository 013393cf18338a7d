package model

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// consulRun replays scenario lines on design name.
func consulRun(t *testing.T, name string, steps ...string) *Run {
	t.Helper()
	sc, err := ParseScenario("design " + name + "\n" + strings.Join(steps, "\n") + "\n")
	require.NoError(t, err)
	r, err := Replay(&sc.Design, sc.Trace)
	require.NoError(t, err)
	return r
}

// polls is n ticks with a refused acquire of client w before each.
func polls(w string, n int) []string {
	var out []string
	for k := 0; k < n; k++ {
		out = append(out, w+" acquire", "tick")
	}
	return out
}

// The server invalidates a session 2 × its TTL after its last renewal (or
// its creation), and only then the lock-delay starts: the key stays A's
// until t=21, nobody may take it until t=31. An explicit release sets no
// lock-delay.
func TestConsulSessionLastsTwiceItsTTL(t *testing.T) {
	const name = "consul/cad/none/plain,clients=2,pauses=0,crashes=1"
	steps := append([]string{"A acquire", "A crash"}, polls("B", 19)...)
	r := consulRun(t, name, steps...)
	f := &r.Final
	require.Equal(t, uint8(20), f.Now)
	require.Equal(t, uint8(A+1), f.Nodes[0].Owner, "at t=20 the session still holds the key")
	require.Equal(t, uint8(21), f.Nodes[0].Exp)
	r = consulRun(t, name, append(steps, "B acquire", "tick")...)
	f = &r.Final
	require.Equal(t, uint8(0), f.Nodes[0].Owner, "invalidated at t=21")
	require.Equal(t, uint8(31), f.Nodes[0].Hold, "lock-delay = ttl by default")
	d := r.Design
	after, ev := Step(&d, *f, Action{Kind: ActAcquire, Client: B})
	require.Equal(t, ResRefused, ev.Result, "refused during the lock-delay")
	require.Equal(t, uint8(0), after.Nodes[0].Owner)

	r = consulRun(t, name, "A acquire", "A read", "B acquire", "tick", "B acquire", "tick", "A write", "A release")
	require.Equal(t, uint8(0), r.Final.Nodes[0].Hold, "a release sets no lock-delay")
	require.True(t, Enabled(&r.Design, &r.Final, Action{Kind: ActAcquire, Client: B}))
}

// The token is the key's LockIndex: it grows while the key stays
// (behavior=release), starts again at 1 once an invalidation deleted the
// key (behavior=delete), and index=modify (the Raft index) never repeats.
func TestConsulLockIndexAfterInvalidation(t *testing.T) {
	steps := append([]string{"A acquire", "A crash"}, polls("B", 30)...)
	steps = append(steps, "B acquire")
	for _, c := range []struct {
		params string
		want   uint16
	}{{"", 2}, {",behavior=delete", 1}, {",behavior=delete,index=modify", 3}, {",index=modify", 3}} {
		r := consulRun(t, "consul/cad/rw/max-token,clients=2,pauses=0,crashes=1"+c.params, steps...)
		require.True(t, r.Final.Clients[B].Believes(), c.params)
		require.Equal(t, c.want, r.Final.Clients[B].Token, "B's token%s", c.params)
	}
}
