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

// redlockStep is the reference client's acquire step on node c.asked.
func (c *client) redlockStep(ctx context.Context, ob *Obs) error {
	d := c.d
	if c.asked == 0 {
		c.since, c.votes = time.Now(), 0
	}
	k := c.asked
	ob.Node = k
	ok, err := c.nodes[k].SetNX(ctx, LockKey, c.value, c.px).Result()
	if err != nil {
		if !networkError(err) {
			return fmt.Errorf("SET %s NX PX on node %d: %v", LockKey, k+1, err)
		}
		ok = false // a down node votes for nobody
	}
	ob.Result = model.ResRefused
	if ok {
		c.votes |= 1 << k
		ob.Result = model.ResOK
	}
	c.asked++
	ob.Value = popcount(c.votes)
	if c.asked < d.Nodes {
		return nil
	}
	c.asked = 0
	need := redlockMajority(d)
	if d.Quorum == model.QuorumAll {
		need = d.Nodes
	}
	left := c.px - time.Since(c.since) - time.Duration(d.DriftTicks)*c.clk.tick
	if ob.Value >= need && left > 0 {
		ob.Won = true
		c.votes = 0
		c.believes = true
		c.phase = model.PhaseRead
		return nil
	}
	for n := 0; n < d.Nodes; n++ { // lost: unlock what it won
		if c.votes&(1<<n) == 0 {
			continue
		}
		if _, err := cadScript.Run(ctx, c.nodes[n], []string{LockKey}, c.value).Int64(); err != nil && !networkError(err) {
			return fmt.Errorf("check-and-delete on node %d: %v", n+1, err)
		}
	}
	c.votes = 0
	return nil
}

// redlockRelease is the check-and-delete script on every node.
func (c *client) redlockRelease(ctx context.Context, ob *Obs) error {
	if err := c.lookBefore(ctx, ob); err != nil {
		return err
	}
	ob.Result = model.ResNoop
	for n := 0; n < c.d.Nodes; n++ {
		got, err := cadScript.Run(ctx, c.nodes[n], []string{LockKey}, c.value).Int64()
		if err != nil && !networkError(err) {
			return fmt.Errorf("check-and-delete on node %d: %v", n+1, err)
		}
		if got == 1 {
			ob.Result = model.ResOK
		}
	}
	c.finish()
	return nil
}

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

// redlockLibStep is an acquire step of a client whose library asks every
// node in one call (redsync): the attempt's first step makes the call,
// and each step then reports its node's answer as seen right after it (a
// node with the client's key or none said OK — a lost attempt unlocks what
// it won —, one with another's key or down said no). The model sends one
// SET per step; the nodes run ahead of it between an attempt's first and
// last step (a documented difference, see knownDifference).
func (c *client) redlockLibStep(ctx context.Context, ob *Obs) error {
	d := c.d
	k := c.asked
	ob.Node = k
	if k == 0 {
		won, _, told, err := c.lib.acquire(ctx)
		if err != nil {
			return err
		}
		ob.Told, c.libWon = told, won
		c.libNodes = c.libNodes[:0]
		for n := 0; n < d.Nodes; n++ {
			v, err := c.nodes[n].Get(ctx, LockKey).Result()
			res := model.ResRefused
			switch {
			case networkError(err): // down: no vote
			case err != nil && !errors.Is(err, redis.Nil):
				return fmt.Errorf("GET %s on node %d: %v", LockKey, n+1, err)
			case errors.Is(err, redis.Nil) || v == c.value:
				res = model.ResOK
			}
			c.libNodes = append(c.libNodes, res)
		}
	} else {
		ob.Told = "(answered by the TryLock at the attempt's first step)"
	}
	ob.Result = c.libNodes[k]
	for n := 0; n <= k; n++ {
		if c.libNodes[n] == model.ResOK {
			ob.Value++
		}
	}
	c.asked++
	if c.asked < d.Nodes {
		return nil
	}
	c.asked = 0
	if c.libWon {
		ob.Won, c.believes, c.phase = true, true, model.PhaseRead
	}
	return nil
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
