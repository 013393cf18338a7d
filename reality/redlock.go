package reality

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// Redlock (lock=redlock) is played on N redis-servers of its own, one per
// node (Options.Nodes), each killed and restarted by the schedule's
// node-crash steps (with an append-only file for persist=1). The storage
// stays on Options.Addr. The reference client asks the nodes one by one,
// a SET NX PX per acquire step as the model does, and after the last node
// counts its votes and its validity (PX − elapsed − drift ticks, by its own
// clock); a lost attempt unlocks the nodes it won. Its release is the
// check-and-delete script on every node.

// redlockMajority is how many nodes make the lock held.
func redlockMajority(d *model.Design) int { return d.Nodes/2 + 1 }

func popcount(x uint8) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// redlockObserver looks at every node: who holds the key on each (a down
// node shows as down).
type redlockObserver struct {
	nodes   []*redis.Client
	clients int
	d       *model.Design
	last    string // the nodes as the last look saw them (nodesText)
}

// owners is each node's key holder (HolderDown when the node is down).
func (o *redlockObserver) owners(ctx context.Context) ([]int, error) {
	out := make([]int, len(o.nodes))
	for k, c := range o.nodes {
		v, err := c.Get(ctx, LockKey).Result()
		if networkError(err) {
			out[k] = HolderDown
			continue
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("observer GET %s on node %d: %v", LockKey, k+1, err)
		}
		out[k] = holderOf(v, err, o.clients)
	}
	return out, nil
}

// majorityOwner is the client whose key is on a majority of the nodes, or
// HolderNone.
func majorityOwner(d *model.Design, owners []int) int {
	for i := 0; i < d.Clients; i++ {
		n := 0
		for _, h := range owners {
			if h == i {
				n++
			}
		}
		if n >= redlockMajority(d) {
			return i
		}
	}
	return HolderNone
}

// nodesText is the nodes' holders in one word: a client's letter, "-" for
// no key, "?" for a stranger's, "x" for a down node.
func nodesText(owners []int) string {
	var b strings.Builder
	for _, h := range owners {
		switch {
		case h >= 0:
			b.WriteString(model.ClientName(h))
		case h == HolderNone:
			b.WriteByte('-')
		case h == HolderDown:
			b.WriteByte('x')
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}

// holds is the model's rule for Redlock: client i's keys on the nodes
// that are up, plus the nodes that are down, make a majority.
func holdsRedlock(d *model.Design, owners []int, i int) bool {
	n := 0
	for _, h := range owners {
		if h == i || h == HolderDown {
			n++
		}
	}
	return n >= redlockMajority(d)
}

func (o *redlockObserver) holder(ctx context.Context) (int, error) {
	ow, err := o.owners(ctx)
	if err != nil {
		return 0, err
	}
	return majorityOwner(o.d, ow), nil
}

func (o *redlockObserver) look(ctx context.Context) (int, int64, error) {
	h, nodes, err := o.lookNodes(ctx)
	o.last = nodes
	return h, 0, err
}

func (o *redlockObserver) lookNodes(ctx context.Context) (int, string, error) {
	ow, err := o.owners(ctx)
	if err != nil {
		return 0, "", err
	}
	return majorityOwner(o.d, ow), nodesText(ow), nil
}

func (o *redlockObserver) holds(ctx context.Context, i int) (bool, error) {
	ow, err := o.owners(ctx)
	if err != nil {
		return false, err
	}
	return holdsRedlock(o.d, ow, i), nil
}

// modelNodes is the model's nodes in nodesText's words, and its majority
// owner.
func modelNodes(d *model.Design, s *model.State) (string, int) {
	ow := make([]int, d.Nodes)
	for k := range ow {
		switch {
		case s.Nodes[k].Back != 0:
			ow[k] = HolderDown
		default:
			ow[k] = s.KeyOwner(k)
		}
	}
	return nodesText(ow), majorityOwner(d, ow)
}

// redsyncRedlock is redsync v4 on the N nodes (Redlock): one TryLock sends
// its SET NX PX to every node at once. The design's drift (in ticks) is
// given as redsync's drift factor, so that its validity is the model's.
type redsyncRedlock struct {
	rcs []*redis.Client
	m   *redsync.Mutex
}

func newRedsyncRedlock(addrs []string, db int, value string, px time.Duration, drift time.Duration) *redsyncRedlock {
	l := &redsyncRedlock{}
	var pools []rsredis.Pool
	for _, a := range addrs {
		rc := redis.NewClient(crashableOptions(a, db))
		l.rcs = append(l.rcs, rc)
		pools = append(pools, goredis.NewPool(rc))
	}
	l.m = redsync.New(pools...).NewMutex(LockKey,
		redsync.WithExpiry(px),
		redsync.WithDriftFactor(float64(drift)/float64(px)),
		redsync.WithGenValueFunc(func() (string, error) { return value, nil }))
	return l
}

func (l *redsyncRedlock) acquire(ctx context.Context) (bool, int, string, error) {
	err := l.m.TryLockContext(ctx)
	if err == nil {
		return true, 0, "TryLock → nil", nil
	}
	return false, 0, "TryLock → " + errText(err), nil
}

func (l *redsyncRedlock) release(ctx context.Context, _, _ int) (bool, string, error) {
	ok, err := l.m.UnlockContext(ctx)
	return ok, fmt.Sprintf("Unlock → %v, %s", ok, errText(err)), nil
}

func (l *redsyncRedlock) renew(ctx context.Context) (bool, string, error) {
	ok, err := l.m.ExtendContext(ctx)
	return ok, fmt.Sprintf("Extend → %v, %s", ok, errText(err)), nil
}

func (l *redsyncRedlock) close() {
	for _, rc := range l.rcs {
		rc.Close()
	}
}

// checkAttempts reports whether every Redlock attempt in the schedule is
// played by one client with nothing in between: a library that asks every
// node in one call cannot play a schedule that slips a step between two of
// its nodes.
func checkAttempts(d *model.Design, run *model.Run) error {
	for k := 0; k < len(run.Steps); k++ {
		st := &run.Steps[k]
		if st.Action.Kind != model.ActAcquire || st.Event.Node != 0 {
			continue
		}
		for n := 1; n < d.Nodes; n++ {
			if k+n >= len(run.Steps) {
				break // the schedule ends mid-attempt
			}
			nx := &run.Steps[k+n]
			if nx.Action.Kind != model.ActAcquire || nx.Action.Client != st.Action.Client {
				return fmt.Errorf("step %d (%s): %s's Redlock attempt from step %d is cut by another step; a library that asks every node in one call cannot play it", nx.Seq, nx.Action, model.ClientName(int(st.Action.Client)), st.Seq)
			}
		}
		k += d.Nodes - 1
	}
	return nil
}
