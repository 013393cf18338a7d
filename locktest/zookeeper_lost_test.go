package locktest_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"lockcheck/locktest"
)

// zkPlainLock is a ZooKeeper lock recipe of a user's own with a planted
// mistake: it creates its node without protected mode (a plain
// ephemeral sequential node, lock-<seq>, no GUID in its name) and, when
// the create fails with a connection loss, creates again. The first
// create may have been applied with only its reply lost: that node, the
// lowest, is then its session's and no one's, and every client, this
// one too, waits behind it. go-zookeeper's Lock
// (Conn.CreateProtectedEphemeralSequential) looks for its GUID among the
// children instead. Otherwise the recipe is the usual one: the lowest
// node holds; a waiter watches its predecessor (ExistsW) and returns
// false when its session expires.
type zkPlainLock struct {
	c    *zk.Conn
	t    locktest.Target
	node string // the node it created ("" when it holds none)
}

func (l *zkPlainLock) Acquire(ctx context.Context) (bool, error) {
	acl := zk.WorldACL(zk.PermAll)
	for {
		node, err := l.c.Create(l.t.Key+"/lock-", []byte(l.t.Value), zk.FlagEphemeral|zk.FlagSequence, acl)
		if errors.Is(err, zk.ErrConnectionClosed) { // the mistake: it may have been applied
			continue
		}
		if errors.Is(err, zk.ErrNoNode) { // the lock node first
			if _, err := l.c.Create(l.t.Key, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return false, err
			}
			continue
		}
		if err != nil {
			return false, err
		}
		l.node = node
		break
	}
	for {
		kids, _, err := l.c.Children(l.t.Key)
		if err != nil {
			return false, err
		}
		sort.Slice(kids, func(a, b int) bool { return zkSeqOf(kids[a]) < zkSeqOf(kids[b]) })
		me := l.node[len(l.t.Key)+1:]
		k := sort.Search(len(kids), func(k int) bool { return zkSeqOf(kids[k]) >= zkSeqOf(me) })
		if k == len(kids) || kids[k] != me {
			l.node = "" // gone with its session
			return false, nil
		}
		if k == 0 {
			return true, nil
		}
		there, _, ch, err := l.c.ExistsW(l.t.Key + "/" + kids[k-1])
		if err != nil {
			return false, err
		}
		if !there {
			continue
		}
		select {
		case ev := <-ch:
			if errors.Is(ev.Err, zk.ErrSessionExpired) {
				l.node = ""
				return false, nil
			}
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// zkSeqOf is a node's sequence: the last ten digits of its name.
func zkSeqOf(name string) string {
	if len(name) < 10 {
		return name
	}
	return name[len(name)-10:]
}

func (l *zkPlainLock) Release(context.Context) (bool, error) {
	if l.node == "" {
		return false, nil
	}
	err := l.c.Delete(l.node, -1)
	l.node = ""
	if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrSessionExpired) {
		return false, nil
	}
	return err == nil, err
}

func (l *zkPlainLock) Close() error { l.c.Close(); return nil }

func newZkPlainLock(ctx context.Context, t locktest.Target) (locktest.Lock, error) {
	c, err := zkSession(t)
	if err != nil {
		return nil, err
	}
	return &zkPlainLock{c: c, t: t}, nil
}

// TestUnprotectedZooKeeperClient: a recipe that creates its node without
// protected mode and creates again after a connection loss is caught on
// the lost-create swarm's shortest schedule (A's create applied, its
// reply lost; B queues behind it; A's Acquire, after its timeout, has
// made a second node behind B's and blocks, while the model's client
// finds its node and holds the lock), and on no schedule without a lost
// create: the recipe is right otherwise.
func TestUnprotectedZooKeeperClient(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	locktest.Run(r, locktest.Config{Service: locktest.ZooKeeper, Clients: 2, Schedules: ciCut(2, 1), New: newZkPlainLock})
	if len(r.errs) == 0 {
		t.Fatal("an unprotected create sent again after a lost reply: no schedule parts from the model")
	}
	first, want := r.errs[0], "step 6 (t=4 A acquire): reply: model its node: lowest, holds, real its node: waits"
	if !strings.Contains(first, "schedule found-after-lost-lost-create ") || !strings.Contains(first, want) || !strings.Contains(first, "replay: LOCKTEST_SEED=") {
		t.Fatalf("unprotected create: want the first report on schedule found-after-lost-lost-create naming %q, with a replay line, got:\n%s", want, first)
	}
	for _, e := range r.errs {
		name, _, _ := strings.Cut(strings.TrimPrefix(e, "locktest: your client parts from the model on schedule "), " ")
		if !strings.Contains(name, "lost-create") {
			t.Errorf("unprotected create: schedule %s, without a lost create, parts from the model:\n%s", name, e)
		}
	}
	t.Logf("%d schedules part from the model; the first:\n%s", len(r.errs), first)
}
