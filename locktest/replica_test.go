package locktest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"lockcheck/locktest"
)

// newRetryingLock is newLock's client with one retry of a command whose
// connection broke.
func newRetryingLock(bug string) func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	return func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
		rc := redis.NewClient(&redis.Options{Addr: t.Addr, DB: t.DB, MaxRetries: 1, PoolSize: 1})
		if err := rc.Ping(ctx).Err(); err != nil {
			rc.Close()
			return nil, err
		}
		return &redisLock{rc: rc, t: t, bug: bug}, nil
	}
}

// TestReplicaService plays the Redis client of locktest_test.go on a
// primary with a replica: the same adapter, Service Replica, with one
// retry of a command whose connection broke (the failover closes them,
// and the retry reconnects through the proxy to the promoted replica;
// the Redis tests keep MaxRetries -1, so that no retry resends a request
// the network lost or held). The correct
// client agrees with the model, fenced or not, its lost key after a
// failover included (the model's replica loses it too: two holders, which
// only the fenced storage survives), and a client whose release deletes
// any key is caught, first on the shortest schedule that shows it.
func TestReplicaService(t *testing.T) {
	for _, st := range []locktest.Storage{locktest.NoFencing, locktest.TokenOnReadsAndWrites} {
		cfg := locktest.Config{Service: locktest.Replica, Storage: st, Clients: 2, Schedules: 4, New: newRetryingLock("")}
		t.Run(cfg.Design(), func(t *testing.T) {
			t.Parallel()
			locktest.Run(t, cfg)
		})
	}
	t.Run("release-any", func(t *testing.T) {
		t.Parallel()
		r := &recorder{TB: t}
		locktest.Run(r, locktest.Config{Service: locktest.Replica, Clients: 2, Schedules: 4, New: newRetryingLock("release-any")})
		if len(r.errs) == 0 {
			t.Fatal("planted release-any on a replica: no schedule parts from the model")
		}
		first, want := r.errs[0], "removed another's key: model false, real true"
		if !strings.Contains(first, want) || !strings.Contains(first, "replay: LOCKTEST_SEED=") {
			t.Fatalf("planted release-any on a replica: want the first report naming %q with a replay line, got:\n%s", want, first)
		}
		t.Logf("%d schedules part from the model; the first:\n%s", len(r.errs), first)
	})
}
