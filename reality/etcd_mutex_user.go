package reality

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"lockcheck/model"
)

// A user's client of etcd's queued Mutex (lock=etcd-mutex; package
// locktest's locktest.EtcdMutex): its own etcd client and Session (a
// lease of UserTarget.TTL, kept alive by the session's own goroutine)
// through its proxy, and its own queue under the prefix UserTarget.Key,
// as etcd's concurrency.Mutex keeps it (mutex.go: its key
// <prefix>/<lease>, the first by create revision holds). etcd's Mutex puts
// an empty value, so the observer tells whose key it sees by the client's
// lock value (a recipe of its own may put UserTarget.Value) or by asking
// the client (UserOwner: Owns of the key's name). A Mutex.Lock blocks
// until its key is the first, so the user's Acquire runs in a goroutine
// of the client's own, as ZooKeeper's does (zookeeper_user.go):
//
//   - the first acquire step of a Lock starts Acquire and waits until it
//     has returned (the lock, with its key's place in the run's order of
//     puts as token) or the client's key is seen under the prefix, not the
//     first (it waits in waitDeletes: refused, with that token);
//   - each later acquire step (the model's watch firing, or waitDeletes
//     returning to a key that is gone) waits, within the tick's window,
//     for that Acquire to return: true is the lock; false is the model's
//     "ErrSessionExpired: a new session, Lock again" (the client has made
//     its new Session, and the next acquire step starts a new Acquire);
//     still blocked is a difference.
//
// Its refusals are the queued Mutex's (etcdQueueOK) and a user's client's:
// no token (a fenced design would take the key's create revision, which
// Acquire does not report) and no planted bug.

// etcdUserQueueConn is a user's client's queued Mutex.
type etcdUserQueueConn struct {
	noUnlock
	redisStore
	w       *etcdWorld
	d       *model.Design
	i       int
	user    userAPI
	pending chan zkAnswer   // a running Acquire's answer (nil: none running)
	run     context.Context // a running Acquire's context: it ends at close
	stop    context.CancelFunc
}

// etcdQueueUserOK reports whether a user's client plays a queued-Mutex
// design.
func etcdQueueUserOK(d *model.Design) error {
	if err := etcdQueueOK(d); err != nil {
		return err
	}
	switch {
	case d.Readers > 0:
		return fmt.Errorf("client %s on etcd's Mutex: a user's client takes one kind of lock; the reader-writer lock (readers=K) is played with etcd's recipe.RWMutex by lockcheck's own client; want readers=0", ClientUser)
	case d.Fence != model.FenceNone:
		return fmt.Errorf("client %s on etcd's Mutex: a token would be its key's create revision, which a user's Acquire does not report; want fence=none", ClientUser)
	case d.Bug != model.BugNone:
		return fmt.Errorf("client %s on etcd's Mutex: planted bugs are the reference client's; want bug=none", ClientUser)
	}
	return nil
}

// userQueueLock makes client i's queued Mutex with the user's maker, its
// etcd client through its proxy endpoint. The first client's Session,
// made in the maker, is the one whose keep-alives the clock fits
// (clockStart).
func (w *etcdWorld) userQueueLock(ctx context.Context, st redisStore, i int, endpoint string) (realLock, error) {
	if w.opts.User == nil {
		st.closeStore()
		return nil, fmt.Errorf("client %s: Options.User is nil", ClientUser)
	}
	u, err := w.opts.User(ctx, UserTarget{Client: i, Addr: trimScheme(endpoint), Key: EtcdLockKey,
		Value: model.LockValue(i), TTL: time.Duration(w.sessionTTL()) * time.Second})
	if err != nil {
		st.closeStore()
		return nil, err
	}
	w.ss.mu.Lock()
	if w.ss.first.IsZero() {
		w.ss.first = time.Now()
	}
	w.ss.mu.Unlock()
	if o, ok := u.(UserOwner); ok {
		w.mutexObs.setOwner(i, o)
	}
	run, stop := context.WithCancel(context.Background())
	return &etcdUserQueueConn{redisStore: st, w: w, d: w.d, i: i, user: userAPI{u: u}, run: run, stop: stop}, nil
}

func trimScheme(endpoint string) string {
	for _, p := range []string{"http://", "https://"} {
		if len(endpoint) > len(p) && endpoint[:len(p)] == p {
			return endpoint[len(p):]
		}
	}
	return endpoint
}

func (l *etcdUserQueueConn) connect(ctx context.Context) error { return l.connectStore(ctx, l.i) }

func (l *etcdUserQueueConn) close() {
	l.stop() // a blocked Acquire's context ends
	l.user.close()
	l.closeStore()
}

// crashed: a dead process sends nothing, its session's keep-alives and a
// Lock still blocked in it alike (userCrashed holds its traffic for good).
func (l *etcdUserQueueConn) crashed(c *client) { userCrashed(c) }

func (l *etcdUserQueueConn) incr(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("an etcd Mutex's token is its key's create revision: no INCR")
}

func (l *etcdUserQueueConn) expire(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("an etcd Mutex has no EXPIRE")
}

func (l *etcdUserQueueConn) renew(context.Context, *client, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("an etcd Mutex's session renews itself: no renew step")
}

// mine is client i's key in the queue: its name, whether it is there and
// whether it is the first by create revision.
func (l *etcdUserQueueConn) mine(ctx context.Context) (key string, there, first bool, err error) {
	resp, err := l.w.cli.Get(ctx, EtcdLockKey+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		return "", false, false, fmt.Errorf("observer: etcd get %s/: %v", EtcdLockKey, err)
	}
	for k, kv := range resp.Kvs {
		if l.w.mutexObs.whose(kv) == l.i {
			return string(kv.Key), true, k == 0, nil
		}
	}
	return "", false, false, nil
}

func (l *etcdUserQueueConn) acquire(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	if l.pending != nil {
		return l.waitLock(ctx, ob)
	}
	// tryAcquire: the user's Lock starts
	done := make(chan zkAnswer, 1)
	l.pending = done
	u, run := l.user, l.run
	go func() {
		won, _, told, err := u.acquire(run) // it may block: the window bounds the step, close ends it
		done <- zkAnswer{won, told, err}
	}()
	deadline := time.Now().Add(zkUserBound)
	for {
		select {
		case a := <-done:
			l.pending = nil
			if a.err != nil {
				return model.Reply{}, a.err
			}
			key, there, _, err := l.mine(ctx)
			if err != nil {
				return model.Reply{}, err
			}
			tok := 0
			if there {
				if tok, err = l.w.token(ctx, key); err != nil {
					return model.Reply{}, err
				}
			}
			ob.Told, ob.Token = a.told, tok
			ob.Result = model.ResRefused // returned false at once: no key kept in the queue
			if a.won {
				ob.Result = model.ResOK
			}
			return model.Reply{Result: ob.Result, Token: uint16(tok)}, nil
		default:
		}
		key, there, first, err := l.mine(ctx)
		if err != nil {
			return model.Reply{}, err
		}
		if there && !first { // its key waits behind another's: Lock blocks in waitDeletes
			tok, err := l.w.token(ctx, key)
			if err != nil {
				return model.Reply{}, err
			}
			ob.Told = "Acquire blocks: its key waits for its predecessor's delete (waitDeletes)"
			ob.Result, ob.Token = model.ResRefused, tok
			return model.Reply{Result: model.ResRefused, Token: uint16(tok)}, nil
		}
		if time.Now().After(deadline) {
			return model.Reply{}, fmt.Errorf("your lock's Acquire neither returned nor put its key under %s/ behind another's within %v", EtcdLockKey, zkUserBound)
		}
		select {
		case <-ctx.Done():
			return model.Reply{}, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// waitLock is a later acquire step: the Acquire running since the first
// must return within the window (its predecessor's key was deleted, or
// its own is gone with its session).
func (l *etcdUserQueueConn) waitLock(ctx context.Context, ob *Obs) (model.Reply, error) {
	t := time.NewTimer(window(l.d, l.w.opts.Tick))
	defer t.Stop()
	select {
	case a := <-l.pending:
		l.pending = nil
		if a.err != nil {
			return model.Reply{}, a.err
		}
		ob.Told, ob.Result = a.told, model.ResOK
		if !a.won { // ErrSessionExpired: its key went with its session; a new one, Lock again
			ob.Result = model.ResNoop
		}
		return model.Reply{Result: ob.Result}, nil
	case <-t.C:
		ob.Told, ob.Result = "Acquire still blocked", model.ResRefused
		return model.Reply{Result: model.ResRefused}, nil
	case <-ctx.Done():
		return model.Reply{}, ctx.Err()
	}
}

// release is the user's Release: whether its key was still there to
// delete is what it reports (etcd's Unlock, a delete by name, does not
// say: the client must look).
func (l *etcdUserQueueConn) release(ctx context.Context, c *client, k model.ActionKind, ob *Obs) (model.Reply, error) {
	if err := c.lookBefore(ctx, ob); err != nil {
		return model.Reply{}, err
	}
	ok, told, err := l.user.release(ctx, l.i, ob.Before)
	if err != nil {
		return model.Reply{}, err
	}
	ob.Told = told
	return releasedReply(l.d, c, ob, ok), nil
}

// setOwner names client i's UserOwner, asked of keys no lease names.
func (o *etcdMutexObserver) setOwner(i int, u UserOwner) {
	o.mu.Lock()
	o.owners[i] = u
	o.mu.Unlock()
}

// whose is the client whose key kv is, when no lease of the run's names
// it: the client whose lock value it holds (a recipe of the user's own),
// or the user's client that says the key's name is its own (etcd's
// Mutex puts an empty value); HolderUnknown if none.
func (o *etcdMutexObserver) whose(kv *mvccpb.KeyValue) int {
	for i := range o.owners {
		if string(kv.Value) == model.LockValue(i) {
			return i
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, u := range o.owners {
		if u != nil && u.Owns(string(kv.Key)) {
			return i
		}
	}
	return HolderUnknown
}

// queueRace reports whether step st pauses a waiter of etcd's queued
// Mutex past its session at a moment its key is already the first: its
// predecessor's key was deleted (released, or gone with its session) and
// the model's waiter has not yet taken the acquire step that finds it so.
// A real Lock returns within milliseconds of that delete, before the
// pause can hold its traffic, or not, if the pause holds its Get first:
// in the one case the real client resumes with the lock its lease has
// lost, in the other (the model's) with ErrSessionExpired. Such a
// schedule says nothing about the client.
func queueRace(d *model.Design, st *model.StepRecord) bool {
	a := st.Action
	if d.Lock != model.LockEtcdMutex || a.Kind != model.ActPause || int(a.Arg) <= d.SessionTicks {
		return false
	}
	c := &st.Before.Clients[a.Client]
	holds := st.Before.Nodes[0].Owner == a.Client+1 || d.Readers > 0 && model.HoldsLock(d, &st.Before, int(a.Client)) // a reader holds with no write key below
	return c.Phase == model.PhaseAcquire && c.Flags&model.FlagZNode != 0 && holds
}

// QueueRace reports whether trace pauses a waiter of etcd's queued Mutex
// past its session once its key is the first (queueRace): such a
// schedule is not played. A trace that does not replay is no race.
func QueueRace(d *model.Design, trace []model.Action) bool {
	if d.Lock != model.LockEtcdMutex {
		return false
	}
	run, err := model.Replay(d, trace)
	if err != nil {
		return false
	}
	for k := range run.Steps {
		if queueRace(d, &run.Steps[k]) {
			return true
		}
	}
	return false
}
