package reality

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	recipe "go.etcd.io/etcd/client/v3/experimental/recipes"

	"lockcheck/model"
)

// The queued Mutex (lock=etcd-mutex, model/lock_etcd_mutex.go) for real:
// each client calls etcd's blocking concurrency.Mutex.Lock on a Session of
// its own, from a goroutine of its own, and the schedule's acquire steps
// read what Lock did. Lock (client/v3 v3.6.16 concurrency/mutex.go) puts
// the client's key pfx/<lease> in tryAcquire's transaction, at a new
// create revision, and returns at once if it is the first by create
// revision; otherwise waitDeletes (key.go) waits, Get after Get, for the
// delete of the last key created before its own (a watch from the Get's
// revision), then Lock Gets its own key: none means its session expired
// while it waited, ErrSessionExpired. So:
//
//   - the first acquire step of a Lock starts it and waits until Lock has
//     returned (the lock: OK) or the client's key is seen under the
//     prefix, not the first (it waits: refused), with the key's place in
//     the order of puts as its token;
//   - each later acquire step (the model's watch firing, or waitDeletes
//     returning to a key that is gone) waits, within the tick's window,
//     for Lock to return: nil is the lock, ErrSessionExpired the model's
//     "a new session, Lock again" (a new Session is made, and the next
//     acquire step calls Lock on it); still blocked is a difference.
//
// The sessions' keep-alives fit the ticks as etcd-mutex's do in the
// library table (session.go): session=3 on 2s ticks, a 5s lease renewed
// every 2.0s, just before each tick (etcdWorld.clockStart); a pause holds
// the client's traffic, its keep-alives and its watch alike, and a crash
// orphans the session and cuts the client's traffic for good.

// etcdQueueConn is a client's queued Mutex.
type etcdQueueConn struct {
	noUnlock
	redisStore
	w        *etcdWorld
	d        *model.Design
	i        int
	endpoint string
	cli      *clientv3.Client
	s        *concurrency.Session
	m        *concurrency.Mutex
	rw       *recipe.RWMutex // readers=K: the recipe's RWMutex on s (world_etcd_rwmutex.go)
	// lockDone is the running Lock's answer (nil: no Lock running)
	lockDone chan error
	stop     context.CancelFunc // ends a Lock still running, at close
}

// newQueueSession makes the client's Session and Mutex, and names its
// lease to the observer.
func (l *etcdQueueConn) newQueueSession(ctx context.Context) error {
	s, err := concurrency.NewSession(l.cli, concurrency.WithTTL(int(l.w.sessionTTL())), concurrency.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("client %s: etcd session: %v", model.ClientName(l.i), err)
	}
	l.s, l.m = s, concurrency.NewMutex(s, EtcdLockKey)
	if l.d.Readers > 0 {
		l.rw = recipe.NewRWMutex(s, EtcdLockKey)
	}
	l.w.addSession(s.Lease(), l.i, time.Now())
	return nil
}

func (l *etcdQueueConn) connect(ctx context.Context) error { return l.connectStore(ctx, l.i) }

func (l *etcdQueueConn) incr(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("an etcd Mutex's token is its key's create revision: no INCR")
}

func (l *etcdQueueConn) expire(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("an etcd Mutex has no EXPIRE")
}

func (l *etcdQueueConn) renew(context.Context, *client, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("an etcd Mutex's session renews itself: no renew step")
}

// lockWait is how long an acquire step waits for Lock: the tick's window.
func (l *etcdQueueConn) lockWait() time.Duration { return window(l.d, l.w.opts.Tick) }

func (l *etcdQueueConn) acquire(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	if l.rw != nil {
		return l.rwAcquire(ctx, ob)
	}
	if l.w.opts.plant.noQueue { // planted: TryLock, no key kept in the queue
		err := l.m.TryLock(ctx)
		if errors.Is(err, concurrency.ErrLocked) || err != nil && strings.Contains(err.Error(), "lease not found") { // its session expired: it cannot lock
			ob.Told, ob.Result = "TryLock → "+errText(err), model.ResRefused
			return model.Reply{Result: model.ResRefused}, nil
		}
		if err != nil {
			return model.Reply{}, fmt.Errorf("etcd Mutex.TryLock: %v", err)
		}
		tok, err := l.w.token(ctx, l.m.Key())
		if err != nil {
			return model.Reply{}, err
		}
		ob.Told, ob.Result, ob.Token = "TryLock → nil", model.ResOK, tok
		return model.Reply{Result: model.ResOK, Token: uint16(tok)}, nil
	}
	if l.lockDone == nil { // tryAcquire: Lock starts
		done := make(chan error, 1)
		lctx, stop := context.WithCancel(context.Background())
		l.lockDone, l.stop = done, stop
		m := l.m
		go func() { done <- m.Lock(lctx) }()
		key := fmt.Sprintf("%s/%x", EtcdLockKey, l.s.Lease())
		// past the window the step is late and the run void (played
		// again, as a loaded machine's); a Lock that has put nothing in
		// ten windows is stuck
		deadline := time.Now().Add(10 * l.lockWait())
		for {
			select {
			case err := <-done:
				l.lockDone = nil
				if err != nil {
					return model.Reply{}, fmt.Errorf("etcd Mutex.Lock: %v", err)
				}
				tok, err := l.w.token(ctx, key)
				if err != nil {
					return model.Reply{}, err
				}
				ob.Told = "Lock → nil at once (its key the first by create revision)"
				ob.Result, ob.Token = model.ResOK, tok
				return model.Reply{Result: model.ResOK, Token: uint16(tok)}, nil
			default:
			}
			first, mine, err := l.w.queueHead(ctx, key)
			if err != nil {
				return model.Reply{}, err
			}
			if mine && !first { // its key is put and not the first: Lock waits
				tok, err := l.w.token(ctx, key)
				if err != nil {
					return model.Reply{}, err
				}
				ob.Told = "Lock blocks: its key waits for its predecessor's delete (waitDeletes)"
				ob.Result, ob.Token = model.ResRefused, tok
				return model.Reply{Result: model.ResRefused, Token: uint16(tok)}, nil
			}
			if time.Now().After(deadline) {
				return model.Reply{}, fmt.Errorf("etcd Mutex.Lock: neither returned nor put its key within %v", 10*l.lockWait())
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	return l.awaitLock(ctx, ob, "Lock", func(err error) (model.Reply, error) {
		switch {
		case err == nil:
			ob.Told = "Lock → nil (its predecessor's key deleted, its own found)"
			ob.Result = model.ResOK
			return model.Reply{Result: model.ResOK}, nil
		case errors.Is(err, concurrency.ErrSessionExpired):
			return l.renewSession(ctx, ob, "Lock → "+errText(err))
		}
		return model.Reply{}, fmt.Errorf("etcd Mutex.Lock: %v", err)
	})
}

// awaitLock is a later acquire step of a Lock (or RLock) still running:
// it waits within the tick's window for the call to return, and took
// says what its answer means; still blocked, the step is refused.
func (l *etcdQueueConn) awaitLock(ctx context.Context, ob *Obs, call string, took func(error) (model.Reply, error)) (model.Reply, error) {
	t := time.NewTimer(l.lockWait())
	defer t.Stop()
	select {
	case err := <-l.lockDone:
		l.lockDone = nil
		return took(err)
	case <-t.C:
		ob.Told = call + " still blocked"
		ob.Result = model.ResRefused
		return model.Reply{Result: model.ResRefused}, nil
	case <-ctx.Done():
		return model.Reply{}, ctx.Err()
	}
}

// renewSession is the model's "a new session, Lock again next tick": the
// client's Lock found its session expired (told says how).
func (l *etcdQueueConn) renewSession(ctx context.Context, ob *Obs, told string) (model.Reply, error) {
	ob.Told = told
	l.s.Orphan()
	if err := l.newQueueSession(ctx); err != nil {
		return model.Reply{}, err
	}
	ob.Result = model.ResNoop
	return model.Reply{Result: model.ResNoop}, nil
}

// release is Unlock: a delete of its key by name (release=del), which
// says nothing of whether the key was still there; what it deleted is the
// observer's look right before.
func (l *etcdQueueConn) release(ctx context.Context, c *client, k model.ActionKind, ob *Obs) (model.Reply, error) {
	if l.rw != nil {
		return l.rwRelease(ctx, c, ob)
	}
	if err := c.lookBefore(ctx, ob); err != nil {
		return model.Reply{}, err
	}
	if err := l.m.Unlock(ctx); err != nil && !errors.Is(err, concurrency.ErrLockReleased) {
		return model.Reply{}, fmt.Errorf("etcd Mutex.Unlock: %v", err)
	}
	ob.Told = "Unlock → nil"
	return releasedReply(l.d, c, ob, ob.Before == c.i), nil
}

// crashed: the process dies. Its session stops renewing (Session.Orphan,
// as etcdMutexLock.crashed) and nothing it runs reaches the server any
// more: its traffic is held for good, so that a Lock still blocked in it
// (its goroutine lives in this process) neither sees its watch fire nor
// deletes its key.
func (l *etcdQueueConn) crashed(c *client) {
	l.s.Orphan()
	if c.net != nil {
		c.net.hold()
	}
}

func (l *etcdQueueConn) close() {
	if l.stop != nil {
		l.stop()
	}
	if l.s != nil {
		l.s.Orphan()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, _ = l.cli.Revoke(ctx, l.s.Lease())
		cancel()
	}
	if l.cli != nil {
		l.cli.Close()
	}
	l.closeStore()
}

// sessions is what the world knows of the clients' sessions: whose each
// lease is, and the create revisions of the keys put under the prefix in
// the run, for the tokens.
type sessions struct {
	mu    sync.Mutex
	first time.Time // the first session's first keep-alive
	revs  []int64   // create revisions seen, in order
}

func (w *etcdWorld) sessionTTL() int64 {
	return int64(TTL(w.d.SessionTicks, w.opts.Tick) / time.Second)
}

func (w *etcdWorld) addSession(id clientv3.LeaseID, i int, made time.Time) {
	w.ss.mu.Lock()
	defer w.ss.mu.Unlock()
	if w.ss.first.IsZero() {
		w.ss.first = made
	}
	w.mutexObs.setLease(id, i)
}

// queueHead reports whether key is the first under the prefix by create
// revision, and whether it exists: one Get of the whole queue, so that a
// put between two looks cannot make it seen and not first.
func (w *etcdWorld) queueHead(ctx context.Context, key string) (first, exists bool, err error) {
	resp, err := w.cli.Get(ctx, EtcdLockKey+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		return false, false, fmt.Errorf("observer: etcd get %s/: %v", EtcdLockKey, err)
	}
	for k, kv := range resp.Kvs {
		if string(kv.Key) == key {
			return k == 0, true, nil
		}
	}
	return false, false, nil
}

// token is the model's token of key: its place in the order of the
// run's puts under the prefix, by create revision (the model counts puts;
// etcd's revision counts deletes too), from the design's first token.
func (w *etcdWorld) token(ctx context.Context, key string) (int, error) {
	resp, err := w.cli.Get(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("observer: etcd get %s: %v", key, err)
	}
	if len(resp.Kvs) == 0 {
		return 0, fmt.Errorf("observer: the key %s put by Lock is gone", key)
	}
	rev := resp.Kvs[0].CreateRevision
	w.ss.mu.Lock()
	defer w.ss.mu.Unlock()
	k := sort.Search(len(w.ss.revs), func(j int) bool { return w.ss.revs[j] >= rev })
	if k == len(w.ss.revs) || w.ss.revs[k] != rev {
		w.ss.revs = append(w.ss.revs, 0)
		copy(w.ss.revs[k+1:], w.ss.revs[k:])
		w.ss.revs[k] = rev
	}
	return w.d.FirstToken + k, nil
}

// etcdQueueOK reports whether a queued-Mutex design is played for real.
func etcdQueueOK(d *model.Design) error {
	switch {
	case d.Readers > 0 && d.Jobs > 1:
		return fmt.Errorf("design %s: the recipe's RWMutex is played for real with one job a client; set jobs=1", d.Name())
	case d.Release != model.ReleaseDel:
		return fmt.Errorf("design %s: etcd's Mutex.Unlock deletes its key by name: want release=del (release=cad, a delete fenced on the create revision, is not the library's)", d.Name())
	case d.Readers == 0 && d.SessionCheck != model.SessionCheckGet:
		return fmt.Errorf("design %s: etcd's Mutex.Lock Gets its own key once waitDeletes returns: want session-check=get (none is not what the library does)", d.Name())
	case d.SessionTicks != 3:
		return fmt.Errorf("design %s: the sessions' keep-alives fit the ticks only with session=3 (a 5s lease on 2s ticks, renewed every 2.0s: session.go), not session=%d", d.Name(), d.SessionTicks)
	case d.Delays > 0:
		return fmt.Errorf("design %s: held requests are not played with the queued Mutex yet; set delays=0", d.Name())
	case d.Check != model.CheckTrust:
		return fmt.Errorf("design %s: the queued Mutex is played with check=trust", d.Name())
	}
	return nil
}
