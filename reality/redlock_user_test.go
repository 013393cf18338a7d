package reality

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

// redsyncUser is redsync's Redlock as a user's client (ClientUser): a
// goredis pool per node of UserTarget.Addrs, no read deadline and a
// per-node timeout of many TTLs (a node's request waits for its step).
type redsyncUser struct {
	rcs []*redis.Client
	m   *redsync.Mutex
}

func newRedsyncUser(ctx context.Context, t UserTarget) (UserLock, error) {
	u := &redsyncUser{}
	var pools []rsredis.Pool
	for _, a := range t.Addrs {
		rc := redis.NewClient(&redis.Options{Addr: a, DB: t.DB, MaxRetries: -1, PoolSize: 1, ReadTimeout: -1, DisableIdentity: true})
		u.rcs = append(u.rcs, rc)
		if err := rc.Ping(ctx).Err(); err != nil {
			u.Close()
			return nil, err
		}
		pools = append(pools, goredis.NewPool(rc))
	}
	u.m = redsync.New(pools...).NewMutex(t.Key, redsync.WithExpiry(t.TTL), redsync.WithTries(1), redsync.WithTimeoutFactor(100),
		redsync.WithDriftFactor(float64(t.Drift)/float64(t.TTL)), redsync.WithGenValueFunc(func() (string, error) { return t.Value, nil }))
	return u, nil
}

func (u *redsyncUser) Acquire(ctx context.Context) (bool, string, error) {
	err := u.m.TryLockContext(ctx)
	var taken *redsync.ErrTaken
	var nodeTaken *redsync.ErrNodeTaken
	if errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken) || errors.As(err, &nodeTaken) {
		return false, "TryLock → " + errText(err), nil
	}
	return err == nil, "TryLock → " + errText(err), err
}

func (u *redsyncUser) Release(ctx context.Context) (bool, string, error) {
	ok, err := u.m.UnlockContext(ctx)
	return ok, fmt.Sprintf("Unlock → %v, %s", ok, errText(err)), nil
}

func (u *redsyncUser) Extend(context.Context) (bool, string, error) {
	return false, "", errors.New("no renewal")
}

func (u *redsyncUser) Validity(context.Context) (time.Duration, string, error) {
	return 0, "", errors.New("no validity")
}

func (u *redsyncUser) Close() {
	for _, rc := range u.rcs {
		rc.Close()
	}
}

// TestRedlockUserNodeOrder plays two attempts cut into each other (A asks
// nodes 1-3, B all five: it wins nodes 4 and 5, loses 2 to 3 and deletes
// them; A asks nodes 4 and 5 and wins all five) with redsync as
// a user's client, whose TryLock sends to every node at once: each node
// lets the request through at the attempt's step for it, and the nodes
// hold what the model's hold after every step. Planted: with every node
// let through at once (plant.noGate) A's first step sends to all five
// nodes, which hold its keys ahead of the model's, and the comparison says
// so.
func TestRedlockUserNodeOrder(t *testing.T) {
	text := "design redlock/cad/none/plain,clients=2\nA acquire x3\nB acquire x5\nA acquire x2\n"
	for _, tc := range []struct {
		name string
		p    plant
	}{{"gated", plant{}}, {"planted-no-gate", plant{noGate: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			in := scenarioInput(t, "cut-attempts", text)
			c := reproduce(t, in, Options{Client: ClientUser, User: newRedsyncUser, plant: tc.p})
			if !tc.p.noGate {
				if !c.Agree {
					t.Fatalf("reality differs from the model:\n%s", c.Text())
				}
				return
			}
			// A's SETs to nodes 2-5 race the looks of its first steps: the
			// first difference is at one of them, with more of A's keys
			// for real than in the model
			first := ""
			if len(c.Differences) > 0 {
				first = c.Differences[0]
			}
			ahead := strings.HasPrefix(first, "step 1 (t=1 A acquire): key after: model nobody, real A's; nodes: model A----, real AAA") ||
				strings.HasPrefix(first, "step 2 (t=1 A acquire): key after: model nobody, real A's; nodes: model AA---, real AAA") ||
				strings.HasPrefix(first, "step 3 (t=1 A acquire): nodes: model AAA--, real AAAA")
			if c.Agree || !ahead {
				t.Fatalf("planted noGate: want the first difference at one of A's first three steps, with A's keys ahead of the model's, got:\n%s", c.Text())
			}
			t.Logf("planted: %s", c.Differences[0])
		})
	}
}
