package reality

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"lockcheck/model"
)

// Lock clients a real run can use (explore reproduce -client NAME). The
// reference client is lockcheck's own code, written from the model's
// design; the others are lock libraries, called through their public API
// as a user would call them: the client's job (read, work, write, and a
// fence INCR where the design takes its token from a counter) is the
// user's code around the library's acquire, extend and release.
const (
	ClientReference = "lockcheck" // lockcheck's own client, any playable design
	ClientRedsync   = "redsync"   // github.com/go-redsync/redsync/v4, one Redis node
	ClientRedislock = "redislock" // github.com/bsm/redislock
	ClientEtcdMutex = "etcd-mutex"
	ClientZkLock    = "go-zookeeper" // github.com/go-zookeeper/zk's lock recipe (zookeeper_lib.go)
)

// ClientNames lists the clients, the reference first.
var ClientNames = []string{ClientReference, ClientRedsync, ClientRedislock, ClientEtcdMutex, ClientZkLock}

// clientDoc says in one line what each library adapter calls.
var clientDoc = map[string]string{
	ClientReference: "lockcheck's own client: the design's requests, as the model sends them",
	ClientRedsync:   "redsync v4: Mutex.TryLockContext (one SET NX PX), ExtendContext, UnlockContext (Lua check-and-delete)",
	ClientRedislock: "redislock: Obtain (Lua SET NX PX, no retry), Lock.Refresh, Lock.Release (Lua check-and-delete)",
	ClientEtcdMutex: "etcd concurrency: a Session (lease kept alive every TTL/3: renew=TTL/3, watchdog=session) and Mutex.TryLock, Mutex.Unlock",
	ClientZkLock:    "go-zookeeper v1.0.4's lock recipe: zk.NewLock, LockWithData (blocks until its node is the lowest), Unlock",
	ClientUser:      "your lock client (package locktest): its Acquire, Extend and Release",
}

// ClientDoc says what a client calls.
func ClientDoc(name string) string { return clientDoc[name] }

// CheckClient reports whether client can play design d: a library does
// what it does, so it plays only designs whose requests are its own.
func CheckClient(name string, d *model.Design) error {
	fenced := d.Fence != model.FenceNone
	common := func(lib string) error {
		switch {
		case d.Release != model.ReleaseCAD:
			return fmt.Errorf("client %s releases with a check-and-delete: want release=cad, not %s", lib, d.Release)
		case d.Wait != model.WaitPoll:
			return fmt.Errorf("client %s polls: want wait=poll, not %s", lib, d.Wait)
		case d.Jobs > 1:
			return fmt.Errorf("client %s: repeated jobs (jobs=%d) are played with lockcheck's own client only; want jobs=1", lib, d.Jobs)
		case d.Delays > 0 && d.TimeoutTicks > 0 && d.DelayAt == model.PlaceRelease:
			return fmt.Errorf("client %s: a resent release's late first copy is played with lockcheck's own client only; want timeout=0", lib)
		case d.Check == model.CheckAcquire && d.Delays >= 2 && d.TimeoutTicks > 0 && d.DelayAt == model.PlaceAcquire:
			return fmt.Errorf("client %s: a failed attempt's release held past the timeout (check=acquire, delays >= 2, delay-at=acquire) is played with lockcheck's own client only; want timeout=0", lib)
		case d.Abandon != model.AbandonNone:
			return fmt.Errorf("client %s: an acquire its caller abandons is played with lockcheck's own client only; want abandon=none", lib)
		case d.Watchdog == model.WatchdogSidecar:
			return fmt.Errorf("client %s renews in the worker's process: a sidecar renewer is played with lockcheck's own client only; want watchdog=worker", lib)
		case d.Check == model.CheckAcquire && lib == ClientRedsync: // what redsync does: Mutex.lockContext
		case d.Check != model.CheckTrust && lib != ClientUser: // a user's client measures its validity itself (UserLock.Validity)
			return fmt.Errorf("client %s: check=%s is not played with a library; want check=trust (redsync: trust or acquire)", lib, d.Check)
		case d.Extend == model.ExtendSetNX && lib == ClientRedsync: // redsync.WithSetNXOnExtend
		case d.Extend != model.ExtendCheck && lib != ClientUser: // a user's client renews as it does (UserLock.Extend)
			return fmt.Errorf("client %s: extend=%s is not played with a library; want extend=check (redsync: check or setnx)", lib, d.Extend)
		case d.Bug != model.BugNone:
			return fmt.Errorf("client %s: planted bugs are the reference client's; want bug=none", lib)
		case d.NodeCrashes > 0 && (lib != ClientUser || d.Lock != model.LockRedis):
			return fmt.Errorf("client %s: node crashes are played with the reference client only (and a user's client on one Redis node); want node-crashes=0", lib)
		case primaryDown(d):
			return fmt.Errorf("client %s: a replica primary down with no replica to promote (rejoin=%d, failovers=%d > replicas=%d) is played with the reference client only; want failovers ≤ replicas", lib, d.RejoinTicks, d.Failovers, d.Replicas)
		}
		return nil
	}
	switch name {
	case ClientReference:
		return nil
	case ClientRedsync, ClientRedislock, ClientUser, ClientZkLock:
		if name == ClientZkLock && d.Lock != model.LockZooKeeper {
			return fmt.Errorf("client %s locks in ZooKeeper: want lock=zookeeper, not %s", name, d.Lock)
		}
		if name == ClientRedsync && d.Lock == model.LockRedlock {
			switch {
			case d.Quorum != model.QuorumMajority:
				return fmt.Errorf("client redsync wins a majority of the nodes: want quorum=majority")
			case d.Release != model.ReleaseCAD || d.Wait != model.WaitPoll || d.Check != model.CheckTrust || d.Bug != model.BugNone:
				return fmt.Errorf("client redsync on Redlock: want release=cad, wait=poll, check=trust and no planted bug")
			}
			return nil
		}
		if name == ClientUser && d.Lock == model.LockRedlock { // its own Acquire asks every node (redlock_user.go)
			switch {
			case d.Quorum != model.QuorumMajority:
				return fmt.Errorf("client %s on Redlock: want quorum=majority", name)
			case d.Check != model.CheckTrust || d.Bug != model.BugNone || d.Extend != model.ExtendCheck:
				return fmt.Errorf("client %s on Redlock: want check=trust, extend=check and no planted bug", name)
			case d.NodeCrashes > 0 || d.Partitions > 0:
				return fmt.Errorf("client %s on Redlock: node crashes and partitions are not played with a user's client; want node-crashes=0 and partitions=0", name)
			}
			return common(name)
		}
		if name == ClientUser && d.Lock == model.LockEtcdMutex { // a queue of the user's own, or etcd's Mutex (etcd_mutex_user.go)
			return etcdQueueUserOK(d)
		}
		if name == ClientUser && d.Lock == model.LockEtcd { // a lease and a put-if-absent of the user's own
			if err := common(name); err != nil {
				return err
			}
			switch {
			case d.Fence != model.FenceNone:
				return fmt.Errorf("client %s on etcd: fenced designs take the key's create revision as token, which a user's Acquire does not report; want fence=none", name)
			case d.Check != model.CheckTrust:
				return fmt.Errorf("client %s on etcd: want check=trust", name)
			}
			return nil
		}
		if name == ClientUser && d.Lock == model.LockAdvisory { // pg_try_advisory_lock (level=xact: in a transaction) on a session of the user's own, straight or through PgBouncer
			switch {
			case d.End != model.EndIdle:
				return fmt.Errorf("client %s on PostgreSQL: sessions ended by TCP keepalive are played with lockcheck's own client only; want end=idle", name)
			case d.Pool == model.PoolTxReset:
				return fmt.Errorf("client %s on PostgreSQL: pool=tx-reset is played with lockcheck's own client only (the run waits for DISCARD ALL on the backend of each statement, which a user's client does not report); want pool=none or tx", name)
			case d.Check != model.CheckTrust || d.Bug != model.BugNone:
				return fmt.Errorf("client %s on PostgreSQL: want check=trust and no planted bug", name)
			}
			return nil
		}
		if (name == ClientUser || name == ClientZkLock) && d.Lock == model.LockZooKeeper { // a recipe of the user's own (zookeeper_user.go), or go-zookeeper's
			switch {
			case d.Fence != model.FenceNone:
				return fmt.Errorf("client %s on ZooKeeper: a token would be its node's sequence, which a user's Acquire does not report; want fence=none", name)
			case d.Check != model.CheckTrust || d.Bug != model.BugNone:
				return fmt.Errorf("client %s on ZooKeeper: want check=trust and no planted bug", name)
			case d.Losses > 0 && d.Lose == model.LoseRequest && name == ClientZkLock:
				return fmt.Errorf("client %s on ZooKeeper: go-zookeeper's Lock sends a create lost on its way again at once, inside the call (Conn.CreateProtectedEphemeralSequential, conn.go: on ErrConnectionClosed it lists the children, finds no node with its GUID and creates again), not after the design's timeout as the model's client does; want lose=reply", name)
			case d.Losses > 0 && d.Lose != model.LoseReply:
				return fmt.Errorf("client %s on ZooKeeper: a request lost on its way (lose=%s) is played with lockcheck's own client only; want lose=reply", name, d.Lose)
			case d.Protect == model.ProtectNo && name == ClientZkLock:
				return fmt.Errorf("client %s on ZooKeeper: go-zookeeper's Lock always creates in protected mode (Conn.CreateProtectedEphemeralSequential); want protect=yes", name)
			case d.Protect == model.ProtectNo:
				return fmt.Errorf("client %s on ZooKeeper: a user's recipe is checked against protected mode, the lock that finds its node after a lost reply (a node the client does not know of is seen with lockcheck's own client only); want protect=yes", name)
			}
			return nil
		}
		if d.Lock != model.LockRedis && d.Lock != model.LockReplica {
			return fmt.Errorf("client %s locks a Redis: want lock=redis or replica, not %s", name, d.Lock)
		}
		if err := common(name); err != nil {
			return err
		}
		switch {
		case d.Ack == model.AckWait: // WAIT counts the acks of the SET's own connection (wait.go)
			return fmt.Errorf("client %s: WAIT after the acquire (ack=wait) is sent by lockcheck's own client only, on its SET's connection; want ack=async", name)
		case !fenced && d.Acquire != model.AcquireScript:
			return fmt.Errorf("client %s: without fencing the acquire is the library's SET NX PX: want acquire=script, not %s", name, d.Acquire)
		case fenced && d.Acquire != model.AcquireIncrAfter && d.Acquire != model.AcquireIncrBefore:
			return fmt.Errorf("client %s gives no fencing token: a fenced design takes it from INCR lock:fence, before or after the lock (acquire=incr-before or incr-after, not %s)", name, d.Acquire)
		}
		return nil
	case ClientEtcdMutex:
		if d.Lock == model.LockEtcdMutex { // its blocking Lock (world_etcd_mutex.go), as the reference client's
			return nil
		}
		if d.Lock != model.LockEtcd {
			return fmt.Errorf("client %s locks in etcd: want lock=etcd, not %s", name, d.Lock)
		}
		if err := common(name); err != nil {
			return err
		}
		if k := sessionRenewTicks(d.TTLTicks); d.RenewTicks != k || d.Watchdog != model.WatchdogSession {
			return fmt.Errorf("client %s: its session renews its lease by itself every TTL/3, beside the worker: want renew=%d and watchdog=session with ttl=%d, not renew=%d and watchdog=%s", name, k, d.TTLTicks, d.RenewTicks, d.Watchdog)
		}
		return nil
	}
	return fmt.Errorf("client %q: want one of %s", clipText(name), strings.Join(ClientNames, ", "))
}

// lockAPI is a library's lock as the client's job calls it. Each call
// returns what happened (won, deleted, extended) and told: what the
// library told the caller, in its own words.
type lockAPI interface {
	// acquire tries once; tok is the library's token when it gives one
	// (etcd: the key's create revision less the offset), else 0.
	acquire(ctx context.Context) (won bool, tok int, told string, err error)
	// release gives the lock back; before is who held the key right before
	// (the observer's look), for libraries that do not say.
	release(ctx context.Context, me, before int) (deleted bool, told string, err error)
	renew(ctx context.Context) (ok bool, told string, err error)
	close()
}

// connector is a library whose connections open before the clock starts
// (a connection first opened during a step whose reply is held would
// have its handshake held too).
type connector interface {
	connect(ctx context.Context) error
}

func errText(err error) string {
	if err == nil {
		return "nil"
	}
	return clipTold(err.Error())
}

func clipTold(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

// redsyncLock is redsync v4 on one Redis node. Its value is the client's
// lock value (WithGenValueFunc), so the observer can say whose key it is;
// one try per acquire step (TryLockContext: the schedule polls).
//
// Its options follow the design: redsync checks its validity once, when
// the acquire's reply comes (Mutex.lockContext: until = now + expiry −
// (now − start) − expiry × driftFactor, the lock kept only if now is
// before it, else deleted with the release script), which is the model's
// check=acquire; its drift factor is set so that expiry × driftFactor is
// the design's drift ticks. With extend=setnx its Extend sets a missing
// key again (WithSetNXOnExtend: Mutex.touch runs touchWithSetNXScript).
// UnlockContext keeps the mutex's value, so a release that failed can be
// sent again (the model's release-fail=retry).
type redsyncLock struct {
	rc *redis.Client
	m  *redsync.Mutex
	// gone: the last TryLock's SET NX was granted, but no validity was
	// left when its reply came, so redsync deleted the key and said
	// ErrFailed (a refused SET NX is ErrTaken)
	gone bool
}

func newRedsync(addr string, db int, value string, px time.Duration, d *model.Design, tick time.Duration) *redsyncLock {
	rc := redis.NewClient(clientOptions(addr, db))
	rs := redsync.New(goredis.NewPool(rc))
	opts := []redsync.Option{redsync.WithExpiry(px), redsync.WithGenValueFunc(func() (string, error) { return value, nil }),
		redsync.WithDriftFactor(float64(time.Duration(d.DriftTicks)*tick) / float64(px))}
	if d.Extend == model.ExtendSetNX {
		opts = append(opts, redsync.WithSetNXOnExtend())
	}
	return &redsyncLock{rc: rc, m: rs.NewMutex(LockKey, opts...)}
}

func (l *redsyncLock) acquire(ctx context.Context) (bool, int, string, error) {
	l.gone = false
	err := l.m.TryLockContext(ctx)
	if err == nil {
		return true, 0, "TryLock → nil", nil
	}
	var taken *redsync.ErrTaken
	if errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken) {
		l.gone = errors.Is(err, redsync.ErrFailed) && !errors.As(err, &taken)
		return false, 0, "TryLock → " + errText(err), nil
	}
	return false, 0, "", fmt.Errorf("redsync TryLock: %v", err)
}

// validityGone reports whether the last acquire was granted by the server
// and given up by redsync for want of validity.
func (l *redsyncLock) validityGone() bool { return l.gone }

// validityLeft is what redsync says is left of its lock: Mutex.Until less now.
func (l *redsyncLock) validityLeft() time.Duration { return time.Until(l.m.Until()) }

func (l *redsyncLock) release(ctx context.Context, _, _ int) (bool, string, error) {
	ok, err := l.m.UnlockContext(ctx)
	told := fmt.Sprintf("Unlock → %v, %s", ok, errText(err))
	var taken *redsync.ErrTaken
	if err != nil && !ok && !errors.Is(err, redsync.ErrLockAlreadyExpired) && !errors.As(err, &taken) {
		return false, "", fmt.Errorf("redsync Unlock: %v", err)
	}
	return ok, told, nil
}

func (l *redsyncLock) renew(ctx context.Context) (bool, string, error) {
	ok, err := l.m.ExtendContext(ctx)
	told := fmt.Sprintf("Extend → %v, %s", ok, errText(err))
	var taken *redsync.ErrTaken
	if err != nil && !ok && !errors.Is(err, redsync.ErrExtendFailed) && !errors.As(err, &taken) {
		return false, "", fmt.Errorf("redsync Extend: %v", err)
	}
	return ok, told, nil
}

func (l *redsyncLock) connect(ctx context.Context) error { return l.rc.Ping(ctx).Err() }

func (l *redsyncLock) close() { l.rc.Close() }

// redislockLock is bsm/redislock: Obtain with the client's lock value as
// its token (Options.Token) and no retry (the default: the schedule
// polls).
type redislockLock struct {
	rc    *redis.Client
	c     *redislock.Client
	value string
	px    time.Duration
	lock  *redislock.Lock
}

func newRedislock(addr string, db int, value string, px time.Duration) *redislockLock {
	rc := redis.NewClient(clientOptions(addr, db))
	return &redislockLock{rc: rc, c: redislock.New(rc), value: value, px: px}
}

func (l *redislockLock) acquire(ctx context.Context) (bool, int, string, error) {
	lk, err := l.c.Obtain(ctx, LockKey, l.px, &redislock.Options{Token: l.value})
	if errors.Is(err, redislock.ErrNotObtained) {
		return false, 0, "Obtain → " + errText(err), nil
	}
	if err != nil {
		return false, 0, "", fmt.Errorf("redislock Obtain: %v", err)
	}
	l.lock = lk
	return true, 0, "Obtain → lock, nil", nil
}

func (l *redislockLock) release(ctx context.Context, _, _ int) (bool, string, error) {
	err := l.lock.Release(ctx)
	if err == nil {
		return true, "Release → nil", nil
	}
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return false, "Release → " + errText(err), nil
	}
	return false, "", fmt.Errorf("redislock Release: %v", err)
}

func (l *redislockLock) renew(ctx context.Context) (bool, string, error) {
	if l.lock == nil {
		return false, "no lock to refresh", nil
	}
	err := l.lock.Refresh(ctx, l.px, nil)
	if err == nil {
		return true, "Refresh → nil", nil
	}
	if errors.Is(err, redislock.ErrNotObtained) {
		return false, "Refresh → " + errText(err), nil
	}
	return false, "", fmt.Errorf("redislock Refresh: %v", err)
}

func (l *redislockLock) connect(ctx context.Context) error { return l.rc.Ping(ctx).Err() }

func (l *redislockLock) close() { l.rc.Close() }

// etcdMutexLock is etcd's concurrency.Mutex on a Session of the client's
// own: the session's lease is granted when the client connects and kept
// alive by the library's goroutine every TTL/3 (held with the client's
// traffic during a pause). TryLock puts EtcdLockKey/<lease> and keeps it
// if it is the oldest key under the prefix; Unlock deletes it.
type etcdMutexLock struct {
	cli    *clientv3.Client
	s      *concurrency.Session
	m      *concurrency.Mutex
	offset int64
	made   time.Time // when NewSession returned: its first keep-alive had been sent
}

func newEtcdMutex(ctx context.Context, endpoint string, ttl int64, offset int64) (*etcdMutexLock, error) {
	cli, err := newEtcdClient(endpoint)
	if err != nil {
		return nil, err
	}
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(int(ttl)), concurrency.WithContext(ctx))
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd session: %v", err)
	}
	return &etcdMutexLock{cli: cli, s: s, m: concurrency.NewMutex(s, EtcdLockKey), offset: offset, made: time.Now()}, nil
}

func (l *etcdMutexLock) acquire(ctx context.Context) (bool, int, string, error) {
	err := l.m.TryLock(ctx)
	if errors.Is(err, concurrency.ErrLocked) {
		return false, 0, "TryLock → " + errText(err), nil
	}
	if err != nil {
		return false, 0, "", fmt.Errorf("etcd Mutex.TryLock: %v", err)
	}
	rev := l.m.Header().Revision
	return true, int(rev - l.offset), fmt.Sprintf("TryLock → nil (revision %d)", rev), nil
}

// release: Unlock says nothing of whether the key was still there (it
// returns nil either way), so what it did is the observer's look right
// before: the key can only be the client's own (pfx/its lease).
func (l *etcdMutexLock) release(ctx context.Context, me, before int) (bool, string, error) {
	err := l.m.Unlock(ctx)
	if err != nil {
		return false, "", fmt.Errorf("etcd Mutex.Unlock: %v", err)
	}
	return before == me, "Unlock → nil", nil
}

// renew is a renew step of the schedule: the session's own keep-alive
// (every TTL/3, session.go) has renewed the lease or not; the step sends
// no keep-alive of its own, it asks what the session did: whether its
// lease is alive and still holds the Mutex's key (Lease.TimeToLive with
// its attached keys), the model's keep-alive that renews the client's own
// key.
func (l *etcdMutexLock) renew(ctx context.Context) (bool, string, error) {
	tl, err := l.cli.TimeToLive(ctx, l.s.Lease(), clientv3.WithAttachedKeys())
	if err != nil {
		return false, "", fmt.Errorf("etcd Session lease time-to-live: %v", err)
	}
	key := fmt.Sprintf("%s/%x", EtcdLockKey, l.s.Lease()) // the Mutex's key (tryAcquire: pfx + lease in hex)
	for _, k := range tl.Keys {
		if tl.TTL > 0 && string(k) == key {
			return true, "Session keep-alive: lease alive, key held", nil
		}
	}
	if tl.TTL <= 0 {
		return false, "Session keep-alive: lease gone", nil
	}
	return false, "Session keep-alive: lease alive, no key", nil
}

// crashed ends the session's keep-alive as the death of the process
// would, and leaves its lease to run out: Session.Orphan cancels the
// context that Lessor.KeepAlive registered (keepAliveCtxCloser then drops
// the lease from sendKeepAliveLoop's list, which sends one every TTL/3,
// recvKeepAlive), and revokes nothing (Session.Close would). Without it a
// "crashed" client's goroutine would renew its lease for the rest of the
// run, and its key would never expire (client/v3 v3.6.16:
// concurrency/session.go NewSession, Orphan; lease.go).
func (l *etcdMutexLock) crashed() { l.s.Orphan() }

func (l *etcdMutexLock) close() {
	l.s.Orphan() // stop the keep-alive; the lease is revoked below, bounded
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_, _ = l.cli.Revoke(ctx, l.s.Lease())
	cancel()
	l.cli.Close()
}

// etcdMutexObserver looks at an etcd Mutex's keys: the holder is the key
// under the prefix with the lowest create revision, named by its lease.
type etcdMutexObserver struct {
	cli    *clientv3.Client
	mu     sync.Mutex
	leases map[clientv3.LeaseID]int // each client's session lease
	// owners are a user's clients that tell their keys (UserOwner), by
	// client (etcd_mutex_user.go: whose)
	owners []UserOwner
}

// setLease names a session's lease as client i's.
func (o *etcdMutexObserver) setLease(id clientv3.LeaseID, i int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.leases[id] = i
}

func (o *etcdMutexObserver) holder(ctx context.Context) (int, error) {
	h, _, err := o.lookKey(ctx, false)
	return h, err
}

func (o *etcdMutexObserver) look(ctx context.Context) (int, int64, error) {
	return o.lookKey(ctx, true)
}

func (o *etcdMutexObserver) lookKey(ctx context.Context, ttl bool) (int, int64, error) {
	resp, err := o.cli.Get(ctx, EtcdLockKey+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		return 0, 0, fmt.Errorf("observer: etcd get %s/: %v", EtcdLockKey, err)
	}
	if len(resp.Kvs) == 0 {
		return HolderNone, -2, nil
	}
	kv := resp.Kvs[0]
	o.mu.Lock()
	h, ok := o.leases[clientv3.LeaseID(kv.Lease)]
	o.mu.Unlock()
	if !ok {
		h = o.whose(kv)
	}
	if !ttl {
		return h, 0, nil
	}
	if kv.Lease == 0 {
		return h, -1, nil
	}
	tl, err := o.cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
	if err != nil {
		return 0, 0, fmt.Errorf("observer: etcd lease time-to-live: %v", err)
	}
	return h, tl.TTL * 1000, nil
}

// etcdMutexReset deletes every key under the Mutex's prefix.
func etcdMutexReset(ctx context.Context, cli *clientv3.Client) error {
	if _, err := cli.Delete(ctx, EtcdLockKey+"/", clientv3.WithPrefix()); err != nil {
		return fmt.Errorf("etcd: reset %s/: %v", EtcdLockKey, err)
	}
	return nil
}

// ForClient adapts a schedule to what a lock library can do, and says
// how: a library gives no fencing token, so a fenced Redis design takes its
// token from INCR lock:fence right after the library's lock
// (acquire=incr-after: an "incr" step is put after every successful
// acquire); etcd's Mutex locks in etcd, so a Redis design becomes the
// same design on etcd (lock=etcd). The adapted schedule must replay in
// the model, which gives the row its verdict. The reference client and
// designs that fit already are returned as they are (how is "").
func ForClient(in *Input, client string) (*Input, string, error) {
	d := in.Design
	how := ""
	trace := in.Trace
	switch client {
	case ClientRedsync, ClientRedislock:
		if (d.Lock == model.LockRedis || d.Lock == model.LockReplica) && d.Fence != model.FenceNone && d.Acquire == model.AcquireScript {
			run, err := model.Replay(&d, trace)
			if err != nil {
				return nil, "", fmt.Errorf("%s: %v", in.Source, err)
			}
			d.Acquire = model.AcquireIncrAfter
			trace = nil
			for k, st := range run.Steps {
				trace = append(trace, in.Trace[k])
				if st.Action.Kind == model.ActAcquire && st.Event.Result == model.ResOK {
					trace = append(trace, model.Action{Kind: model.ActIncr, Client: st.Action.Client})
				}
			}
			how = "acquire=incr-after: " + client + " gives no token, so INCR lock:fence follows each lock won"
		}
	case ClientEtcdMutex:
		if d.Lock == model.LockRedis {
			d.Lock = model.LockEtcd
			how = "lock=etcd: the same schedule on an etcd lock"
		}
		if d.Lock == model.LockEtcd && d.RenewTicks == 0 {
			if _, err := model.Replay(&in.Design, trace); err != nil {
				return nil, "", fmt.Errorf("%s: %v", in.Source, err)
			}
			var renewed string
			var err error
			if trace, renewed, err = sessionRenewal(&d, trace); err != nil {
				return nil, "", fmt.Errorf("%s adapted for %s: %v", in.Source, client, err)
			}
			how = strings.TrimPrefix(how+"; "+renewed, "; ")
		}
	}
	if how == "" {
		if err := CheckClient(client, &in.Design); err != nil {
			return nil, "", clientRefusal(&in.Design, client, err)
		}
		run, err := model.Replay(&d, trace)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %v", in.Source, err)
		}
		if client == ClientRedsync && d.Lock == model.LockRedlock {
			if err := checkAttempts(&d, run); err != nil {
				return nil, "", fmt.Errorf("%s: %w", in.Source, notPlayable(&d, client, err))
			}
		}
		if err := heldPlayable(&d, client, run); err != nil {
			return nil, "", fmt.Errorf("%s: %w", in.Source, err)
		}
		return in, "", nil
	}
	if err := CheckClient(client, &d); err != nil {
		return nil, "", fmt.Errorf("%s adapted for %s (%s): %w", in.Source, client, how, clientRefusal(&d, client, err))
	}
	if err := d.Validate(); err != nil {
		return nil, "", fmt.Errorf("%s adapted for %s (%s): %v", in.Source, client, how, err)
	}
	run, err := model.Replay(&d, trace)
	if err != nil {
		return nil, "", fmt.Errorf("%s adapted for %s (%s): the schedule does not replay in the model: %v", in.Source, client, how, err)
	}
	if err := heldPlayable(&d, client, run); err != nil {
		return nil, "", fmt.Errorf("%s adapted for %s (%s): %w", in.Source, client, how, err)
	}
	out := *in
	out.Design, out.Trace = d, trace
	out.DesignName = d.Name()
	return &out, how, nil
}
