package reality

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkRecipe is go-zookeeper's lock recipe (github.com/go-zookeeper/zk
// v1.0.4, lock.go), the library client ClientZkLock: zk.NewLock on the
// lock node, LockWithData with the client's lock value as its node's data
// (so the observer tells whose node it sees: zookeeper_user.go), Unlock.
// It is played as a user's client is (zkUserConn): LockWithData blocks
// until its node is the lowest, so it runs in a goroutine of its own.
//
// What the recipe does: LockWithData creates <path>/_c_<GUID>-lock-<seq>
// with Conn.CreateProtectedEphemeralSequential, lists the children,
// returns if its node is the lowest, else watches its predecessor (GetW)
// and blocks on the watch; a watch ended by the session's expiry returns
// zk.ErrSessionExpired, which is a refusal (the node went with the
// session; the next acquire step calls LockWithData again, as the model's
// client creates a new node). Unlock deletes the node and forgets it only
// if the delete succeeded: after a failed Unlock (the node went with an
// expired session: zk.ErrNoNode) the Lock still holds its node's path and
// its next LockWithData says zk.ErrDeadlock, so a new Lock is made then.
type zkRecipe struct {
	c    *zk.Conn
	path string
	l    *zk.Lock
	data []byte
}

// newZkRecipe opens client t's session (through its proxy, t.Addr, with
// the session timeout t.TTL) and its Lock on t.Key.
func newZkRecipe(ctx context.Context, t UserTarget) (UserLock, error) {
	c, err := zkConnect(ctx, t.Addr, t.TTL)
	if err != nil {
		return nil, err
	}
	return &zkRecipe{c: c, path: t.Key, l: zk.NewLock(c, t.Key, zk.WorldACL(zk.PermAll)), data: []byte(t.Value)}, nil
}

func (r *zkRecipe) Acquire(context.Context) (bool, string, error) {
	err := r.l.LockWithData(r.data) // blocks until its node is the lowest
	switch {
	case err == nil:
		return true, "LockWithData → nil", nil
	case errors.Is(err, zk.ErrSessionExpired): // its node went with its session while it waited
		return false, "LockWithData → " + errText(err), nil
	}
	return false, "", fmt.Errorf("go-zookeeper LockWithData: %v", err)
}

func (r *zkRecipe) Release(context.Context) (bool, string, error) {
	err := r.l.Unlock()
	if err == nil {
		return true, "Unlock → nil", nil
	}
	if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrSessionExpired) { // its node is gone: a new Lock for the next job
		r.l = zk.NewLock(r.c, r.path, zk.WorldACL(zk.PermAll))
		return false, "Unlock → " + errText(err), nil
	}
	return false, "", fmt.Errorf("go-zookeeper Unlock: %v", err)
}

func (r *zkRecipe) Extend(context.Context) (bool, string, error) {
	return false, "", errors.New("a ZooKeeper session renews itself: go-zookeeper's Lock has no Extend")
}

func (r *zkRecipe) Validity(context.Context) (time.Duration, string, error) {
	return 0, "", errors.New("go-zookeeper's Lock does not measure its validity")
}

func (r *zkRecipe) Close() { r.c.Close() }
