package reality

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// redisWorld is one Redis node holding lock:order-42 and lock:fence (in
// the lock database of opts.Addr, or of a server of its own that node-crash
// steps kill and restart: opts.Lock), with the storage beside it.
type redisWorld struct {
	redisStorage
	server *Server // the lock's own server (node crashes), or nil
	obs    *observer
}

func (w *redisWorld) start(ctx context.Context) error {
	if err := w.startStorage(ctx); err != nil {
		return err
	}
	w.obs = &observer{c: redis.NewClient(admin(lockOptions(w.d, w.lockAddr, w.opts.LockDB))), clients: w.d.Clients, canFail: w.d.NodeCrashes > 0,
		key: w.opts.lockKey(), owners: make([]UserOwner, w.d.Clients)}
	return nil
}

func (w *redisWorld) observer() looker { return w.obs }

func (w *redisWorld) nodes() int {
	if w.server != nil {
		return 1
	}
	return 0
}

func (w *redisWorld) crash(ctx context.Context, k int) error {
	if k >= w.nodes() {
		return w.redisStorage.crash(ctx, k)
	}
	return w.server.Crash()
}

func (w *redisWorld) restart(ctx context.Context, k int) error {
	if k >= w.nodes() {
		return w.redisStorage.restart(ctx, k)
	}
	return w.server.Restart(ctx)
}

func (w *redisWorld) lock(ctx context.Context, i int, h *netHold) (realLock, error) {
	l, err := newKeyLock(ctx, w.d, w.opts, w.sc, i, h, w.lockAddr, w.storeAddr(), w.replicaAddr())
	if err != nil {
		return nil, err
	}
	if u, ok := l.lib.(userAPI); ok {
		if o, ok := u.u.(UserOwner); ok {
			w.obs.setOwner(i, o)
		}
	}
	return l, nil
}

func (w *redisWorld) stop() {
	if w.obs != nil {
		w.obs.c.Close()
	}
	w.stopStorage()
}

// redisStore is a client's connection to the Redis storage: the job's
// read and write, checked by the design's scripts; with stale-reads a
// second one to the storage's replica.
//
// With the fencing state apart from the row (fenceApart), store reaches
// the fence's server, which runs the token checks, and row the row's (the
// run's own storage database, which no storage failover touches: the
// model's synchronously replicated row).
type redisStore struct {
	store *redis.Client
	row   *redis.Client // fenceApart: the counter's row (nil: in store)
	sc    storageScripts
	stale *redis.Client // stale-reads: the storage's lagging replica (nil: none)
	// staleAtPrimary: planted bug: a stale read is served by the primary
	staleAtPrimary bool
}

// closeStore closes the client's storage connections.
func (s *redisStore) closeStore() {
	s.store.Close()
	if s.row != nil {
		s.row.Close()
	}
	if s.stale != nil {
		s.stale.Close()
	}
}

func (s *redisStore) read(ctx context.Context, c *client, tok int, ob *Obs) (model.Reply, error) {
	if s.row != nil { // the fence's check first, then the row
		if refused, err := s.fenceCheck(ctx, s.sc.fenceRead, tok, 0, ob, "fence's read check"); err != nil || refused {
			return model.Reply{Result: model.ResRejected}, err
		}
		return s.readWith(ctx, s.sc.read, s.row, tok, ob, "storage row's read script")
	}
	return s.readWith(ctx, s.sc.read, s.store, tok, ob, "storage read script")
}

// fenceCheck runs a token check kept apart from the row (fenceApart) on
// the fence's server: refused (with the highest token in ob) or passed.
func (s *redisStore) fenceCheck(ctx context.Context, script *redis.Script, tok, v int, ob *Obs, what string) (bool, error) {
	args := []any{tok}
	if v > 0 { // the write's: ARGV are the value and the token
		args = []any{v, tok}
	}
	res, err := script.Run(ctx, s.store, storageKeys, args...).Int64Slice()
	if err != nil || len(res) < 1 {
		return false, fmt.Errorf("%s: %v (reply %v)", what, err, res)
	}
	if res[0] == 1 {
		return false, nil
	}
	ob.Result = model.ResRejected
	if len(res) > 1 {
		ob.MaxTok = int(res[1])
	}
	return true, nil
}

// staleRead is a read served by the storage's lagging replica (a
// stale-read step): its read-only script checks the token against the
// highest the replica has and records nothing (model: replicaRead).
func (s *redisStore) staleRead(ctx context.Context, c *client, tok int, ob *Obs) (model.Reply, error) {
	conn := s.stale
	if s.staleAtPrimary {
		conn = s.store
	}
	if conn == nil {
		return model.Reply{}, fmt.Errorf("stale read: no connection to the storage's replica (the design has no stale-reads)")
	}
	return s.readWith(ctx, s.sc.replicaRead, conn, tok, ob, "storage replica's read script")
}

func (s *redisStore) readWith(ctx context.Context, script *redis.Script, conn *redis.Client, tok int, ob *Obs, what string) (model.Reply, error) {
	res, err := script.Run(ctx, conn, storageKeys, tok).Int64Slice()
	if err != nil || len(res) < 2 {
		return model.Reply{}, fmt.Errorf("%s: %v (reply %v)", what, err, res)
	}
	if res[0] == 0 {
		ob.Result, ob.MaxTok = model.ResRejected, int(res[1])
		return model.Reply{Result: model.ResRejected}, nil
	}
	if len(res) < 3 {
		return model.Reply{}, fmt.Errorf("%s: short reply %v", what, res)
	}
	ob.Result, ob.Value = model.ResAccepted, int(res[1])
	return model.Reply{Result: model.ResAccepted, Value: uint8(res[1]), Version: uint8(res[2])}, nil
}

// write sends a write with its value, token and version to the storage
// (fence-check=two-step: its token check, answered ok when passed).
func (s *redisStore) write(ctx context.Context, c *client, v, tok, version int, ob *Obs) (model.Reply, error) {
	ob.Token, ob.Value = tok, v
	conn := s.store
	if s.row != nil { // the fence's check first; then (atomic) the row's SET
		if refused, err := s.fenceCheck(ctx, s.sc.fenceWrite, tok, v, ob, "fence's write check"); err != nil || refused {
			return model.Reply{Result: model.ResRejected}, err
		}
		conn = s.row
	}
	if s.row != nil && s.sc.apply != nil { // fence-check=two-step: the check passed, the apply follows
		ob.Result = model.ResOK
		return model.Reply{Result: model.ResOK}, nil
	}
	res, err := s.sc.write.Run(ctx, conn, storageKeys, v, tok, version).Int64Slice()
	if err != nil || len(res) < 1 {
		return model.Reply{}, fmt.Errorf("storage write script: %v (reply %v)", err, res)
	}
	if res[0] == 0 {
		ob.Result = model.ResRejected
		if len(res) > 1 {
			ob.MaxTok = int(res[1])
		}
		return model.Reply{Result: model.ResRejected}, nil
	}
	if s.sc.apply != nil { // fence-check=two-step: the check passed, the apply follows
		ob.Result = model.ResOK
		return model.Reply{Result: model.ResOK}, nil
	}
	ob.Result = model.ResAccepted
	return model.Reply{Result: model.ResAccepted}, nil
}

// apply is fence-check=two-step's second request: the write whose token
// check passed (write ran the check alone), SET unchecked. The model's
// apply answers accepted whatever the storage has seen since.
func (s *redisStore) apply(ctx context.Context, c *client, v, tok int, ob *Obs) (model.Reply, error) {
	ob.Token, ob.Value = tok, v
	if s.sc.apply == nil {
		return model.Reply{}, fmt.Errorf("storage apply: the design's write is one request (fence-check=atomic), there is nothing to apply")
	}
	conn := s.store
	if s.row != nil { // the check was the fence's: the SET is the row's
		conn = s.row
	}
	res, err := s.sc.apply.Run(ctx, conn, storageKeys, v, tok, 0).Int64Slice()
	if err != nil || len(res) < 1 {
		return model.Reply{}, fmt.Errorf("storage apply script: %v (reply %v)", err, res)
	}
	if res[0] == 0 { // a planted apply that checks again (the tests' plant.storage)
		ob.Result = model.ResRejected
		if len(res) > 1 {
			ob.MaxTok = int(res[1])
		}
		return model.Reply{Result: model.ResRejected}, nil
	}
	ob.Result = model.ResAccepted
	return model.Reply{Result: model.ResAccepted}, nil
}

func (s *redisStore) connectStore(ctx context.Context, i int) error {
	if err := s.store.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("client %s: PING: %v", model.ClientName(i), err)
	}
	if s.row != nil {
		if err := s.row.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("client %s: PING the storage's row: %v", model.ClientName(i), err)
		}
	}
	if s.stale != nil {
		if err := s.stale.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("client %s: PING the storage's replica: %v", model.ClientName(i), err)
		}
	}
	return nil
}

// newRedisStore is a client's storage connection to storeAddr through its
// proxy, and with a replica (replicaAddr, "" for none) one to it through a
// proxy of its own.
func newRedisStore(opts *Options, sc storageScripts, h *netHold, storeAddr, replicaAddr string) (redisStore, error) {
	via, err := h.via(storeAddr)
	if err != nil {
		return redisStore{}, err
	}
	h.store = storeAddr
	st := redisStore{store: redis.NewClient(clientOptions(via, opts.StoreDB)), sc: sc, staleAtPrimary: opts.plant.staleAtPrimary}
	if sc.fenceWrite != nil { // the row on the run's own storage (opts.Addr), through a proxy of its own
		via, err := h.viaKey(rowProxyKey(opts.Addr), opts.Addr)
		if err != nil {
			st.closeStore()
			return redisStore{}, err
		}
		h.row = rowProxyKey(opts.Addr)
		st.row = redis.NewClient(clientOptions(via, opts.StoreDB))
	}
	if replicaAddr != "" {
		via, err := h.via(replicaAddr)
		if err != nil {
			st.closeStore()
			return redisStore{}, err
		}
		st.stale = redis.NewClient(clientOptions(via, opts.StoreDB))
	}
	return st, nil
}

// noUnlock, noExpire, noIncr, noCrash: the requests a service has not.
type noUnlock struct{}

func (noUnlock) unlock(context.Context, *client, uint8) error { return nil }
func (noUnlock) crashed(*client)                              {}

// keyLock is a client's lock on one Redis key (lock=redis and replica):
// lockcheck's own requests (SET NX PX, the INCR lock:fence script, EXPIRE,
// DEL, check-and-delete, GET then DEL, the watchdog's PEXPIRE), or a
// library's acquire, extend and release (lib) with INCR lock:fence for a
// token; with wait=notify a subscription to release notices.
type keyLock struct {
	noUnlock
	redisStore
	d    *model.Design
	i    int
	lock *redis.Client // lock database: lock:order-42, lock:fence
	// acq sends the acquire's requests (SET, INCR, EXPIRE): lock, or with
	// ack=wait a connection of their own, on which WAIT follows (wait.go)
	acq     acqCmds
	wait    chan waitReply // the WAIT the client is left in (nil: none)
	waitID  int64          // its connection's CLIENT ID
	waitKey string         // its connection's proxy (waitProxyKey)
	sub     *redis.PubSub  // wait=notify: release notices
	lib     lockAPI        // a lock library's acquire, renew and release (nil: lockcheck's own)
	value   string         // its value in the lock key, e.g. "B:91ab"
	px      time.Duration  // the TTL it sends with SET … PX
	up      string         // the lock's proxy (its upstream, or lockProxyKey of it)
	// side is the connection of the client's sidecar renewer
	// (watchdog=sidecar), a process of its own beside the worker: its
	// renewals go through a proxy of their own (sideUp in sideNet, the
	// client's proxies), which the worker's pauses do not hold (nil: the
	// watchdog is the worker's)
	side    *redis.Client
	sideUp  string
	sideNet *netHold
	// processValue: planted bug: one value for all its jobs
	processValue bool
	// late is the connection of an acquire its caller abandons
	// (abandon=retry|fail), through a proxy of its own (lateUp in
	// lateNet) whose gate holds the request until it lands; nil when the
	// design abandons none
	late    *redis.Client
	lateUp  string
	lateNet *netHold
	// leakAbandoned: planted bug: the abandoned acquire is not held
	leakAbandoned bool
	// attempts counts its acquires (value=acquire: a value per attempt)
	attempts int
}

// crashed: a user's client dies with its process (userCrashed); the
// libraries here run nothing of their own.
func (l *keyLock) crashed(c *client) {
	if _, ok := l.lib.(userAPI); ok {
		userCrashed(c)
	}
}

// validityLib is a library that checks its validity once at the acquire
// (redsync): whether it gave up a granted lock, and what it says is left.
type validityLib interface {
	validityGone() bool
	validityLeft() time.Duration
}

// dropOwn is the reference client giving up a lock whose acquire reply
// came with no validity left (check=acquire): check-and-delete of its own
// key, as redsync's lockContext runs its release script.
func (l *keyLock) dropOwn(ctx context.Context) error {
	if _, err := cadScript.Run(ctx, l.lock, []string{LockKey}, l.value).Int64(); err != nil {
		return lockErr(l.d, err, "check-and-delete script (no validity left)")
	}
	return nil
}

// lockUpstream: the lock's server, whose replies a held acquire holds.
func (l *keyLock) lockUpstream() string { return l.up }

func newKeyLock(ctx context.Context, d *model.Design, opts *Options, sc storageScripts, i int, h *netHold, lockAddr, storeAddr, replicaAddr string) (*keyLock, error) {
	up := lockAddr
	if opts.Client == ClientUser || d.Partitions > 0 { // a proxy of its own: a crash holds it, not a delayed write (userCrashed); a partition cuts it, not the storage's
		up = lockProxyKey(lockAddr)
	}
	lockVia, err := h.viaKey(up, lockAddr)
	if err != nil {
		return nil, err
	}
	st, err := newRedisStore(opts, sc, h, storeAddr, replicaAddr)
	if err != nil {
		return nil, err
	}
	l := &keyLock{redisStore: st, d: d, i: i, value: model.LockValue(i), px: opts.px, up: up, processValue: opts.plant.processValue,
		lock: redis.NewClient(lockOptions(d, lockVia, opts.LockDB)), waitKey: waitProxyKey(lockAddr)}
	if l.acq, err = acqClient(d, l.lock, h, lockAddr, opts.LockDB); err != nil {
		l.lock.Close()
		l.closeStore()
		return nil, err
	}
	if d.Wait == model.WaitNotify {
		l.sub = redis.NewClient(lockOptions(d, lockVia, opts.LockDB)).Subscribe(context.Background())
	}
	if d.Abandon != model.AbandonNone || attemptReleasePlayed(d) { // (a failed attempt's late release goes the same way)
		l.lateUp, l.lateNet, l.leakAbandoned = abandonProxyKey(lockAddr), h, opts.plant.leakAbandoned
		addr, err := h.viaKey(l.lateUp, lockAddr)
		if err != nil {
			l.close()
			return nil, err
		}
		h.halfCloseOn(l.lateUp) // go-redis closes the abandoned call's connection: the reply must still come back
		o := lockOptions(d, addr, opts.LockDB)
		// its caller's deadline ends the call (go-redis reads the reply
		// under the context's deadline); no idle connection is dialled
		// behind it, whose handshake the gate would hold too
		o.ContextTimeoutEnabled, o.MinIdleConns = true, 0
		l.late = redis.NewClient(o)
	}
	if d.Watchdog == model.WatchdogSidecar {
		if err := l.sidecar(d, opts, h, lockAddr); err != nil {
			l.close()
			return nil, err
		}
	}
	switch opts.Client {
	case ClientRedsync:
		l.lib = newRedsync(lockVia, opts.LockDB, l.value, opts.px, d, opts.Tick)
	case ClientRedislock:
		l.lib = newRedislock(lockVia, opts.LockDB, l.value, opts.px)
	case ClientUser:
		if opts.User == nil {
			l.close()
			return nil, fmt.Errorf("client %s: Options.User is nil", ClientUser)
		}
		u, err := opts.User(ctx, UserTarget{Client: i, Addr: lockVia, DB: opts.LockDB, Key: opts.lockKey(), Value: l.value, TTL: opts.px,
			Drift: time.Duration(d.DriftTicks) * opts.Tick})
		if err != nil {
			l.close()
			return nil, err
		}
		api := userAPI{u: u}
		if opts.Lock != nil && d.NodeCrashes > 0 { // node-crash steps kill it: its errors then are a down node's
			api.down = opts.Lock.Down
		}
		l.lib = api
	}
	return l, nil
}

// sidecar opens the connection of the client's sidecar renewer, through
// a proxy of its own that the worker's pauses leave open (planted bug
// sidecarHeld: a proxy the pauses hold, as if the renewer ran in the
// worker's process).
func (l *keyLock) sidecar(d *model.Design, opts *Options, h *netHold, lockAddr string) error {
	l.sideUp, l.sideNet = sidecarProxyKey(lockAddr), h
	via := h.viaUnheld
	if opts.plant.sidecarHeld {
		via = h.viaKey
	}
	addr, err := via(l.sideUp, lockAddr)
	if err != nil {
		return err
	}
	l.side = redis.NewClient(lockOptions(d, addr, opts.LockDB))
	return nil
}

// sidecarUpstream is the proxy key of the client's sidecar renewer ("":
// none), which a partition of the client's host cuts too.
func (l *keyLock) sidecarUpstream() string { return l.sideUp }

// sidecarPing reports whether the client's sidecar renewer is alive and
// reaches the lock's server.
func (l *keyLock) sidecarPing(ctx context.Context) bool {
	return l.side != nil && l.side.Ping(ctx).Err() == nil
}

func (l *keyLock) connect(ctx context.Context) error {
	if err := l.lock.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("client %s: PING: %v", model.ClientName(l.i), err)
	}
	if l.side != nil {
		if err := l.side.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("client %s's sidecar: PING: %v", model.ClientName(l.i), err)
		}
	}
	if l.late != nil { // connected before the clock: its handshake is not held with the request
		if err := l.late.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("client %s: PING: %v", model.ClientName(l.i), err)
		}
	}
	if err := l.connectStore(ctx, l.i); err != nil {
		return err
	}
	if cn, ok := l.lib.(connector); ok {
		if err := cn.connect(ctx); err != nil {
			return fmt.Errorf("client %s: PING: %v", model.ClientName(l.i), err)
		}
	}
	if l.sub != nil {
		if err := l.sub.Subscribe(ctx, NoticeChannel); err != nil {
			return fmt.Errorf("client %s: SUBSCRIBE %s: %v", model.ClientName(l.i), NoticeChannel, err)
		}
		if _, err := l.sub.Receive(ctx); err != nil { // the subscription's confirmation
			return fmt.Errorf("client %s: SUBSCRIBE %s: %v", model.ClientName(l.i), NoticeChannel, err)
		}
	}
	return nil
}

func (l *keyLock) close() {
	if l.lib != nil {
		l.lib.close()
	}
	l.lock.Close()
	if c, ok := l.acq.(*redis.Client); ok && c != l.lock {
		c.Close()
	}
	l.closeStore()
	if l.side != nil {
		l.side.Close()
	}
	if l.late != nil {
		l.late.Close()
	}
	if l.sub != nil {
		l.sub.Close()
	}
}

func (l *keyLock) incr(ctx context.Context, ob *Obs) (model.Reply, error) {
	n, err := l.acq.Incr(ctx, FenceKey).Result()
	if err != nil {
		if err := lockErr(l.d, err, "INCR "+FenceKey); !isDown(err) {
			return model.Reply{}, err
		}
		// the node is down: the INCR fails, and the client tries again next
		// tick, as the model's does
		ob.Result = model.ResRefused
		return model.Reply{Result: model.ResRefused}, nil
	}
	ob.Result, ob.Token = model.ResOK, int(n)
	return model.Reply{Result: model.ResOK, Token: uint16(n)}, nil
}

func (l *keyLock) acquire(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	if c.m.Flags&model.FlagWaiting != 0 && !l.notified(ctx) {
		ob.Skipped, ob.Why = true, "still asleep: no release notice came"
		return model.Reply{}, nil
	}
	l.drainNotices()
	var won bool
	var tok int
	var err error
	if l.lib != nil {
		won, tok, ob.Told, err = l.lib.acquire(ctx)
	} else {
		if !l.processValue {
			l.value = jobValue(l.d, l.i, int(c.m.Job)) // repeated jobs: a value per job, or one per process
			if l.d.Value == model.ValueAcquire {       // a value per attempt: its number after the client's
				l.attempts++
				l.value = fmt.Sprintf("%s/a%d", model.LockValue(l.i), l.attempts)
			}
		}
		won, tok, err = l.setNX(ctx)
	}
	if isDown(err) {
		won, err = false, nil // no answer from a down node: try again later
	}
	if err != nil {
		return model.Reply{}, err
	}
	return wonReply(l.d, won, tok, ob), nil
}

// wonReply is an acquire's answer: won (with the token, when the design
// uses one and the service gave one) or refused.
func wonReply(d *model.Design, won bool, tok int, ob *Obs) model.Reply {
	if !won {
		ob.Result = model.ResRefused // poll again next tick, or sleep until a notice
		return model.Reply{Result: model.ResRefused}
	}
	ob.Result = model.ResOK
	r := model.Reply{Result: model.ResOK}
	if tok > 0 && d.Fence != model.FenceNone { // etcd: the revision is a token only when the design uses one
		ob.Token, r.Token = tok, uint16(tok)
	}
	return r
}

// setNX sends the design's SET NX (with its token when the design takes it
// in the same step). It reports whether the client won, and the token.
func (l *keyLock) setNX(ctx context.Context) (bool, int, error) { return l.setNXOn(ctx, l.acq) }

// setNXOn is setNX over connection conn.
func (l *keyLock) setNXOn(ctx context.Context, conn acqCmds) (bool, int, error) {
	d := l.d
	fenced := d.Fence != model.FenceNone
	keys := []string{LockKey, FenceKey}
	switch {
	case d.Bug == model.BugSetWithoutNX && d.Acquire == model.AcquireSetExpire && fenced:
		n, err := setNoNXIncrScript.Run(ctx, conn, keys, l.value).Int64()
		return scriptWon(d, n, err, "SET (no NX) + INCR script")
	case d.Bug == model.BugSetWithoutNX && d.Acquire == model.AcquireScript && fenced:
		n, err := acquireNoNXScript.Run(ctx, conn, keys, l.value, l.px.Milliseconds()).Int64()
		return scriptWon(d, n, err, "SET (no NX) PX + INCR script")
	case d.Bug == model.BugSetWithoutNX:
		ttl := l.px
		if d.Acquire == model.AcquireSetExpire {
			ttl = 0
		}
		if err := conn.Set(ctx, LockKey, l.value, ttl).Err(); err != nil {
			return false, 0, lockErr(d, err, "SET "+LockKey+" (no NX)")
		}
		return true, 0, nil
	case d.Acquire == model.AcquireSetExpire && fenced:
		n, err := setNXIncrScript.Run(ctx, conn, keys, l.value).Int64()
		return scriptWon(d, n, err, "SET NX + INCR script")
	case d.Acquire == model.AcquireSetExpire:
		ok, err := conn.SetNX(ctx, LockKey, l.value, 0).Result()
		if err != nil {
			return false, 0, lockErr(d, err, "SET "+LockKey+" NX")
		}
		return ok, 0, nil
	case d.Acquire == model.AcquireScript && fenced:
		n, err := acquireScript.Run(ctx, conn, keys, l.value, l.px.Milliseconds()).Int64()
		return scriptWon(d, n, err, "SET NX PX + INCR script")
	default:
		ok, err := conn.SetNX(ctx, LockKey, l.value, l.px).Result()
		if err != nil {
			return false, 0, lockErr(d, err, "SET "+LockKey+" NX PX")
		}
		return ok, 0, nil
	}
}

func scriptWon(d *model.Design, n int64, err error, what string) (bool, int, error) {
	if errors.Is(err, redis.Nil) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, lockErr(d, err, what)
	}
	return true, int(n), nil
}

func (l *keyLock) expire(ctx context.Context, ob *Obs) (model.Reply, error) {
	ok, err := l.acq.PExpire(ctx, LockKey, l.px).Result()
	if err != nil {
		if err := lockErr(l.d, err, "PEXPIRE "+LockKey); !isDown(err) {
			return model.Reply{}, err
		}
	}
	ob.Result = model.ResNoop
	if ok {
		ob.Result = model.ResOK
	}
	return model.Reply{Result: ob.Result}, nil
}

func (l *keyLock) release(ctx context.Context, c *client, k model.ActionKind, ob *Obs) (model.Reply, error) {
	d := l.d
	if l.lib != nil {
		if err := c.lookBefore(ctx, ob); err != nil {
			return model.Reply{}, err
		}
		ok, told, err := l.lib.release(ctx, c.i, ob.Before)
		if err != nil && !isDown(err) {
			return model.Reply{}, err
		}
		if err != nil { // the node is down: nothing deleted
			told, ok = told+" (the lock node is down)", false
		}
		ob.Told = told
		n := int64(0)
		if ok {
			n = 1
		}
		return l.deleted(ctx, c, ob, n)
	}
	switch {
	case k == model.ActDel: // get-del's DEL, if the GET said the key was its own
		if c.m.Flags&model.FlagSawMine == 0 {
			ob.Result = model.ResNoop // the GET said it was not ours: no request
			return model.Reply{Result: model.ResNoop}, nil
		}
		return l.del(ctx, c, ob)
	case d.Release == model.ReleaseDel:
		return l.del(ctx, c, ob)
	case d.Release == model.ReleaseCAD:
		if err := c.lookBefore(ctx, ob); err != nil {
			return model.Reply{}, err
		}
		script := cadScript
		if d.Bug == model.BugCADNoCheck {
			script = cadNoCheckScript
		}
		n, err := script.Run(ctx, l.lock, []string{LockKey}, l.value).Int64()
		if err != nil {
			if err := lockErr(d, err, "check-and-delete script"); !isDown(err) {
				return model.Reply{}, err
			}
			n = 0 // the node is down: nothing deleted
		}
		return l.deleted(ctx, c, ob, n)
	}
	// get-del's GET
	v, err := l.lock.Get(ctx, LockKey).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		if err := lockErr(d, err, "GET "+LockKey); !isDown(err) {
			return model.Reply{}, err
		}
		ob.Result = model.ResNoop // the node is down: the release fails, the job ends
		return model.Reply{Result: model.ResNoop}, nil
	}
	h := holderOf(v, err, d.Clients)
	ob.Result, ob.Value = model.ResOK, h+1
	r := model.Reply{Result: model.ResOK}
	if h == c.i {
		r.Own = 1
	}
	return r, nil
}

// abandonAcquire sends the client's acquire into the gate of its own
// proxy, which holds the request (abandon=retry|fail; model:
// fault_network.go, abandon): the server sees nothing yet. The call runs
// under its caller's deadline (deadline): go-redis then returns the
// context's error and closes the connection, while the command it wrote
// waits in the proxy. done gets the call's answer.
func (l *keyLock) abandonAcquire(ctx context.Context, deadline time.Time) (<-chan error, error) {
	if l.late == nil {
		return nil, fmt.Errorf("client %s: no connection for an abandoned acquire", model.ClientName(l.i))
	}
	if !l.leakAbandoned {
		if err := l.lateNet.gate(l.lateUp, true); err != nil {
			return nil, err
		}
	}
	done := make(chan error, 1)
	go func() {
		dctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		_, _, err := l.setNXOn(dctx, l.late)
		done <- err
	}()
	return done, nil
}

// sendLateRelease sends the release of kind k carrying value into the
// gate of the client's own proxy (a failed acquire attempt's release,
// attemptReleasePlayed), as abandonAcquire sends an acquire: the server
// sees nothing yet, the call gives up at deadline (the caller's timeout)
// while the command waits in the proxy, and landAbandoned lands it.
func (l *keyLock) sendLateRelease(ctx context.Context, k model.ActionKind, value string, deadline time.Time) (<-chan error, error) {
	if l.late == nil {
		return nil, fmt.Errorf("client %s: no connection for a late release", model.ClientName(l.i))
	}
	if err := l.lateNet.gate(l.lateUp, true); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		dctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		var err error
		switch {
		case k == model.ActDel || l.d.Release == model.ReleaseDel:
			err = l.late.Del(dctx, LockKey).Err()
		case l.d.Bug == model.BugCADNoCheck:
			err = cadNoCheckScript.Run(dctx, l.late, []string{LockKey}, value).Err()
		default:
			err = cadScript.Run(dctx, l.late, []string{LockKey}, value).Err()
		}
		done <- err
	}()
	return done, nil
}

// landAbandoned lets the held acquire through to the server and waits
// until it is applied (its reply comes back to the proxy, which keeps
// it: its caller has gone); within wait, or an error.
func (l *keyLock) landAbandoned(wait time.Duration) error {
	if err := l.lateNet.holdReplies(l.lateUp); err != nil {
		return err
	}
	defer l.lateNet.resumeReplies()
	if err := l.lateNet.gate(l.lateUp, false); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if !l.lateNet.replyHeld(l.lateUp, wctx.Done()) {
		return fmt.Errorf("client %s: its abandoned acquire got no reply from the server within %v", model.ClientName(l.i), wait)
	}
	return nil
}

// lockValue is the value a release sent now carries (the current job's).
func (l *keyLock) lockValue() string { return l.value }

// releaseCopy is the late first copy of a resent release that carried
// value, applied now whatever the client has done since (model:
// strayArrive): check-and-delete of that value (with a value per process,
// the client's next lock has it too), or a plain DEL of whatever key is
// there.
func (l *keyLock) releaseCopy(ctx context.Context, c *client, k model.ActionKind, value string, ob *Obs) (model.Reply, error) {
	if err := c.lookBefore(ctx, ob); err != nil {
		return model.Reply{}, err
	}
	var n int64
	var err error
	switch {
	case k == model.ActDel || l.d.Release == model.ReleaseDel:
		n, err = l.lock.Del(ctx, LockKey).Result()
	case l.d.Bug == model.BugCADNoCheck:
		n, err = cadNoCheckScript.Run(ctx, l.lock, []string{LockKey}, value).Int64()
	default:
		n, err = cadScript.Run(ctx, l.lock, []string{LockKey}, value).Int64()
	}
	if err != nil {
		if err := lockErr(l.d, err, "late release"); !isDown(err) {
			return model.Reply{}, err
		}
		n = 0 // the node is down: nothing deleted
	}
	return l.deleted(ctx, c, ob, n)
}

// del is a plain DEL of the lock key.
func (l *keyLock) del(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	if err := c.lookBefore(ctx, ob); err != nil {
		return model.Reply{}, err
	}
	n, err := l.lock.Del(ctx, LockKey).Result()
	if err != nil {
		if err := lockErr(l.d, err, "DEL "+LockKey); !isDown(err) {
			return model.Reply{}, err
		}
		n = 0 // the node is down: nothing deleted
	}
	return l.deleted(ctx, c, ob, n)
}

// deleted is deletedReply, and with wait=notify a release that removed the
// key publishes a notice.
func (l *keyLock) deleted(ctx context.Context, c *client, ob *Obs, n int64) (model.Reply, error) {
	r := deletedReply(l.d, c, ob, n)
	if n == 1 && l.d.Wait == model.WaitNotify {
		got, err := l.lock.Publish(ctx, NoticeChannel, l.value).Result()
		if err != nil {
			return model.Reply{}, fmt.Errorf("PUBLISH %s: %v", NoticeChannel, err)
		}
		ob.Notified = int(got)
	}
	return r, nil
}

// deletedReply records a release's reply: 1 removed the key, 0 found none
// (or, for check-and-delete, not ours). Removing a key that was someone
// else's right before is the seed's "deleted B's lock".
func deletedReply(d *model.Design, c *client, ob *Obs, n int64) model.Reply {
	ob.Result = model.ResNoop
	if n != 1 {
		return model.Reply{Result: model.ResNoop}
	}
	ob.Result = model.ResOK
	// (Redlock: the check-and-delete only ever deletes the client's own
	// keys; Before is the majority's holder, not each node's)
	ob.RemovedOther = ob.Before != c.i && d.Lock != model.LockRedlock
	return model.Reply{Result: model.ResOK}
}

// releasedReply is deletedReply for a release that reports only whether
// it removed the client's key.
func releasedReply(d *model.Design, c *client, ob *Obs, ok bool) model.Reply {
	if ok {
		return deletedReply(d, c, ob, 1)
	}
	return deletedReply(d, c, ob, 0)
}

// renew is the watchdog's step: extend the TTL if the key is still ours.
// A sidecar renews over its own connection; while its proxy holds its
// traffic (planted bug sidecarHeld: with its paused worker's) the
// renewal is sent into the hold and lands when the hold ends, and the
// step is skipped: the sidecar has no answer.
func (l *keyLock) renew(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	if l.lib != nil {
		return libRenew(ctx, l.lib, ob)
	}
	script := renewScript
	if l.d.Extend == model.ExtendSetNX { // redsync's touchWithSetNXScript
		script = renewSetNXScript
	}
	conn := l.lock
	if l.side != nil {
		conn = l.side
		if l.sideNet.holds(l.sideUp) {
			go script.Run(ctx, conn, []string{LockKey}, l.value, l.px.Milliseconds()) // its reply, once it comes, goes nowhere
			ob.Skipped, ob.Why = true, "its sidecar's renewal is held in the network"
			return model.Reply{}, nil
		}
	}
	n, err := script.Run(ctx, conn, []string{LockKey}, l.value, l.px.Milliseconds()).Int64()
	if err != nil {
		if err := lockErr(l.d, err, "renew script"); !isDown(err) {
			return model.Reply{}, err
		}
		n = 0
	}
	ob.Result = model.ResNoop
	if n == 1 {
		ob.Result = model.ResOK
	}
	return model.Reply{Result: ob.Result}, nil
}

// libRenew is a library's extend or refresh.
func libRenew(ctx context.Context, lib lockAPI, ob *Obs) (model.Reply, error) {
	ok, told, err := lib.renew(ctx)
	if err != nil && !isDown(err) {
		return model.Reply{}, err
	}
	if err != nil { // the node is down: nothing renewed
		told, ok = told+" (the lock node is down)", false
	}
	return toldReply(ob, ok, told), nil
}

// toldReply is a library call's answer: OK if it did what it was asked
// (renewed, released), else nothing done, with what it told its caller.
func toldReply(ob *Obs, ok bool, told string) model.Reply {
	ob.Told, ob.Result = told, model.ResNoop
	if ok {
		ob.Result = model.ResOK
	}
	return model.Reply{Result: ob.Result}
}

// notified reports whether a release notice has come since the client fell
// asleep. Delivery is asynchronous, so it waits a little for one.
func (l *keyLock) notified(ctx context.Context) bool {
	if l.sub == nil {
		return true
	}
	t := time.NewTimer(10 * time.Millisecond)
	defer t.Stop()
	select {
	case <-l.sub.Channel():
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// drainNotices forgets notices of releases before this attempt.
func (l *keyLock) drainNotices() {
	if l.sub == nil {
		return
	}
	for {
		select {
		case <-l.sub.Channel():
		default:
			return
		}
	}
}

// lockOptions are the options of connections to the lock node.
func lockOptions(d *model.Design, addr string, db int) *redis.Options {
	if d.NodeCrashes > 0 || d.Lock == model.LockReplica {
		return crashableOptions(addr, db)
	}
	return clientOptions(addr, db)
}

// observer is a connection that only looks: GET and PTTL of the lock key.
type observer struct {
	c       *redis.Client
	clients int
	canFail bool   // the lock node can crash: no answer means it is down
	key     string // the lock key: LockKey, or a user's client's own
	// owners are the user's clients that write values of their own
	// (UserOwner), by client; nil where a client writes LockValue(i)
	mu     sync.Mutex
	owners []UserOwner
}

func (o *observer) setOwner(i int, u UserOwner) {
	o.mu.Lock()
	o.owners[i] = u
	o.mu.Unlock()
}

// holderOf is whose value v is: a client's LockValue, or a value a user's
// client says it wrote.
func (o *observer) holderOf(v string, err error) int {
	h := holderOf(v, err, o.clients)
	if h != HolderUnknown {
		return h
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, u := range o.owners {
		if u != nil && u.Owns(v) {
			return i
		}
	}
	return h
}

func (o *observer) holder(ctx context.Context) (int, error) {
	v, err := o.c.Get(ctx, o.key).Result()
	if o.canFail && networkError(err) {
		return HolderDown, nil
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("observer GET %s: %v", o.key, err)
	}
	return o.holderOf(v, err), nil
}

// look is the holder and the key's remaining time to live in milliseconds
// (-1: no expiry, -2: no key), read together by one script.
func (o *observer) look(ctx context.Context) (int, int64, error) {
	res, err := lookScript.Run(ctx, o.c, []string{o.key}).Slice()
	if o.canFail && networkError(err) {
		return HolderDown, -2, nil
	}
	if err != nil || len(res) != 2 {
		return 0, 0, fmt.Errorf("observer GET+PTTL %s: %v (reply %v)", o.key, err, res)
	}
	pttl, ok := res[1].(int64)
	if !ok {
		return 0, 0, fmt.Errorf("observer PTTL %s: reply %v", o.key, res[1])
	}
	v, ok := res[0].(string)
	if !ok {
		return 0, 0, fmt.Errorf("observer GET %s: reply %v", o.key, res[0])
	}
	if v == "" { // no key (no client writes an empty value)
		return HolderNone, pttl, nil
	}
	return o.holderOf(v, nil), pttl, nil
}
