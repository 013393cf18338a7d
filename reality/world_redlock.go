package reality

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// redlockWorld is Redlock on N redis-servers of its own (Options.Nodes),
// one per node, each killed and restarted by the schedule's node-crash
// steps; the storage stays on Options.Addr.
type redlockWorld struct {
	redisStorage
	servers []*Server
	obs     *redlockObserver
}

func (w *redlockWorld) start(ctx context.Context) error {
	if err := w.startStorage(ctx); err != nil {
		return err
	}
	w.obs = &redlockObserver{clients: w.d.Clients, d: w.d}
	for _, n := range w.servers {
		if err := resetNode(ctx, n.Addr(), w.opts.LockDB); err != nil {
			return err
		}
		// after the reset: its first connection would count as an
		// earlier run's
		w.obs.nodes = append(w.obs.nodes, redis.NewClient(admin(crashableOptions(n.Addr(), w.opts.LockDB))))
	}
	return nil
}

// resetNode deletes LockKey on a Redlock node, once the connections of
// an earlier run on its database are gone (drainEarlier), on a
// connection of its own.
func resetNode(ctx context.Context, addr string, db int) error {
	c := redis.NewClient(clientOptions(addr, db))
	defer c.Close()
	own, err := clientIDs(ctx, c)
	if err != nil {
		return err
	}
	if err := drainEarlier(ctx, c, own); err != nil {
		return err
	}
	if err := c.Del(ctx, LockKey).Err(); err != nil {
		return fmt.Errorf("reset %s on %s: %v", LockKey, addr, err)
	}
	return nil
}

func (w *redlockWorld) observer() looker { return w.obs }
func (w *redlockWorld) nodes() int       { return len(w.servers) }

func (w *redlockWorld) crash(ctx context.Context, k int) error {
	if k >= len(w.servers) {
		return w.redisStorage.crash(ctx, k)
	}
	return w.servers[k].Crash()
}

func (w *redlockWorld) restart(ctx context.Context, k int) error {
	if k >= len(w.servers) {
		return w.redisStorage.restart(ctx, k)
	}
	return w.servers[k].Restart(ctx)
}

func (w *redlockWorld) lock(ctx context.Context, i int, h *netHold) (realLock, error) {
	st, err := newRedisStore(w.opts, w.sc, h, w.storeAddr(), w.replicaAddr())
	if err != nil {
		return nil, err
	}
	l := &redlockLock{redisStore: st, d: w.d, i: i, value: model.LockValue(i), px: w.opts.px}
	var vias []string
	for _, n := range w.servers {
		via, err := h.via(n.Addr())
		if err != nil {
			l.close()
			return nil, err
		}
		vias = append(vias, via)
		l.nodes = append(l.nodes, redis.NewClient(crashableOptions(via, w.opts.LockDB)))
	}
	switch w.opts.Client {
	case ClientRedsync:
		l.lib = newRedsyncRedlock(vias, w.opts.LockDB, l.value, w.opts.px, time.Duration(w.d.DriftTicks)*w.opts.Tick)
	case ClientUser:
		if w.opts.User == nil {
			l.close()
			return nil, fmt.Errorf("client %s: Options.User is nil", ClientUser)
		}
		u, err := w.opts.User(ctx, UserTarget{Client: i, Addr: vias[0], Addrs: vias, DB: w.opts.LockDB, Key: LockKey, Value: l.value, TTL: w.opts.px,
			Drift: time.Duration(w.d.DriftTicks) * w.opts.Tick})
		if err != nil {
			l.close()
			return nil, err
		}
		run, stop := context.WithCancel(context.Background())
		l.user = &redlockUser{u: userAPI{u: u}, h: h, obs: w.obs, run: run, stop: stop, noGate: w.opts.plant.noGate}
		for _, n := range w.servers {
			l.user.ups = append(l.user.ups, n.Addr())
		}
	}
	return l, nil
}

func (w *redlockWorld) stop() {
	if w.obs != nil {
		for _, c := range w.obs.nodes {
			c.Close()
		}
	}
	w.stopStorage()
}

// redlockLock is a client's Redlock. lockcheck's own client asks the nodes
// one by one, a SET NX PX per acquire step as the model does; after the
// last node the model's program counts its votes and its validity (PX −
// elapsed − drift, by the real clock), and a lost attempt unlocks the
// nodes it won. Its release is the check-and-delete script on every node.
// With a library (redsync) one call asks every node at once.
type redlockLock struct {
	redisStore
	d     *model.Design
	i     int
	nodes []*redis.Client // one connection per node
	lib   lockAPI
	value string
	px    time.Duration
	// with a library: each node's answer to the library's one call (which
	// asked every node at once), and whether it won
	libNodes []model.Result
	libWon   bool
	// a user's client (ClientUser): its Acquire asks the nodes itself, one
	// node let through per acquire step (redlockUser)
	user *redlockUser
}

func (l *redlockLock) connect(ctx context.Context) error { return l.connectStore(ctx, l.i) }

func (l *redlockLock) close() {
	if l.user != nil {
		l.user.stop()
		l.user.u.close()
	}
	for _, n := range l.nodes {
		n.Close()
	}
	if l.lib != nil {
		l.lib.close()
	}
	l.closeStore()
}

func (l *redlockLock) crashed(c *client) {
	if l.user != nil {
		userCrashed(c)
	}
}

func (l *redlockLock) incr(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("Redlock's nodes share no fence counter: no INCR")
}

func (l *redlockLock) expire(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("Redlock is played with acquire=script: no EXPIRE")
}

// acquire is the attempt's step on node c.m.Asked. The last node's answer
// carries the validity left by the real clock, which the model's program
// counts with the votes.
func (l *redlockLock) acquire(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	k := int(c.m.Asked)
	ob.Node = k
	if l.lib != nil {
		return l.libStep(ctx, k, ob)
	}
	if l.user != nil {
		return l.userStep(ctx, c, k, ob)
	}
	ok, err := l.nodes[k].SetNX(ctx, LockKey, l.value, l.px).Result()
	if err != nil {
		if !networkError(err) {
			return model.Reply{}, fmt.Errorf("SET %s NX PX on node %d: %v", LockKey, k+1, err)
		}
		ok = false // a down node votes for nobody
	}
	ob.Result = model.ResRefused
	if ok {
		ob.Result = model.ResOK
	}
	r := model.Reply{Result: ob.Result, Node: uint8(k)}
	if k+1 == l.d.Nodes && c.left() > 0 {
		r.Left = 1
	}
	return r, nil
}

// libStep is an acquire step of a client whose library asks every node in
// one call (redsync): the attempt's first step makes the call, and each
// step then reports its node's answer as seen right after it (a node with
// the client's key or none said OK — a lost attempt unlocks what it won —,
// one with another's key or down said no). The model sends one SET per
// step; the nodes run ahead of it between an attempt's first and last step
// (a documented difference, see knownDifference).
func (l *redlockLock) libStep(ctx context.Context, k int, ob *Obs) (model.Reply, error) {
	if k == 0 {
		won, _, told, err := l.lib.acquire(ctx)
		if err != nil {
			return model.Reply{}, err
		}
		ob.Told, l.libWon = told, won
		l.libNodes = l.libNodes[:0]
		for n := 0; n < l.d.Nodes; n++ {
			v, err := l.nodes[n].Get(ctx, LockKey).Result()
			res := model.ResRefused
			switch {
			case networkError(err): // down: no vote
			case err != nil && !errors.Is(err, redis.Nil):
				return model.Reply{}, fmt.Errorf("GET %s on node %d: %v", LockKey, n+1, err)
			case errors.Is(err, redis.Nil) || v == l.value:
				res = model.ResOK
			}
			l.libNodes = append(l.libNodes, res)
		}
	} else {
		ob.Told = "(answered by the TryLock at the attempt's first step)"
	}
	ob.Result = l.libNodes[k]
	r := model.Reply{Result: ob.Result, Node: uint8(k)}
	if l.libWon { // the library's word decides; its votes are the nodes'
		r.Left = 1
	}
	return r, nil
}

// unlock deletes the keys of a lost attempt (a library or a user's client
// has done it itself).
func (l *redlockLock) unlock(ctx context.Context, c *client, mask uint8) error {
	if l.lib != nil || l.user != nil {
		return nil
	}
	for n := 0; n < l.d.Nodes; n++ {
		if mask&(1<<n) == 0 {
			continue
		}
		if _, err := cadScript.Run(ctx, l.nodes[n], []string{LockKey}, l.value).Int64(); err != nil && !networkError(err) {
			return fmt.Errorf("check-and-delete on node %d: %v", n+1, err)
		}
	}
	return nil
}

// release is the check-and-delete script on every node.
func (l *redlockLock) release(ctx context.Context, c *client, k model.ActionKind, ob *Obs) (model.Reply, error) {
	if err := c.lookBefore(ctx, ob); err != nil {
		return model.Reply{}, err
	}
	if l.user != nil {
		ok, told, err := l.user.u.release(ctx, c.i, ob.Before)
		if err != nil {
			return model.Reply{}, err
		}
		ob.Told = told
		return releasedReply(l.d, c, ob, ok), nil
	}
	if l.lib != nil {
		ok, told, err := l.lib.release(ctx, c.i, ob.Before)
		if err != nil {
			return model.Reply{}, err
		}
		ob.Told = told
		return releasedReply(l.d, c, ob, ok), nil
	}
	ob.Result = model.ResNoop
	for n := 0; n < l.d.Nodes; n++ {
		got, err := cadScript.Run(ctx, l.nodes[n], []string{LockKey}, l.value).Int64()
		if err != nil && !networkError(err) {
			return model.Reply{}, fmt.Errorf("check-and-delete on node %d: %v", n+1, err)
		}
		if got == 1 {
			ob.Result = model.ResOK
		}
	}
	return model.Reply{Result: ob.Result}, nil
}

func (l *redlockLock) renew(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	if l.user != nil {
		return model.Reply{}, errors.New("Redlock is played with renew=0: no renewal")
	}
	if l.lib != nil {
		return libRenew(ctx, l.lib, ob)
	}
	return model.Reply{}, errors.New("Redlock is played with renew=0: no renewal")
}
