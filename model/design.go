package model

import (
	"fmt"
	"strconv"
	"strings"

	"lockcheck/internal/didyoumean"
)

// LockKind is the lock service a design uses. New services (replica with
// failover, Redlock, etcd, ZooKeeper, a database row lock) are new values
// here; the state already has room for several lock nodes (State.Nodes).
type LockKind uint8

const (
	// LockRedis is one Redis node: SET NX PX, keys expire by TTL.
	LockRedis LockKind = iota
	// LockReplica is a Redis primary (node 1) with an asynchronously
	// replicated replica (node 2); a failover promotes the replica, losing
	// what it had not received (the fence counter too).
	LockReplica
	// LockRedlock is Redlock over N independent Redis nodes: a client asks
	// each, counts a quorum, and acts only if the validity left
	// (TTL − elapsed − drift) is positive.
	LockRedlock
	// LockEtcd is an etcd lease with TTL (kept alive by renew=k), the lock
	// key put in a transaction if absent; the key's create_revision is the
	// fencing token. The cluster itself does not fail.
	LockEtcd
	// LockZooKeeper is an ephemeral sequential node; the lowest sequence
	// holds the lock, the next waits on a watch; a paused client's session
	// expires after session ticks and its node vanishes. The sequence number
	// is the fencing token.
	LockZooKeeper
	// LockDB is a database row lock (SELECT … FOR UPDATE) with the counter in
	// the same database; the server kills a session idle for ttl ticks.
	LockDB
	// LockEtcdMutex is etcd's queued Mutex (client/v3/concurrency): each
	// client's key, under its session's lease, queued by create revision;
	// a waiter waits for its predecessor's delete. lock_etcd_mutex.go.
	LockEtcdMutex
	// LockLease is Kubernetes Lease leader election (client-go's
	// leaderelection): no server TTL, expiry judged by each candidate's
	// clock, every update a compare-and-swap. lock_lease.go.
	LockLease
	// LockAdvisory is a PostgreSQL advisory lock, session-level or
	// transaction-level, optionally behind a transaction-pooling PgBouncer.
	// lock_advisory.go.
	LockAdvisory
	// LockConsul is a Consul session lock (api.Lock): a key acquired with
	// a session whose TTL the server doubles, released or deleted when the
	// session is invalidated, with a lock-delay. lock_consul.go.
	LockConsul
	numLockKinds
)

// AcquireMode is how a client takes the lock and gets its fencing token.
type AcquireMode uint8

const (
	// AcquireScript: SET NX PX and INCR lock:fence in one Lua script.
	AcquireScript AcquireMode = iota
	// AcquireIncrBefore: INCR lock:fence once, then poll SET NX PX.
	AcquireIncrBefore
	// AcquireIncrAfter: poll SET NX PX, then INCR lock:fence as a second request.
	AcquireIncrAfter
	// AcquireSetExpire: SET NX (with INCR in the same MULTI) and then EXPIRE as a
	// second request; a crash between the two leaves a key that never expires.
	AcquireSetExpire
	numAcquireModes
)

// ReleaseMode is how a client gives the lock back.
type ReleaseMode uint8

const (
	// ReleaseDel is a plain DEL: it removes the key whoever holds it.
	ReleaseDel ReleaseMode = iota
	// ReleaseGetDel is GET, then DEL if the value was ours: two requests.
	ReleaseGetDel
	// ReleaseCAD is the atomic check-and-delete Lua script.
	ReleaseCAD
	numReleaseModes
)

// FenceMode says which storage requests carry the client's fencing token.
type FenceMode uint8

const (
	// FenceNone: no token is sent (and none is taken).
	FenceNone FenceMode = iota
	// FenceWrite: the token goes with writes.
	FenceWrite
	// FenceRW: the token goes with reads and writes.
	FenceRW
	numFenceModes
)

// StorageMode is what the storage holding the counter checks.
type StorageMode uint8

const (
	// StoragePlain accepts every request.
	StoragePlain StorageMode = iota
	// StorageMaxToken refuses a token below the highest seen and records every
	// token it sees, reads included.
	StorageMaxToken
	// StorageMaxWrite refuses a token below the highest seen but records only
	// the tokens of accepted writes.
	StorageMaxWrite
	// StorageCondUpdate is UPDATE … SET v, last_token = t WHERE last_token < t:
	// writes need a strictly greater token; reads are plain SELECTs.
	StorageCondUpdate
	// StorageCAS is a compare-and-set on a version column: a write is accepted
	// only if the version is still the one the client read. No token needed.
	StorageCAS
	numStorageModes
)

// ClockMode says when time may move.
type ClockMode uint8

const (
	// ClockUrgent: a tick happens only when no client can take a step now;
	// clients act as soon as they can, and only faults delay them.
	ClockUrgent ClockMode = iota
	// ClockFree: a tick may happen at any time, so any client may be late by
	// any amount without a fault (the semantics of the SPIN baseline).
	ClockFree
	numClockModes
)

// Bug is a planted bug: a deliberate mistake in the model's rules, used to
// test the testers (a suite that passes with a bug planted is not testing).
type Bug uint8

const (
	BugNone         Bug = iota
	BugSetWithoutNX     // SET without NX: acquire overwrites a held key
	BugCADNoCheck       // check-and-delete deletes without comparing the value
	BugNoTokenCheck     // token-checking storage records tokens but never refuses
	BugReadNoRecord     // max-token storage forgets the tokens of reads
	BugExpireEarly      // keys live one tick less than their TTL (an off-by-one in expiry)
	numBugs
)

// Quorum is how many Redlock nodes a client must win.
type Quorum uint8

const (
	QuorumMajority Quorum = iota // N/2+1 nodes
	QuorumAll                    // every node
	numQuorums
)

// CheckMode says whether a client checks its lock's remaining validity
// before each storage access.
type CheckMode uint8

const (
	// CheckTrust: the client trusts the acquire reply until it releases.
	CheckTrust CheckMode = iota
	// CheckValidity: before each read and write, a separate step checks that
	// TTL − (now − request time) − drift > 0, and gives the job up if not. A
	// pause can still fall between the check and the access.
	CheckValidity
	// CheckAcquire: the validity is checked once, when the acquire's reply
	// comes back, measured from the send: TTL − (reply time − send time) −
	// drift (redsync's Mutex.lockContext: until = now + expiry −
	// now.Sub(start) − drift; the lock is taken only if now.Before(until)).
	// With none left the client deletes its key (check-and-delete, as
	// lockContext releases every pool) and tries again next tick; once it
	// holds the lock it trusts it until the release.
	CheckAcquire
	numCheckModes
)

// WaitMode is how a refused client waits for the lock.
type WaitMode uint8

const (
	WaitPoll   WaitMode = iota // retry SET NX every tick
	WaitNotify                 // sleep until a release publishes a notice (pub/sub); expiry publishes nothing
	numWaitModes
)

// TxMode is where a database row lock's work runs.
type TxMode uint8

const (
	// TxInside: read, write and unlock in the lock's own transaction; the
	// write takes effect at COMMIT, which fails if the session was killed.
	TxInside TxMode = iota
	// TxOutside: the row lock's session only holds the lock; the work reads
	// and writes through another connection.
	TxOutside
	numTxModes
)

// ReenterMode is whether a job takes the lock a second time, nested, right
// before its write (a function holding the lock calls another that takes it).
type ReenterMode uint8

const (
	ReenterNone  ReenterMode = iota // no nested acquire
	ReenterNX                       // the nested acquire is a plain SET NX: it blocks on its own key
	ReenterOwner                    // a reentrant lock: the nested acquire succeeds for the key's owner
	numReenterModes
)

// PartitionMode is what a partition cuts a client off from.
type PartitionMode uint8

const (
	PartitionService  PartitionMode = iota // every lock node (redis, replica, etcd, zookeeper, db, redlock)
	PartitionNode                          // one lock node, "A partition K" (redlock)
	PartitionMinority                      // a minority of lock nodes, K … K+m−1 round the ring (redlock)
	PartitionStorage                       // the storage that holds the counter
	PartitionPrimary                       // replica: the client and the primary, cut off from the replica's side (split brain)
	numPartitionModes
)

// CounterMode is where the fencing token comes from.
type CounterMode uint8

const (
	// CounterService: the lock service's own counter (INCR lock:fence, etcd's
	// revision, ZooKeeper's sequence); Redlock and a db row lock have none.
	CounterService CounterMode = iota
	// CounterExternal: a separate single Redis node whose INCR fence the
	// client sends after it has won the lock (redlock, db), with its own
	// crashes (counter-crashes: it restarts empty).
	CounterExternal
	numCounterModes
)

// WatchdogMode is where the lock's renewal runs (renew=k).
type WatchdogMode uint8

const (
	// WatchdogWorker: renewal runs in the worker; it stops when the worker does.
	WatchdogWorker WatchdogMode = iota
	// WatchdogThread: renewal runs in a thread of its own that keeps
	// renewing while the worker is stuck (a hang): the lock is then never
	// freed. A pause (GC, VM) still freezes the whole process.
	WatchdogThread
	// WatchdogSidecar: renewal runs in another process beside the worker (a
	// sidecar container, a node agent) that renews the worker's lock until
	// the worker releases it, watching nothing else: through the worker's
	// pauses (the lock outlives them), and for ever after it crashes or
	// hangs holding the lock. fault_client.go.
	WatchdogSidecar
	// WatchdogSession: renewal is the keep-alive of the client's session
	// (etcd's concurrency.Session): a thread of its own, as with thread,
	// whose lease the key is put with, so it renews the key from the
	// acquire on, also while the acquire's reply is held in the network
	// and the client does not yet know the key is its own. lock=etcd only.
	WatchdogSession
	numWatchdogModes
)

// ExtendMode is what the watchdog's renewal does when the lock's key is
// not its own any more (renew=k).
type ExtendMode uint8

const (
	// ExtendCheck: PEXPIRE only if the key holds the client's value, else
	// the renewal fails (redsync's touchScript, Mutex.touch).
	ExtendCheck ExtendMode = iota
	// ExtendSetNX: as ExtendCheck, but a missing key is set again, SET NX
	// PX with the client's value, and the renewal succeeds (redsync's
	// WithSetNXOnExtend: touchWithSetNXScript in Mutex.touch). A key that
	// expired while its holder was paused comes back as its own.
	ExtendSetNX
	numExtendModes
)

// RenewFailMode is what the worker does when its renewal fails (renew=k).
type RenewFailMode uint8

const (
	// RenewFailIgnore: the worker goes on with its job (a watchdog whose
	// result nobody reads).
	RenewFailIgnore RenewFailMode = iota
	// RenewFailStop: the worker is told (a cancelled context) and gives
	// its job up before its next read or write, and its watchdog stops; a
	// request already sent still arrives.
	RenewFailStop
	numRenewFailModes
)

// LoseMode is what a lost request loses (losses=N).
type LoseMode uint8

const (
	// LoseReply: the request is applied and its reply is lost (default).
	LoseReply LoseMode = iota
	// LoseRequest: the request itself is lost before it reaches the
	// server (the connection dropped it): nothing is applied, and the
	// client, which sees no reply either, cannot tell the two apart.
	LoseRequest
	numLoseModes
)

// ReleaseFailMode is what a client does when its release gets no answer
// (a lost request or reply, losses=N).
type ReleaseFailMode uint8

const (
	// ReleaseFailRetry: it sends its release again after the timeout, as
	// every request that got no answer (default).
	ReleaseFailRetry ReleaseFailMode = iota
	// ReleaseFailForget: it takes the failed release as done: it clears
	// its local state (its lock value, its belief) and its job is over. A
	// release that was not applied (lose=request) leaves its lock held by
	// nobody who knows it, until the key's TTL, or for ever where nothing
	// ends it (a ZooKeeper session that lives on).
	ReleaseFailForget
	numReleaseFailModes
)

// StorageLoss is what a storage failover loses (storage-failovers=1).
type StorageLoss uint8

const (
	// LossUnsynced: the promoted replica has what it had received: the
	// accepted writes and the highest token it had not yet been sent are
	// both gone (asynchronous replication of the whole row).
	LossUnsynced StorageLoss = iota
	// LossFence: the counter's row is replicated synchronously and
	// survives; only a fencing state kept apart from the row (max-token
	// and max-write's highest token: a check in a proxy, a side table) is
	// replicated asynchronously, and its last updates are lost.
	// cond-update's last_token and cas's version are in the row.
	LossFence
	numStorageLosses
)

// FenceCheck is how a token-checking storage (max-token, max-write)
// applies its fencing check to a write (storage.go).
type FenceCheck uint8

const (
	// FenceCheckAtomic: the token is checked and the counter written in
	// one step (a Lua script, one UPDATE … WHERE): nothing lands between.
	FenceCheckAtomic FenceCheck = iota
	// FenceCheckTwoStep: the check (SELECT max_token, compare, record the
	// token) is one request and the write a second, unconditional one
	// (PhaseApply, ActApply): another client's write can land between
	// them, and a holder paused there writes on a check it passed before.
	FenceCheckTwoStep
	numFenceChecks
)

// WatchdogStop is when the watchdog is stopped at the release (renew=k).
type WatchdogStop uint8

const (
	// StopBeforeUnlock: the watchdog is stopped before the unlock is sent:
	// no renewal follows the release.
	StopBeforeUnlock WatchdogStop = iota
	// StopAfterUnlock: the watchdog is stopped after the unlock, so a
	// renewal due at the release may still run after it (a timer that
	// fired, a renewal already on its way): it finds the key released, or
	// another client's, or (extend=setnx) sets the released key again.
	StopAfterUnlock
	numWatchdogStops
)

// ValueMode is what a client writes into the lock key: a value of its own
// for each job (a fresh random value per acquire: redsync, redislock), or
// one value for the whole process (Redisson's UUID:threadId, a hostname
// and pid), so that a late release of one job matches the next job's lock.
type ValueMode uint8

const (
	// ValueJob: each job writes a value of its own (default).
	ValueJob ValueMode = iota
	// ValueProcess: every job of a client writes the same value; a
	// restarted client is a new process with a new value.
	ValueProcess
	// ValueAcquire: each acquire attempt writes a value of its own (the
	// attempt's number, or its fencing token, in the value), so that the
	// late release of a failed attempt (check=acquire) leaves the retry's
	// lock alone. redsync's Mutex.lockContext draws one value per Lock
	// call (genValueFunc before its retry loop) and releases a failed
	// attempt with it: that is ValueJob.
	ValueAcquire
	numValueModes
)

// AckMode is whether a replica design's acquire waits for the replica
// (Redis WAIT) before it returns.
type AckMode uint8

const (
	// AckAsync: the acquire returns once the primary has the key; the
	// replica gets it whenever replication runs.
	AckAsync AckMode = iota
	// AckWait: after the acquire's writes, WAIT acks T: the acquire returns
	// once acks= replicas have them, or after T ticks (ack-timeout; 0: never
	// gives up). As in Redis, WAIT only reports: a timed-out WAIT neither
	// fails nor rolls back the SET, and the client goes on with the lock.
	AckWait
	numAckModes
)

// PromoteMode is which replica a replica design's failover promotes.
type PromoteMode uint8

const (
	// PromoteFreshest: the replica with the highest replication offset
	// (replica 1), as Sentinel's sentinelSelectReplica sorts them when
	// their replica-priority is equal.
	PromoteFreshest PromoteMode = iota
	// PromoteAny: any replica: a replica-priority that prefers another,
	// or the freshest one left out (down, disconnected, its INFO stale).
	PromoteAny
	numPromoteModes
)

// AbandonMode is what a caller does with an acquire that is held in the
// network past its timeout (a context deadline, an interrupt).
type AbandonMode uint8

const (
	// AbandonNone: the caller waits; an acquire's reply is held at most
	// the timeout (held longer, it is a lost reply: losses).
	AbandonNone AbandonMode = iota
	// AbandonRetry: at the timeout the caller abandons the request and
	// sends SET NX again, while the first request is still on its way: it
	// lands later and may take the key for a client that does not know it.
	AbandonRetry
	// AbandonFail: at the timeout the caller gives the job up and goes on
	// without the lock; the request lands later and may take the key for
	// nobody who believes it holds it: an orphan until the TTL, or for
	// ever without one.
	AbandonFail
	numAbandonModes
)

// Place restricts where a fault may fall: right before the client's next
// step of that kind (PlaceAny: anywhere).
type Place uint8

const (
	PlaceAny Place = iota
	PlaceAcquire
	PlaceIncr
	PlaceExpire
	PlaceCheck
	PlaceRead
	PlaceWrite
	PlaceRelease
	PlaceDel
	numPlaces
)

// placeKinds is the client step each place names.
var placeKinds = [numPlaces]ActionKind{PlaceAcquire: ActAcquire, PlaceIncr: ActIncr, PlaceExpire: ActExpire, PlaceCheck: ActCheck,
	PlaceRead: ActRead, PlaceWrite: ActWrite, PlaceRelease: ActRelease, PlaceDel: ActDel}

// Limits on a design's numbers. Ticks are stored in a byte, so the horizon
// plus the longest wait must stay below 256.
const (
	MaxClients      = 8
	MaxNodes        = 5
	MaxHorizonTicks = 120
	MaxWaitTicks    = 60
	MaxJobs         = 8
)

// Design is one choice on each axis, plus the numbers and the fault budget.
type Design struct {
	Lock     LockKind
	Acquire  AcquireMode
	Release  ReleaseMode
	Fence    FenceMode
	Storage  StorageMode
	Clock    ClockMode
	Quorum   Quorum       // redlock
	Check    CheckMode    // every lock
	Wait     WaitMode     // redis, replica
	Tx       TxMode       // db
	Reenter  ReenterMode  // redis, replica
	Counter  CounterMode  // redlock, db: where the fencing token comes from
	Watchdog WatchdogMode // renew=k: where the renewal runs
	// renew=k: what a renewal does with a missing key, what the worker
	// does when one fails, when the watchdog stops at the release
	Extend       ExtendMode
	RenewFail    RenewFailMode
	WatchdogStop WatchdogStop
	Value        ValueMode // jobs=N: a lock value per job or per process
	// losses=N: what a lost request loses, and what a client whose
	// release got no answer does
	Lose        LoseMode
	ReleaseFail ReleaseFailMode
	Ack         AckMode     // replica: WAIT for the replica before the acquire returns
	Promote     PromoteMode // replica: which replica a failover promotes
	// storage-failovers=1: what the promoted storage replica lacks
	StorageLoses StorageLoss
	// max-token, max-write: the token check and the write in one step or two
	FenceCheck FenceCheck
	// etcd-mutex: what Lock does once its predecessors are deleted
	SessionCheck SessionCheck
	// lease: the lease duration a candidate judges expiry by
	Duration LeaseDuration
	// advisory: session- or transaction-level, and the pool in between
	Level AdvisoryLevel
	Pool  PoolMode
	End   SessionEnd
	// zookeeper: whether a lost create's node is found again
	Protect Protect
	// consul: what an invalidated session does to its key, and which
	// index of the key is the token
	Behavior ConsulBehavior
	Index    ConsulIndex
	Bug      Bug // a planted bug (testing the testers); BugNone in real designs

	Partition PartitionMode // what a partition cuts a client off from
	PauseAt   Place         // where a pause may fall
	DelayAt   Place         // which request a network delay may hold
	LoseAt    Place         // which request's reply may be lost
	CrashAt   Place         // where a client crash may fall
	Abandon   AbandonMode   // redis, replica: an acquire held past the timeout is abandoned by its caller
	NodeAt    Place         // where a lock-node fault may fall: at the key holder's next step of this kind

	TTLTicks      int // a key set at t exists at t .. t+TTL-1
	WorkTicks     int // ticks between a client's read and its write
	Clients       int // clients A, B, C, …, each running Jobs jobs one after another
	HorizonTicks  int // the last tick; time never passes it
	FirstToken    int // the first fencing token INCR hands out
	Pauses        int // fault budget: pauses in one run
	MaxPauseTicks int // the longest pause
	SlowJobs      int // fault budget: jobs whose work takes SlowWorkTicks
	SlowWorkTicks int // work ticks of a slow job
	Crashes       int // fault budget: clients that crash for good
	Restarts      int // fault budget: clients that crash and restart at once, running the crashed job again

	Nodes         int // redlock: independent Redis nodes
	DriftTicks    int // redlock / check=validity: clock drift allowance subtracted from validity
	Failovers     int // replica: fault budget of failovers
	RejoinTicks   int // replica: ticks a failed primary stays down before it rejoins as a replica (0: at once)
	NodeCrashes   int // fault budget: lock-node crashes (redis, redlock)
	RestartTicks  int // a crashed node comes back after this many ticks (0: at once)
	Persist       int // 1: a crashed node keeps its keys (AOF fsync always); 0: it loses them
	FsyncTicks    int // persist=1: the append-only file is fsynced every N ticks (1: everysec); 0: every write (always)
	ClockJumps    int // fault budget: a lock node's clock jumps forward (redis, replica, redlock)
	JumpTicks     int // how far a clock jumps
	RenewTicks    int // watchdog / keep-alive: extend the TTL every k ticks (0: no renewal)
	SessionTicks  int // zookeeper: session timeout
	Delays        int // fault budget: a request held in the network
	MaxDelayTicks int // the longest such delay

	Partitions      int // fault budget: partitions (a client cut off for PartitionTicks)
	PartitionTicks  int // how long a partition lasts
	Losses          int // fault budget: requests applied whose reply is lost
	TimeoutTicks    int // ticks a client waits for a reply before it resends the request (0: for ever)
	ClientJumps     int // fault budget: jumps of a client's own clock
	ClientJumpTicks int // how far a client's clock jumps (negative: back, so it thinks less time passed)

	Hangs            int // fault budget: workers that hang for good (their watchdog thread, if any, goes on)
	LockDelayTicks   int // Chubby's lock-delay: after a holder's key expires, nobody may take it for this many ticks
	StorageFailovers int // fault budget: the storage fails over to its lagging replica
	StaleReads       int // fault budget: reads served by the storage's lagging replica
	CounterCrashes   int // fault budget: the external fencing counter restarts empty (counter=external)
	Jobs             int // jobs each client runs, one after another (each one increment)
	AckTimeoutTicks  int // ack=wait: WAIT's timeout in ticks, counted from the acquire (0: wait for ever)

	RenewDeadlineTicks int // lease: the leader gives up if it cannot renew within this, by its own clock
	LeaseBTicks        int // lease: candidate B's own lease duration (0: ttl, as the others)
	RateB              int // lease: candidate B's clock rate, percent of real time
	DeadlineBTicks     int // lease: candidate B's own renew deadline (0: deadline, as the others)

	FaultNode int // the lock node the node faults fall on, 1 … (0: any)
	Replicas  int // replica: the primary's replicas (nodes 1 … Replicas, ranked by how fresh their copy is)
	Acks      int // ack=wait: the replicas WAIT waits for (WAIT Acks T)
	Bypass    int // fairness: the most later requesters a waiting client may see served first (NoBypass: not measured; fairness.go)
	Readers   int // etcd-mutex: clients A … Readers take read locks (etcd's recipe.RWMutex); 0: every client takes the Mutex
}

// axis describes one path segment or parameter that takes a word.
type axis struct {
	name   string
	values []string
	docs   []string
}

var (
	lockAxis = axis{"lock", []string{"redis", "replica", "redlock", "etcd", "zookeeper", "db", "etcd-mutex", "lease", "advisory", "consul"}, []string{
		"one Redis node: SET NX PX, the key expires after the TTL",
		"Redis primary + asynchronous replica; failover promotes the replica",
		"Redlock over N independent Redis nodes, quorum within the validity time",
		"etcd lease (keep-alive: renew=k) + transaction; create_revision is the token",
		"ZooKeeper ephemeral sequential node, session timeout; sequence is the token",
		"database row lock (SELECT … FOR UPDATE); idle sessions killed after ttl",
		"etcd's queued Mutex (concurrency.Mutex): keys queued by create revision, each under its session's lease",
		"Kubernetes Lease leader election (client-go): expiry judged on each candidate's clock, CAS updates, renew=k is the retry period",
		"PostgreSQL advisory lock (pg_try_advisory_lock or pg_advisory_xact_lock); idle sessions ended after ttl; pool= puts PgBouncer in between",
		"Consul session lock (api.Lock): acquire with a session of TTL ttl, invalidated 2 × ttl after its last renewal (renew=k), then a lock-delay; model only",
	}}
	quorumAxis = axis{"quorum", []string{"majority", "all"}, []string{
		"redlock: win N/2+1 nodes (default)",
		"redlock: win every node",
	}}
	checkAxis = axis{"check", []string{"trust", "validity", "acquire"}, []string{
		"trust the acquire reply until release (default)",
		"check the remaining validity before each read and write (a separate step)",
		"check the validity once, when the acquire's reply comes, measured from its send (redsync): none left, it deletes its key and retries",
	}}
	extendAxis = axis{"extend", []string{"check", "setnx"}, []string{
		"renew=k: a renewal extends the key only if it is the client's own; else it fails (default; redsync)",
		"renew=k: a renewal sets a missing key again (SET NX PX) and reports success (redsync WithSetNXOnExtend)",
	}}
	renewFailAxis = axis{"renew-fail", []string{"ignore", "stop"}, []string{
		"renew=k: the worker goes on after a failed renewal (default)",
		"renew=k: a failed renewal stops the worker before its next read or write (and its watchdog)",
	}}
	watchdogStopAxis = axis{"watchdog-stop", []string{"before-unlock", "after-unlock"}, []string{
		"renew=k: the watchdog stops before the unlock (default)",
		"renew=k: the watchdog stops after the unlock: a renewal due at the release may run after it",
	}}
	loseAxis = axis{"lose", []string{"reply", "request"}, []string{
		"losses=N: the request is applied, its reply lost (default)",
		"losses=N: the request is lost before it reaches the server (the connection dropped it): nothing is applied",
	}}
	releaseFailAxis = axis{"release-fail", []string{"retry", "forget"}, []string{
		"losses=N: a release that got no answer is sent again after the timeout (default)",
		"losses=N: a release that got no answer is taken as done: the client clears its lock and ends its job, and a lost request leaves the lock held by nobody who knows it",
	}}
	waitAxis = axis{"wait", []string{"poll", "notify"}, []string{
		"retry SET NX every tick (default)",
		"sleep until a release publishes a notice (pub/sub); expiry publishes nothing",
	}}
	reenterAxis = axis{"reenter", []string{"none", "nx", "owner"}, []string{
		"no nested acquire (default)",
		"a nested acquire before the write, by plain SET NX: it waits on its own key",
		"a nested acquire before the write, on a reentrant lock that knows its owner",
	}}
	txAxis = axis{"tx", []string{"inside", "outside"}, []string{
		"db: the work runs in the lock's transaction; COMMIT fails if the session was killed (default)",
		"db: the lock's session only holds the lock; the work uses another connection",
	}}
	acquireAxis = axis{"acquire", []string{"script", "incr-before", "incr-after", "set-expire"}, []string{
		"SET NX PX and INCR lock:fence in one Lua script",
		"INCR lock:fence once, then poll SET NX PX",
		"poll SET NX PX, then INCR lock:fence as a second request",
		"SET NX (+INCR), then EXPIRE as a second request",
	}}
	releaseAxis = axis{"release", []string{"del", "get-del", "cad"}, []string{
		"plain DEL: removes the key whoever holds it",
		"GET, then DEL if it was ours: two requests",
		"check-and-delete Lua script, atomic",
	}}
	fenceAxis = axis{"fence", []string{"none", "write", "rw"}, []string{
		"no fencing token",
		"the token goes with writes",
		"the token goes with reads and writes",
	}}
	storageAxis = axis{"storage", []string{"plain", "max-token", "max-write", "cond-update", "cas"}, []string{
		"accepts everything",
		"refuses a token below the highest seen; records reads' tokens too",
		"refuses a token below the highest seen; records only writes' tokens",
		"UPDATE … WHERE last_token < t (strictly greater token to write)",
		"compare-and-set on a version column (no token needed)",
	}}
	bugAxis = axis{"bug", []string{"none", "set-without-nx", "cad-no-check", "no-token-check", "read-no-record", "expire-early"}, []string{
		"no planted bug (default)",
		"SET without NX: acquire overwrites a held key",
		"check-and-delete deletes without comparing the value",
		"token-checking storage records tokens but never refuses",
		"max-token storage forgets the tokens of reads",
		"keys live one tick less than their TTL (off by one)",
	}}
	watchdogAxis = axis{"watchdog", []string{"worker", "thread", "sidecar", "session"}, []string{
		"renew=k: the renewal runs in the worker and stops with it (default)",
		"renew=k: the renewal runs in a thread of its own that outlives a hung worker (a pause still freezes both)",
		"renew=k: the renewal runs in a sidecar process: it renews through the worker's pauses, and for ever once the worker crashed or hung holding the lock",
		"renew=k, lock=etcd: the renewal is the session's keep-alive (etcd's concurrency.Session), a thread of its own that renews the key while the acquire's reply is still held in the network too",
	}}
	valueAxis = axis{"value", []string{"job", "process", "acquire"}, []string{
		"jobs=N: each job writes a lock value of its own, the same in every attempt of the job (default; redsync draws one per Lock call)",
		"jobs=N: every job of a client writes the same value (per process or thread), so a late release of one job matches the next job's lock",
		"check=acquire: each acquire attempt writes a value of its own, so a failed attempt's late release leaves the retry's lock alone",
	}}
	storageLosesAxis = axis{"storage-loses", []string{"unsynced", "fence"}, []string{
		"storage-failovers: the promoted replica lacks what it had not received, accepted writes and the highest token alike (default)",
		"storage-failovers: the counter's row is replicated synchronously; only a token check kept apart from it (max-token, max-write) loses its last updates; cond-update's last_token and cas's version are in the row and survive",
	}}
	fenceCheckAxis = axis{"fence-check", []string{"atomic", "two-step"}, []string{
		"max-token, max-write: the token is checked and the counter written in one step (default)",
		"max-token, max-write: the check (SELECT max_token, compare, record) and the unconditional write are two requests: another write can land between them",
	}}
	ackAxis = axis{"ack", []string{"async", "wait"}, []string{
		"replica: the acquire returns once the primary has the key (default)",
		"replica: WAIT acks T after the acquire: it returns once acks= replicas have the key, or after ack-timeout ticks (then it goes on anyway: WAIT rolls nothing back)",
	}}
	promoteAxis = axis{"promote", []string{"freshest", "any"}, []string{
		"replica: a failover promotes the freshest replica, the highest replication offset (default; Sentinel with equal replica-priority)",
		"replica: a failover may promote any replica (replica-priority, or the freshest one down or disconnected): replicas ≥ 2",
	}}
	counterAxis = axis{"counter", []string{"service", "external"}, []string{
		"the fencing token is the lock service's own counter (default; redlock and db have none)",
		"redlock, db: a separate counter node, INCR fence after the lock is won (its crashes: counter-crashes)",
	}}
	partitionAxis = axis{"partition", []string{"service", "node", "minority", "storage", "primary"}, []string{
		"a partition cuts the client off from the whole lock service (default)",
		"redlock: from one node (A partition K: node K)",
		"redlock: from a minority of nodes (A partition K: nodes K … K+m−1 round the ring)",
		"from the storage that holds the counter",
		"replica: the client and the primary are cut off from the replica's side; a failover then is a split brain",
	}}
	pauseAtAxis = placeAxis("pause-at", "a pause")
	delayAtAxis = placeAxis("delay-at", "a network delay")
	loseAtAxis  = placeAxis("lose-at", "a lost reply")
	crashAtAxis = placeAxis("crash-at", "a client crash")
	abandonAxis = axis{"abandon", []string{"none", "retry", "fail"}, []string{
		"an acquire held in the network is waited for, at most the timeout (default)",
		"an acquire held past the timeout is abandoned (a deadline) and sent again; the first still lands later and may take the key for a client that does not know it",
		"an acquire held past the timeout is abandoned and the job given up; the request still lands later and may take the key for nobody: an orphan until its TTL (for ever without one)",
	}}
	nodeAtAxis = nodeFaultAxis()
	clockAxis  = axis{"clock", []string{"urgent", "free"}, []string{
		"a tick only when no client can act (default)",
		"a tick at any time: clients may be late without a fault (SPIN baseline)",
	}}
)

// nodeFaultAxis is node-at=…: where a lock-node fault (a node crash, a
// clock jump, the replica's failover) may fall: while the holder of the
// node's key has that step next (fault_node.go, nodeFaultAt).
func nodeFaultAxis() axis {
	a := placeAxis("node-at", "a lock-node fault (node crash, clock jump, failover)")
	a.docs = append([]string(nil), a.docs...)
	for i := 1; i < len(a.docs); i++ {
		a.docs[i] = "while the node's key holder's next step is its " + a.values[i] + " (its phase: at work before its write is at write); a node whose key nobody holds takes none"
	}
	return a
}

// placeAxis is a fault-placement parameter: where the fault may fall.
func placeAxis(name, fault string) axis {
	return axis{name, []string{"any", "acquire", "incr", "expire", "check", "read", "write", "release", "del"}, []string{
		fault + " may fall anywhere (default)",
		"right before its acquire (a retry of a refused acquire too)",
		"right before its separate INCR (acquire=incr-before|incr-after)",
		"right before its EXPIRE, after SET NX (acquire=set-expire)",
		"right before its validity check (check=validity)",
		"right before its read (after the validity check, if any)",
		"right before its write (after the validity check, if any)",
		"right before its release (the GET of get-del)",
		"right before the DEL of get-del, after the GET",
	}}
}

// wordParam is a parameter of a design name that takes a word (or a path
// part): its axis, the design's field, and the lock services it applies to
// (nil: every one; set elsewhere, it is an error).
type wordParam struct {
	axis  axis
	field func(*Design) *uint8
	locks []LockKind
	place bool // a fault placement (pause-at=…): where its fault may fall
}

// pathParts are a design name's lock/release/fence/storage.
var pathParts = [4]wordParam{
	{lockAxis, func(d *Design) *uint8 { return (*uint8)(&d.Lock) }, nil, false},
	{releaseAxis, func(d *Design) *uint8 { return (*uint8)(&d.Release) }, nil, false},
	{fenceAxis, func(d *Design) *uint8 { return (*uint8)(&d.Fence) }, nil, false},
	{storageAxis, func(d *Design) *uint8 { return (*uint8)(&d.Storage) }, nil, false},
}

// wordParams are the parameters that take a word, in the order a name
// writes them (the planted bug before the faults' placements).
// watchdogLocks are the services whose key a client-side watchdog renews
// (renew=k): where watchdog=, renew-fail= and watchdog-stop= apply.
var watchdogLocks = []LockKind{LockRedis, LockReplica, LockEtcd, LockRedlock, LockConsul}

var wordParams = []wordParam{
	{acquireAxis, func(d *Design) *uint8 { return (*uint8)(&d.Acquire) }, []LockKind{LockRedis, LockReplica}, false},
	{clockAxis, func(d *Design) *uint8 { return (*uint8)(&d.Clock) }, nil, false},
	{quorumAxis, func(d *Design) *uint8 { return (*uint8)(&d.Quorum) }, []LockKind{LockRedlock}, false},
	{checkAxis, func(d *Design) *uint8 { return (*uint8)(&d.Check) }, nil, false},
	{waitAxis, func(d *Design) *uint8 { return (*uint8)(&d.Wait) }, []LockKind{LockRedis, LockReplica}, false},
	{txAxis, func(d *Design) *uint8 { return (*uint8)(&d.Tx) }, []LockKind{LockDB}, false},
	{reenterAxis, func(d *Design) *uint8 { return (*uint8)(&d.Reenter) }, []LockKind{LockRedis, LockReplica}, false},
	{counterAxis, func(d *Design) *uint8 { return (*uint8)(&d.Counter) }, []LockKind{LockRedlock, LockDB}, false},
	{watchdogAxis, func(d *Design) *uint8 { return (*uint8)(&d.Watchdog) }, watchdogLocks, false},
	{extendAxis, func(d *Design) *uint8 { return (*uint8)(&d.Extend) }, []LockKind{LockRedis, LockReplica, LockRedlock}, false},
	{renewFailAxis, func(d *Design) *uint8 { return (*uint8)(&d.RenewFail) }, watchdogLocks, false},
	{watchdogStopAxis, func(d *Design) *uint8 { return (*uint8)(&d.WatchdogStop) }, watchdogLocks, false},
	{valueAxis, func(d *Design) *uint8 { return (*uint8)(&d.Value) }, nil, false},
	{releaseFailAxis, func(d *Design) *uint8 { return (*uint8)(&d.ReleaseFail) }, []LockKind{LockRedis, LockReplica, LockEtcd, LockZooKeeper}, false},
	{ackAxis, func(d *Design) *uint8 { return (*uint8)(&d.Ack) }, []LockKind{LockReplica}, false},
	{storageLosesAxis, func(d *Design) *uint8 { return (*uint8)(&d.StorageLoses) }, nil, false},
	{fenceCheckAxis, func(d *Design) *uint8 { return (*uint8)(&d.FenceCheck) }, nil, false},
	{sessionCheckAxis, func(d *Design) *uint8 { return (*uint8)(&d.SessionCheck) }, []LockKind{LockEtcdMutex}, false},
	{durationAxis, func(d *Design) *uint8 { return (*uint8)(&d.Duration) }, []LockKind{LockLease}, false},
	{levelAxis, func(d *Design) *uint8 { return (*uint8)(&d.Level) }, []LockKind{LockAdvisory}, false},
	{poolAxis, func(d *Design) *uint8 { return (*uint8)(&d.Pool) }, []LockKind{LockAdvisory}, false},
	{endAxis, func(d *Design) *uint8 { return (*uint8)(&d.End) }, []LockKind{LockAdvisory}, false},
	{protectAxis, func(d *Design) *uint8 { return (*uint8)(&d.Protect) }, []LockKind{LockZooKeeper}, false},
	{behaviorAxis, func(d *Design) *uint8 { return (*uint8)(&d.Behavior) }, []LockKind{LockConsul}, false},
	{indexAxis, func(d *Design) *uint8 { return (*uint8)(&d.Index) }, []LockKind{LockConsul}, false},
	{bugAxis, func(d *Design) *uint8 { return (*uint8)(&d.Bug) }, nil, false},
	{partitionAxis, func(d *Design) *uint8 { return (*uint8)(&d.Partition) }, nil, false},
	{loseAxis, func(d *Design) *uint8 { return (*uint8)(&d.Lose) }, nil, false},
	{pauseAtAxis, func(d *Design) *uint8 { return (*uint8)(&d.PauseAt) }, nil, true},
	{delayAtAxis, func(d *Design) *uint8 { return (*uint8)(&d.DelayAt) }, nil, true},
	{loseAtAxis, func(d *Design) *uint8 { return (*uint8)(&d.LoseAt) }, nil, true},
	{crashAtAxis, func(d *Design) *uint8 { return (*uint8)(&d.CrashAt) }, nil, true},
	{nodeAtAxis, func(d *Design) *uint8 { return (*uint8)(&d.NodeAt) }, []LockKind{LockRedis, LockReplica, LockRedlock}, true},
	{abandonAxis, func(d *Design) *uint8 { return (*uint8)(&d.Abandon) }, []LockKind{LockRedis, LockReplica}, false},
	{promoteAxis, func(d *Design) *uint8 { return (*uint8)(&d.Promote) }, []LockKind{LockReplica}, false},
}

// atDefault reports whether d's parameter name is at its default (a
// derived default for the derived ones, the first word for a word).
func atDefault(d *Design, name string) bool {
	for _, w := range wordParams {
		if w.axis.name == name {
			return *w.field(d) == 0
		}
	}
	for _, p := range intParams {
		if p.name == name {
			return *p.field(d) == derivedDefault(d, p.name, p.def)
		}
	}
	return true
}

// intParam is a numeric parameter of a design name.
type intParam struct {
	name     string
	min, max int
	def      int
	field    func(*Design) *int
	doc      string
	locks    []LockKind // the lock services it applies to (nil: every one); set elsewhere, it is an error
}

var intParams = []intParam{
	{"ttl", 1, MaxWaitTicks, 10, func(d *Design) *int { return &d.TTLTicks }, "key TTL in ticks (PX)", nil},
	{"work", 0, MaxWaitTicks, 2, func(d *Design) *int { return &d.WorkTicks }, "ticks between read and write", nil},
	{"clients", 1, MaxClients, 3, func(d *Design) *int { return &d.Clients }, "clients, each running jobs= jobs", nil},
	{"jobs", 1, MaxJobs, 1, func(d *Design) *int { return &d.Jobs }, "jobs each client runs, one after another (each job one increment)", nil},
	{"horizon", 1, MaxHorizonTicks, 40, func(d *Design) *int { return &d.HorizonTicks }, "last tick", nil},
	{"token", 1, 1000, 1, func(d *Design) *int { return &d.FirstToken }, "first fencing token", nil},
	{"pauses", 0, 3, 1, func(d *Design) *int { return &d.Pauses }, "fault budget: pauses per run", nil},
	{"max-pause", 1, MaxWaitTicks, 15, func(d *Design) *int { return &d.MaxPauseTicks }, "longest pause in ticks", nil},
	{"slow", 0, MaxClients, 0, func(d *Design) *int { return &d.SlowJobs }, "fault budget: slow jobs per run", nil},
	{"slow-work", 1, MaxWaitTicks, 12, func(d *Design) *int { return &d.SlowWorkTicks }, "work ticks of a slow job", nil},
	{"crashes", 0, MaxClients, 0, func(d *Design) *int { return &d.Crashes }, "fault budget: client crashes per run", nil},
	{"restarts", 0, 2, 0, func(d *Design) *int { return &d.Restarts }, "fault budget: a client crashes and its supervisor restarts it at once: a new process (a new lock value) runs the crashed job again", nil},
	{"nodes", 3, MaxNodes, 5, func(d *Design) *int { return &d.Nodes }, "redlock: independent Redis nodes", []LockKind{LockRedlock}},
	{"drift", 0, 10, 1, func(d *Design) *int { return &d.DriftTicks }, "clock drift allowance in the validity (redlock, check=validity)", nil},
	{"failovers", 0, 2, 1, func(d *Design) *int { return &d.Failovers }, "replica: fault budget of failovers (2: two failures in a row, the second of the promoted primary)", []LockKind{LockReplica}},
	{"rejoin", 0, MaxWaitTicks, 0, func(d *Design) *int { return &d.RejoinTicks }, "replica: ticks a failed primary stays down (restarting) before it rejoins as a replica with a full resync; a request to it fails meanwhile (0: it rejoins at once)", []LockKind{LockReplica}},
	{"node-crashes", 0, 2, 0, func(d *Design) *int { return &d.NodeCrashes }, "fault budget: lock-node crashes (redis, replica primary, redlock)", []LockKind{LockRedis, LockReplica, LockRedlock}},
	{"restart", 0, MaxWaitTicks, 0, func(d *Design) *int { return &d.RestartTicks }, "ticks a crashed node stays down", []LockKind{LockRedis, LockReplica, LockRedlock}},
	{"persist", 0, 1, 0, func(d *Design) *int { return &d.Persist }, "1: a crashed node keeps its keys and fence counter", []LockKind{LockRedis, LockReplica, LockRedlock}},
	{"fsync", 0, MaxWaitTicks, 0, func(d *Design) *int { return &d.FsyncTicks }, "persist=1: the append-only file is fsynced every N ticks (1: appendfsync everysec), a crash loses the writes since (the key and the fence counter apart); 0: every write (appendfsync always)", []LockKind{LockRedis, LockReplica}},
	{"jumps", 0, 2, 0, func(d *Design) *int { return &d.ClockJumps }, "fault budget: lock-node clock jumps (redis, replica, redlock)", []LockKind{LockRedis, LockReplica, LockRedlock}},
	{"jump", 1, MaxWaitTicks, 5, func(d *Design) *int { return &d.JumpTicks }, "ticks a node's clock jumps forward", []LockKind{LockRedis, LockReplica, LockRedlock}},
	{"renew", 0, MaxWaitTicks, 0, func(d *Design) *int { return &d.RenewTicks }, "watchdog/keep-alive: extend the TTL every k ticks (0: none); lease: the retry period (RetryPeriod); consul: the session renewal (RenewPeriodic: ttl/2)", []LockKind{LockRedis, LockReplica, LockEtcd, LockRedlock, LockLease, LockConsul}},
	{"session", 1, MaxWaitTicks, 10, func(d *Design) *int { return &d.SessionTicks }, "zookeeper: session timeout in ticks; etcd-mutex: its session's lease TTL (concurrency.WithTTL)", []LockKind{LockZooKeeper, LockEtcdMutex}},
	{"delays", 0, 3, 0, func(d *Design) *int { return &d.Delays }, "fault budget: requests held in the network (delay-at= says which)", nil},
	{"max-delay", 1, MaxWaitTicks, 15, func(d *Design) *int { return &d.MaxDelayTicks }, "longest network delay of a request", nil},
	{"partitions", 0, 2, 0, func(d *Design) *int { return &d.Partitions }, "fault budget: partitions (partition= says from what)", nil},
	{"partition-ticks", 1, MaxWaitTicks, 15, func(d *Design) *int { return &d.PartitionTicks }, "how long a partition lasts", nil},
	{"losses", 0, 2, 0, func(d *Design) *int { return &d.Losses }, "fault budget: requests applied whose reply is lost (the client resends after timeout)", nil},
	{"timeout", 0, MaxWaitTicks, 0, func(d *Design) *int { return &d.TimeoutTicks }, "ticks a client waits for a reply before it resends (0: for ever)", nil},
	{"client-jumps", 0, 2, 0, func(d *Design) *int { return &d.ClientJumps }, "fault budget: jumps of a client's own clock (check=validity, redlock)", nil},
	{"client-jump", -MaxWaitTicks, MaxWaitTicks, -5, func(d *Design) *int { return &d.ClientJumpTicks }, "ticks a client's clock jumps (negative: back, it thinks less time passed)", nil},
	{"storage-failovers", 0, 1, 0, func(d *Design) *int { return &d.StorageFailovers }, "fault budget: the storage fails over to its asynchronous replica (what it had not received is lost, the highest token too)", nil},
	{"hangs", 0, MaxClients, 0, func(d *Design) *int { return &d.Hangs }, "fault budget: workers that hang for good (renew=k; with watchdog=thread their lock is renewed for ever)", nil},
	{"lock-delay", 0, MaxWaitTicks, 0, func(d *Design) *int { return &d.LockDelayTicks }, "Chubby's lock-delay (redis, etcd, consul): after a holder's key, lease or session expires, nobody may take the lock for this many ticks (a release frees it at once)", []LockKind{LockRedis, LockEtcd, LockConsul}},
	{"counter-crashes", 0, 2, 0, func(d *Design) *int { return &d.CounterCrashes }, "fault budget: the external fencing counter's node crashes and restarts empty (counter=external)", nil},
	{"ack-timeout", 0, MaxWaitTicks, 0, func(d *Design) *int { return &d.AckTimeoutTicks }, "ack=wait: WAIT's timeout in ticks from the acquire; a timed-out WAIT returns 0 and the client goes on (0: wait for ever)", []LockKind{LockReplica}},
	{"stale-reads", 0, 2, 0, func(d *Design) *int { return &d.StaleReads }, "fault budget: reads served by the storage's lagging replica (writes still go to the primary)", nil},
	{"deadline", 1, MaxWaitTicks, 7, func(d *Design) *int { return &d.RenewDeadlineTicks }, "lease: the renew deadline (RenewDeadline): the leader gives up if it cannot renew within it, by its own clock", []LockKind{LockLease}},
	{"lease-b", 0, MaxWaitTicks, 0, func(d *Design) *int { return &d.LeaseBTicks }, "lease: candidate B's own configured lease duration (0: ttl, as the other candidates')", []LockKind{LockLease}},
	{"deadline-b", 0, MaxWaitTicks, 0, func(d *Design) *int { return &d.DeadlineBTicks }, "lease: candidate B's own renew deadline (0: deadline, as the other candidates')", []LockKind{LockLease}},
	{"rate-b", 50, 200, 100, func(d *Design) *int { return &d.RateB }, "lease: candidate B's clock rate, in percent of real time", []LockKind{LockLease}},
	{"bypass", NoBypass, MaxClients * MaxJobs, NoBypass, func(d *Design) *int { return &d.Bypass }, "fairness: check that no waiting client sees more than this many later requesters served first (-1: not checked)", nil},
	{"fault-node", 0, MaxNodes, 0, func(d *Design) *int { return &d.FaultNode }, "the lock node that node crashes, clock jumps and failovers fall on, 1 … nodes (0: any; redis and replica have one, the primary)", []LockKind{LockRedis, LockReplica, LockRedlock}},
	{"replicas", 1, MaxNodes - 1, 1, func(d *Design) *int { return &d.Replicas }, "replica: the primary's asynchronous replicas, numbered by how fresh their copy is (replica 1 the freshest)", []LockKind{LockReplica}},
	{"acks", 1, MaxNodes - 1, 1, func(d *Design) *int { return &d.Acks }, "ack=wait: the replicas WAIT waits for (WAIT acks T), at most replicas", []LockKind{LockReplica}},
	{"readers", 0, MaxClients - 1, 0, func(d *Design) *int { return &d.Readers }, "etcd-mutex: clients A … K take read locks and the others write locks, as etcd's recipe.RWMutex (RLock, Lock); at most clients−1 (0: every client takes the Mutex)", []LockKind{LockEtcdMutex}},
}

// kindReleases and kindFences restrict the path parts by lock service.
var kindReleases = map[LockKind][]ReleaseMode{
	LockEtcd:      {ReleaseCAD},
	LockZooKeeper: {ReleaseCAD},
	LockDB:        {ReleaseCAD},
	LockEtcdMutex: {ReleaseDel, ReleaseCAD}, // Unlock's delete by name, or fenced on the create revision
	LockLease:     {ReleaseCAD},             // ReleaseOnCancel: a CAS to an empty holder
	LockAdvisory:  {ReleaseCAD},             // pg_advisory_unlock (or COMMIT): only the session's own lock
	LockConsul:    {ReleaseCAD},             // ?release=<session>: only while its session holds the key
}

// Redlock hands out no fencing token (its nodes share no counter), and a
// database row lock needs none: both take fence=none.
var kindFences = map[LockKind][]FenceMode{
	LockRedlock: {FenceNone},
	LockDB:      {FenceNone},
}

// DefaultDesign is redis/cad/none/plain with every parameter at its default.
func DefaultDesign() Design {
	d := Design{Lock: LockRedis, Acquire: AcquireScript, Release: ReleaseCAD, Fence: FenceNone, Storage: StoragePlain}
	for _, p := range intParams {
		*p.field(&d) = p.def
	}
	deriveAll(&d) // budget.go
	return d
}

func (k LockKind) String() string      { return word(lockAxis, int(k)) }
func (m AcquireMode) String() string   { return word(acquireAxis, int(m)) }
func (m ReleaseMode) String() string   { return word(releaseAxis, int(m)) }
func (m FenceMode) String() string     { return word(fenceAxis, int(m)) }
func (m StorageMode) String() string   { return word(storageAxis, int(m)) }
func (m ClockMode) String() string     { return word(clockAxis, int(m)) }
func (b Bug) String() string           { return word(bugAxis, int(b)) }
func (q Quorum) String() string        { return word(quorumAxis, int(q)) }
func (m CheckMode) String() string     { return word(checkAxis, int(m)) }
func (m WaitMode) String() string      { return word(waitAxis, int(m)) }
func (m TxMode) String() string        { return word(txAxis, int(m)) }
func (m ReenterMode) String() string   { return word(reenterAxis, int(m)) }
func (m CounterMode) String() string   { return word(counterAxis, int(m)) }
func (m WatchdogMode) String() string  { return word(watchdogAxis, int(m)) }
func (m ValueMode) String() string     { return word(valueAxis, int(m)) }
func (m ExtendMode) String() string    { return word(extendAxis, int(m)) }
func (m RenewFailMode) String() string { return word(renewFailAxis, int(m)) }
func (m WatchdogStop) String() string  { return word(watchdogStopAxis, int(m)) }
func (m LoseMode) String() string      { return word(loseAxis, int(m)) }
func (m ReleaseFailMode) String() string {
	return word(releaseFailAxis, int(m))
}
func (m AckMode) String() string       { return word(ackAxis, int(m)) }
func (m StorageLoss) String() string   { return word(storageLosesAxis, int(m)) }
func (m FenceCheck) String() string    { return word(fenceCheckAxis, int(m)) }
func (m PartitionMode) String() string { return word(partitionAxis, int(m)) }
func (p Place) String() string         { return word(pauseAtAxis, int(p)) }
func (m AbandonMode) String() string   { return word(abandonAxis, int(m)) }
func (m PromoteMode) String() string   { return word(promoteAxis, int(m)) }

func word(a axis, i int) string {
	if i < 0 || i >= len(a.values) {
		return fmt.Sprintf("%s(%d)", a.name, i)
	}
	return a.values[i]
}

// Name is the design's canonical name: lock/release/fence/storage, then the
// parameters that differ from their defaults, in a fixed order. ParseDesign
// of Name gives the same design back.
func (d Design) Name() string {
	var b strings.Builder
	for i, w := range pathParts {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(word(w.axis, int(*w.field(&d))))
	}
	for _, w := range wordParams {
		if v := *w.field(&d); v != 0 {
			b.WriteString("," + w.axis.name + "=" + word(w.axis, int(v)))
		}
	}
	for _, p := range intParams {
		if v := *p.field(&d); v != derivedDefault(&d, p.name, p.def) {
			fmt.Fprintf(&b, ",%s=%d", p.name, v)
		}
	}
	return b.String()
}

func (d Design) String() string { return d.Name() }

// DesignError is a bad design name: what was wrong and what is allowed.
type DesignError struct{ Msg string }

func (e *DesignError) Error() string { return e.Msg }

func designErr(format string, args ...any) error {
	return &DesignError{Msg: fmt.Sprintf(format, args...)}
}

// ParseDesign reads a design name: a preset (demo1 … demo6) or
// lock/release/fence/storage followed by ,key=value parameters. Parameters
// may also follow a preset (demo2,clients=2).
func ParseDesign(name string) (Design, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Design{}, designErr("empty design name (want lock/release/fence/storage[,key=value…] or a preset: %s)", strings.Join(PresetNames(), ", "))
	}
	parts := strings.Split(name, ",")
	var d Design
	if p, ok := presetDesign(parts[0]); ok {
		d = p
	} else {
		segs := strings.Split(parts[0], "/")
		if len(segs) != 4 {
			return Design{}, designErr("design %q%s: want 4 parts lock/release/fence/storage, got %d (or a preset: %s)", clip(parts[0]), didyoumean.Hint(parts[0], PresetNames()), len(segs), strings.Join(PresetNames(), ", "))
		}
		d = DefaultDesign()
		for i, w := range pathParts {
			v, err := w.axis.parse(segs[i])
			if err != nil {
				return Design{}, err
			}
			*w.field(&d) = uint8(v)
		}
		deriveAll(&d) // the defaults derived for this lock service (budget.go)
	}
	seen := map[string]bool{}
	at := atDefaults(&d) // budget.go: derived defaults follow the TTL and work
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return Design{}, designErr("design parameter %q: want key=value (keys: %s)", clip(kv), paramNames())
		}
		if seen[k] {
			return Design{}, designErr("design parameter %q given twice", clip(k))
		}
		seen[k] = true
		if err := d.set(k, v); err != nil {
			return Design{}, err
		}
	}
	rederive(&d, seen, at)
	if err := d.Validate(); err != nil {
		return Design{}, err
	}
	return d, nil
}

func (a axis) parse(s string) (int, error) {
	for i, v := range a.values {
		if v == s {
			return i, nil
		}
	}
	return 0, designErr("unknown %s %q%s (allowed: %s)", a.name, clip(s), didyoumean.Hint(s, a.values), strings.Join(a.values, ", "))
}

func (d *Design) set(k, v string) error {
	for _, w := range wordParams {
		if w.axis.name == k {
			i, err := w.axis.parse(v)
			*w.field(d) = uint8(i)
			return err
		}
	}
	for _, p := range intParams {
		if p.name != k {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < p.min || n > p.max {
			return designErr("design parameter %s=%q: want a whole number from %d to %d", k, clip(v), p.min, p.max)
		}
		*p.field(d) = n
		return nil
	}
	if c := didyoumean.Closest(k, paramList()); c != "" {
		return designErr("unknown design parameter %q (did you mean %s? explore designs lists every key)", clip(k), c)
	}
	return designErr("unknown design parameter %q (keys: %s)", clip(k), paramNames())
}

// Validate checks every number against its range.
func (d Design) Validate() error {
	for _, w := range append(pathParts[:], wordParams...) {
		if int(*w.field(&d)) >= len(w.axis.values) {
			return designErr("design has an axis value out of range")
		}
	}
	def := DefaultDesign()
	for _, p := range intParams {
		v := *p.field(&d)
		if v < p.min || v > p.max {
			return designErr("design parameter %s=%d: want a whole number from %d to %d", p.name, v, p.min, p.max)
		}
		if v != derivedDefault(&d, p.name, *p.field(&def)) {
			if err := d.applies(p.name); err != nil {
				return err
			}
		}
	}
	for _, w := range wordParams {
		if *w.field(&d) != 0 {
			if err := d.applies(w.axis.name); err != nil {
				return err
			}
		}
	}
	if rs, ok := kindReleases[d.Lock]; ok && !containsRelease(rs, d.Release) {
		return designErr("release %s is not available for lock %s (allowed: %s)", d.Release, d.Lock, joinWords(rs))
	}
	if fs, ok := kindFences[d.Lock]; ok && !containsFence(fs, d.Fence) && d.Counter != CounterExternal {
		return designErr("fence %s is not available for lock %s (allowed: %s; or counter=external for a separate fencing counter)", d.Fence, d.Lock, joinWords(fs))
	}
	if d.Counter == CounterExternal && d.Fence == FenceNone {
		return designErr("counter=external needs fence=write or rw: with fence=none no token is taken")
	}
	if d.Counter == CounterExternal && inTx(&d) {
		return designErr("counter=external does not apply to db with tx=inside: its writes go through the lock's transaction, which checks no token (use tx=outside)")
	}
	if err := d.leaseApplies(); err != nil {
		return err
	}
	if err := d.advisoryApplies(); err != nil {
		return err
	}
	if err := d.protectApplies(); err != nil {
		return err
	}
	if err := d.readersApply(); err != nil { // lock_etcd_mutex.go
		return err
	}
	if err := d.consulApplies(); err != nil {
		return err
	}
	if err := d.bypassApplies(); err != nil {
		return err
	}
	if err := d.fenceCheckApplies(); err != nil { // storage.go
		return err
	}
	return d.faultsApply()
}

// applies reports an error if parameter name does not apply to d's lock.
func (d Design) applies(name string) error {
	var kinds []LockKind
	for _, w := range wordParams {
		if w.axis.name == name {
			kinds = w.locks
		}
	}
	for _, p := range intParams {
		if p.name == name {
			kinds = p.locks
		}
	}
	if kinds == nil {
		return nil
	}
	for _, k := range kinds {
		if k == d.Lock {
			return nil
		}
	}
	return designErr("design parameter %s does not apply to lock %s (it applies to: %s)", name, d.Lock, joinWords(kinds))
}

func containsRelease(rs []ReleaseMode, r ReleaseMode) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

func containsFence(fs []FenceMode, f FenceMode) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

func joinWords[T fmt.Stringer](xs []T) string {
	var out []string
	for _, x := range xs {
		out = append(out, x.String())
	}
	return strings.Join(out, ", ")
}

func paramNames() string { return strings.Join(paramList(), ", ") }

func paramList() []string {
	var names []string
	for _, w := range wordParams {
		names = append(names, w.axis.name)
	}
	for _, p := range intParams {
		names = append(names, p.name)
	}
	return names
}

// clip keeps error messages one short line whatever the input.
func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// DescribeAxes lists every axis and parameter with its values, for
// `explore designs`.
func DescribeAxes() string {
	var b strings.Builder
	b.WriteString("A design name is lock/release/fence/storage[,key=value…], e.g. redis/cad/rw/max-token,ttl=10,work=2\n\n")
	var axes []axis
	for _, w := range pathParts {
		axes = append(axes, w.axis)
	}
	for _, w := range wordParams {
		if w.axis.name != "bug" { // the planted bugs last
			axes = append(axes, w.axis)
		}
	}
	for i, a := range append(axes, bugAxis) {
		kind := "path part"
		if i >= len(pathParts) {
			kind = "parameter " + a.name + "=…, default " + a.values[0]
		}
		fmt.Fprintf(&b, "%s (%s):\n", a.name, kind)
		for i, v := range a.values {
			fmt.Fprintf(&b, "  %-12s %s\n", v, a.docs[i])
		}
	}
	b.WriteString("numbers (parameters key=value):\n")
	for _, p := range intParams {
		fmt.Fprintf(&b, "  %-12s %s (%d to %d, default %d)\n", p.name, p.doc, p.min, p.max, p.def)
		if why := describeDerived(p.name, p.def); why != "" {
			fmt.Fprintf(&b, "  %-12s   %s\n", "", why)
		}
	}
	b.WriteString(derivedNote())
	b.WriteString("presets (the seed's demos):\n")
	for _, p := range presets {
		fmt.Fprintf(&b, "  %-12s %s = %s\n", p.name, p.title, p.spec)
	}
	return b.String()
}
