package reality

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"lockcheck/model"
)

// zkWorld is a ZooKeeper lock (zookeeper.go) on the server at
// Options.ZooKeeper, or on one of the run's own; the storage is Redis's.
type zkWorld struct {
	redisStorage
	server *ZooKeeperServer // started for the run, or nil
	addr   string
	obsC   *zk.Conn
	obs    *zkObserver
	seen   zkSeen // a user's client (zookeeper_user.go): the sequences of its nodes
}

func (w *zkWorld) start(ctx context.Context) error {
	if err := w.startStorage(ctx); err != nil {
		return err
	}
	w.addr = w.opts.ZooKeeper
	if w.addr == "" {
		zs, err := StartZooKeeper(ctx)
		if err != nil {
			return err
		}
		w.server, w.addr = zs, zs.Addr()
	}
	zc, err := zkConnect(ctx, w.addr, 10*time.Second)
	if err != nil {
		return fmt.Errorf("ZooKeeper observer: %v", err)
	}
	w.obsC = zc
	user := w.recipe()
	if err := zkSetup(ctx, zc, w.d, !user); err != nil {
		return err
	}
	w.obs = &zkObserver{c: zc, clients: w.d.Clients, byData: user}
	return nil
}

func (w *zkWorld) observer() looker { return w.obs }

// recipe reports whether the clients are a recipe's, a user's
// (ClientUser) or go-zookeeper's (ClientZkLock), played as
// zookeeper_user.go says.
func (w *zkWorld) recipe() bool {
	return w.opts.Client == ClientUser || w.opts.Client == ClientZkLock
}

func (w *zkWorld) lock(ctx context.Context, i int, h *netHold) (realLock, error) {
	st, err := newRedisStore(w.opts, w.sc, h, w.storeAddr(), w.replicaAddr())
	if err != nil {
		return nil, err
	}
	via, err := h.via(w.addr)
	if err != nil {
		st.closeStore()
		return nil, err
	}
	h.pingOnHold(w.addr) // a pause's session lives a session timeout from the pause
	if w.recipe() {
		return w.userLock(ctx, st, i, via)
	}
	zc, err := zkConnect(ctx, via, zkSession(w.d, w.opts.Tick))
	if err != nil {
		st.closeStore()
		return nil, fmt.Errorf("client %s: %v", model.ClientName(i), err)
	}
	z := &zkLock{c: zc, me: i, clients: w.d.Clients, protect: w.d.Protect == model.ProtectYes}
	return &zkLockConn{redisStore: st, d: w.d, i: i, zk: z, up: w.addr, obsC: w.obsC, plant: w.opts.plant.zkLost}, nil
}

func (w *zkWorld) stop() {
	if w.obsC != nil {
		w.obsC.Close()
	}
	if w.server != nil {
		w.server.Stop()
	}
	w.stopStorage()
}

// zkLockConn is a client's ZooKeeper lock: its session and its node.
type zkLockConn struct {
	redisStore
	d  *model.Design
	i  int
	zk *zkLock
	// up is the server (its proxy's key), obsC the observer's session:
	// a lost create's play (zookeeper_lost.go)
	up    string
	obsC  *zk.Conn
	plant zkLostPlant
}

func (l *zkLockConn) connect(ctx context.Context) error { return l.connectStore(ctx, l.i) }

func (l *zkLockConn) close() {
	l.zk.c.Close()
	l.closeStore()
}

// crashed: a dead process sends no heartbeats, so its session will expire.
func (l *zkLockConn) crashed(c *client) {
	if c.net != nil {
		c.net.hold()
	}
}

func (l *zkLockConn) unlock(context.Context, *client, uint8) error { return nil }

func (l *zkLockConn) incr(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("a ZooKeeper lock's token is its node's sequence: no INCR")
}

func (l *zkLockConn) expire(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("a ZooKeeper lock has no EXPIRE")
}

func (l *zkLockConn) renew(context.Context, *client, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("a ZooKeeper session renews itself: no renewal step")
}

// acquire creates its node if it has none, and holds the lock if its node
// is the lowest. The token is the node's sequence, told when the node is
// created (Token: the sequence of a node this step created, else 0).
func (l *zkLockConn) acquire(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	won, created, err := l.zk.acquire(ctx)
	if err != nil {
		return model.Reply{}, err
	}
	ob.Token = created
	r := wonReply(l.d, won, 0, ob)
	r.Token = uint16(l.zk.seq)
	return r, nil
}

// release deletes its node, if its session kept it.
func (l *zkLockConn) release(ctx context.Context, c *client, k model.ActionKind, ob *Obs) (model.Reply, error) {
	if err := c.lookBefore(ctx, ob); err != nil {
		return model.Reply{}, err
	}
	ok, err := l.zk.release(ctx)
	if err != nil {
		return model.Reply{}, err
	}
	return releasedReply(l.d, c, ob, ok), nil
}
