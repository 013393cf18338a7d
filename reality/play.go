package reality

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

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
	// Client is the lock client the run uses: ClientReference ("" too),
	// a library (see ClientNames and CheckClient), or ClientUser.
	Client string
	// User makes each client's lock for ClientUser (package locktest).
	User UserMaker
	// UserKey is the Redis key a user's client keeps its lock in, when
	// its library names the key itself (rueidislock: prefix:0:name); ""
	// is LockKey. The observer looks there, and the reset deletes it.
	UserKey string
	LockDB  int // database of lock:order-42 and lock:fence
	StoreDB int // database of the counter (must differ from LockDB)

	plant plant // planted bugs, for the tests that test this package
	// px is the TTL the clients send (TTL of the design's ticks, with the
	// planted error): set by PlaySchedule for the world
	px time.Duration
}

// lockKey is the Redis key the run's lock lives in: LockKey, or the user's
// client's own (UserKey).
func (o *Options) lockKey() string {
	if o.UserKey != "" {
		return o.UserKey
	}
	return LockKey
}

// plant holds deliberate bugs that tests switch on to show that a wrong
// reality is caught.
type plant struct {
	ttlTicks int             // added to the TTL the clients send
	storage  *storageScripts // replaces the design's storage checks
	delaySeq int             // the conductor holds this step back …
	delay    time.Duration   // … this long (a machine too slow for the tick)
	noHold   bool            // a pause freezes the caller only, not its library's goroutines
	// crashLives: a crash ends the caller only, and its library's
	// goroutines go on (etcd's session keeps renewing its lease)
	crashLives bool
	// noReplyHold: a delay of an acquire holds nothing (the client hears
	// its reply at once, and acts on it only at the arrive step)
	noReplyHold bool
	// noReleaseHold: a library's held release holds nothing (the request
	// lands at once, and the client hears its reply at the arrive step)
	noReleaseHold bool
	// leakReply: an etcd proxy's hold of an acquire's reply (h2hold.go)
	// lets the reply through at once, while it says it holds it
	leakReply bool
	// lookLate: a tick's look waits this long after the tick's start (a
	// loaded machine), so a client that acts on its own at the tick's start
	// races it
	lookLate time.Duration
	// leakCut: a partition lets the client's requests through to the
	// lock's server (and their replies back)
	leakCut bool
	// noQueue: etcd's queued Mutex played with TryLock, whose waiter
	// deletes its key when it is not the first and polls again: no queue
	noQueue bool
	// rwGet: etcd's RWMutex with the queued Mutex's Get of its own key once
	// its wait ends: a reader or writer whose session expired is told so
	rwGet bool
	// rwAsWriter: etcd's RWMutex with a reader calling Lock, not RLock
	rwAsWriter bool
	// noGate: a user's Redlock Acquire reaches every node at once, not
	// node k at the attempt's step for node k (redlock_user.go)
	noGate bool
	// sidecarHeld: a sidecar's renewals go through a proxy its worker's
	// pauses hold, as if it ran in the worker's process
	sidecarHeld bool
	// zkLost: a lost ZooKeeper create's bugs (zookeeper_lost.go)
	zkLost zkLostPlant
	// sidecarDies: a sidecar stops when its worker crashes, as if it were
	// a thread of the worker's
	sidecarDies bool
	// processValue: a client writes one lock value for all its jobs,
	// whatever the design's value= says
	processValue bool
	// openLinks: a replica design's replication links are never held: the
	// replicas get every write at once, not at their replicate steps
	// (replica.go)
	openLinks bool
	// fixedOrder: a replica that catches up is not moved to the front of
	// the replica set's order, so the model's replica k (the k-th
	// freshest) is another server after a replicate step of replica 2
	fixedOrder bool
	// restartAtOnce: with rejoin=K a failed replica primary rejoins at
	// once, resynced, as with rejoin=0, instead of staying down K ticks
	// (replica.go, retire)
	restartAtOnce bool
	// leakAbandoned: an acquire its caller abandons is not held: it lands
	// at once, and its caller hears the reply
	leakAbandoned bool
	// losslessFailover: a storage failover lets the storage's replica
	// catch up first, so it loses nothing (storage_replica.go)
	losslessFailover bool
	// staleAtPrimary: a stale read is served by the storage's primary,
	// not its lagging replica
	staleAtPrimary bool
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
	Skipped bool // the client took no step (Why says why)
	// Void: the step could not be played as scheduled (a lost release
	// reply that was another request's: the release deleted nothing), so
	// the run is void, as a late one
	Void bool
	// Stuck: the step waited its bound (zkUserBound), far past its window,
	// for an answer that did not come (a user's blocking Acquire that the
	// model's watch had woken): a definite answer, not a late one. A run
	// that parts from the model first at a stuck step is not void for the
	// timing of the steps after it (Compare).
	Stuck bool
	// Held is the request a delay held, or whose held reply arrived: an
	// acquire (its reply held) or a write (0: none)
	Held   model.ActionKind
	Why    string       // why it took none: its job is over, it still sleeps
	Result model.Result // the reply, in the model's words
	Value  int          // value read or written; a release's GET: holder+1 (0: no key)
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
	// Forgot: live clients back at their first acquire with no belief
	// and no request of theirs on its way, after the step: a key of
	// theirs is one they do not know of (the model's forgotten)
	Forgot uint8
	// Kept: the key's holder has crashed and its sidecar renewer
	// (watchdog=sidecar), alive and in reach of the server, goes on
	// renewing the key at its beat: it never expires (the model's key
	// without expiry), as the ticks' looks show
	Kept bool
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
	if d.Lock == model.LockEtcdMutex && tick != EtcdTick {
		return fmt.Errorf("tick %v: lock=etcd-mutex wants %v (its sessions' 5s leases are kept alive every 2.0s, one a tick, only on %v ticks)", tick, EtcdTick, EtcdTick)
	}
	if d.Lock == model.LockEtcd && tick%EtcdTick != 0 {
		return fmt.Errorf("tick %v: etcd designs want a multiple of %v (leases are whole seconds and expire up to half a second late)", tick, EtcdTick)
	}
	return nil
}

// DefaultTickFor is the default tick of a design's real runs.
func DefaultTickFor(d *model.Design) time.Duration {
	if etcdDesign(d) {
		return EtcdTick
	}
	return DefaultTick
}

// etcdDesign reports whether design d locks in etcd (a lease and a
// put-if-absent, or the queued Mutex).
func etcdDesign(d *model.Design) bool {
	return d.Lock == model.LockEtcd || d.Lock == model.LockEtcdMutex
}

// window is how far into its tick a request may be answered.
func window(d *model.Design, tick time.Duration) time.Duration {
	if etcdDesign(d) {
		return tick/2 - etcdLag
	}
	if model.SameDatabase(d) || d.Lock == model.LockZooKeeper {
		// PostgreSQL ends an idle session or transaction from a timer of
		// its backend, and ZooKeeper expires a session from its session
		// tracker's, half a tick short of the TTL after the client was
		// last heard: a request answered late in its tick leaves the
		// timer little time before the next tick's look, and a loaded
		// machine runs the timer late (a CI run saw a statement answered
		// 77ms into a 200ms tick, and the kill still pending 23ms later).
		// A quarter of a tick leaves it a quarter at least.
		return tick / 4
	}
	return tick/2 - 2*time.Millisecond
}

// playable reports whether the design can be played for real: one Redis
// node with every acquire, release, fence, storage, check, wait and renewal
// choice (fence-check=two-step too: the token check and the write are two
// scripts, scripts.go; a sidecar renewer too: keyLock.sidecar) and
// lock-node crashes and restarts; a primary and its replicas with
// replicate and failover steps (replica.go); Redlock on N nodes
// (redlock.go); an etcd lease lock; ZooKeeper (zookeeper.go); a PostgreSQL
// row lock (postgres.go); with the client faults (pause, slow, crash,
// delay), partitions from one Redis node (partitionPlayed), and storage
// failovers and stale reads on a storage primary and replica of the
// run's own (storage_replica.go; with storage-loses=fence the pair holds
// only the fencing state, apart from the counter's row); a
// failed acquire attempt's release held past the timeout on one Redis
// node (attemptReleasePlayed, value=job or acquire); lost releases on one
// Redis node (lostReleasePlayed) and ZooKeeper creates lost on their way
// or their replies (lostCreatePlayed). Clock jumps, other partitions, other lost replies
// and client clock jumps are not played. Playable (playable.go) turns its
// refusal into a NotPlayable.
func playable(d *model.Design) error {
	if why := model.Service(d.Lock).Unplayed; why != "" { // the service's row says (model/lock_*.go)
		return fmt.Errorf("design %s: lock %s is not played for real: %s", d.Name(), d.Lock, why)
	}
	if d.Lock == model.LockDB {
		if err := dbOK(d); err != nil {
			return err
		}
	}
	if d.Lock == model.LockAdvisory {
		if err := advisoryOK(d); err != nil {
			return err
		}
	}
	if d.Lock == model.LockZooKeeper {
		if err := zkOK(d); err != nil {
			return err
		}
	}
	if d.Lock == model.LockEtcdMutex {
		if err := etcdQueueOK(d); err != nil {
			return err
		}
	}
	for _, f := range model.Faults() { // the fault table says which faults are played
		if f == model.FaultLoss && (lostReleasePlayed(d) || lostCreatePlayed(d)) || f == model.FaultPartition && partitionPlayed(d) {
			continue
		}
		if why := f.Unplayed(); why != "" && f.Budget(d) > 0 {
			return fmt.Errorf("design %s: %s; set %s=0", d.Name(), why, f.Param())
		}
	}
	if d.Lock == model.LockReplica {
		if err := replicaOK(d); err != nil {
			return err
		}
	}
	if d.Lock == model.LockRedlock && (d.Release != model.ReleaseCAD || d.Wait != model.WaitPoll || d.Check != model.CheckTrust || d.Bug != model.BugNone || d.RenewTicks > 0) {
		return fmt.Errorf("design %s: Redlock is played for real with release=cad, wait=poll, check=trust, renew=0 and no planted bug", d.Name())
	}
	if d.Watchdog == model.WatchdogSidecar && d.Lock != model.LockRedis {
		return fmt.Errorf("design %s: a sidecar renewer (watchdog=sidecar) is played for real on one Redis node only (lock=redis); set watchdog=worker", d.Name())
	}
	if d.Reenter != model.ReenterNone {
		return fmt.Errorf("design %s: nested acquires (reenter=%s) are not played for real yet; set reenter=none", d.Name(), d.Reenter)
	}
	if d.TimeoutTicks > 0 && !lostReleasePlayed(d) && !lostCreatePlayed(d) && !resendPlayed(d) && !abandonPlayed(d) && !attemptReleasePlayed(d) {
		return fmt.Errorf("design %s: resends after a timeout are not played for real yet (but a release to one Redis node lost on the way, lose=request, lose-at=release, or held past the timeout, delay-at=release, or a failed attempt's, check=acquire, delay-at=acquire, and a ZooKeeper create lost on its way or its reply, lose-at=acquire); set timeout=0", d.Name())
	}
	if d.Jobs > 1 && d.Lock != model.LockRedis {
		return fmt.Errorf("design %s: repeated jobs are played for real on one Redis node only (lock=redis); set jobs=1", d.Name())
	}
	if d.LockDelayTicks > 0 {
		return fmt.Errorf("design %s: lock-delay is a lock-server feature (Chubby) that Redis and etcd do not have; set lock-delay=0", d.Name())
	}
	if d.FsyncTicks > 0 {
		return fmt.Errorf("design %s: appendfsync everysec (fsync=%d) is not played for real: it loses the writes since the last fsync only when the machine itself crashes, and a killed redis-server loses nothing in the page cache; set fsync=0", d.Name(), d.FsyncTicks)
	}
	return nil
}

// partitionPlayed reports whether the design's partitions are played for
// real: a client cut off from one Redis node (lock=redis,
// partition=service), whose proxy to it drops every byte either way for
// the partition's ticks (client.partition).
func partitionPlayed(d *model.Design) bool {
	return d.Lock == model.LockRedis && d.Partition == model.PartitionService
}

// lostReleasePlayed reports whether the design's lost requests or replies
// are played for real: releases to one Redis node (lock=redis,
// lose-at=release, no held requests) whose request the client's proxy
// drops (lose=request, client.loseRequest) or whose reply it drops once
// the release is applied (lose=reply, client.loseReply); the client
// resends after its timeout or forgets (release-fail).
func lostReleasePlayed(d *model.Design) bool {
	return d.Losses > 0 && d.LoseAt == model.PlaceRelease && d.Lock == model.LockRedis &&
		d.Release != model.ReleaseGetDel && d.Delays == 0
}

// resendPlayed reports whether the design's resends after a timeout are
// played for real: releases to one Redis node (lock=redis,
// delay-at=release, release=cad or del, no lost requests or abandoned
// acquires) held in the network past the timeout, sent again, whose first
// copy lands later (client.delayRelease, client.strayArrive).
func resendPlayed(d *model.Design) bool {
	return d.Lock == model.LockRedis && d.Delays > 0 && d.DelayAt == model.PlaceRelease && d.Release != model.ReleaseGetDel &&
		d.Losses == 0 && d.Abandon == model.AbandonNone
}

// abandonPlayed reports whether the design's abandoned acquires are played
// for real: one Redis node (lock=redis, abandon=retry|fail,
// delay-at=acquire, one job, no lost requests), whose acquire held past
// the timeout waits in the gate of the client's proxy while its caller
// gives up, and lands at its arrive step (client.abandonAcquire).
func abandonPlayed(d *model.Design) bool {
	return d.Lock == model.LockRedis && d.Abandon != model.AbandonNone && d.DelayAt == model.PlaceAcquire && d.Jobs == 1 && d.Losses == 0
}

// attemptReleasePlayed reports whether the design's failed acquire
// attempts' releases (model/jobs.go, attemptRelease: check=acquire,
// delays >= 2, a timeout) are played for real: at delay-at=acquire (any
// would hold writes past the timeout too), on one Redis node
// (lock=redis, release=cad or del, one job, no lost requests or
// abandoned acquires). The acquire's reply is held in the client's proxy
// (holdAcquire); the attempt's release, held past the timeout, is sent
// into the gate of a proxy of its own under its caller's deadline,
// resent on the lock's connection once that passes, and lands at its
// arrive step with the failed attempt's value (client.delayRelease,
// client.lateRelease).
func attemptReleasePlayed(d *model.Design) bool {
	return d.Lock == model.LockRedis && d.Check == model.CheckAcquire && d.Delays >= 2 && d.TimeoutTicks > 0 &&
		d.DelayAt == model.PlaceAcquire && d.Release != model.ReleaseGetDel &&
		d.Jobs == 1 && d.Losses == 0 && d.Abandon == model.AbandonNone
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
	if ob.Stuck {
		return
	}
	into := ob.End - tickStart
	if into > p.Latest {
		p.Latest = into
	}
	if into > p.Window && !p.Late {
		p.Late, p.LateSeq = true, ob.Seq
	}
}

// setup resets the run's keys and loads the scripts, before the clock starts.
// Connections of an earlier run on either database are waited for (or
// killed) first: drainEarlier.
func setup(ctx context.Context, lock, store *redis.Client, d *model.Design, sc storageScripts, key string) error {
	own, err := clientIDs(ctx, lock, store)
	if err != nil {
		return err
	}
	if err := drainEarlier(ctx, lock, own); err != nil {
		return err
	}
	if lo, so := lock.Options(), store.Options(); lo.Addr != so.Addr || lo.DB != so.DB {
		if err := drainEarlier(ctx, store, own); err != nil {
			return err
		}
	}
	if err := lock.Del(ctx, key, FenceKey).Err(); err != nil {
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
	scripts := []*redis.Script{acquireScript, setNXIncrScript, cadScript, renewScript, renewSetNXScript, lookScript,
		acquireNoNXScript, setNoNXIncrScript, cadNoCheckScript, sc.read, sc.write}
	if sc.apply != nil {
		scripts = append(scripts, sc.apply)
	}
	for _, s := range scripts {
		if err := s.Load(ctx, lock).Err(); err != nil {
			return fmt.Errorf("SCRIPT LOAD: %v", err)
		}
	}
	return nil
}

// viaURL is an etcd client URL through the client's proxy, an HTTP/2
// one whose hold of replies holds a transaction's (the acquire's).
func viaURL(h *netHold, endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("etcd endpoint %q: want a URL such as http://127.0.0.1:2379", clipText(endpoint))
	}
	via, err := h.viaH2(u.Host, etcdTxnPath)
	if err != nil {
		return "", err
	}
	u.Host = via
	return u.String(), nil
}
