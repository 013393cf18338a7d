// Package locktest plays lockcheck's schedules against your own lock
// client, in your own go test, on real servers it starts on loopback.
//
// You write a small adapter (Lock, and Extender if your client can extend
// its lease) around your client and hand Run a function that makes one
// instance per simulated client process. Run then:
//
//  1. starts a redis-server of its own on 127.0.0.1 (stopped when the test
//     ends), and with Service Etcd or EtcdMutex an embedded etcd member (with Service
//     Postgres a PostgreSQL server, with Service ZooKeeper a standalone
//     ZooKeeper) for each schedule played at once (with Pooled, a
//     PgBouncer in front of the PostgreSQL for each schedule), with
//     Service Redlock five more redis-servers, its nodes;
//  2. explores the model of the design your client implements (a Redis
//     SET NX PX lock released by check-and-delete, with the storage you
//     name, the same on a Redis primary with a replica that a failover
//     promotes, an etcd lease with a put-if-absent, a PostgreSQL
//     session-level advisory lock, a ZooKeeper ephemeral sequential
//     node, or Redlock's majority of five Redis nodes) and plays the
//     shortest counterexample of every property the model breaks and the shortest run of every behaviour it shows (with
//     a pause alone, and with a pause, a slow job, a crash and a delayed
//     write), and seeded random schedules with those faults (on Redis,
//     and the same of a design whose network holds an acquire's reply
//     past the TTL, of one whose lock server is killed and restarted
//     empty, of one that cuts a client off from it, of two that lose
//     a release's reply or the release itself, and of one that holds a
//     release in the network; on ZooKeeper, of one that loses a create's
//     reply: Swarms),
//     shortest first, each against N instances of
//     your client with lockcheck's job
//     around them (read the counter, work, write counter + 1, release); a
//     pause holds the client's traffic;
//  3. compares every run with the model's replay of the same schedule,
//     step by step: what each call answered, who held the key after it,
//     the counter, lost updates (porcupine on the job history), storage
//     touched without the lock, two holders, own-release;
//  4. reports each run where your client parts from the model with
//     t.Error: both sides step by step, both timelines, the seed and a
//     one-line command that replays that schedule alone.
//
// The model's client is the reference: a client that agrees with it on
// every schedule does what a correct SET NX PX / check-and-delete client
// does under those faults (which is not "safe": Demo 2's lost update is
// the model's too, and a fenced storage is what saves it). A difference is
// your client doing something else: a release that deletes another's key,
// a release that says it released when it did not, an extend that
// re-creates a key it lost.
//
// Your client must keep its lock in the key Target.Key with the value
// Target.Value (on etcd: put with a lease of Target.TTL) (most clients let you choose it: redsync's
// WithGenValueFunc, redislock's Options.Token), so that the observer can
// tell whose key it sees, and must talk to Target.Addr (a proxy of that
// client's own, which a pause holds). A library that names its key
// itself gets it in Config.Key; one that draws its own values tells them
// with Owns (an Owner): rueidislock is played so, in this package's tests.
package locktest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lockcheck/explore"
	"lockcheck/model"
	"lockcheck/reality"
)

// Lock is one instance of your lock client, for one client process.
//
// An error ends the run, but while a restart schedule (Swarms) has the
// lock's redis-server down or a partition schedule has your client cut
// off from it: there it is the model's answer (an acquire refused,
// nothing released or extended). Such a call must fail
// within its tick (go-redis: MaxRetries -1 and DialerRetries 1; its
// default retries take about a second, and the run is void and played
// again with longer ticks).
type Lock interface {
	// Acquire tries once to take the lock (no retry loop: the schedule
	// polls) and reports whether it did.
	Acquire(ctx context.Context) (won bool, err error)
	// Release gives the lock back and reports whether the client's lock
	// was still there to delete (false: it had expired, or was another's).
	Release(ctx context.Context) (released bool, err error)
}

// Extender is a Lock that can extend (refresh) its TTL. Run calls Extend
// where the model's watchdog renews, when Config.RenewTicks is set.
type Extender interface {
	// Extend extends the lock's TTL and reports whether it did (false:
	// the lock was no longer the client's).
	Extend(ctx context.Context) (extended bool, err error)
}

// Validator is a Lock that measures how much of its lock is left by its
// own clock: the TTL less the time since Acquire sent its request, less
// Target.Drift (redsync's Mutex.Until less now). With
// Config.CheckValidity, Run calls Validity before each read and write of
// the job, as the model's client checks, and the job gives up when
// nothing (0 or less) is left.
type Validator interface {
	Validity(ctx context.Context) (left time.Duration, err error)
}

// Owner is a Lock whose library writes a lock value of its own choosing
// rather than Target.Value (rueidislock draws a random one on each try):
// Owns reports whether v is a value this instance wrote, so that the
// observer can tell whose key it sees. It is called from the observer's
// goroutine while your client's calls run: make it safe for that, quick,
// and free of requests. With EtcdMutex, v is the name of a key under
// Target.Key (etcd's Mutex puts an empty value): report whether it is
// your session's, Target.Key + "/" + the lease in hex (Mutex.Key).
type Owner interface {
	Owns(v string) bool
}

// Service is the lock service your client talks to.
type Service int

const (
	// Redis is one Redis node: SET NX PX, released by check-and-delete.
	Redis Service = iota
	// Etcd is one etcd member (embedded, started by Run on loopback): a
	// lease of Target.TTL and the key Target.Key put with it in a
	// transaction if absent (create_revision = 0), released by a delete
	// if the key's value is still Target.Value; Extend is one keep-alive
	// of the lease. Its leases are whole seconds, so a tick is 2s (the
	// design's TTL 3 ticks, its work 1): a schedule takes half a minute.
	// No fencing (a token would be the key's create revision).
	Etcd
	// Postgres is a PostgreSQL 15 server (started by Run on loopback, one
	// for each schedule played at once): an advisory lock on a session
	// your client opens with Target.DSN (through its proxy, named for the
	// observer). Config.Advisory says which: a session-level lock,
	// pg_try_advisory_lock(42) to acquire and pg_advisory_unlock(42) to
	// release, with the server's idle_session_timeout set to Target.TTL;
	// or a transaction-level one (the Lock is then a Tx). There is no TTL
	// to extend: the server ends a session idle that long, and its lock
	// with it, so a pause that outlives it loses the lock. A Release on an
	// ended session must report false (pgx closes the connection on the
	// server's FATAL: check Conn.IsClosed). With Config.Pooled the DSN
	// reaches the server through PgBouncer. No fencing; the schedules
	// pause and slow the job (a crash or a held write is not played on
	// PostgreSQL).
	Postgres
	// Replica is a Redis primary with one replica (asynchronous
	// replication; each schedule starts its own pair): your client locks
	// on the primary as on one node, through its proxy; the schedules
	// also replicate, and fail over, which promotes the replica and
	// points every client's proxy at it, so that a key not yet copied
	// is gone (the model's replica/cad/…). The failover kills the
	// primary and closes your client's connections, as a failover under
	// Sentinel does: its next call must reconnect (go-redis: MaxRetries
	// of 1 or more) and finds the promoted replica. Storage as for Redis;
	// no Key of your own and no LoseReleases.
	Replica
	// ZooKeeper is a standalone ZooKeeper server (Debian's zookeeper
	// package, started by Run on loopback, one for each schedule played at
	// once): a lock recipe of your own or a library's (go-zookeeper's
	// zk.NewLock) on a session your client opens to Target.Addr with the
	// session timeout Target.TTL. Its node is an ephemeral sequential child
	// of Target.Key (any name ending in ZooKeeper's ten-digit sequence)
	// whose data is Target.Value (Lock.LockWithData), so that the observer
	// can tell whose node it sees; the lowest node holds the lock. Acquire
	// may block until the node is the lowest, as a recipe's Lock does: Run
	// calls it in a goroutine of its own, reads at each acquire step
	// whether it has returned, and takes the client's node seen behind
	// another's as a refusal (its context ends when the schedule does). A
	// session that expires while Acquire waits takes the node with it:
	// return false then (zk.ErrSessionExpired), and Run calls Acquire
	// again. A Release whose node went with its session must report false.
	// No fencing (a token would be the node's sequence); the schedules
	// pause, slow the job and crash a client (a held write is not played
	// on ZooKeeper).
	ZooKeeper
	// Redlock is five Redis nodes (redis-servers Run starts, shared by the
	// schedules played at once, each on databases of its own): the model's
	// redlock/cad/none/plain, a majority of the nodes won within the
	// validity (the TTL less the time since the attempt began, less
	// Target.Drift), released by check-and-delete on every node. Your
	// client talks to node k through Target.Addrs[k] (its own proxy, with
	// the database Target.DB) and keeps Target.Key holding Target.Value
	// there, as redsync does with one goredis pool per node
	// (example_redlock_test.go). One Acquire asks every node, at once or
	// in the nodes' order; the model asks one node per step and lets other
	// steps come between two of them, and Run plays that rule for real: a
	// request to node k reaches it at the attempt's step for node k, not
	// before, so a per-node timeout must outlast a wait across ticks and a
	// pause (redsync: WithTimeoutFactor; go-redis: ReadTimeout -1). Its
	// answer is the attempt's: won with a majority and validity left, and
	// a lost attempt deletes what it won on every node before it returns.
	// Release reports whether it deleted its key on at least one node
	// (the model's word: redsync's Unlock says true only for a majority).
	// Two clients (Clients 0 or 2). No fencing (the nodes share
	// no counter), no renewal, no validity check of the job, no lost
	// releases and no Key of your own; the schedules pause, slow the job,
	// crash a client and hold a write in the network (node crashes are
	// not played).
	Redlock
	// EtcdMutex is one etcd member (embedded, started by Run on loopback,
	// one for each schedule played at once) and a queue of sessions in
	// it, as etcd's concurrency.Mutex keeps it: your client
	// makes a Session on Target.Addr with the lease TTL Target.TTL (5s,
	// concurrency.WithTTL) and puts its key under the prefix Target.Key
	// (concurrency.NewMutex(s, Target.Key)); the first key by create
	// revision holds the lock. Acquire may block until its key is the
	// first, as Mutex.Lock does; a Lock that answers ErrSessionExpired
	// (its lease ran out while it waited) must return false, with a new
	// Session for the next Acquire. Release must report whether its key
	// was still there (Mutex.Unlock deletes by name and says nothing).
	// Tell the observer your key (an Owner: Owns of the key's name) or
	// put Target.Value in it. No fencing, no renewal of your own (the
	// Session keeps its lease alive); the schedules pause, slow the job
	// and crash a client, on 2s ticks.
	EtcdMutex
)

// Storage is what your job does with the counter it protects.
type Storage int

const (
	// NoFencing: the job reads and writes without a token.
	NoFencing Storage = iota
	// TokenOnWrites: after the lock the job takes a fencing token (INCR
	// lock:fence) and sends it with its write; the storage refuses a write
	// whose token is below the highest it has accepted.
	TokenOnWrites
	// TokenOnReadsAndWrites: the token goes with the read and the write
	// too; the storage refuses both below the highest token it has seen.
	TokenOnReadsAndWrites
)

// Target is where one instance of your client keeps its lock.
type Target struct {
	Client int           // which client process: 0, 1, … (A, B, …)
	Addr   string        // the Redis node, etcd member or ZooKeeper server, host:port (the client's own proxy)
	DB     int           // Redis: the database of the lock key
	Key    string        // the lock's key (ZooKeeper: the lock node, the parent of the client's node)
	Value  string        // the value the lock must hold ("A:91ab"): whose key it is (ZooKeeper: its node's data)
	TTL    time.Duration // the lock's TTL (ZooKeeper: the session timeout)
	Drift  time.Duration // the clock drift a Validator subtracts from what is left
	// DSN, with Service Postgres, is the connection string of the lock
	// session: connect with it (pgx.Connect) in Config.New. With
	// Config.Pooled it reaches the server through PgBouncer, in pgx's
	// simple query protocol (default_query_exec_mode=simple_protocol).
	DSN string
	// Addrs, with Service Redlock, is one address per node, node 1
	// first: the client's own proxy to each (Addr is Addrs[0]); the key
	// and the database are Key and DB on every node.
	Addrs []string
}

// Config is a locktest run.
type Config struct {
	Service Service
	Storage Storage
	// New makes the lock of one client process, talking to t.Addr. It is
	// called before the schedule's clock starts: connect there (a PING),
	// so that the schedule's first call does not dial.
	New func(ctx context.Context, t Target) (Lock, error)
	// Clients is how many instances of your client play each schedule
	// (2 or 3; 0: 3; with Redlock 2 only, and 0 is 2).
	Clients int
	// RenewTicks, if not 0, renews the lock every so many ticks of the
	// TTL's 10 (etcd: 3) with Extend (the Lock must be an Extender), as the
	// model's watchdog does.
	RenewTicks int
	// StopOnFailedRenewal, with RenewTicks: your job stops when Extend
	// reports false (your client's watchdog cancels the job's context):
	// the model's worker gives its job up before its next read or write
	// and releases (renew-fail=stop). Without it the job goes on after a
	// failed renewal, as a worker nobody tells.
	StopOnFailedRenewal bool
	// RenewAfterUnlock, with RenewTicks: your client stops its watchdog
	// after the unlock, not before, so that a renewal due at the release
	// may run after it (watchdog-stop=after-unlock): Run then calls Extend
	// after Release. A correct client's late Extend finds no lock of its
	// own and reports false.
	RenewAfterUnlock bool
	// SetNXOnExtend, with RenewTicks: your client's Extend sets a missing
	// key again and reports true (redsync's WithSetNXOnExtend:
	// extend=setnx), which the model then predicts.
	SetNXOnExtend bool
	// LoseReleases, if set, lets the schedules lose a release on its way
	// to Redis: the client's proxy drops the request and closes its
	// connection, so nothing is applied and Release fails; the job sends
	// the release again after a 3-tick timeout, as a correct client does
	// (the model's losses=1,lose=request,lose-at=release,timeout=3,
	// release-fail=retry). Your Release must keep what it needs to delete
	// its key until a call has succeeded: a client that clears its lock
	// value when the call fails sends nothing the second time, and its key
	// stays until its TTL. Its schedules hold no write in the network (a
	// resent write is not played for real).
	LoseReleases bool
	// ForgetFailedRelease, on Redis: your client takes a Release that
	// failed as done and keeps nothing to send again (rueidislock: its
	// unlock cancels the lock's context, and the one delete it sends is
	// never retried), so the job does not call Release again after a
	// lost release (the swarms unanswered and dropped, LoseReleases) and
	// a release lost on its way leaves the key to its TTL: the model's
	// release-fail=forget. Without it the job sends the release again
	// after its timeout (release-fail=retry).
	ForgetFailedRelease bool
	// CheckValidity, if set, checks before each read and write of the
	// job that some of the lock is left (the Lock must be a Validator), as
	// the model's check=validity client does: the job gives up when
	// nothing is.
	CheckValidity bool
	// Schedules is how many seeded random schedules follow the
	// counterexamples (0: 10); on Redis half as many again follow of each
	// further design (Swarms: an acquire's reply held past the TTL, the
	// lock's server killed and restarted, a client cut off from it, a
	// release whose reply is lost, a release lost on its way, a release
	// held in the network).
	Schedules int
	// Seed seeds the random schedules (0: 1). LOCKTEST_SEED overrides it.
	Seed uint64
	// Tick is one model tick in real time (0: 100ms, reality's default:
	// every request of a tick must be answered within its first half;
	// etcd: 2s, and a multiple of it). A run whose timing the machine
	// could not keep is void and played again with the tick doubled; a
	// schedule that holds an acquire's reply (the reply swarm: up to 12
	// ticks, 1.2 s at 100ms) is played again at a longer tick only while
	// its hold stays within 2.4 s (or 12 ticks × Tick, if longer). Your
	// client's read timeout (go-redis: Options.ReadTimeout) must outlast
	// 12 ticks × Tick: a held Acquire that gives up waiting sooner fails
	// the run with a message naming the hold; one that waited out the
	// hold at Tick and gave up at a longer tick is a void run, played
	// again at the tick before.
	Tick time.Duration
	// Parallel is how many schedules play at once, each on a pair of
	// databases of its own, eight pairs to a redis-server (0: 16; 1: one
	// after the other; etcd: 0 is 8, at most 16, each with an etcd member
	// of its own). A schedule spends its time waiting for its ticks,
	// so several at once cost little CPU; the verdicts and the order of the
	// reports are the same whatever it is.
	Parallel int
	// CallTimeout bounds each call of your Lock and of New (0: 5s): a
	// call that has not returned by then fails the run, naming the call
	// and the schedule's step. Its context ends then too. An Acquire whose
	// reply Run holds has the hold on top.
	CallTimeout time.Duration
	// ServerBinary is the redis-server program to start ("": redis-server
	// on PATH).
	ServerBinary string
	// Advisory, with Service Postgres, is the advisory lock your client
	// takes: Session (the default) or Transaction.
	Advisory Advisory
	// Pooled, with Service Postgres, puts PgBouncer 1.18 in transaction
	// pooling mode between your client and the server (started by Run
	// for each schedule: two server connections that statements take in
	// turn, as the model's pool=tx). A session-level
	// lock then belongs to whichever pooled backend ran the
	// pg_try_advisory_lock, so another client's try on it re-enters it and
	// an unlock on the other backend returns false: Acquire and Release
	// must each send one statement (a statement more takes a turn the
	// model does not) and Release must report what the unlock returned.
	// A transaction keeps its backend, so a Transaction lock is as
	// without the pool. The pool ends no session.
	Pooled bool
	// Key, with Service Redis, is the key your client keeps its lock in
	// when its library names the key itself ("": Target.Key, which is
	// then Key): rueidislock's is its prefix, ":0:" and the lock's name.
	// Run resets it before each schedule and the observer looks there.
	Key string
}

// validKey reports whether k can be the lock's key: printable, no spaces,
// and none of the run's own keys.
func validKey(k string) bool {
	if k == "" || len(k) > 200 || k == reality.FenceKey {
		return false
	}
	for _, r := range k {
		if r <= ' ' || r > '~' {
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Design is the model's design that cfg plays, in lockcheck's design
// grammar (explore check -design …). On Redis and ZooKeeper the
// schedules of further designs follow (Swarms): each Schedule names its
// own.
func (cfg Config) Design() string { return cfg.design(true) }

// A Swarm is a design whose shortest runs and random schedules Run plays
// besides those of Design, with faults Design does not draw: its schedules
// are named after its Tag (exclusive-reply, reply-1, …).
type Swarm struct {
	Tag    string // its schedules' names
	Design string // its design, in lockcheck's design grammar
}

// swarm is a further design: the faults it adds to the design with the
// pause alone, and a behaviour whose shortest run it plays too.
type swarm struct {
	tag, faults string
	shows       *model.Property
	// noRenew: not played with Config.RenewTicks (a renewal due while the
	// release is held would wait behind it in the proxy)
	noRenew bool
}

// swarms are the further designs of a Redis client, each with no other
// fault (so that its shortest runs show its own, not a pause's):
//   - reply: an acquire whose reply the network holds past the TTL (the
//     client learns it won when its key may be gone: a client that
//     measures its validity must count from the send);
//   - restart: the lock's redis-server killed (SIGKILL, no persistence)
//     and started again 3 ticks later, on a server of the schedule's own:
//     the key and the fence counter are gone, and a call while it is
//     down fails (the model's refused acquire, nothing released);
//   - partition: a client cut off from the lock's redis-server for 3
//     ticks (its proxy drops every byte either way and closes the
//     connection): its calls fail at once, its storage stays in reach;
//   - unanswered: a release applied whose reply is lost (the proxy
//     forwards the request, drops the reply and closes the connection):
//     Release fails, and the job sends it again after a 3-tick timeout,
//     when another client may hold the key;
//   - dropped: a release lost on its way (the proxy drops the request and
//     closes the connection): nothing is deleted, Release fails, and the
//     job sends it again after the timeout (Config.LoseReleases plays the
//     same loss among Design's faults);
//   - held-release: a release the network holds for up to 12 ticks, past
//     the TTL (the client's proxy keeps its request back, and the client
//     waits in its Release): it lands when another client may hold the
//     key. Not with Config.RenewTicks.
var swarms = []swarm{
	{"reply", ",pauses=0,delay-at=acquire,delays=1,max-delay=" + strconv.Itoa(replyHoldTicks), &wonLate, false},
	{"restart", ",pauses=0,node-crashes=1,restart=3", &releaseDown, false},
	{"partition", ",pauses=0,partitions=1,partition-ticks=3", &releaseCut, false},
	{"unanswered", ",pauses=0,losses=1,lose=reply,lose-at=release,timeout=3", &resentOnOther, false},
	{"dropped", ",pauses=0,losses=1,lose=request,lose-at=release,timeout=3", &releaseResent, false},
	{"held-release", ",pauses=0,delay-at=release,delays=1,max-delay=" + strconv.Itoa(replyHoldTicks), &releaseLate, true},
}

// replyHoldTicks is the longest hold of an acquire's reply (the reply
// swarm's max-delay), and of a release (held-release's, whose reply
// comes after it lands): 1.2 s at the default tick. A client's read
// timeout must outlast it.
const replyHoldTicks = 12

// maxHold bounds the hold of a reply in a void run played again: the tick
// of a schedule that holds a reply is doubled only while its longest hold
// stays within maxHold (or within its hold at Config.Tick, if longer), so
// that a client whose read timeout is 3 s (go-redis's default before
// v9.22; 5 s since) still sees its reply, with room for a loaded machine.
const maxHold = 2400 * time.Millisecond

// releaseLate is a behaviour of the held-release swarm: a release the
// network held lands when the key is another client's (a check-and-delete
// leaves it; a plain DEL sent while the lock seemed valid deletes it).
var releaseLate = model.Property{Name: "release-late", Expect: model.Sometimes,
	Doc: "a release held in the network lands on another client's key",
	Bad: func(d *model.Design, s *model.State, ev *model.Event) bool {
		if ev == nil || ev.Action.Kind != model.ActArrive || s.Clients[ev.Action.Client].Phase != model.PhaseDone {
			return false
		}
		h := model.LockHolder(d, s)
		return h >= 0 && h != int(ev.Action.Client) || ev.Flags&model.EvRemovedOther != 0
	}}

// resentOnOther is a behaviour of the unanswered swarm: a release sent
// again after its reply was lost (the first was applied) finds another
// client's key, which a check-and-delete leaves.
var resentOnOther = model.Property{Name: "resent-on-other", Expect: model.Sometimes,
	Doc: "a release sent again after its reply was lost finds another client's key",
	Bad: func(d *model.Design, s *model.State, ev *model.Event) bool {
		if ev == nil || ev.Action.Kind != model.ActRelease || s.Used[model.FaultLoss] == 0 {
			return false
		}
		h := model.LockHolder(d, s)
		return h >= 0 && h != int(ev.Action.Client) || ev.Flags&model.EvRemovedOther != 0
	}}

// releaseCut is a behaviour of the partition swarm: a release sent while
// its client is cut off from the lock's node.
var releaseCut = model.Property{Name: "release-cut", Expect: model.Sometimes,
	Doc: "a client releases while it is cut off from the lock's node",
	Bad: func(d *model.Design, s *model.State, ev *model.Event) bool {
		return ev != nil && ev.Action.Kind == model.ActRelease && ev.Result == model.ResUnreachable
	}}

// releaseDown is a behaviour of the restart swarm: a release sent while
// the lock's node is down.
var releaseDown = model.Property{Name: "release-down", Expect: model.Sometimes,
	Doc: "a client releases while the lock's node is down",
	Bad: func(d *model.Design, s *model.State, ev *model.Event) bool {
		return ev != nil && ev.Action.Kind == model.ActRelease && s.Nodes[0].Back != 0
	}}

// wonLate is a behaviour of the reply swarm: a client checks or reads
// with a lock whose acquire it sent a TTL or more ago, that is, it
// learnt that it won only once its key had expired.
var wonLate = model.Property{Name: "won-late", Expect: model.Sometimes,
	Doc: "a client checks or reads a TTL after it sent the acquire it won",
	Bad: func(d *model.Design, s *model.State, ev *model.Event) bool {
		if ev == nil || (ev.Action.Kind != model.ActCheck && ev.Action.Kind != model.ActRead) {
			return false
		}
		c := &s.Clients[ev.Action.Client]
		return int(c.Since)+d.TTLTicks <= int(s.Now)
	}}

// zkSwarms are the further designs of a ZooKeeper client:
//   - lost-create: an acquire whose create is applied and its reply lost
//     (the client's proxy forwards the create, the Acquire's first
//     request, drops its reply and closes the connection; the session
//     lives on): the node is made, owned by the client's session, while
//     the create fails with a connection loss. The model's client finds
//     its node again after its timeout (protected mode, as go-zookeeper's
//     Conn.CreateProtectedEphemeralSequential does: a GUID in the node's
//     name, looked up in the lock node's children); a recipe that creates
//     again leaves the first node, the lowest, for no one, and everyone
//     waits behind it.
var zkSwarms = []swarm{
	{"lost-create", ",pauses=0,losses=1,lose=reply,lose-at=acquire,timeout=3", &foundAfterLost, false},
}

// foundAfterLost is a behaviour of the lost-create swarm: a client wins
// the lock after its create's reply was lost.
var foundAfterLost = model.Property{Name: "found-after-lost", Expect: model.Sometimes,
	Doc: "a client whose create's reply was lost wins the lock",
	Bad: func(d *model.Design, s *model.State, ev *model.Event) bool {
		return ev != nil && ev.Action.Kind == model.ActAcquire && ev.Result == model.ResOK && s.Used[model.FaultLoss] > 0
	}}

// Swarms is what Run plays for cfg besides Design: on Redis and on
// ZooKeeper only. Only the unanswered and dropped swarms lose a release;
// the others do not, whatever Config.LoseReleases says (it loses
// releases among Design's faults).
func (cfg Config) Swarms() []Swarm {
	plain := cfg
	plain.LoseReleases = false
	var out []Swarm
	for _, s := range cfg.swarms() {
		faults := s.faults
		if cfg.ForgetFailedRelease && strings.Contains(faults, ",losses=") {
			faults += ",release-fail=forget"
		}
		out = append(out, Swarm{Tag: s.tag, Design: plain.design(false) + faults})
	}
	return out
}

// swarms are the further designs played for cfg on Redis or ZooKeeper.
func (cfg Config) swarms() []swarm {
	var out []swarm
	all := swarms
	switch cfg.Service {
	case ZooKeeper:
		all = zkSwarms
	case Redis:
	default:
		return nil
	}
	for _, s := range all {
		if !s.noRenew || cfg.RenewTicks == 0 {
			out = append(out, s)
		}
	}
	return out
}

// design is the design without its faults but the pause (the default
// budget), or with a slow job, a crash and a write held in the network
// too.
func (cfg Config) design(faults bool) string {
	fence, storage := "none", "plain"
	switch cfg.Storage {
	case TokenOnWrites:
		fence, storage = "write", "cond-update"
	case TokenOnReadsAndWrites:
		fence, storage = "rw", "max-token"
	}
	lock := "redis"
	switch cfg.Service {
	case Replica:
		lock = "replica"
	case Redlock:
		lock = "redlock"
	}
	s := lock + "/cad/" + fence + "/" + storage
	if fence != "none" {
		s += ",acquire=incr-after"
	}
	if cfg.Service == Etcd { // whole-second leases: 2s ticks, so short TTLs
		s = "etcd/cad/none/plain,ttl=3,work=1"
	}
	switch {
	case cfg.Service == Postgres:
		s = "advisory/cad/none/plain"
		if cfg.Advisory == Transaction {
			s += ",level=xact"
		}
		if cfg.Pooled {
			s += ",pool=tx"
		}
		if faults {
			s += ",slow=1"
		}
	case cfg.Service == ZooKeeper:
		s = "zookeeper/cad/none/plain"
		if faults {
			s += ",slow=1,crashes=1"
		}
	case cfg.Service == EtcdMutex:
		s = etcdMutexDesign(faults)
	case faults && cfg.LoseReleases:
		s += ",slow=1,crashes=1"
	case faults:
		s += ",delay-at=write,slow=1,crashes=1,delays=1"
	}
	if cfg.LoseReleases {
		s += ",losses=1,lose=request,lose-at=release,timeout=3"
		if cfg.ForgetFailedRelease {
			s += ",release-fail=forget"
		}
	}
	if n := cfg.clients(); n != 3 {
		s += ",clients=" + strconv.Itoa(n)
	}
	if cfg.RenewTicks > 0 {
		s += ",renew=" + strconv.Itoa(cfg.RenewTicks)
	}
	if cfg.CheckValidity {
		s += ",check=validity"
	}
	if cfg.SetNXOnExtend {
		s += ",extend=setnx"
	}
	if cfg.StopOnFailedRenewal {
		s += ",renew-fail=stop"
	}
	if cfg.RenewAfterUnlock {
		s += ",watchdog-stop=after-unlock"
	}
	return s
}

func (cfg Config) clients() int {
	if cfg.Clients == 0 && cfg.Service == Redlock { // five nodes: three clients' model is 25 times two's
		return 2
	}
	if cfg.Clients == 0 {
		return 3
	}
	return cfg.Clients
}

// Schedule is one schedule Run plays: its name (what LOCKTEST_SCHEDULE
// takes) and its steps in lockcheck's scenario words ("A acquire", "tick",
// "B pause 12").
type Schedule struct {
	Name   string
	Design string // the design it was drawn from, whose model it is compared with
	Steps  []string
	trace  []model.Action
	d      *model.Design
}

// The environment variables a replay command sets.
const (
	EnvSeed     = "LOCKTEST_SEED"     // the seed of the random schedules
	EnvSchedule = "LOCKTEST_SCHEDULE" // play this schedule only (a name from a report)
)

// Run plays every schedule against cfg's client and reports each run that
// parts from the model with t.Error, as it does a bad Config and a call of
// your Lock that fails or panics (naming the call and the schedule's
// step). It skips the test (or fails it with CI=true) when redis-server is
// not installed.
func Run(t testing.TB, cfg Config) {
	t.Helper()
	if err := cfg.check(); err != nil {
		t.Errorf("locktest: %v", err)
		return
	}
	if _, err := model.ParseDesign(cfg.Design()); err != nil {
		t.Errorf("locktest: design %s: %v", cfg.Design(), err)
		return
	}
	if s := os.Getenv(EnvSeed); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			t.Errorf("locktest: %s=%q: want a whole number ≥ 1", EnvSeed, s)
			return
		}
		cfg.Seed = n
	}
	scheds, err := Schedules(cfg)
	if err != nil {
		t.Errorf("locktest: %v", err)
		return
	}
	if only := os.Getenv(EnvSchedule); only != "" {
		k := slices.IndexFunc(scheds, func(s Schedule) bool { return s.Name == only })
		if k < 0 {
			t.Errorf("locktest: %s=%q: no such schedule (want one of %s)", EnvSchedule, only, names(scheds))
			return
		}
		scheds = scheds[k : k+1]
	}
	playAll(t, cfg, scheds)
}

// playAll plays scheds, cfg.parallel() at a time, and reports their
// verdicts in the order of scheds: a run that parts from the model with
// t.Error, and the first that fails (the client or its setup) with
// t.Error too, and nothing after it.
func playAll(t testing.TB, cfg Config, scheds []Schedule) (voidRuns int) {
	t.Helper()
	par := min(cfg.parallel(), len(scheds))
	srvs, err := startRedis(t, cfg, (par+pairsPerServer-1)/pairsPerServer)
	if err != nil {
		t.Errorf("locktest: %v", err)
		return 0
	}
	// Etcd, Postgres, ZooKeeper: each slot's server of the lock
	var locks []string
	var lockWords string
	switch cfg.Service {
	case Etcd, EtcdMutex:
		locks, err = startEtcd(t, par)
		lockWords = "embedded etcd members"
	case Postgres:
		locks, err = startPostgres(t, cfg, par)
		lockWords = "PostgreSQL servers"
	case ZooKeeper:
		locks, err = startZooKeeper(t, par)
		lockWords = "ZooKeeper servers"
	}
	// Redlock: redlockNodes redis-servers beside each storage server,
	// node k of its slots
	var nodes []*reality.Server
	if err == nil && cfg.Service == Redlock {
		nodes, err = startRedis(t, cfg, len(srvs)*redlockNodes)
	}
	if err != nil {
		t.Errorf("locktest: %v", err)
		return 0
	}
	maker := cfg.maker()
	type verdict struct {
		played bool
		parts  string // the report of a run that parts from the model ("": it agrees)
		err    error
	}
	out := make([]verdict, len(scheds))
	var next, failed atomic.Int64
	failed.Store(int64(len(scheds)))
	var finished, void atomic.Int64
	var wg sync.WaitGroup
	began := time.Now()
	for slot := 0; slot < par; slot++ {
		wg.Add(1)
		go func(slot int) {
			defer wg.Done()
			srv, pair := srvs[slot/pairsPerServer], slot%pairsPerServer
			var at server
			if locks != nil {
				at = cfg.server(locks[slot])
			}
			if nodes != nil {
				g := slot / pairsPerServer
				at.nodes = nodes[g*redlockNodes : (g+1)*redlockNodes]
			}
			for {
				k := int(next.Add(1) - 1)
				if k >= len(scheds) || int64(k) > failed.Load() {
					return
				}
				var err error
				if scheds[k].d.NodeCrashes > 0 && scheds[k].d.Lock == model.LockRedis && at.node == nil { // the slot's lock node, which node-crash steps kill
					var nodes []*reality.Server
					if nodes, err = startRedis(t, cfg, 1); err == nil {
						at.node = nodes[0]
					}
				}
				var c *reality.Comparison
				if err == nil {
					c, err = play(srv, at, 2*pair, 2*pair+1, scheds[k], cfg, maker, &void)
				}
				out[k] = verdict{played: true, err: err}
				if err == nil && !c.Agree { // only a report is kept: a run of 10,000 keeps no comparisons
					out[k].parts = c.Text()
				}
				finished.Add(1)
				if err != nil { // the other schedules would fail alike: start no more
					for f := failed.Load(); int64(k) < f && !failed.CompareAndSwap(f, int64(k)); f = failed.Load() {
					}
				}
			}
		}(slot)
	}
	// a long run says how far it is (go test -v shows it as it comes)
	stop := make(chan struct{})
	if len(scheds) >= 200 {
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(30 * time.Second):
					t.Logf("locktest: %d of %d schedules played (%.0f s)", finished.Load(), len(scheds), time.Since(began).Seconds())
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	took := time.Since(began)
	played, parted := 0, 0
	for k, sc := range scheds {
		v := out[k]
		if !v.played { // an earlier one failed
			break
		}
		played++
		if v.err != nil {
			t.Errorf("locktest: schedule %s: %v (the other schedules are not played)\nreplay: %s", sc.Name, v.err, replayCommand(t, cfg, sc))
			break
		}
		if v.parts != "" {
			parted++
			t.Errorf("locktest: your client parts from the model on schedule %s (design %s, seed %d):\n%s\nreplay: %s",
				sc.Name, sc.Design, cfg.seed(), v.parts, replayCommand(t, cfg, sc))
		}
	}
	var addrs []string
	for _, s := range srvs {
		addrs = append(addrs, s.Addr())
	}
	if len(locks) > 0 {
		addrs = append(addrs, fmt.Sprintf("%d %s", len(locks), lockWords))
	}
	if len(nodes) > 0 {
		addrs = append(addrs, fmt.Sprintf("%d Redlock nodes", len(nodes)))
	}
	designs := cfg.Design()
	for _, s := range cfg.Swarms() {
		if slices.ContainsFunc(scheds, func(sc Schedule) bool { return sc.Design == s.Design }) {
			designs += " and " + s.Design + " (" + s.Tag + ")"
		}
	}
	t.Logf("locktest: %d of %d schedules of design %s (seed %d) played on %s, %d at once, in %.1f s (%.1f a second; %d void runs played again); %d part from the model",
		played, len(scheds), designs, cfg.seed(), strings.Join(addrs, ", "), par, took.Seconds(), float64(played)/took.Seconds(), void.Load(), parted)
	return int(void.Load())
}

// maker makes each client's lock with cfg.New, checked, behind an adapter.
func (cfg Config) maker() reality.UserMaker {
	return func(ctx context.Context, ut reality.UserTarget) (reality.UserLock, error) {
		made := make(chan Lock, 1)
		call := "Config.New for client " + model.ClientName(ut.Client)
		// New gets the run's context, not the call's: a client may keep it
		// for its own goroutines (a session's keep-alive)
		_, err := guarded(ctx, call, cfg.callTimeout(), func(context.Context) (bool, error) {
			l, err := cfg.New(ctx, Target{Client: ut.Client, Addr: ut.Addr, DB: ut.DB, Key: ut.Key, Value: ut.Value, TTL: ut.TTL, Drift: ut.Drift, DSN: ut.DSN, Addrs: ut.Addrs})
			made <- l
			return false, err
		})
		if err != nil {
			select {
			case l := <-made: // a Lock with its error: closed, not used
				if c, ok := l.(interface{ Close() error }); ok && l != nil {
					_ = c.Close()
				}
			default:
			}
			if strings.HasPrefix(err.Error(), call) {
				return nil, err
			}
			return nil, fmt.Errorf("%s: %v", call, err)
		}
		l := <-made
		if l == nil {
			return nil, fmt.Errorf("Config.New for client %s returned a nil Lock", model.ClientName(ut.Client))
		}
		if _, ok := l.(Extender); cfg.RenewTicks > 0 && !ok {
			return nil, fmt.Errorf("Config.RenewTicks is %d but the Lock (%T) has no Extend method (implement locktest.Extender)", cfg.RenewTicks, l)
		}
		if _, ok := l.(Tx); cfg.Advisory == Transaction && !ok {
			return nil, fmt.Errorf("Config.Advisory is locktest.Transaction but the Lock (%T) has no Query and Exec methods (implement locktest.Tx)", l)
		}
		if _, ok := l.(Validator); cfg.CheckValidity && !ok {
			return nil, fmt.Errorf("Config.CheckValidity is set but the Lock (%T) has no Validity method (implement locktest.Validator)", l)
		}
		return &adapter{l: l, timeout: cfg.callTimeout(), blocking: cfg.Service == ZooKeeper || cfg.Service == Redlock || cfg.Service == EtcdMutex}, nil
	}
}

func (cfg Config) callTimeout() time.Duration {
	if cfg.CallTimeout == 0 {
		return 5 * time.Second
	}
	return cfg.CallTimeout
}

func (cfg Config) parallel() int {
	switch {
	case cfg.Parallel != 0:
		return cfg.Parallel
	case cfg.Service == Etcd || cfg.Service == EtcdMutex:
		return defaultEtcd
	case cfg.Service == Postgres:
		return defaultPostgres
	case cfg.Service == ZooKeeper:
		return defaultZooKeeper
	}
	return 16
}

// defaultPostgres and maxPostgres are Config.Parallel's default and
// bound with locktest.Postgres: each schedule at once has a PostgreSQL
// server of its own (the advisory lock 42 and the counter's row are one
// per server), about 30 MB and a second to start each.
const (
	defaultPostgres = 4
	maxPostgres     = 8
)

// defaultZooKeeper and maxZooKeeper are Config.Parallel's default and
// bound with locktest.ZooKeeper: each schedule at once has a ZooKeeper
// server of its own (the lock node is one per server), a JVM of about
// 100 MB and a second or two to start each.
const (
	defaultZooKeeper = 4
	maxZooKeeper     = 8
)

// defaultEtcd and maxEtcd are Config.Parallel's default and bound with
// locktest.Etcd: each schedule at once has an embedded etcd member of its
// own (the lock key is one per member), and a member ticks its raft every
// 10ms.
const (
	defaultEtcd = 8
	maxEtcd     = 16
)

func (cfg Config) seed() uint64 {
	if cfg.Seed == 0 {
		return 1
	}
	return cfg.Seed
}

func (cfg Config) check() error {
	switch {
	case cfg.Service < Redis || cfg.Service > EtcdMutex:
		return fmt.Errorf("Config.Service %d: want locktest.Redis, locktest.Etcd, locktest.Postgres, locktest.Replica, locktest.ZooKeeper, locktest.Redlock or locktest.EtcdMutex", cfg.Service)
	case cfg.Service != Redis && cfg.ForgetFailedRelease:
		return errors.New("Config.ForgetFailedRelease is for locktest.Redis (a release is lost on one Redis node only); want it unset")
	case cfg.Service == Redlock && cfg.Clients == 3:
		return errors.New("Config.Clients 3 with locktest.Redlock: want 0 or 2 (three clients' model of five nodes with every fault is 82 M states, 1.2 GB and a minute and a half to explore)")
	case cfg.Service == Redlock && cfg.Key != "":
		return fmt.Errorf("Config.Key %q with locktest.Redlock: want it unset (the key is Target.Key on every node)", clip(cfg.Key))
	case cfg.Service == Redlock && cfg.Storage != NoFencing:
		return fmt.Errorf("Config.Storage %d with locktest.Redlock: want NoFencing (Redlock's nodes share no counter to take a token from)", cfg.Storage)
	case cfg.Service == Redlock && (cfg.LoseReleases || cfg.CheckValidity || cfg.RenewTicks != 0):
		return errors.New("Config.LoseReleases, CheckValidity and RenewTicks with locktest.Redlock: not played (Redlock is played with its validity counted at acquire, no renewal and no lost request); want them unset")
	case cfg.Service == Replica && cfg.Key != "":
		return fmt.Errorf("Config.Key %q with locktest.Replica: want it unset (the key is Target.Key)", clip(cfg.Key))
	case cfg.Service == Replica && cfg.LoseReleases:
		return errors.New("Config.LoseReleases with locktest.Replica: not played (a lost request is played on one Redis node only); want it unset")
	case cfg.Storage < NoFencing || cfg.Storage > TokenOnReadsAndWrites:
		return fmt.Errorf("Config.Storage %d: want NoFencing, TokenOnWrites or TokenOnReadsAndWrites", cfg.Storage)
	case cfg.New == nil:
		return errors.New("Config.New is nil: want a function that makes your client's Lock")
	case cfg.Clients != 0 && (cfg.Clients < 2 || cfg.Clients > 3):
		return fmt.Errorf("Config.Clients %d: want 2 or 3 (0: 3)", cfg.Clients)
	case cfg.Service == Etcd && cfg.Key != "":
		return fmt.Errorf("Config.Key %q with locktest.Etcd: want it unset (the key is Target.Key)", clip(cfg.Key))
	case cfg.Key != "" && !validKey(cfg.Key):
		return fmt.Errorf("Config.Key %q: want 1 to 200 printable ASCII characters, no spaces, and not the fence counter's key %s", clip(cfg.Key), reality.FenceKey)
	case cfg.Service == Etcd && cfg.Storage != NoFencing:
		return fmt.Errorf("Config.Storage %d with locktest.Etcd: want NoFencing (an etcd token is the key's create revision, which Lock does not report)", cfg.Storage)
	case cfg.Service == Etcd && cfg.LoseReleases:
		return errors.New("Config.LoseReleases with locktest.Etcd: not played (a lost request is played on Redis only); want it unset")
	case cfg.Service == Etcd && cfg.CheckValidity:
		return errors.New("Config.CheckValidity with locktest.Etcd: not played; want it unset")
	case cfg.Service == Etcd && (cfg.RenewTicks < 0 || cfg.RenewTicks > 2):
		return fmt.Errorf("Config.RenewTicks %d with locktest.Etcd: want 0 (no renewal) to 2 ticks of the TTL's 3", cfg.RenewTicks)
	case cfg.Service == Etcd && cfg.Parallel > maxEtcd:
		return fmt.Errorf("Config.Parallel %d with locktest.Etcd: want 0 (%d) to %d schedules at once (an etcd member each)", cfg.Parallel, defaultEtcd, maxEtcd)
	case cfg.Service == Postgres && cfg.Key != "":
		return fmt.Errorf("Config.Key %q with locktest.Postgres: want it unset (the lock is advisory lock 42)", clip(cfg.Key))
	case cfg.Service == Postgres && cfg.Storage != NoFencing:
		return fmt.Errorf("Config.Storage %d with locktest.Postgres: want NoFencing (an advisory lock gives no token)", cfg.Storage)
	case cfg.Service == Postgres && (cfg.LoseReleases || cfg.CheckValidity || cfg.RenewTicks != 0):
		return errors.New("Config.LoseReleases, CheckValidity and RenewTicks with locktest.Postgres: not played (a session-level advisory lock has no TTL to extend or measure); want them unset")
	case cfg.Service != Postgres && (cfg.Advisory != Session || cfg.Pooled):
		return errors.New("Config.Advisory and Pooled are for locktest.Postgres; want them unset")
	case cfg.Advisory < Session || cfg.Advisory > Transaction:
		return fmt.Errorf("Config.Advisory %d: want locktest.Session or locktest.Transaction", cfg.Advisory)
	case cfg.Service == Postgres && cfg.Parallel > maxPostgres:
		return fmt.Errorf("Config.Parallel %d with locktest.Postgres: want 0 (%d) to %d schedules at once (a PostgreSQL server each)", cfg.Parallel, defaultPostgres, maxPostgres)
	case cfg.Service == ZooKeeper && cfg.Key != "":
		return fmt.Errorf("Config.Key %q with locktest.ZooKeeper: want it unset (the lock node is Target.Key)", clip(cfg.Key))
	case cfg.Service == ZooKeeper && cfg.Storage != NoFencing:
		return fmt.Errorf("Config.Storage %d with locktest.ZooKeeper: want NoFencing (a token would be the node's sequence, which Lock does not report)", cfg.Storage)
	case cfg.Service == ZooKeeper && (cfg.LoseReleases || cfg.CheckValidity || cfg.RenewTicks != 0):
		return errors.New("Config.LoseReleases, CheckValidity and RenewTicks with locktest.ZooKeeper: not played (a session renews itself with its heartbeats; lost requests are played on Redis only); want them unset")
	case cfg.Service == ZooKeeper && cfg.Parallel > maxZooKeeper:
		return fmt.Errorf("Config.Parallel %d with locktest.ZooKeeper: want 0 (%d) to %d schedules at once (a ZooKeeper server each)", cfg.Parallel, defaultZooKeeper, maxZooKeeper)
	case cfg.Service == Etcd && cfg.Tick != 0 && cfg.Tick%reality.EtcdTick != 0:
		return fmt.Errorf("Config.Tick %v with locktest.Etcd: want a multiple of %v (leases are whole seconds and expire up to half a second late)", cfg.Tick, reality.EtcdTick)
	case cfg.RenewTicks < 0 || cfg.RenewTicks > 9:
		return fmt.Errorf("Config.RenewTicks %d: want 0 (no renewal) to 9 ticks of the TTL's 10", cfg.RenewTicks)
	case cfg.RenewTicks == 0 && (cfg.StopOnFailedRenewal || cfg.RenewAfterUnlock || cfg.SetNXOnExtend):
		return fmt.Errorf("Config.StopOnFailedRenewal, RenewAfterUnlock and SetNXOnExtend need Config.RenewTicks ≥ 1 (a client that renews)")
	case cfg.Schedules < 0 || cfg.Schedules > 100000:
		return fmt.Errorf("Config.Schedules %d: want 0 (10) to 100000", cfg.Schedules)
	case cfg.Parallel < 0 || cfg.Parallel > maxParallel:
		return fmt.Errorf("Config.Parallel %d: want 0 (16) to %d schedules at once", cfg.Parallel, maxParallel)
	case cfg.CallTimeout < 0:
		return fmt.Errorf("Config.CallTimeout %v: want 0 (5s) or more", cfg.CallTimeout)
	case cfg.Tick != 0 && reality.CheckTick(cfg.Tick) != nil:
		return fmt.Errorf("Config.Tick: %v", reality.CheckTick(cfg.Tick))
	}
	return cfg.checkEtcdMutex()
}

// Schedules is what Run plays for cfg: the shortest counterexample of
// every property the design's model breaks and the shortest run that shows
// each behaviour it can show (a lock expired while held, a contended
// acquire, a fenced write, every job done), and cfg.Schedules random
// schedules drawn from the model's enabled actions with cfg.Seed; shortest
// first. The same config gives the same schedules.
//
// On Redis and ZooKeeper the designs of Swarms follow, each with its
// shortest runs (exclusive-reply, …) and half as many random schedules
// (reply-1, …): they leave Design's schedules as they were.
func Schedules(cfg Config) ([]Schedule, error) {
	var out []Schedule
	// the model's shortest runs of each property, with the pause alone
	// and with every fault (a run of the first is one of the second too),
	// then of each further design
	full, err := model.ParseDesign(cfg.Design())
	if err != nil {
		return nil, err
	}
	type drawn struct {
		suffix, name string
		d            *model.Design
	}
	from := []drawn{{"", cfg.Design(), nil}, {"-faults", cfg.Design(), &full}}
	if from[0].d, err = parse(cfg.design(false)); err != nil {
		return nil, err
	}
	sw, err := cfg.swarmDesigns()
	if err != nil {
		return nil, err
	}
	for k, s := range cfg.Swarms() {
		from = append(from, drawn{"-" + s.Tag, s.Design, sw[k]})
	}
	for k, f := range from {
		dd := f.d
		var props []model.Property
		if sws := cfg.swarms(); k >= 2 && sws[k-2].shows != nil {
			props = append(append([]model.Property(nil), model.PropertiesFor(dd)...), *sws[k-2].shows)
		}
		rep, err := explore.Check(explore.Config{Design: *dd, Properties: props, Bounds: explore.Bounds{Symmetry: true, Workers: 1}})
		if err != nil {
			return nil, fmt.Errorf("explore %s: %v", dd.Name(), err)
		}
		for _, r := range rep.Results { // counterexamples and witnesses
			if len(r.Trace) > 0 && !sessionRace(dd, r.Trace) && !slices.ContainsFunc(out, func(s Schedule) bool { return slices.Equal(s.trace, r.Trace) }) {
				// a shortest run of a further design that Design draws too
				// is Design's already (the faults' order in Actions)
				cmp := dd
				if f.suffix == "" { // compared with Design's model, as the random ones
					cmp = &full
				}
				out = append(out, schedule(r.Property+f.suffix, r.Trace, f.name, cmp))
			}
		}
	}
	if cfg.LoseReleases { // and the shortest run that loses a release and sends it again
		rep, err := explore.Check(explore.Config{Design: full, Properties: []model.Property{releaseResent}, Bounds: explore.Bounds{Symmetry: true, Workers: 1}})
		if err != nil {
			return nil, fmt.Errorf("explore %s: %v", full.Name(), err)
		}
		for _, r := range rep.Results {
			if len(r.Trace) > 0 {
				out = append(out, schedule(releaseResent.Name, r.Trace, cfg.Design(), &full))
			}
		}
	}
	if cfg.Service == Redlock { // and the shortest run whose vote is split: lost by one vote
		rep, err := explore.Check(explore.Config{Design: *from[0].d, Properties: []model.Property{lostByOne}, Bounds: explore.Bounds{Symmetry: true, Workers: 1}})
		if err != nil {
			return nil, fmt.Errorf("explore %s: %v", from[0].d.Name(), err)
		}
		for _, r := range rep.Results {
			if len(r.Trace) > 0 {
				out = append(out, schedule(lostByOne.Name, r.Trace, cfg.Design(), &full))
			}
		}
	}
	em, err := cfg.etcdMutexSchedules(from[0].d, &full) // EtcdMutex: and the shortest run of a waiter locking again
	if err != nil {
		return nil, err
	}
	out = append(out, em...)
	n := cfg.Schedules
	if n == 0 {
		n = 10
	}
	random, err := randomSchedules(cfg, n)
	if err != nil {
		return nil, err
	}
	out = append(out, random...)
	for k, s := range cfg.Swarms() { // half as many of each further design, on streams of their own
		for j := 0; j < (n+1)/2; j++ {
			out = append(out, schedule(s.Tag+"-"+strconv.Itoa(j+1), randomSchedule(sw[k], cfg.seed(), uint64(k+1)<<40|uint64(j)), s.Design, sw[k]))
		}
	}
	// shortest first: the first schedule a client fails is the shortest
	// played that shows its mistake
	slices.SortStableFunc(out, func(a, b Schedule) int { return len(a.trace) - len(b.trace) })
	return out, nil
}

// releaseResent is a behaviour for Config.LoseReleases: a release after a
// release was lost on the way (the designs lose releases only), that is,
// the lost release sent again once its timeout is over.
var releaseResent = model.Property{Name: "release-resent", Expect: model.Sometimes,
	Doc: "a release lost on the way is sent again",
	Bad: func(d *model.Design, s *model.State, ev *model.Event) bool {
		return ev != nil && ev.Action.Kind == model.ActRelease && s.Used[model.FaultLoss] > 0
	}}

// lostByOne is a behaviour for locktest.Redlock: an attempt that ends
// with a majority less one of the votes (two of five), lost, its votes
// split with another client's: the run that tells a client which counts
// half the nodes as a win.
var lostByOne = model.Property{Name: "lost-by-one", Expect: model.Sometimes,
	Doc: "a Redlock attempt is lost by one vote",
	Bad: func(d *model.Design, s *model.State, ev *model.Event) bool {
		return ev != nil && ev.Action.Kind == model.ActAcquire && d.Lock == model.LockRedlock && int(ev.Node)+1 == d.Nodes &&
			ev.Flags&model.EvWon == 0 && int(ev.Value) == d.Nodes/2
	}}

// randomSchedules is cfg's random schedules random-1 … random-n: every
// other one drawn with the pause alone (its pauses are the long ones),
// the others with every fault.
func randomSchedules(cfg Config, n int) ([]Schedule, error) {
	d, err := parse(cfg.Design())
	if err != nil {
		return nil, err
	}
	base, err := parse(cfg.design(false))
	if err != nil {
		return nil, err
	}
	out := make([]Schedule, 0, n)
	for k := 0; k < n; k++ {
		dk := d
		if k%2 == 0 {
			dk = base
		}
		// drawn with the pause alone or not, a schedule is compared with
		// the model of Design (a run of the first is one of the second)
		out = append(out, schedule("random-"+strconv.Itoa(k+1), randomSchedule(dk, cfg.seed(), uint64(k)), cfg.Design(), d))
	}
	return out, nil
}

// swarmDesigns are the designs of cfg.Swarms(), each playable for real.
func (cfg Config) swarmDesigns() ([]*model.Design, error) {
	var out []*model.Design
	for _, s := range cfg.Swarms() {
		d, err := parse(s.Design)
		if err != nil {
			return nil, err
		}
		if err := reality.Playable(d); err != nil {
			return nil, fmt.Errorf("swarm %s: %v", s.Tag, err)
		}
		out = append(out, d)
	}
	return out, nil
}

func parse(name string) (*model.Design, error) {
	d, err := model.ParseDesign(name)
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// schedule is trace as a Schedule compared with the model of d (named
// design).
func schedule(name string, trace []model.Action, design string, d *model.Design) Schedule {
	s := Schedule{Name: name, Design: design, trace: trace, d: d}
	for _, a := range trace {
		s.Steps = append(s.Steps, a.String())
	}
	return s
}

func names(s []Schedule) string {
	var n []string
	for _, x := range s {
		n = append(n, x.Name)
	}
	return strings.Join(n, ", ")
}

// randomSchedule is schedule k of seed: faults at 8%; one that races a
// session (sessionRace) is drawn again from the next stream.
func randomSchedule(d *model.Design, seed, k uint64) []model.Action {
	for j := uint64(0); ; j++ {
		tr := reality.RandomSchedule(d, rand.New(rand.NewPCG(seed, k|j<<32)), 8)
		if !sessionRace(d, tr) {
			return tr
		}
	}
}

// sessionRace reports whether trace pauses a client of a session lock
// (ZooKeeper, etcd's Mutex) for exactly its session's ticks
// (reality.SessionRace), or a waiter of etcd's Mutex past its session
// once its key is the first (reality.QueueRace): such a schedule is not
// played.
func sessionRace(d *model.Design, trace []model.Action) bool {
	return slices.ContainsFunc(trace, func(a model.Action) bool { return reality.SessionRace(d, a) }) || reality.QueueRace(d, trace)
}

// replayCommand is the one line that plays sc alone again.
func replayCommand(t testing.TB, cfg Config, sc Schedule) string {
	return fmt.Sprintf("%s=%d %s=%s go test -run '^%s$' .", EnvSeed, cfg.seed(), EnvSchedule, sc.Name, strings.SplitN(t.Name(), "/", 2)[0])
}

// pairsPerServer is how many schedules one redis-server plays at once:
// one pair of its 16 databases each (the lock's and the storage's).
const pairsPerServer = 8

// maxParallel bounds Config.Parallel: four redis-servers.
const maxParallel = 4 * pairsPerServer

// startRedis starts n redis-servers, stopped when the test ends. It skips
// the test (fails it with CI=true) when redis-server is not installed.
func startRedis(t testing.TB, cfg Config, n int) ([]*reality.Server, error) {
	t.Helper()
	bin := cfg.ServerBinary
	if bin == "" {
		var err error
		bin, err = reality.FindServer()
		needInstalled(t, err)
	}
	var srvs []*reality.Server
	for k := 0; k < n; k++ {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		s, err := reality.StartServer(ctx, bin)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("start the redis-server (Config.ServerBinary %q): %v", bin, err)
		}
		t.Cleanup(func() { s.Stop() })
		srvs = append(srvs, s)
	}
	return srvs, nil
}

// startEtcd starts n embedded etcd members on loopback, stopped when the
// test ends, and returns their client URLs.
func startEtcd(t testing.TB, n int) ([]string, error) {
	return startEach(t, n, 30*time.Second, "an embedded etcd", func(ctx context.Context) (string, func(), error) {
		e, err := reality.StartEtcd(ctx)
		if err != nil {
			return "", nil, err
		}
		return e.Endpoint(), e.Stop, nil
	})
}

// startPostgres starts n PostgreSQL servers on loopback, stopped (and
// their directories removed) when the test ends, and returns their
// addresses. It skips the test (fails it with CI=true) when PostgreSQL
// (with cfg.Pooled, PgBouncer) is not installed.
func startPostgres(t testing.TB, cfg Config, n int) ([]string, error) {
	t.Helper()
	_, err := reality.FindPostgres()
	needInstalled(t, err)
	if cfg.Pooled {
		_, err := reality.FindPgBouncer()
		needInstalled(t, err)
	}
	return startEach(t, n, 60*time.Second, "a PostgreSQL server", func(ctx context.Context) (string, func(), error) {
		s, err := reality.StartPostgres(ctx)
		if err != nil {
			return "", nil, err
		}
		return s.Addr(), s.Stop, nil
	})
}

// needInstalled skips the test when err says a server is not installed,
// or fails it with CI=true (the real-server tests must run in CI).
func needInstalled(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("locktest: CI=true but %v", err)
	}
	t.Skipf("locktest: skipped: %v", err)
}

// startEach starts n servers at once with start, each within timeout and
// stopped when the test ends, and returns where they listen; what names
// one in an error.
func startEach(t testing.TB, n int, timeout time.Duration, what string, start func(context.Context) (string, func(), error)) ([]string, error) {
	addrs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			addr, stop, err := start(ctx)
			if err != nil {
				errs[k] = fmt.Errorf("start %s: %v", what, err)
				return
			}
			t.Cleanup(stop)
			addrs[k] = addr
		}(k)
	}
	wg.Wait()
	return addrs, errors.Join(errs...)
}

// startZooKeeper starts n standalone ZooKeeper servers on loopback,
// stopped (and their directories removed) when the test ends, and returns
// their addresses. It skips the test (fails it with CI=true) when
// ZooKeeper is not installed.
func startZooKeeper(t testing.TB, n int) ([]string, error) {
	t.Helper()
	_, err := reality.FindZooKeeper()
	needInstalled(t, err)
	return startEach(t, n, 60*time.Second, "a ZooKeeper server", func(ctx context.Context) (string, func(), error) {
		s, err := reality.StartZooKeeper(ctx)
		if err != nil {
			return "", nil, err
		}
		return s.Addr(), s.Stop, nil
	})
}

// server is where a slot's schedules lock besides Redis: its etcd member,
// its PostgreSQL server or its ZooKeeper server ("": none), or its
// Redlock nodes.
type server struct {
	etcd, postgres, zookeeper string
	nodes                     []*reality.Server
	// node is the slot's Redis lock node of its own, started for the
	// first node-crash schedule it plays (nil: none yet)
	node *reality.Server
}

// redlockNodes is locktest.Redlock's nodes: the model's default.
const redlockNodes = 5

// server is a slot's server of the lock at addr, for cfg's service.
func (cfg Config) server(addr string) server {
	switch cfg.Service {
	case Etcd, EtcdMutex:
		return server{etcd: addr}
	case Postgres:
		return server{postgres: addr}
	case ZooKeeper:
		return server{zookeeper: addr}
	}
	return server{}
}

// voidRuns is how many times a schedule is played, the tick doubled each
// time (100ms to 3.2s by default; etcd: 2s to 8s), while the machine
// cannot keep its timing.
const voidRuns, etcdVoidRuns = 6, 3

// defaultTick is Config.Tick's default.
const defaultTick = 100 * time.Millisecond

// play plays one schedule on databases lockDB and storeDB of srv, again
// with a doubled tick when the machine could not keep the timing (a void
// run says nothing about the client).
func play(srv *reality.Server, at server, lockDB, storeDB int, sc Schedule, cfg Config, maker reality.UserMaker, void *atomic.Int64) (*reality.Comparison, error) {
	etcd := at.etcd
	in := &reality.Input{Source: "schedule " + sc.Name, Kind: "scenario", DesignName: sc.Design, Design: *sc.d, Trace: sc.trace}
	tick, runs, where := cfg.Tick, voidRuns, "redis-server "+srv.Version()+" on "+srv.Addr()
	if tick == 0 {
		tick = defaultTick
		if etcd != "" {
			tick = reality.EtcdTick
		}
	}
	if etcd != "" {
		runs, where = etcdVoidRuns, "embedded etcd at "+etcd+", storage on "+where
	}
	if at.postgres != "" {
		where = "PostgreSQL at " + at.postgres
	}
	if len(at.nodes) > 0 {
		var n []string
		for _, s := range at.nodes {
			n = append(n, s.Addr())
		}
		where = "Redlock on redis-servers " + strings.Join(n, ", ") + ", storage on " + where
	}
	var node *reality.Server
	if sc.d.NodeCrashes > 0 && sc.d.Lock == model.LockRedis {
		node, where = at.node, "lock node redis-server on "+at.node.Addr()+", storage on "+where
	}
	// a schedule that holds a reply: its tick is doubled only while its
	// longest hold stays within limit
	base, hold := tick, time.Duration(longestHold(sc))
	limit := max(maxHold, hold*base)
	for attempt := 1; ; attempt++ {
		// a run's budget: its ticks, with room to spare
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second+time.Duration(2*len(sc.trace))*tick)
		if node != nil && node.Down() { // a run that ended before its node came back
			if err := node.Restart(ctx); err != nil {
				cancel()
				return nil, fmt.Errorf("restart the lock node: %v", err)
			}
		}
		c, err := reality.Reproduce(ctx, in, where,
			reality.Options{Addr: srv.Addr(), Etcd: etcd, Postgres: at.postgres, ZooKeeper: at.zookeeper, Nodes: at.nodes, Lock: node, LockDB: lockDB, StoreDB: storeDB, Tick: tick, Client: reality.ClientUser, User: maker, UserKey: cfg.Key})
		cancel()
		var he *reality.HeldError
		if errors.As(err, &he) && he.Timeout() {
			asked := time.Duration(he.Ticks) * base
			if tick == base || he.Took < asked { // it would give up at Config.Tick too
				return nil, fmt.Errorf("%w: your client's read timeout (go-redis: Options.ReadTimeout) must outlast the longest hold of a reply, %d ticks × Config.Tick %v = %.1f s (this schedule's: %d ticks, %.1f s): raise it, or lower Config.Tick",
					err, replyHoldTicks, base, (replyHoldTicks * base).Seconds(), he.Ticks, asked.Seconds())
			}
			// it waited out the hold at Config.Tick: the doubled tick, not
			// the schedule, made the hold outlast it. Void, and played
			// again at the tick before, not doubled again.
			if attempt == runs {
				return nil, fmt.Errorf("%d void runs in a row, the last at a %v tick, where your client gave up waiting for a held reply that it waits out at Config.Tick %v: the machine is too loaded to keep the schedule's timing (%v)", runs, tick, base, err)
			}
			void.Add(1)
			tick /= 2
			limit = hold * tick
			continue
		}
		if err != nil {
			if tick != base {
				return nil, fmt.Errorf("%w (at a %v tick, after %d void runs; Config.Tick is %v)", err, tick, attempt-1, base)
			}
			return nil, err
		}
		if !c.Late || attempt == runs {
			if c.Late {
				return nil, fmt.Errorf("%d void runs in a row, the last at a %v tick: the machine is too loaded to keep the schedule's timing", runs, tick)
			}
			return c, nil
		}
		void.Add(1)
		if sc.d.Lock != model.LockEtcdMutex && hold*tick*2 <= limit { // etcd-mutex: its sessions' keep-alives fit 2s ticks only: played again on them
			tick *= 2
		}
	}
}

// longestHold is the longest hold of an acquire's reply or of a release
// in sc, in ticks (0: none).
func longestHold(sc Schedule) int {
	n := 0
	if sc.d.DelayAt != model.PlaceAcquire && sc.d.DelayAt != model.PlaceRelease && sc.d.DelayAt != model.PlaceAny {
		return 0
	}
	for _, a := range sc.trace {
		if a.Kind == model.ActDelay {
			n = max(n, int(a.Arg))
		}
	}
	return n
}

// adapter is a Lock as reality calls it: each call's answer in the
// client's words, bounded in time, and a panic turned into an error naming
// the call.
type adapter struct {
	l       Lock
	timeout time.Duration
	// blocking: Acquire may block until its turn in a queue (ZooKeeper)
	// or until its last node is let through (Redlock);
	// reality bounds each acquire step by the tick's window, and the
	// context it gives ends with the schedule
	blocking bool
}

// blockingTimeout bounds a blocking Acquire: the schedule's end cancels
// its context well before.
const blockingTimeout = time.Hour

func (a *adapter) Acquire(ctx context.Context) (won bool, told string, err error) {
	timeout := a.timeout
	if a.blocking {
		timeout = blockingTimeout
	}
	won, err = guarded(ctx, "Acquire", timeout+reality.HeldFor(ctx), a.l.Acquire)
	return won, fmt.Sprintf("Acquire → %v, %v", won, errWord(err)), err
}

func (a *adapter) Release(ctx context.Context) (released bool, told string, err error) {
	released, err = guarded(ctx, "Release", a.timeout+reality.HeldFor(ctx), a.l.Release)
	return released, fmt.Sprintf("Release → %v, %v", released, errWord(err)), err
}

func (a *adapter) Extend(ctx context.Context) (extended bool, told string, err error) {
	e, ok := a.l.(Extender)
	if !ok {
		return false, "", errors.New("Config.RenewTicks is set but the Lock has no Extend method (implement locktest.Extender)")
	}
	extended, err = guarded(ctx, "Extend", a.timeout, e.Extend)
	return extended, fmt.Sprintf("Extend → %v, %v", extended, errWord(err)), err
}

func (a *adapter) Validity(ctx context.Context) (left time.Duration, told string, err error) {
	v, ok := a.l.(Validator)
	if !ok {
		return 0, "", errors.New("Config.CheckValidity is set but the Lock has no Validity method (implement locktest.Validator)")
	}
	got := make(chan time.Duration, 1)
	_, err = guarded(ctx, "Validity", a.timeout, func(ctx context.Context) (bool, error) {
		left, err := v.Validity(ctx)
		got <- left
		return false, err
	})
	if err == nil {
		left = <-got
	}
	return left, fmt.Sprintf("Validity → %v, %v", left.Round(time.Millisecond), errWord(err)), err
}

// Owns is the Lock's Owns (an Owner), false for a Lock that writes
// Target.Value, or whose Owns panics.
func (a *adapter) Owns(v string) (yes bool) {
	o, ok := a.l.(Owner)
	if !ok {
		return false
	}
	defer func() {
		if recover() != nil {
			yes = false
		}
	}()
	return o.Owns(v)
}

func (a *adapter) Close() {
	if c, ok := a.l.(interface{ Close() error }); ok {
		_, _ = guarded(context.Background(), "Close", a.timeout, func(context.Context) (bool, error) { return true, c.Close() })
	}
}

// guarded calls f with a context that ends after timeout and returns its
// answer, or an error naming call when it panics, when it answers true
// and an error at once, or when it has not returned by the timeout (it
// then goes on in the background: a goroutine cannot be stopped).
func guarded(ctx context.Context, call string, timeout time.Duration, f func(context.Context) (bool, error)) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type answer struct {
		ok  bool
		err error
	}
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- answer{err: fmt.Errorf("%s panicked: %v", call, p)}
			}
		}()
		ok, err := f(ctx)
		done <- answer{ok, err}
	}()
	select {
	case a := <-done:
		if a.ok && a.err != nil {
			return false, fmt.Errorf("%s returned true and an error (%v): want true and nil, or false with or without an error", call, a.err)
		}
		return a.ok, a.err
	case <-ctx.Done():
		return false, fmt.Errorf("%s did not return within %v (Config.CallTimeout; its context was cancelled then)", call, timeout)
	}
}

func errWord(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
