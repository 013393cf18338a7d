package reality

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"

	"lockcheck/model"
)

// DefaultTick is one model tick in real time for Redis designs. At 100ms
// every reply of a tick must come within 48ms: a loopback request takes
// well under a millisecond, and the slowest tick measured on a loaded
// 2-core machine took about 6ms, but stalls of 100ms and more happen under
// heavy load; such a run is void, and explore reproduce plays it again at
// 200ms and 400ms.
const DefaultTick = 100 * time.Millisecond

// Bounds of the -tick option. Ticks are whole milliseconds.
const (
	MinTick = 10 * time.Millisecond
	MaxTick = 10 * time.Second
)

// Options configure a real run.
type Options struct {
	Addr string // the Redis server, host:port (the storage; the lock too for redis designs)
	Etcd string // lock=etcd: the etcd client URL
	// Lock is a Redis server of the lock's own, which node-crash steps kill
	// and restart (needed when the design has node-crashes; its persistence
	// must be the design's). Storage stays on Addr.
	Lock *Server
	// Nodes are the Redlock nodes (lock=redlock: as many as the design's
	// nodes), each a redis-server of its own, killed and restarted by
	// node-crash steps.
	Nodes []*Server
	// ZooKeeper is a ZooKeeper server's host:port (lock=zookeeper; ""
	// starts one for the run).
	ZooKeeper string
	// Postgres is a PostgreSQL server's host:port (lock=db; "" starts one
	// for the run).
	Postgres string
	Tick     time.Duration // one model tick in real time (0: DefaultTickFor the design)
	// Client is the lock client the run uses: ClientReference ("" too) or
	// a library (see ClientNames and CheckClient).
	Client  string
	LockDB  int // database of lock:order-42 and lock:fence
	StoreDB int // database of the counter (must differ from LockDB)

	plant plant // planted bugs, for the tests that test this package
}

// plant holds deliberate bugs that tests switch on to show that a wrong
// reality is caught.
type plant struct {
	ttlTicks int             // added to the TTL the clients send
	storage  *storageScripts // replaces the design's storage checks
	delaySeq int             // the conductor holds this step back …
	delay    time.Duration   // … this long (a machine too slow for the tick)
	noHold   bool            // a pause freezes the caller only, not its library's goroutines
}

// Obs is one step of the schedule as it happened on the real servers.
type Obs struct {
	Seq    int          // position in the schedule (0: the start)
	Tick   int          // the model tick the step belongs to
	Action model.Action // the schedule's action
	// Took is the step the real client took: its own next step, which is
	// the schedule's when reality follows the model. For ticks and faults
	// it is the action's kind.
	Took    model.ActionKind
	Skipped bool         // the client took no step (Why says why)
	Why     string       // why it took none: its job is over, it still sleeps
	Result  model.Result // the reply, in the model's words
	Value   int          // value read or written; a release's GET: holder+1 (0: no key)
	// Redlock: Node is the node an acquire step asked (0-based), Won that
	// the attempt's last step won the lock, Nodes each node's key holder
	// after the step (see nodesText).
	Node  int
	Won   bool
	Nodes string
	// Told is what the lock library told the caller (an error, false,
	// nil), in its own words; "" for the reference client.
	Told   string
	Token  int // token received (acquire, incr) or sent (read, write)
	MaxTok int // the storage's highest token, when it refused
	// Before is who held the key right before a storage access or a
	// release (HolderNone, HolderUnknown, or a client); After is who held it
	// after the step (for a tick: at the start of the new tick).
	Before, After int
	AfterPTTL     int64 // the key's PTTL after the step, ms (-1 no expiry, -2 no key)
	Unsafe        bool  // ✗: a storage access while the key was not the client's
	RemovedOther  bool  // a release removed a key that was another client's
	Believes      uint8 // clients that believe they hold the lock, after the step
	Inside        uint8 // … and are inside their critical section (next step not the release)
	Done          uint8 // clients whose job is over (done or crashed), after the step
	Crashed       uint8 // clients that crashed, after the step
	Waiting       uint8 // wait=notify: clients asleep until a release notice, after the step
	Notified      int   // wait=notify: subscribers a release's notice reached (PUBLISH's reply)
	// Start and End are the real times, since the start of tick 1, at which
	// the step was ordered and at which its last reply came back.
	Start, End time.Duration
}

// Play is a schedule played on real servers.
type Play struct {
	Design  model.Design
	Client  string // the lock client: ClientReference or a library
	Tick    time.Duration
	PX      time.Duration // the TTL the clients sent
	Steps   []Obs         // Steps[0] is the start (Seq 0), then one per action
	Counter int           // the counter read from storage at the end
	// Window is how far into its tick every request had to be answered for
	// the timing to be trustworthy; Latest is the latest any was, and
	// LateSeq that step (0: none late).
	Window, Latest time.Duration
	Late           bool // some step ended outside its window
	LateSeq        int  // the first such step (0: the start)
	// TokenOffset is what was taken off etcd revisions to give the
	// model's tokens (a fresh etcd starts at revision 1).
	TokenOffset int
}

// clock maps model ticks to real time: tick t starts at t0 + (t-1)·tick.
type clock struct {
	t0   time.Time
	tick time.Duration
}

func (c *clock) start(t int) time.Time      { return c.t0.Add(time.Duration(t-1) * c.tick) }
func (c *clock) since() time.Duration       { return time.Since(c.t0) }
func (c *clock) offset(t int) time.Duration { return c.start(t).Sub(c.t0) }
func (c *clock) sleepUntil(ctx context.Context, t int) {
	d := time.Until(c.start(t))
	if d <= 0 {
		return
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
	}
}

// TTL returns the PX a client sends for a TTL of ttl ticks: ttl ticks less
// half a tick. Requests of a tick are all made in the first half of the
// tick, so a key set at tick t then expires in the second half of tick
// t+ttl-1, when no request is in flight: it exists for every request of
// ticks t … t+ttl-1 and is gone for every request of tick t+ttl, as in the
// model. With PX = ttl·tick exactly, the expiry would land in the first
// half of tick t+ttl, amid that tick's requests, and race them.
func TTL(ttl int, tick time.Duration) time.Duration {
	return time.Duration(ttl)*tick - tick/2
}

// CheckTick validates a tick length given by a user.
func CheckTick(tick time.Duration) error {
	if tick < MinTick || tick > MaxTick || tick%time.Millisecond != 0 {
		return fmt.Errorf("tick %v: want whole milliseconds from %v to %v", tick, MinTick, MaxTick)
	}
	return nil
}

// CheckTickFor validates a tick for a design: etcd leases are whole
// seconds and expire late, so etcd ticks are multiples of EtcdTick.
func CheckTickFor(d *model.Design, tick time.Duration) error {
	if err := CheckTick(tick); err != nil {
		return err
	}
	if d.Lock == model.LockEtcd && tick%EtcdTick != 0 {
		return fmt.Errorf("tick %v: etcd designs want a multiple of %v (leases are whole seconds and expire up to half a second late)", tick, EtcdTick)
	}
	return nil
}

// DefaultTickFor is the default tick of a design's real runs.
func DefaultTickFor(d *model.Design) time.Duration {
	if d.Lock == model.LockEtcd {
		return EtcdTick
	}
	return DefaultTick
}

// window is how far into its tick a request may be answered.
func window(d *model.Design, tick time.Duration) time.Duration {
	if d.Lock == model.LockEtcd {
		return tick/2 - etcdLag
	}
	return tick/2 - 2*time.Millisecond
}

// Playable reports whether the design can be played for real: one Redis
// node with every acquire, release, fence, storage, check, wait and renewal
// choice and lock-node crashes and restarts; a primary and a replica with
// replicate and failover steps (replica.go); Redlock on N nodes
// (redlock.go); an etcd lease lock; ZooKeeper (zookeeper.go); a PostgreSQL
// row lock (postgres.go); with the client faults (pause, slow, crash,
// delay). Clock jumps, partitions, lost replies and client clock jumps are
// not played.
func Playable(d *model.Design) error {
	if d.Lock == model.LockDB {
		if err := dbOK(d); err != nil {
			return err
		}
	}
	if d.Lock == model.LockZooKeeper {
		if err := zkOK(d); err != nil {
			return err
		}
	}
	if d.Partitions > 0 || d.Losses > 0 || d.ClientJumps > 0 {
		return fmt.Errorf("design %s: partitions, lost replies and client clock jumps are not played for real yet; set partitions=0, losses=0, client-jumps=0", d.Name())
	}
	if d.Lock == model.LockReplica {
		if err := replicaOK(d); err != nil {
			return err
		}
	}
	if d.Lock == model.LockRedlock && (d.Release != model.ReleaseCAD || d.Wait != model.WaitPoll || d.Check != model.CheckTrust || d.Bug != model.BugNone || d.RenewTicks > 0) {
		return fmt.Errorf("design %s: Redlock is played for real with release=cad, wait=poll, check=trust, renew=0 and no planted bug", d.Name())
	}
	if d.ClockJumps > 0 {
		return fmt.Errorf("design %s: clock jumps are not played for real (Debian's redis-server will not run under libfaketime); set jumps=0", d.Name())
	}
	if d.Reenter != model.ReenterNone {
		return fmt.Errorf("design %s: nested acquires (reenter=%s) are not played for real yet; set reenter=none", d.Name(), d.Reenter)
	}
	if d.Partitions > 0 || d.Losses > 0 || d.TimeoutTicks > 0 || d.ClientJumps > 0 {
		return fmt.Errorf("design %s: partitions, lost replies, resends and client clock jumps are not played for real yet; set partitions=0, losses=0, timeout=0, client-jumps=0", d.Name())
	}
	if d.Hangs > 0 {
		return fmt.Errorf("design %s: hung workers are not played for real yet; set hangs=0", d.Name())
	}
	if d.Jobs > 1 {
		return fmt.Errorf("design %s: repeated jobs are not played for real yet (a real client runs one job); set jobs=1", d.Name())
	}
	if d.Restarts > 0 {
		return fmt.Errorf("design %s: client restarts are not played for real yet; set restarts=0", d.Name())
	}
	if d.LockDelayTicks > 0 {
		return fmt.Errorf("design %s: lock-delay is a lock-server feature (Chubby) that Redis and etcd do not have; set lock-delay=0", d.Name())
	}
	if d.FsyncTicks > 0 {
		return fmt.Errorf("design %s: appendfsync everysec (fsync=%d) is not played for real: it loses the writes since the last fsync only when the machine itself crashes, and a killed redis-server loses nothing in the page cache; set fsync=0", d.Name(), d.FsyncTicks)
	}
	if d.StorageFailovers > 0 || d.StaleReads > 0 {
		return fmt.Errorf("design %s: storage failovers and stale reads need a replicated storage, not played for real yet; set storage-failovers=0, stale-reads=0", d.Name())
	}
	return nil
}

// PlaySchedule plays trace for design d on the server at opts.Addr: one
// goroutine and one pair of connections per client, the schedule's order
// kept by a conductor that orders each client's step and waits for it, real
// sleeps for ticks, pauses and work. The trace must replay in the model
// (the caller checks). Keys of the run are reset first; nothing else on the
// server is touched.
func PlaySchedule(ctx context.Context, d *model.Design, trace []model.Action, opts Options) (*Play, error) {
	if err := Playable(d); err != nil {
		return nil, err
	}
	if opts.Client == "" {
		opts.Client = ClientReference
	}
	if err := CheckClient(opts.Client, d); err != nil {
		return nil, fmt.Errorf("design %s: %v", d.Name(), err)
	}
	if opts.Tick == 0 {
		opts.Tick = DefaultTickFor(d)
	}
	if err := CheckTickFor(d, opts.Tick); err != nil {
		return nil, err
	}
	if d.Lock == model.LockEtcd && opts.Etcd == "" {
		return nil, fmt.Errorf("design %s: an etcd design needs an etcd endpoint", d.Name())
	}
	if opts.LockDB == opts.StoreDB {
		return nil, fmt.Errorf("lock and storage databases are both %d: want two different ones", opts.LockDB)
	}
	ticks := 0
	for _, a := range trace {
		if a.Kind == model.ActTick {
			ticks++
		}
	}
	// bounded: the schedule's ticks, the longest pause or work, and slack
	budget := time.Duration(ticks+2*model.MaxWaitTicks+2)*opts.Tick + 30*time.Second
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	ttl := d.TTLTicks + opts.plant.ttlTicks
	p := &Play{Design: *d, Client: opts.Client, Tick: opts.Tick, PX: TTL(ttl, opts.Tick), Window: window(d, opts.Tick)}
	sc := storageFor(d)
	if opts.plant.storage != nil {
		sc = *opts.plant.storage
	}

	lockAddr := opts.Addr
	var lockNodes []*Server // the servers node-crash steps kill
	switch {
	case d.Lock == model.LockRedlock:
		if len(opts.Nodes) != d.Nodes {
			return nil, fmt.Errorf("design %s: Redlock over %d nodes needs %d redis-servers of its own, got %d", d.Name(), d.Nodes, d.Nodes, len(opts.Nodes))
		}
		lockNodes = opts.Nodes
	case opts.Lock != nil:
		lockNodes = []*Server{opts.Lock}
		lockAddr = opts.Lock.Addr()
	case d.NodeCrashes > 0:
		return nil, fmt.Errorf("design %s: node crashes need a lock server of their own to kill and restart", d.Name())
	}
	if d.NodeCrashes > 0 {
		for _, n := range lockNodes {
			if n.Persist() != (d.Persist == 1) {
				return nil, fmt.Errorf("design %s: the lock server's persistence (%v) is not the design's (persist=%d)", d.Name(), n.Persist(), d.Persist)
			}
		}
	}
	downUntil := make([]int, len(lockNodes)) // a crashed lock node restarts when this tick starts
	var rp *replicaPair
	if d.Lock == model.LockReplica {
		var err error
		if rp, err = startReplica(ctx); err != nil {
			return nil, err
		}
		defer rp.stop()
		lockAddr = rp.primary.Addr()
	}
	admin := redis.NewClient(clientOptions(lockAddr, opts.LockDB))
	defer admin.Close()
	storeAdmin := redis.NewClient(clientOptions(opts.Addr, opts.StoreDB))
	defer storeAdmin.Close()
	if err := setup(ctx, admin, storeAdmin, d, sc); err != nil {
		return nil, err
	}
	if rp != nil { // the replica starts equal to the primary, as in the model
		if err := rp.sync(ctx); err != nil {
			return nil, err
		}
	}
	var obs looker
	if d.Lock == model.LockZooKeeper {
		if opts.ZooKeeper == "" {
			zs, err := StartZooKeeper(ctx)
			if err != nil {
				return nil, err
			}
			defer zs.Stop()
			opts.ZooKeeper = zs.Addr()
		}
		zc, err := zkConnect(ctx, opts.ZooKeeper, 10*time.Second)
		if err != nil {
			return nil, fmt.Errorf("ZooKeeper observer: %v", err)
		}
		defer zc.Close()
		if err := zkSetup(ctx, zc, d); err != nil {
			return nil, err
		}
		obs = &zkObserver{c: zc, clients: d.Clients}
	}
	var pgc *pgx.Conn
	if d.Lock == model.LockDB {
		if opts.Postgres == "" {
			ps, err := StartPostgres(ctx)
			if err != nil {
				return nil, err
			}
			defer ps.Stop()
			opts.Postgres = ps.Addr()
		}
		var err error
		if pgc, err = pgx.Connect(ctx, pgURL(opts.Postgres, "observer")); err != nil {
			return nil, fmt.Errorf("postgres observer: %v", err)
		}
		defer pgc.Close(context.Background())
		if err := pgSetup(ctx, pgc); err != nil {
			return nil, err
		}
		obs = &pgObserver{c: pgc, clients: d.Clients}
	}
	var etcdCli *clientv3.Client
	var offset int64
	var mutexObs *etcdMutexObserver
	if d.Lock == model.LockEtcd {
		cli, err := newEtcdClient(opts.Etcd)
		if err != nil {
			return nil, fmt.Errorf("etcd client: %v", err)
		}
		defer cli.Close()
		if err := etcdMutexReset(ctx, cli); err != nil {
			return nil, err
		}
		if offset, err = etcdSetup(ctx, cli, d); err != nil {
			return nil, err
		}
		etcdCli = cli
		obs = &etcdObserver{cli: cli, clients: d.Clients}
		if opts.Client == ClientEtcdMutex {
			mutexObs = &etcdMutexObserver{cli: cli, leases: map[clientv3.LeaseID]int{}}
			obs = mutexObs
		}
	} else if d.Lock == model.LockZooKeeper || d.Lock == model.LockDB {
		// the observer is set above
	} else if d.Lock == model.LockRedlock {
		ro := &redlockObserver{clients: d.Clients, d: d}
		for _, n := range lockNodes {
			c := redis.NewClient(crashableOptions(n.Addr(), opts.LockDB))
			defer c.Close()
			if err := c.Del(ctx, LockKey).Err(); err != nil {
				return nil, fmt.Errorf("reset %s on %s: %v", LockKey, n.Addr(), err)
			}
			ro.nodes = append(ro.nodes, c)
		}
		obs = ro
	} else {
		ro := &observer{c: redis.NewClient(lockOptions(d, lockAddr, opts.LockDB)), clients: d.Clients, canFail: d.NodeCrashes > 0}
		defer func() { ro.c.Close() }()
		obs = ro
	}
	nodesNow := func() string { // Redlock: each node's holder, as the last look saw them
		if ro, ok := obs.(*redlockObserver); ok {
			return ro.last
		}
		return ""
	}
	if _, _, err := obs.look(ctx); err != nil { // connects before the clock starts
		return nil, err
	}
	p.TokenOffset = int(offset)

	clk := &clock{tick: opts.Tick}
	clients := make([]*client, d.Clients)
	for i := range clients {
		// every connection of the client goes through its own proxies
		h := &netHold{}
		lockVia, err := h.via(lockAddr)
		if err != nil {
			h.close()
			return nil, err
		}
		storeVia, err := h.via(opts.Addr)
		if err != nil {
			h.close()
			return nil, err
		}
		clients[i] = newClient(i, d, clk, lockVia, storeVia, opts.LockDB, opts.StoreDB, obs, sc, p.PX)
		clients[i].net = h
		clients[i].noHold = opts.plant.noHold
		defer clients[i].close()
		if etcdCli != nil {
			endpoint, err := viaURL(h, opts.Etcd)
			if err != nil {
				return nil, err
			}
			ttl := int64(p.PX / time.Second)
			if opts.Client == ClientEtcdMutex {
				l, err := newEtcdMutex(ctx, endpoint, ttl, offset)
				if err != nil {
					return nil, fmt.Errorf("client %s: %v", model.ClientName(i), err)
				}
				clients[i].lib = l
				mutexObs.leases[l.s.Lease()] = i
			} else {
				cli, err := newEtcdClient(endpoint)
				if err != nil {
					return nil, fmt.Errorf("client %s: etcd client: %v", model.ClientName(i), err)
				}
				defer cli.Close()
				clients[i].etcd = &etcdLock{cli: cli, value: model.LockValue(i), ttl: ttl, offset: offset}
			}
		}
		if d.Lock == model.LockDB {
			via, err := h.via(opts.Postgres)
			if err != nil {
				return nil, err
			}
			l := &dbLock{url: pgURL(via, model.ClientName(i)), timeout: TTL(d.TTLTicks, opts.Tick)}
			if d.Tx == model.TxOutside {
				l.storeURL = pgURL(via, model.ClientName(i)+"-store")
			}
			clients[i].db = l
			if err := l.connect(ctx); err != nil {
				return nil, fmt.Errorf("client %s: %v", model.ClientName(i), err)
			}
		}
		if d.Lock == model.LockZooKeeper {
			via, err := h.via(opts.ZooKeeper)
			if err != nil {
				return nil, err
			}
			zc, err := zkConnect(ctx, via, zkSession(d, opts.Tick))
			if err != nil {
				return nil, fmt.Errorf("client %s: %v", model.ClientName(i), err)
			}
			clients[i].zk = &zkLock{c: zc, me: i, clients: d.Clients}
		}
		if d.Lock == model.LockRedlock {
			var vias []string
			for _, n := range lockNodes {
				via, err := h.via(n.Addr())
				if err != nil {
					return nil, err
				}
				vias = append(vias, via)
				clients[i].nodes = append(clients[i].nodes, redis.NewClient(crashableOptions(via, opts.LockDB)))
			}
			if opts.Client == ClientRedsync {
				clients[i].lib = newRedsyncRedlock(vias, opts.LockDB, model.LockValue(i), p.PX, time.Duration(d.DriftTicks)*opts.Tick)
			}
		}
		switch {
		case d.Lock == model.LockRedlock:
		case opts.Client == ClientRedsync:
			clients[i].lib = newRedsync(lockVia, opts.LockDB, model.LockValue(i), p.PX)
		case opts.Client == ClientRedislock:
			clients[i].lib = newRedislock(lockVia, opts.LockDB, model.LockValue(i), p.PX)
		}
		if err := clients[i].connect(ctx); err != nil {
			return nil, err
		}
	}

	// start: tick 1 begins a little after everything is connected
	clk.t0 = time.Now().Add(5 * time.Millisecond)
	runCtx, stop := context.WithCancel(ctx)
	orders := make([]chan order, d.Clients)
	replies := make([]chan reply, d.Clients)
	finished := make(chan struct{}, d.Clients)
	for i, c := range clients {
		orders[i], replies[i] = make(chan order), make(chan reply)
		go func(c *client, o chan order, r chan reply) {
			defer func() { finished <- struct{}{} }()
			c.run(runCtx, o, r)
		}(c, orders[i], replies[i])
	}
	defer func() {
		// wake sleepers, let every goroutine end, bounded in time
		stop()
		for range clients {
			select {
			case <-finished:
			case <-time.After(5 * time.Second):
			}
		}
	}()

	now := 1
	clk.sleepUntil(ctx, now)
	var believes, inside, done, crashedMask, waiting uint8
	crashed := make([]bool, d.Clients)
	start := Obs{Seq: 0, Tick: 1, Took: model.ActTick, Before: HolderNotLooked}
	start.Start = clk.since()
	h, pttl, err := obs.look(ctx)
	if err != nil {
		return nil, err
	}
	start.After, start.AfterPTTL, start.End = h, pttl, clk.since()
	p.Steps = append(p.Steps, start)
	p.late(&start, clk.offset(now))
	start.Nodes = nodesNow()
	after := start.After
	afterPTTL := start.AfterPTTL
	afterNodes := start.Nodes

	for k, a := range trace {
		seq := k + 1
		var ob Obs
		if a.Kind == model.ActTick {
			now++
			clk.sleepUntil(ctx, now)
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("step %d (tick to t=%d): run budget of %v exceeded", seq, now, budget)
			}
			ob = Obs{Action: a, Took: model.ActTick, Tick: now, Before: HolderNotLooked}
			ob.Start = clk.since()
			for _, c := range clients { // a pause ends: the client's held traffic goes through
				if c.net != nil && c.pausedUntil == now {
					c.net.resume()
				}
			}
			for k := range downUntil {
				if downUntil[k] == now { // the crashed lock node comes back
					downUntil[k] = 0
					if err := lockNodes[k].Restart(ctx); err != nil {
						return nil, fmt.Errorf("step %d (tick to t=%d): restart the lock node: %v", seq, now, err)
					}
				}
			}
			ob.After, ob.AfterPTTL, err = obs.look(ctx)
			if err != nil {
				return nil, fmt.Errorf("step %d (tick to t=%d): %v", seq, now, err)
			}
			ob.Nodes = nodesNow()
			ob.End = clk.since()
		} else if a.Kind == model.ActNodeCrash {
			// the lock node dies (SIGKILL) and restarts now or after restart ticks
			ob = Obs{Action: a, Took: a.Kind, Tick: now, Before: HolderNotLooked}
			ob.Start = clk.since()
			k := int(a.Arg)
			if k >= len(lockNodes) {
				return nil, fmt.Errorf("step %d (%s): no lock node %d to crash", seq, a, k+1)
			}
			if err := lockNodes[k].Crash(); err != nil {
				return nil, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, now, err)
			}
			if d.RestartTicks == 0 {
				if err := lockNodes[k].Restart(ctx); err != nil {
					return nil, fmt.Errorf("step %d (%s at t=%d): restart: %v", seq, a, now, err)
				}
			} else {
				downUntil[k] = now + d.RestartTicks
			}
			if ob.After, ob.AfterPTTL, err = obs.look(ctx); err != nil {
				return nil, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, now, err)
			}
			ob.Nodes = nodesNow()
			ob.End = clk.since()
		} else if rp != nil && (a.Kind == model.ActReplicate || a.Kind == model.ActFailover) {
			ob = Obs{Action: a, Took: a.Kind, Tick: now, Before: HolderNotLooked}
			ob.Start = clk.since()
			if a.Kind == model.ActReplicate {
				if err := rp.sync(ctx); err != nil {
					return nil, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, now, err)
				}
				ob.Result = model.ResOK
			} else {
				if err := rp.failover(ctx); err != nil {
					return nil, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, now, err)
				}
				for _, c := range clients { // the clients now talk to the promoted replica
					c.net.retarget(lockAddr, rp.replica.Addr())
				}
				ro := obs.(*observer)
				ro.c.Close()
				ro.c = redis.NewClient(clientOptions(rp.replica.Addr(), opts.LockDB))
			}
			if ob.After, ob.AfterPTTL, err = obs.look(ctx); err != nil {
				return nil, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, now, err)
			}
			if a.Kind == model.ActFailover {
				ob.Value = ob.After + 1 // the key's holder on the promoted replica
				if ob.After < 0 {
					ob.Value = 0
				}
			}
			ob.End = clk.since()
		} else if !a.Kind.ByClient() {
			return nil, fmt.Errorf("step %d (%s): not played for real", seq, a)
		} else {
			i := int(a.Client)
			if i >= d.Clients {
				return nil, fmt.Errorf("step %d (%s): the design has %d clients", seq, a, d.Clients)
			}
			if crashed[i] {
				ob = Obs{Action: a, Took: a.Kind, Skipped: true, Why: "it has crashed", Tick: now, Before: HolderNotLooked, After: after, AfterPTTL: afterPTTL, Nodes: afterNodes}
				ob.Start, ob.End = clk.since(), clk.since()
			} else {
				if seq == opts.plant.delaySeq {
					time.Sleep(opts.plant.delay)
				}
				sent := clk.since()
				select {
				case orders[i] <- order{a: a, now: now}:
				case <-ctx.Done():
					return nil, fmt.Errorf("step %d (%s at t=%d): client did not take the order within the run budget", seq, a, now)
				}
				var r reply
				select {
				case r = <-replies[i]:
				case <-ctx.Done():
					return nil, fmt.Errorf("step %d (%s at t=%d): no reply within the run budget", seq, a, now)
				}
				if r.err != nil {
					return nil, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, now, r.err)
				}
				ob = r.obs
				ob.Start = sent
				if r.phase == model.PhaseCrashed {
					crashed[i] = true
					crashedMask |= 1 << i
				}
				if r.phase >= model.PhaseDone {
					done |= 1 << i
				}
				// safe to read: the client is between steps
				believes = setBit(believes, i, clients[i].believes)
				inside = setBit(inside, i, model.InCriticalSection(clients[i].believes, clients[i].phase))
				waiting = setBit(waiting, i, clients[i].waiting)
				if ob.Notified > 0 {
					waiting = 0 // the notice reached every sleeper: they are awake
				}
				if a.Kind.IsFault() || ob.Skipped || !touchesKey(ob.Took) {
					ob.After, ob.AfterPTTL, ob.Nodes = after, afterPTTL, afterNodes
				} else {
					ob.After, ob.AfterPTTL, err = obs.look(ctx)
					if err != nil {
						return nil, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, now, err)
					}
					ob.Nodes = nodesNow()
					ob.End = clk.since()
				}
			}
		}
		ob.Seq, ob.Believes, ob.Inside, ob.Done, ob.Crashed, ob.Waiting = seq, believes, inside, done, crashedMask, waiting
		after, afterPTTL, afterNodes = ob.After, ob.AfterPTTL, ob.Nodes
		p.late(&ob, clk.offset(now))
		p.Steps = append(p.Steps, ob)
	}
	if pgc != nil {
		if err := pgc.QueryRow(ctx, "SELECT counter FROM orders WHERE id = 42").Scan(&p.Counter); err != nil {
			return nil, fmt.Errorf("final counter: %v", err)
		}
		return p, nil
	}
	v, err := storeAdmin.Get(ctx, CounterKey).Result()
	if err != nil {
		return nil, fmt.Errorf("final GET %s: %v", CounterKey, err)
	}
	p.Counter, err = strconv.Atoi(v)
	if err != nil {
		return nil, fmt.Errorf("final GET %s: %q is not a number", CounterKey, v)
	}
	return p, nil
}

// touchesKey reports whether a step can change the lock key (the others
// leave it as it was, so nobody looks after them: fewer round trips in a
// tick's window).
func touchesKey(k model.ActionKind) bool {
	switch k {
	case model.ActAcquire, model.ActExpire, model.ActRelease, model.ActDel, model.ActRenew:
		return true
	}
	return false
}

func setBit(m uint8, i int, on bool) uint8 {
	if on {
		return m | 1<<i
	}
	return m &^ (1 << i)
}

// late records a step that ended outside its window.
func (p *Play) late(ob *Obs, tickStart time.Duration) {
	into := ob.End - tickStart
	if into > p.Latest {
		p.Latest = into
	}
	if into > p.Window && !p.Late {
		p.Late, p.LateSeq = true, ob.Seq
	}
}

// setup resets the run's keys and loads the scripts, before the clock starts.
func setup(ctx context.Context, lock, store *redis.Client, d *model.Design, sc storageScripts) error {
	if err := lock.Del(ctx, LockKey, FenceKey).Err(); err != nil {
		return fmt.Errorf("reset lock keys on %s: %v", lock.Options().Addr, err)
	}
	if err := lock.Set(ctx, FenceKey, d.FirstToken-1, 0).Err(); err != nil {
		return fmt.Errorf("SET %s: %v", FenceKey, err)
	}
	if err := store.Del(ctx, storageKeys...).Err(); err != nil {
		return fmt.Errorf("reset storage keys: %v", err)
	}
	for _, k := range storageKeys {
		if err := store.Set(ctx, k, 0, 0).Err(); err != nil {
			return fmt.Errorf("SET %s: %v", k, err)
		}
	}
	for _, s := range []*redis.Script{acquireScript, setNXIncrScript, cadScript, renewScript, lookScript,
		acquireNoNXScript, setNoNXIncrScript, cadNoCheckScript, sc.read, sc.write} {
		if err := s.Load(ctx, lock).Err(); err != nil {
			return fmt.Errorf("SCRIPT LOAD: %v", err)
		}
	}
	return nil
}

// viaURL is an etcd client URL through the client's proxy.
func viaURL(h *netHold, endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("etcd endpoint %q: want a URL such as http://127.0.0.1:2379", clipText(endpoint))
	}
	via, err := h.via(u.Host)
	if err != nil {
		return "", err
	}
	u.Host = via
	return u.String(), nil
}
