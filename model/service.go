package model

import (
	"fmt"
	"strconv"
)

// service.go is the one place that dispatches on the lock service: each
// function below hands its work to the service's own file (lock_*.go), by
// static calls (a function table or an interface would make State escape to
// the heap: two allocations per Step, +29% search time, measured).

// lockNodes is how many nodes the design's lock service uses.
func lockNodes(d *Design) int {
	switch d.Lock {
	case LockRedlock:
		return d.Nodes
	case LockReplica:
		return 1 + d.Replicas
	}
	return 1
}

// diskNode is the node slot that holds node 0's append-only file as of its
// last fsync (persist=1 with fsync=N), the first slot after the service's
// nodes; -1 when the design keeps none. Only its Owner, Exp and Fence are
// used. A node crash reloads node 0 from it.
func diskNode(d *Design) int {
	if d.FsyncTicks == 0 {
		return -1
	}
	return lockNodes(d)
}

// usedNodes is how many node slots the design's states use: the service's
// nodes, and the disk image of fsync=N, the pool of a pooled advisory
// lock (poolNode) or the orphan nodes of protect=no (orphanSlots).
func usedNodes(d *Design) int {
	if d.FsyncTicks > 0 || pooledSession(d) {
		return lockNodes(d) + 1
	}
	return lockNodes(d) + orphanSlots(d) // unprotected ZooKeeper's orphan nodes
}

// crashableNodes is how many nodes (from node 0) a node-crash or clock-jump
// may hit: every Redlock node, the primary of a replica pair, the one Redis.
func crashableNodes(d *Design) int {
	switch d.Lock {
	case LockRedlock:
		return d.Nodes
	case LockRedis, LockReplica:
		return 1
	}
	return 0
}

// HoldsLock reports whether client i really holds the lock in s: the key on
// node 0 is its own, or (redlock) a majority (see redlockHolds), or
// (etcd-mutex, readers=K) it is a reader and no writer's key is below its
// own (readHolds).
func HoldsLock(d *Design, s *State, i int) bool {
	if d.Lock == LockRedlock {
		return redlockHolds(d, s, i)
	}
	return s.Nodes[0].Owner == uint8(i+1) || d.Readers > 0 && readHolds(d, s, i)
}

// heldNodes is how many lock nodes hold client i's key.
func heldNodes(d *Design, s *State, i int) int {
	n := 0
	for k := 0; k < d.Nodes; k++ {
		if s.Nodes[k].Owner == uint8(i+1) {
			n++
		}
	}
	return n
}

// singleKey reports whether the lock is one key on one node that clients
// use (redis, replica, etcd, db), as opposed to Redlock's votes and
// ZooKeeper's queue of nodes.
func singleKey(d *Design) bool {
	return d.Lock != LockRedlock && !sessionQueue(d) && d.Lock != LockLease
}

// sessionQueue reports whether the lock is a queue of the clients' own
// nodes, each living with its client's session (ZooKeeper): the lowest
// holds the lock, the next waits on a watch, and a session expires after
// session ticks without heartbeats (a pause, a partition, a crash).
func sessionQueue(d *Design) bool { return d.Lock == LockZooKeeper || d.Lock == LockEtcdMutex }

// keyNode is the node whose key client i uses: node 0, or for a client cut
// off with the old primary after a split-brain failover, node 1 (where the
// old primary now is).
func keyNode(s *State, i int) int {
	if s.Clients[i].Flags&FlagOldSide != 0 {
		return 1
	}
	return 0
}

// acquireEnabled reports whether client i, in PhaseAcquire and not
// waiting, may send its acquire now (a ZooKeeper client waits on a watch).
func acquireEnabled(d *Design, s *State, i int) bool {
	return !sessionQueue(d) || queueAcquireEnabled(d, s, i) // small enough to inline into mainStep
}

// queueAcquireEnabled is acquireEnabled of a session queue.
func queueAcquireEnabled(d *Design, s *State, i int) bool {
	if d.Lock == LockEtcdMutex {
		return emAcquireEnabled(d, s, i)
	}
	return zkAcquireEnabled(d, s, i)
}

// acquire is client i's acquire request.
func acquire(d *Design, s *State, i int, ev *Event) {
	switch d.Lock {
	case LockRedlock:
		redlockAcquire(d, s, i, ev)
	case LockZooKeeper:
		zkAcquire(d, s, i, ev)
	case LockEtcdMutex:
		emAcquire(d, s, i, ev)
	case LockLease:
		leaseAcquire(d, s, i, ev)
	case LockAdvisory:
		advisoryAcquire(d, s, i, ev)
	default: // redis, replica, etcd, db: one key on node 0
		keyAcquire(d, s, i, ev)
	}
}

// release is client i's release request (or the DEL of get-del).
func release(d *Design, s *State, i int, ev *Event) {
	switch d.Lock {
	case LockRedlock:
		redlockRelease(d, s, i, ev)
	case LockZooKeeper, LockEtcdMutex: // a session's node or key
		zkRelease(d, s, i, ev)
	case LockDB:
		dbRelease(d, s, i, ev)
	case LockLease:
		leaseRelease(d, s, i, ev)
	case LockAdvisory:
		advisoryRelease(d, s, i, ev)
	default: // redis, replica, etcd: one key on node 0
		keyRelease(d, s, i, ev)
	}
}

// renew is client i's watchdog renewal (redis, replica, redlock) or
// keep-alive (etcd).
func renew(d *Design, s *State, i int, ev *Event) {
	switch d.Lock {
	case LockRedlock:
		redlockRenew(d, s, i, ev)
	case LockLease:
		leaseRenew(d, s, i, ev)
	default:
		keyRenew(d, s, i, ev)
	}
}

// unlock frees node 0's lock and wakes every waiting client.
func unlock(d *Design, s *State, key *Node) {
	key.Owner, key.Exp = 0, 0
	switch d.Lock {
	case LockEtcd:
		etcdDeleted(d, key)
	case LockConsul:
		consulWritten(d, key)
	}
	for i := 0; i < d.Clients; i++ {
		s.Clients[i].Flags &^= FlagWaiting
	}
}

// waitsForNotice reports whether a refused client sleeps until a release
// wakes it rather than polling.
func waitsForNotice(d *Design) bool {
	return d.Wait == WaitNotify || d.Lock == LockDB || advisoryXact(d)
}

// inTx reports whether the job's reads and writes go through the lock's own
// transaction (a database row lock with tx=inside, a transaction-level
// advisory lock).
func inTx(d *Design) bool { return d.Lock == LockDB && d.Tx == TxInside || advisoryXact(d) }

// InTx reports whether design d's job reads and writes in the lock's own
// transaction, whose COMMIT decides its write.
func InTx(d *Design) bool { return inTx(d) }

// SameDatabase reports whether the counter lives in the lock's own
// database (a row lock, an advisory lock): a partition from the service
// cuts the client off from both, and the storage has no faults of its own.
func SameDatabase(d *Design) bool { return d.Lock == LockDB || d.Lock == LockAdvisory }

// expireKey removes node k's key at this tick, with the events it causes.
func expireKey(d *Design, s *State, k int, ev *Event) {
	n := &s.Nodes[k]
	o := n.Owner
	if o == 0 {
		return
	}
	if d.Lock == LockReplica && k >= 1 && !splitBrain(d, s) {
		n.Owner, n.Exp = 0, 0 // a replica's copy: nobody is told
		return
	}
	expiredHeld(s, int(o-1), ev)
	if d.LockDelayTicks > 0 && k == 0 {
		lockDelay(d, s, n)
	}
	if k == 0 && (d.Lock == LockDB || d.Lock == LockEtcd || d.Lock == LockAdvisory || d.Lock == LockConsul) {
		if d.Lock == LockConsul {
			consulInvalidated(d, n)
		}
		unlock(d, s, n) // the server ends the session / lease: waiters wake
		return
	}
	n.Owner, n.Exp = 0, 0
}

// expiredHeld records that client i's lock (key, lease, session) vanished,
// and whether i still believed in it.
func expiredHeld(s *State, i int, ev *Event) {
	ev.Flags |= EvExpired
	ev.ExpiredMask |= 1 << i
	if s.Clients[i].Believes() {
		ev.Flags |= EvExpiredHeld
	}
}

// clientTick is what a tick means for client i's session (ZooKeeper,
// etcd-mutex: tick calls it only where sessionQueue).
func clientTick(d *Design, s *State, i int, ev *Event) {
	switch d.Lock {
	case LockZooKeeper:
		zkTick(d, s, i, ev)
	case LockEtcdMutex:
		emTick(d, s, i, ev)
	}
}

// sessionHooks reports whether a client's pause means something to the
// service (paused): a session that stops hearing from it, an advisory
// lock's connection. stepTo calls paused only then (two checks and a
// call saved on every pause of the other services).
func sessionHooks(d *Design) bool { return sessionQueue(d) || d.Lock == LockAdvisory }

// paused is what a pause of p ticks means for client i's session.
func paused(d *Design, s *State, i int, p uint8) {
	if sessionQueue(d) {
		zkPaused(d, s, i, p)
	}
	if d.Lock == LockAdvisory {
		advisoryCut(d, s, i)
	}
}

// resumed is what the end of a pause means for client i's session.
func resumed(d *Design, s *State, i int) {
	if sessionQueue(d) {
		zkResumed(s, i)
	}
	if d.Lock == LockAdvisory {
		advisoryHealed(d, s, i)
	}
}

// crashed is what a crash leaves of client i's session; old is the client
// before the crash.
func crashed(d *Design, s *State, i int, old Client) {
	if sessionQueue(d) {
		zkCrashed(d, s, i, old)
	}
	if d.Lock == LockAdvisory {
		advisoryCrashed(d, s, i)
	}
}

// nodeRestarted is what a node crash means beyond the node itself.
// nodeBack: down nodes whose time is reached come back at this tick
// (before tick clears their Back): a failed replica primary rejoins as a
// replica (rejoin=K, lock_replica.go).
func nodeBack(d *Design, s *State) {
	if d.Lock == LockReplica && d.RejoinTicks > 0 {
		replicaRejoin(d, s)
	}
}

func nodeRestarted(d *Design, s *State) {
	if d.Lock == LockReplica {
		replicaResync(d, s)
	}
}

// stuckFree reports whether the service always frees a lock by itself
// (sessions, idle timeouts), so that progress can never be stuck on a key.
// A ZooKeeper client that forgets a release that was never applied
// (release-fail=forget) leaves its node to a session that lives on.
func stuckFree(d *Design) bool {
	return sessionQueue(d) && !zkForgets(d) || d.Lock == LockDB || d.Lock == LockLease || d.Lock == LockAdvisory && !keepalive(d)
}

// leaks reports whether d's lock can be held for ever by no client that
// believes in it although the service frees locks by itself (stuckFree):
// protect=no's orphan nodes, pool=tx's backends.
func leaks(d *Design) bool {
	return unprotected(d) || pooledSession(d)
}

// HeldForEver is who holds d's lock for ever in s, with no client that
// believes in it: the client whose live session owns the orphan node that
// is lowest (protect=no), or the pooled backend (1, 2) that keeps it
// (pool=tx); -1 when none does.
func HeldForEver(d *Design, s *State) int {
	switch {
	case unprotected(d):
		return zkOrphanHeld(d, s)
	case pooledSession(d):
		return poolLeaked(d, s)
	}
	return -1
}

// HeldForEverWords says who holds the lock for ever in s (HeldForEver),
// or "".
func HeldForEverWords(d *Design, s *State) string {
	k := HeldForEver(d, s)
	switch {
	case k < 0:
		return ""
	case unprotected(d):
		return describeOrphanHeld(d, s, k)
	}
	return describePoolLeaked(d, s, k)
}

// ServiceFacts are a lock service's words: one row of data per service,
// next to its lock_*.go, read by the story, the timeline, the page
// (webview) and the causes (counterexamples). Data, not functions: the
// service's rules are dispatched by the switches in this file.
type ServiceFacts struct {
	Noun       string   // what a client loses when its lock runs out: "key", "lease", "session"
	Renewer    string   // what renews a held lock (renew=k): "watchdog", "keep-alive"
	Beat       string   // the timeline's row of renewals (or heartbeats)
	BeatLegend string   // that row's legend
	Frozen     string   // after a client's name: its renewal frozen with its pause, on the page
	Node       string   // its one node on the page: "Redis", "etcd", "lock table"
	NodeStory  string   // its one node in the story: "the Redis node"
	Roles      []string // nodes named by role ("primary", "replica"): the timeline's lanes
	Replicated bool     // the last role is replicas= nodes, "replica 1" … when more than one
	Numbered   bool     // nodes named "node K" (Redlock): the timeline's lanes
	Acquire    string   // the page's chip of a granted acquire: "SET", "put"
	Refused    string   // the page's chip of a refused one: "nil", "exists"
	Renew      string   // the page's chip of a renewal: "renew", "keep-alive"
	Poll       string   // a run of refused acquires in a folded story line
	Expiry     string   // its lock's expiry in the story, with the client's name for %s
	Contended  string   // the contended witness's doc in its words ("" for the property's own)
	Bound      string   // what bounds a holder's lock, in explore fix's advice: "TTL", "lease", "session"
	Unplayed   string   // why reality does not play it for real, or "" if it does
	QueueEntry string   // a session queue's entry of one client: "node" (ZooKeeper's), "key"
}

var services = [numLockKinds]ServiceFacts{
	LockRedis: redisService, LockReplica: replicaService, LockRedlock: redlockService,
	LockEtcd: etcdService, LockZooKeeper: zookeeperService, LockDB: dbService,
	LockEtcdMutex: etcdMutexService, LockLease: leaseService, LockAdvisory: advisoryService,
	LockConsul: consulService,
}

// Service is the words of lock service k.
func Service(k LockKind) *ServiceFacts { return &services[k] }

// Lanes is how many nodes design d's timeline draws a lane for (the
// services with several nodes), 0 for one.
func (f *ServiceFacts) Lanes(d *Design) int {
	if f.Numbered {
		return d.Nodes
	}
	if f.Replicated {
		return len(f.Roles) - 1 + d.Replicas
	}
	return len(f.Roles)
}

// NodeLabel is design d's node k's name on a lane or the page: "primary",
// "node 2", "replica 2", "Redis".
func (f *ServiceFacts) NodeLabel(d *Design, k int) string {
	switch {
	case f.Numbered:
		return "node " + strconv.Itoa(k+1)
	case f.Replicated && k >= len(f.Roles)-1 && d.Replicas > 1:
		return f.Roles[len(f.Roles)-1] + " " + strconv.Itoa(k-len(f.Roles)+2)
	case k < len(f.Roles):
		return f.Roles[k]
	}
	return f.Node
}

// Words: each service's part of the story, told by its own file.

func describeAcquire(d *Design, st *StepRecord) string {
	switch d.Lock {
	case LockRedlock:
		return describeRedlockAcquire(d, st)
	case LockZooKeeper:
		return describeZKAcquire(d, st)
	case LockDB:
		return describeDBAcquire(&st.Event)
	case LockEtcd:
		return describeEtcdAcquire(d, st)
	case LockEtcdMutex:
		return describeEtcdMutexAcquire(d, st)
	case LockLease:
		return describeLeaseAcquire(d, st)
	case LockAdvisory:
		return describeAdvisoryAcquire(d, st)
	case LockConsul:
		return describeConsulAcquire(d, st)
	}
	return describeKeyAcquire(d, st)
}

func describeRelease(d *Design, st *StepRecord) string {
	var s string
	switch d.Lock {
	case LockDB:
		return describeDBRelease(d, &st.Event)
	case LockZooKeeper:
		return describeZKRelease(&st.Event)
	case LockEtcd:
		return describeEtcdRelease(&st.Event)
	case LockEtcdMutex:
		return describeEtcdMutexRelease(d, st)
	case LockLease:
		return describeLeaseRelease(&st.Event)
	case LockAdvisory:
		return describeAdvisoryRelease(d, st)
	case LockConsul:
		return describeConsulRelease(&st.Event)
	case LockRedlock:
		s = describeRedlockRelease(d, st)
	default:
		s = describeKeyRelease(d, st)
	}
	switch {
	case st.Event.Flags&EvRemovedOther == 0:
	case d.Lock == LockRedlock:
		s += "  ✗ deleted " + redlockRemovedWords(d, st)
	default:
		s += "  ✗ deleted " + owner(st.Event.Other) + " lock"
	}
	return s
}

func describeRenew(d *Design, st *StepRecord) string {
	ev := &st.Event
	switch d.Lock {
	case LockEtcd:
		return describeKeepAlive(d, st)
	case LockLease:
		return describeLeaseRenew(d, st)
	case LockRedlock:
		return describeRedlockRenew(d, ev)
	case LockConsul:
		return describeConsulRenew(d, st)
	}
	return describeWatchdog(d, st)
}

// expiryWords is what the expiry of client i's lock is called.
func expiryWords(d *Design, i int) string {
	if keepalive(d) {
		return fmt.Sprintf("TCP keepalive gives %s up: the server ends its session and its advisory lock", ClientName(i))
	}
	if d.Lock == LockConsul {
		return consulExpiryWords(d, i)
	}
	return fmt.Sprintf(Service(d.Lock).Expiry, ClientName(i))
}

func nodeName(d *Design, k int) string {
	switch f := Service(d.Lock); {
	case f.Numbered:
		return f.NodeLabel(d, k)
	case f.Replicated && k >= 1 && d.Replicas > 1:
		return f.NodeLabel(d, k)
	case k < len(f.Roles):
		return "the " + f.Roles[k]
	}
	return Service(d.Lock).NodeStory
}

// nodeHoldsFence reports whether a lock node keeps the fence counter (every
// service but Redlock, whose nodes share none).
func nodeHoldsFence(d *Design) bool { return d.Lock != LockRedlock }

// unsafeNote is the ✗ of a storage access without the lock.
func unsafeNote(d *Design, ev *Event) string {
	if ev.Flags&EvUnsafe == 0 {
		return ""
	}
	switch {
	case d.Lock == LockRedlock:
		return "  ✗ it holds " + strconv.Itoa(int(ev.Held)) + " of " + strconv.Itoa(d.Nodes) + " nodes"
	case ev.Flags&EvOldSide != 0:
		return "  ✗ the new primary's key is " + owner(ev.Other) + ": its own key is on the old primary only (split brain)"
	case ev.Other == 0 && (d.Lock == LockRedis || d.Lock == LockReplica) && tracksValues(d):
		return "  ✗ no key: its lock is gone (expired or deleted)"
	case ev.Other == 0 && (d.Lock == LockRedis || d.Lock == LockReplica):
		return "  ✗ no key: its lock has expired"
	case ev.Other == 0:
		return "  ✗ nobody holds the lock"
	case d.Lock == LockRedis || d.Lock == LockReplica || d.Lock == LockEtcd:
		return "  ✗ the key is " + owner(ev.Other)
	}
	return "  ✗ the lock is " + owner(ev.Other)
}

// sessionPauseNote: what a pause does to the client's session.
func sessionPauseNote(d *Design, ev *Event, p uint8) string {
	if d.Lock == LockEtcdMutex {
		return describeEtcdMutexPause(d, ev, p)
	}
	if sessionQueue(d) {
		return describeZKPause(d, ev, p)
	}
	return ""
}

// pollWords is a refused acquire in a folded line.
func pollWords(d *Design) string { return Service(d.Lock).Poll }

// renewerName is what renews client's lock while it holds it (renew=k).
func renewerName(d *Design) string { return Service(d.Lock).Renewer }

// frozenRenewWords says that client i's watchdog (keep-alive) was due by
// now but frozen with its paused client, or "".
func frozenRenewWords(d *Design, before *State, i int, now uint8) string {
	c := &before.Clients[i]
	if d.RenewTicks == 0 || c.Flags&pausedFreezes(d) == 0 || c.Timer == 0 || c.Timer > now {
		return ""
	}
	return fmt.Sprintf("its %s, due at t=%d, froze with %s's pause", renewerName(d), c.Timer, ClientName(i))
}
