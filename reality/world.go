package reality

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// world is the real lock service of one run: the servers it starts (or
// the ones the options name) and stops, an observer that looks at who
// holds the lock, and each client's real lock. It is the one place in
// reality that knows which service a design uses: newWorld's switch picks
// the world, and the conductor (conductor.go) and the client (client.go)
// only call these methods. Reality waits on the network, so an interface
// here costs nothing; the model keeps its static dispatch.
//
// Every world keeps the counter the jobs increment in a Redis storage
// (redisStorage) but the database's, which keeps it in the row lock's own
// database.
type world interface {
	// start starts or resets the servers, the lock's keys and the storage,
	// and connects the observer, before the clock starts.
	start(ctx context.Context) error
	// observer looks at the lock: who holds it, and for how long.
	observer() looker
	// nodes is how many lock nodes crash and restart can name.
	nodes() int
	// lock is client i's real lock, its connections through h (a pause
	// holds them). store is the client's storage connection (through h).
	lock(ctx context.Context, i int, h *netHold) (realLock, error)
	// storeAddr is the address of the Redis whose storage database holds
	// the counter (every client connects to it, through its proxy).
	storeAddr() string
	// crash kills lock node k (SIGKILL); restart starts it again (with
	// persist=1 from its append-only file).
	crash(ctx context.Context, k int) error
	restart(ctx context.Context, k int) error
	// serviceStep plays a step of the service itself that is neither a
	// tick nor a node crash (the replica's replicate and failover); the
	// clients' proxies are retargeted through retarget.
	serviceStep(ctx context.Context, a model.Action, ob *Obs, retarget func(from, to string)) error
	// counter is the storage's counter at the end of the run.
	counter(ctx context.Context) (int, error)
	// tokenOffset is what is taken off the service's own numbers to give
	// the model's tokens (etcd's revisions).
	tokenOffset() int
	// stop stops what start started and closes every connection.
	stop()
}

// newWorld is the world of design d: the only switch on the lock service
// in reality.
func newWorld(d *model.Design, opts *Options, sc storageScripts) (world, error) {
	base := redisStorage{d: d, opts: opts, sc: sc, lockAddr: opts.Addr}
	switch d.Lock {
	case model.LockRedlock:
		if len(opts.Nodes) != d.Nodes {
			return nil, fmt.Errorf("design %s: Redlock over %d nodes needs %d redis-servers of its own, got %d", d.Name(), d.Nodes, d.Nodes, len(opts.Nodes))
		}
		if err := persistOK(d, opts.Nodes); err != nil {
			return nil, err
		}
		return &redlockWorld{redisStorage: base, servers: opts.Nodes}, nil
	case model.LockReplica:
		return &replicaWorld{redisWorld: redisWorld{redisStorage: base}}, nil
	case model.LockEtcd, model.LockEtcdMutex:
		if opts.Etcd == "" {
			return nil, fmt.Errorf("design %s: an etcd design needs an etcd endpoint", d.Name())
		}
		return &etcdWorld{redisStorage: base}, nil
	case model.LockZooKeeper:
		return &zkWorld{redisStorage: base}, nil
	case model.LockDB:
		return &pgWorld{redisStorage: base}, nil
	case model.LockAdvisory:
		return &advisoryWorld{pgWorld: pgWorld{redisStorage: base}}, nil
	}
	w := &redisWorld{redisStorage: base}
	switch {
	case opts.Lock != nil:
		w.server = opts.Lock
		w.lockAddr = opts.Lock.Addr()
		if err := persistOK(d, []*Server{opts.Lock}); err != nil {
			return nil, err
		}
	case d.NodeCrashes > 0:
		return nil, fmt.Errorf("design %s: node crashes need a lock server of their own to kill and restart", d.Name())
	}
	return w, nil
}

// persistOK checks that the lock servers node-crash steps kill keep what
// the design says they keep.
func persistOK(d *model.Design, servers []*Server) error {
	if d.NodeCrashes == 0 {
		return nil
	}
	for _, n := range servers {
		if n.Persist() != (d.Persist == 1) {
			return fmt.Errorf("design %s: the lock server's persistence (%v) is not the design's (persist=%d)", d.Name(), n.Persist(), d.Persist)
		}
	}
	return nil
}

// redisStorage is what every world but the database's shares: the counter
// in the storage database of the Redis at opts.Addr, checked by the
// design's Lua scripts, and the lock database's keys on lockAddr reset
// before the run (the fence counter at the design's first token less one).
type redisStorage struct {
	d        *model.Design
	opts     *Options
	sc       storageScripts
	lockAddr string        // the Redis holding lock:order-42 and lock:fence
	admin    *redis.Client // lock database, for the reset
	store    *redis.Client // storage database, for the reset and the final counter
	copy     *storageCopy  // storage faults: the storage's primary and replica (storage_replica.go), or nil
}

// startStorage resets the lock's keys and the storage and loads the
// scripts.
// With storage faults the storage is a primary and a replica of the run's
// own, equal when the clock starts.
func (w *redisStorage) startStorage(ctx context.Context) error {
	if storageReplicated(w.d) {
		c, err := startStorageCopy(ctx, w.d, w.opts.StoreDB, w.opts.plant)
		if err != nil {
			return err
		}
		w.copy = c
	}
	w.admin = redis.NewClient(clientOptions(w.lockAddr, w.opts.LockDB))
	rowAddr := w.storeAddr()
	if w.sc.fenceWrite != nil { // the row on the run's own storage, the fence on the primary and replica (storage_replica.go)
		rowAddr = w.opts.Addr
	}
	w.store = redis.NewClient(clientOptions(rowAddr, w.opts.StoreDB))
	if err := setup(ctx, w.admin, w.store, w.d, w.sc, w.opts.lockKey()); err != nil {
		return err
	}
	if w.copy != nil {
		if w.sc.fenceWrite != nil {
			if err := w.copy.fenceApart(ctx, w.store); err != nil {
				return err
			}
		}
		return w.copy.rs.catchUp(ctx, w.copy.rs.order)
	}
	return nil
}

// storeAddr is the storage's address (with storage faults, its first
// primary's: the clients' proxies keep that name after a failover).
func (w *redisStorage) storeAddr() string {
	if w.copy != nil {
		return w.copy.key
	}
	return w.opts.Addr
}

// replicaAddr is the storage replica's address when reads can be served
// by it (stale-reads: its first, the clients' proxies keep that name), or
// "".
func (w *redisStorage) replicaAddr() string {
	if w.copy == nil || w.d.StaleReads == 0 {
		return ""
	}
	return w.copy.replicaKey
}

func (w *redisStorage) nodes() int       { return 0 }
func (w *redisStorage) tokenOffset() int { return 0 }

func (w *redisStorage) crash(ctx context.Context, k int) error {
	return fmt.Errorf("no lock node %d to crash", k+1)
}

func (w *redisStorage) restart(ctx context.Context, k int) error {
	return fmt.Errorf("no lock node %d to restart", k+1)
}

func (w *redisStorage) serviceStep(ctx context.Context, a model.Action, ob *Obs, retarget func(from, to string)) error {
	return w.storageStep(ctx, a, ob, retarget)
}

func (w *redisStorage) counter(ctx context.Context) (int, error) {
	v, err := w.store.Get(ctx, CounterKey).Result()
	if err != nil {
		return 0, fmt.Errorf("final GET %s: %v", CounterKey, err)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("final GET %s: %q is not a number", CounterKey, v)
	}
	return n, nil
}

func (w *redisStorage) stopStorage() {
	for _, c := range []*redis.Client{w.admin, w.store} {
		if c != nil {
			c.Close()
		}
	}
	if w.copy != nil {
		w.copy.stop()
	}
}

// realLock is one client's real lock, as its world makes it: one method per
// request of the client's program, each answering in the model's words
// (a model.Reply) and recording what the servers and the library said in
// ob. A request to a lock node that is down answers as the model's does
// (refused, no-op), not with an error; an error ends the run.
type realLock interface {
	// connect opens its connections before the clock starts.
	connect(ctx context.Context) error
	// incr is INCR lock:fence.
	incr(ctx context.Context, ob *Obs) (model.Reply, error)
	// acquire is the client's acquire request (Redlock: of the node the
	// client asks next, c.m.Asked).
	acquire(ctx context.Context, c *client, ob *Obs) (model.Reply, error)
	// unlock deletes the keys of a lost Redlock attempt on the nodes of mask.
	unlock(ctx context.Context, c *client, mask uint8) error
	// expire is the EXPIRE of acquire=set-expire.
	expire(ctx context.Context, ob *Obs) (model.Reply, error)
	// read and write are the job's storage accesses.
	read(ctx context.Context, c *client, tok int, ob *Obs) (model.Reply, error)
	write(ctx context.Context, c *client, v, tok, version int, ob *Obs) (model.Reply, error)
	// release is the release (kind ActRelease: DEL, check-and-delete,
	// COMMIT, get-del's GET; ActDel: get-del's DEL); ob.Before is the
	// observer's look right before (but for get-del's GET).
	release(ctx context.Context, c *client, k model.ActionKind, ob *Obs) (model.Reply, error)
	// renew is the watchdog's renewal (etcd: a keep-alive).
	renew(ctx context.Context, c *client, ob *Obs) (model.Reply, error)
	// crashed is what the client's crash does to its connections (a dead
	// process sends no heartbeats).
	crashed(c *client)
	close()
}
