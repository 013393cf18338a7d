package reality

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"lockcheck/model"
)

// etcdWorld is an etcd lock (etcd.go) at Options.Etcd: lockcheck's own
// lease and put-if-absent, or etcd's concurrency.Mutex; the storage is
// Redis's.
type etcdWorld struct {
	redisStorage
	cli      *clientv3.Client
	offset   int64
	obs      looker
	mutexObs *etcdMutexObserver // ClientEtcdMutex: each client's session lease is added as it is made
	// firstSession is when the first client's Session was made (its first
	// keep-alive; ClientEtcdMutex)
	firstSession time.Time
	ss           sessions // lock=etcd-mutex: the sessions and the puts' revisions
}

// keepAliveLead is how long before a tick starts the etcd Sessions'
// keep-alives come (clockStart): their drift (each of sendKeepAliveLoop's
// 500ms waits runs a little long, a few ms a keep-alive under load) then
// has 0.7s before a keep-alive falls after the tick's requests would see
// it (session.go).
const keepAliveLead = 300 * time.Millisecond

// clockStart is when tick 1 may start, no earlier than earliest: for
// etcd's Mutex, keepAliveLead after the first Session's first keep-alive,
// or a whole number of ticks later, so that with ttl=3 on 2s ticks (a
// keep-alive every 2.0s, session.go) every keep-alive comes just before a
// tick starts, where the model renews.
func (w *etcdWorld) clockStart(earliest time.Time, tick time.Duration) time.Time {
	first := w.firstSession
	if first.IsZero() {
		first = w.ss.first
	}
	if first.IsZero() {
		return earliest
	}
	t := first.Add(keepAliveLead)
	for t.Before(earliest) {
		t = t.Add(tick)
	}
	return t
}

func (w *etcdWorld) start(ctx context.Context) error {
	if err := w.startStorage(ctx); err != nil {
		return err
	}
	cli, err := newEtcdClient(w.opts.Etcd)
	if err != nil {
		return fmt.Errorf("etcd client: %v", err)
	}
	w.cli = cli
	if err := etcdMutexReset(ctx, cli); err != nil {
		return err
	}
	if w.offset, err = etcdSetup(ctx, cli, w.d); err != nil {
		return err
	}
	w.obs = &etcdObserver{cli: cli, clients: w.d.Clients}
	if w.opts.Client == ClientEtcdMutex || w.d.Lock == model.LockEtcdMutex {
		w.mutexObs = &etcdMutexObserver{cli: cli, leases: map[clientv3.LeaseID]int{}, owners: make([]UserOwner, w.d.Clients)}
		w.obs = w.mutexObs
	}
	return nil
}

func (w *etcdWorld) observer() looker { return w.obs }
func (w *etcdWorld) tokenOffset() int { return int(w.offset) }

func (w *etcdWorld) lock(ctx context.Context, i int, h *netHold) (realLock, error) {
	st, err := newRedisStore(w.opts, w.sc, h, w.storeAddr(), w.replicaAddr())
	if err != nil {
		return nil, err
	}
	l := &etcdLockConn{redisStore: st, d: w.d, i: i}
	endpoint, err := viaURL(h, w.opts.Etcd)
	if err != nil {
		l.close()
		return nil, err
	}
	u, _ := url.Parse(w.opts.Etcd) // viaURL has parsed it
	l.etcdHost = u.Host
	ttl := int64(w.opts.px / time.Second)
	if w.d.Lock == model.LockEtcdMutex && w.opts.Client == ClientUser { // a user's queued Mutex (etcd_mutex_user.go)
		return w.userQueueLock(ctx, st, i, endpoint)
	}
	if w.d.Lock == model.LockEtcdMutex { // etcd's blocking Mutex.Lock (world_etcd_mutex.go)
		q := &etcdQueueConn{redisStore: st, w: w, d: w.d, i: i, endpoint: endpoint}
		if q.cli, err = newEtcdClient(endpoint); err != nil {
			q.closeStore()
			return nil, fmt.Errorf("client %s: etcd client: %v", model.ClientName(i), err)
		}
		if err := q.newQueueSession(ctx); err != nil {
			q.close()
			return nil, err
		}
		return q, nil
	}
	if w.opts.Client == ClientUser {
		if w.opts.User == nil {
			l.close()
			return nil, fmt.Errorf("client %s: Options.User is nil", ClientUser)
		}
		u, err := w.opts.User(ctx, UserTarget{Client: i, Addr: strings.TrimPrefix(endpoint, "http://"), Key: EtcdLockKey,
			Value: model.LockValue(i), TTL: time.Duration(ttl) * time.Second})
		if err != nil {
			l.close()
			return nil, err
		}
		l.lib = userAPI{u: u}
		return l, nil
	}
	if w.opts.Client == ClientEtcdMutex {
		m, err := newEtcdMutex(ctx, endpoint, ttl, w.offset)
		if err != nil {
			l.close()
			return nil, fmt.Errorf("client %s: %v", model.ClientName(i), err)
		}
		if w.firstSession.IsZero() {
			w.firstSession = m.made
		}
		l.lib = m
		w.mutexObs.setLease(m.s.Lease(), i)
		return l, nil
	}
	cli, err := newEtcdClient(endpoint)
	if err != nil {
		l.close()
		return nil, fmt.Errorf("client %s: etcd client: %v", model.ClientName(i), err)
	}
	l.own = &etcdLock{cli: cli, value: model.LockValue(i), ttl: ttl, offset: w.offset}
	return l, nil
}

func (w *etcdWorld) stop() {
	if w.cli != nil {
		w.cli.Close()
	}
	w.stopStorage()
}

// etcdLockConn is a client's etcd lock: lockcheck's own (own) or etcd's
// Mutex on a Session (lib).
type etcdLockConn struct {
	noUnlock
	redisStore
	d   *model.Design
	i   int
	own *etcdLock
	lib lockAPI
	// etcdHost is the member's host:port, the key of its proxy
	etcdHost string
}

// lockUpstream is the etcd member's host:port (the client's proxy to it
// holds the reply of the acquire's transaction: h2hold.go).
func (l *etcdLockConn) lockUpstream() string { return l.etcdHost }

func (l *etcdLockConn) connect(ctx context.Context) error { return l.connectStore(ctx, l.i) }

// crashed: a dead process renews nothing. lockcheck's own etcd client
// renews only at the schedule's renew steps; etcd's Mutex renews its
// session's lease from a goroutine of its own, which must end with the
// process (etcdMutexLock.crashed).
func (l *etcdLockConn) crashed(c *client) {
	if m, ok := l.lib.(*etcdMutexLock); ok {
		m.crashed()
	}
	if _, ok := l.lib.(userAPI); ok {
		userCrashed(c)
	}
}

func (l *etcdLockConn) close() {
	if l.lib != nil {
		l.lib.close()
	}
	if l.own != nil {
		l.own.cli.Close()
	}
	l.closeStore()
}

func (l *etcdLockConn) incr(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("an etcd lock's token is its revision: no INCR")
}

func (l *etcdLockConn) expire(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("an etcd lock is played with acquire=script: no EXPIRE")
}

func (l *etcdLockConn) acquire(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	var won bool
	var tok int
	var err error
	if l.lib != nil {
		won, tok, ob.Told, err = l.lib.acquire(ctx)
	} else {
		won, tok, err = l.own.acquire(ctx)
	}
	if err != nil {
		return model.Reply{}, err
	}
	return wonReply(l.d, won, tok, ob), nil
}

// release deletes its key if still its own (the only release etcd designs
// have), or the Mutex's Unlock.
func (l *etcdLockConn) release(ctx context.Context, c *client, k model.ActionKind, ob *Obs) (model.Reply, error) {
	if err := c.lookBefore(ctx, ob); err != nil {
		return model.Reply{}, err
	}
	var ok bool
	var err error
	if l.lib != nil {
		ok, ob.Told, err = l.lib.release(ctx, c.i, ob.Before)
	} else {
		ok, err = l.own.release(ctx)
	}
	if err != nil {
		return model.Reply{}, err
	}
	return releasedReply(l.d, c, ob, ok), nil
}

// renew is one keep-alive of its lease.
func (l *etcdLockConn) renew(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	if l.lib != nil {
		return libRenew(ctx, l.lib, ob)
	}
	ok, err := l.own.renew(ctx)
	if err != nil {
		return model.Reply{}, err
	}
	ob.Result = model.ResNoop
	if ok {
		ob.Result = model.ResOK
	}
	return model.Reply{Result: ob.Result}, nil
}
