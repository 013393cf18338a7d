package reality

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkRecipeUser is a user's client of go-zookeeper's lock recipe (zk
// v1.0.4, lock.go): LockWithData with its lock value as the node's data,
// Unlock. A failed Unlock leaves the Lock's lockPath set (lock.go: Unlock
// returns before it clears it), so that a later LockWithData would say
// ErrDeadlock: the client makes a new Lock then. ignoreUnlock is a
// planted bug: the release reports true whatever Unlock said.
type zkRecipeUser struct {
	c            *zk.Conn
	t            UserTarget
	l            *zk.Lock
	ignoreUnlock bool
}

func (u *zkRecipeUser) Acquire(context.Context) (bool, string, error) {
	err := u.l.LockWithData([]byte(u.t.Value))
	if errors.Is(err, zk.ErrSessionExpired) { // its node went with its session while it waited
		return false, "LockWithData → " + err.Error(), nil
	}
	return err == nil, "LockWithData → " + errText(err), err
}

func (u *zkRecipeUser) Release(context.Context) (bool, string, error) {
	err := u.l.Unlock()
	if u.ignoreUnlock {
		return true, "Unlock → " + errText(err) + " (ignored)", nil
	}
	if err != nil {
		u.l = zk.NewLock(u.c, u.t.Key, zk.WorldACL(zk.PermAll))
	}
	return err == nil, "Unlock → " + errText(err), nil
}

func (u *zkRecipeUser) Extend(context.Context) (bool, string, error) {
	return false, "", errors.New("a ZooKeeper session renews itself")
}

func (u *zkRecipeUser) Validity(context.Context) (left time.Duration, told string, err error) {
	return 0, "", errors.New("a ZooKeeper lock has no validity")
}

func (u *zkRecipeUser) Close() { u.c.Close() }

func zkRecipeMaker(ignoreUnlock bool) UserMaker {
	return func(ctx context.Context, t UserTarget) (UserLock, error) {
		c, err := zkConnect(ctx, t.Addr, t.TTL)
		if err != nil {
			return nil, err
		}
		return &zkRecipeUser{c: c, t: t, l: zk.NewLock(c, t.Key, zk.WorldACL(zk.PermAll)), ignoreUnlock: ignoreUnlock}, nil
	}
}

// TestZooKeeperUserClient plays the ZooKeeper pause (A's session expires
// during its pause, B and C take the lock, A's late write loses an update)
// with go-zookeeper's lock recipe as a user's client: it agrees with the
// model step by step. A planted client that ignores Unlock's error says
// its node was deleted at A's release, where it was long gone.
func TestZooKeeperUserClient(t *testing.T) {
	in := fileInput(t, "testdata/zookeeper-pause.txt")
	if err := CheckClient(ClientUser, &in.Design); err != nil {
		t.Fatal(err)
	}
	opts := Options{Client: ClientUser, User: zkRecipeMaker(false), ZooKeeper: needZooKeeper(t).Addr()}
	c := reproduce(t, in, opts)
	if !c.Agree || !c.Real.LostUpdate {
		t.Fatalf("go-zookeeper's recipe must agree with the model and lose an update:\n%s", c.Text())
	}
	opts.User = zkRecipeMaker(true)
	c = reproduce(t, in, opts)
	if c.Agree || len(c.Differences) == 0 || !strings.Contains(c.Differences[0], "A release") {
		t.Fatalf("an ignored Unlock error: want a difference at A's release, got %q\n%s", c.Differences, c.Text())
	}
	t.Logf("planted: %s", c.Differences[0])
}
