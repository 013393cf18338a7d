package reality

import (
	"context"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"lockcheck/model"
)

// etcd's reader-writer lock (readers=K on lock=etcd-mutex,
// model/lock_etcd_mutex.go) for real, with the recipe itself:
// recipe.RWMutex (client/v3 v3.6.16 experimental/recipes/rwmutex.go) on
// the client's Session, RLock and RUnlock for clients A … K, Lock and
// Unlock for the others. RLock puts pfx/read/<now> under the session's
// lease (newUniqueEphemeralKey, key.go) and loops on
// waitOnLastRev(pfx+"write"): a Get of the last write key below its own
// revision and a watch for its delete, until none is left; Lock puts
// pfx/write/<now> and waits until no key at all is below its own. Neither
// looks at its own key when the wait ends (etcd issue 16221): the model's
// session-check=none. session-check=get (the model's RWMutex with a Get
// of its own key once the wait ends) is played as the recipe's call and
// then that Get, by the world: none is the model's "its session expired
// while it waited; a new session, lock again". The recipe takes no
// context (rwm.ctx is context.TODO()): a wait still blocked at the run's
// end ends with the client's etcd client.
//
// The acquire steps read the running RLock or Lock as the queued Mutex's
// do (etcdQueueConn.acquire): the first waits until it returned (the
// lock, with its key's token) or its key is seen with a key below it that
// it waits for (refused, with the token); a later one waits within the
// tick's window for it to return. The recipe names its keys by the time
// and leaves its key private, so the world finds a client's key by its
// session's lease.

// rwStart starts RLock (a reader) or Lock on the client's RWMutex.
func (l *etcdQueueConn) rwStart() chan error {
	done := make(chan error, 1)
	rw, reader := l.rw, l.reader()
	go func() {
		if reader {
			done <- rw.RLock()
		} else {
			done <- rw.Lock()
		}
	}()
	return done
}

// reader reports whether the client takes read locks (planted
// rwAsWriter: every client calls Lock).
func (l *etcdQueueConn) reader() bool { return l.i < l.d.Readers && !l.w.opts.plant.rwAsWriter }

// rwCall names the recipe's call of the client.
func (l *etcdQueueConn) rwCall() string {
	if l.reader() {
		return "RLock"
	}
	return "Lock"
}

// rwKey is the client's key under the prefix (found by its session's
// lease), whether it exists, and whether a key it waits for is below it:
// a write key for a reader, any key for a writer.
func (w *etcdWorld) rwKey(ctx context.Context, lease clientv3.LeaseID, reader bool) (key string, exists, waits bool, err error) {
	resp, err := w.cli.Get(ctx, EtcdLockKey+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		return "", false, false, fmt.Errorf("observer: etcd get %s/: %v", EtcdLockKey, err)
	}
	below := false
	for _, kv := range resp.Kvs {
		if clientv3.LeaseID(kv.Lease) == lease {
			return string(kv.Key), true, below, nil
		}
		if !reader || strings.HasPrefix(string(kv.Key), EtcdLockKey+"/write/") {
			below = true
		}
	}
	return "", false, false, nil
}

// rwAcquire is acquire for readers=K.
func (l *etcdQueueConn) rwAcquire(ctx context.Context, ob *Obs) (model.Reply, error) {
	call := l.rwCall()
	if l.lockDone == nil { // the recipe's call starts: its key is put
		l.lockDone = l.rwStart()
		// past the window the step is late and the run void (played
		// again); a call that has put nothing in ten windows is stuck
		deadline := time.Now().Add(10 * l.lockWait())
		for {
			key, mine, waits, err := l.w.rwKey(ctx, l.s.Lease(), l.reader())
			if err != nil {
				return model.Reply{}, err
			}
			select {
			case err := <-l.lockDone:
				l.lockDone = nil
				if err != nil {
					return model.Reply{}, fmt.Errorf("etcd RWMutex.%s: %v", call, err)
				}
				if key == "" { // put after the look: look again
					if key, _, _, err = l.w.rwKey(ctx, l.s.Lease(), l.reader()); err != nil {
						return model.Reply{}, err
					}
				}
				tok, err := l.w.token(ctx, key)
				if err != nil {
					return model.Reply{}, err
				}
				ob.Told = call + " → nil at once (no key it waits for below its own)"
				ob.Result, ob.Token = model.ResOK, tok
				return model.Reply{Result: model.ResOK, Token: uint16(tok)}, nil
			default:
			}
			if mine && waits { // its key is put behind one it waits for
				tok, err := l.w.token(ctx, key)
				if err != nil {
					return model.Reply{}, err
				}
				ob.Told = call + " blocks: waitOnLastRev watches the last key below its own for its delete"
				ob.Result, ob.Token = model.ResRefused, tok
				return model.Reply{Result: model.ResRefused, Token: uint16(tok)}, nil
			}
			if time.Now().After(deadline) {
				return model.Reply{}, fmt.Errorf("etcd RWMutex.%s: neither returned nor put its key within %v", call, 10*l.lockWait())
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	return l.awaitLock(ctx, ob, call, func(err error) (model.Reply, error) {
		if err != nil {
			return model.Reply{}, fmt.Errorf("etcd RWMutex.%s: %v", call, err)
		}
		if l.d.SessionCheck == model.SessionCheckGet || l.w.opts.plant.rwGet { // the recipe, then a Get of its own key (planted rwGet: under session-check=none)
			_, mine, _, err := l.w.rwKey(ctx, l.s.Lease(), l.reader())
			if err != nil {
				return model.Reply{}, err
			}
			if !mine {
				return l.renewSession(ctx, ob, call+" → nil, and a Get finds no key of its own: its session expired")
			}
		}
		ob.Told = call + " → nil (waitOnLastRev: no key it waits for is left below its own)"
		ob.Result = model.ResOK
		return model.Reply{Result: model.ResOK}, nil
	})
}

// rwRelease is RUnlock or Unlock: a delete of its key by name
// (EphemeralKV.Delete), which says nothing of whether the key was still
// there; whether it was is the world's look right before.
func (l *etcdQueueConn) rwRelease(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	if err := c.lookBefore(ctx, ob); err != nil {
		return model.Reply{}, err
	}
	_, mine, _, err := l.w.rwKey(ctx, l.s.Lease(), l.reader())
	if err != nil {
		return model.Reply{}, err
	}
	call := "Unlock"
	if l.reader() {
		call = "RUnlock"
	}
	if err := l.rwUnlock(); err != nil {
		return model.Reply{}, fmt.Errorf("etcd RWMutex.%s: %v", call, err)
	}
	ob.Told = call + " → nil"
	r := releasedReply(l.d, c, ob, mine)
	ob.RemovedOther = false // a delete of its own key by name
	return r, nil
}

func (l *etcdQueueConn) rwUnlock() error {
	if l.reader() {
		return l.rw.RUnlock()
	}
	return l.rw.Unlock()
}
