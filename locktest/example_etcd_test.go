package locktest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"lockcheck/locktest"
)

// etcdLock is an adapter for an etcd lock of your own: a lease of the
// target's TTL and the key put with it if absent, deleted on release if
// its value is still the client's.
type etcdLock struct {
	cli *clientv3.Client
	t   locktest.Target
	bug string // a planted mistake (TestPlantedEtcdClient); "" for none
}

func (l *etcdLock) Acquire(ctx context.Context) (bool, error) {
	g, err := l.cli.Grant(ctx, int64(l.t.TTL/time.Second))
	if err != nil {
		return false, err
	}
	r, err := l.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(l.t.Key), "=", 0)).
		Then(clientv3.OpPut(l.t.Key, l.t.Value, clientv3.WithLease(g.ID))).Commit()
	if err != nil || !r.Succeeded {
		l.cli.Revoke(ctx, g.ID) // the unused lease
		return false, err
	}
	return true, nil
}

func (l *etcdLock) Release(ctx context.Context) (bool, error) {
	if l.bug == "release-any" { // deletes the key whoever's it is
		r, err := l.cli.Delete(ctx, l.t.Key)
		return err == nil && r.Deleted == 1, err
	}
	r, err := l.cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(l.t.Key), "=", l.t.Value)).
		Then(clientv3.OpDelete(l.t.Key)).Commit()
	return err == nil && r.Succeeded, err
}

func (l *etcdLock) Close() error { return l.cli.Close() }

func newEtcdLock(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	return newPlantedEtcdLock(ctx, t, "")
}

func newPlantedEtcdLock(ctx context.Context, t locktest.Target, bug string) (locktest.Lock, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{t.Addr}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	// connect now, before the schedule's clock starts
	if _, err := cli.Get(ctx, t.Key); err != nil {
		cli.Close()
		return nil, err
	}
	return &etcdLock{cli: cli, t: t, bug: bug}, nil
}

// TestMyEtcdLock is the same test on etcd: locktest starts an embedded etcd
// member per schedule played at once (and a redis-server for the counter),
// and plays the model's etcd lease lock against two instances of the
// client. etcd's leases are whole seconds, so its ticks are 2s: the model's
// shortest runs and one random schedule take about half a minute.
func TestMyEtcdLock(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: about 30s of 2s ticks")
	}
	t.Parallel() // mostly sleep: alongside the Redis tests
	locktest.Run(t, locktest.Config{
		Service:   locktest.Etcd,
		Storage:   locktest.NoFencing,
		Clients:   2,
		Schedules: 1,
		New:       newEtcdLock,
	})
}

// TestPlantedEtcdClient: an etcd client whose release deletes the key
// whoever's it is is caught on etcd, first on the shortest schedule that
// shows it.
func TestPlantedEtcdClient(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: about 30s of 2s ticks")
	}
	t.Parallel()
	r := &recorder{TB: t}
	locktest.Run(r, locktest.Config{Service: locktest.Etcd, Clients: 2, Schedules: 1,
		New: func(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
			return newPlantedEtcdLock(ctx, t, "release-any")
		}})
	if len(r.errs) == 0 {
		t.Fatal("planted release-any on etcd: no schedule parts from the model")
	}
	// A resumes after its lease expired and B took the lock; its release
	// deletes B's key, where the model's delete-if-ours leaves it
	first, want := r.errs[0], "removed another's key: model false, real true"
	if !strings.Contains(first, "schedule no-lost-update ") || !strings.Contains(first, want) || !strings.Contains(first, "replay: LOCKTEST_SEED=") {
		t.Fatalf("planted release-any on etcd: want the first report on schedule no-lost-update naming %q with a replay line, got:\n%s", want, first)
	}
	t.Logf("%d schedules part from the model; the first:\n%s", len(r.errs), first)
}
