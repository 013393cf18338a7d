// Package catalogue is the list of designs that lockcheck judges: every lock
// service of the seed, and every value of every axis, each with the fault
// budget that tells it apart. The verdict matrix (explore matrix) sweeps it;
// each entry's verdicts come from exploring the model, never from here.
package catalogue

import "lockcheck/model"

// Entry is one design of the catalogue and why it is there.
type Entry struct {
	Name string // a design name or preset, as a user would type it
	Why  string // what it shows, in a line
}

// Entries are grouped by lock service; within a group, from the seed's
// story outwards.
var Entries = []Entry{
	// one Redis node: the seed's demos
	{"demo1", "no faults: the lock works"},
	{"demo2", "GC pause, no fencing: lost update"},
	{"demo3", "fencing token on writes only: a stale read still loses an update"},
	{"demo4", "slow job + plain DEL: a release removes another's lock"},
	{"demo5", "slow job, check-and-delete: the late write still lands"},
	{"demo6", "token on reads and writes: lock-unsafe, data-safe"},
	// one Redis node: release, fencing and storage variants
	{"redis/del/none/plain", "plain DEL with a pause"},
	{"redis/get-del/none/plain", "GET then DEL: the key changes hands in between"},
	{"redis/get-del/rw/max-token", "GET then DEL, fully fenced"},
	{"redis/cad/rw/max-write", "storage records only writes' tokens"},
	{"redis/cad/write/cond-update", "UPDATE … WHERE last_token < t on writes"},
	{"redis/cad/rw/cond-update", "conditional update does not fence reads"},
	{"redis/cad/none/cas", "compare-and-set on a version column, no token"},
	{"redis/cad/rw/max-token,acquire=incr-before", "token taken before the lock"},
	{"redis/cad/rw/max-token,acquire=incr-after", "token taken after the lock"},
	{"redis/cad/rw/max-token,acquire=set-expire,pauses=0,crashes=1", "crash between SET NX and EXPIRE"},
	{"redis/cad/none/plain,pauses=0,crashes=1", "a crashed holder's lock frees itself"},
	{"redis/cad/none/plain,ttl=3,pauses=0", "the job just fits its TTL: expiry at the boundary tick"},
	{"redis/cad/none/plain,wait=notify,pauses=0,crashes=1", "waiting for a release notice that never comes"},
	{"redis/cad/none/plain,wait=notify", "pub/sub wait with a pause: an expiry publishes nothing"},
	{"redis/cad/none/plain,renew=3", "watchdog renewal, with a pause"},
	{"redis/cad/none/plain,pauses=0,slow=1,renew=3", "watchdog renewal saves a slow job"},
	{"redis/cad/none/plain,check=validity", "checking validity before acting, with a pause"},
	{"redis/cad/none/plain,delay-at=write,pauses=0,delays=1", "a write held in the network (up to ttl+work+3 ticks)"},
	{"redis/cad/rw/max-token,pauses=0,node-crashes=1", "the Redis node restarts empty: tokens repeat"},
	{"redis/cad/rw/max-token,pauses=0,node-crashes=1,persist=1", "the Redis node restarts from disk"},
	{"redis/cad/rw/max-token,pauses=0,node-crashes=1,persist=1,fsync=1", "appendfsync everysec: the last second's key and INCR are lost, the token repeats, an update is lost"},
	{"redis/cad/rw/cond-update,pauses=0,node-crashes=1,persist=1,fsync=1", "everysec with strictly greater tokens: two holders, no update lost"},
	{"redis/cad/rw/max-token,node-at=read,pauses=0,node-crashes=1,persist=1,fsync=1", "everysec, the crash pinned before the holder's read (node-at): the same verdict in fewer states"},
	{"redis/cad/none/plain,pauses=0,jumps=1,jump=10", "the Redis node's clock jumps 10 ticks"},
	{"redis/cad/none/plain,clock=free,horizon=20,pauses=0", "time may pass at any moment (no urgency)"},
	{"redis/cad/none/plain,reenter=nx,pauses=0", "a nested SET NX waits on its own key: no fault, no ✗, a lost update"},
	{"redis/cad/rw/max-token,reenter=nx,pauses=0", "the nested acquire's fresh token defeats fencing"},
	{"redis/cad/none/plain,reenter=owner,pauses=0", "a reentrant lock lets its owner in again"},
	// primary + replica
	{"replica/cad/rw/max-token,pauses=0", "failover before replication: same token twice"},
	{"replica/cad/rw/cond-update,pauses=0", "strictly greater tokens survive a repeated token"},
	{"replica/cad/rw/max-token,ack=wait,clients=2,pauses=0,ack-timeout=2", "WAIT times out and rolls nothing back: the failover loses the key, the token repeats"},
	{"replica/cad/rw/max-token,ack=wait,clients=2,pauses=0", "WAIT 1 0: no failover loses an acknowledged key, but WAIT returns after the TTL when the replica lags"},
	{"replica/cad/rw/max-token,check=validity,ack=wait,clients=2,pauses=0", "WAIT 1 0, then the validity check: the failover and the lag survived"},
	{"replica/cad/rw/max-token,ack=wait,clients=2,pauses=0,ack-timeout=2,replicas=2,acks=2", "WAIT 2 times out with neither of two replicas caught up: the freshest has no key, the token repeats"},
	{"replica/cad/rw/max-token,ack=wait,promote=any,clients=2,pauses=0,replicas=2", "WAIT 1 of two replicas, and Sentinel promotes the other one: the token repeats"},
	{"replica/cad/rw/max-token,ack=wait,promote=any,clients=2,pauses=0,replicas=2,acks=2", "WAIT 2 of two: whichever replica Sentinel promotes has every acknowledged key"},
	{"replica/cad/rw/max-token,clients=2,pauses=0,failovers=2,replicas=2", "two failures in a row: one already loses updates; the second can bring back a released key (story replica-two-failovers)"},
	{"replica/cad/rw/max-token,ack=wait,clients=2,pauses=0,failovers=2", "WAIT 1 0 through two failures in a row: each promoted replica has every acknowledged key"},
	{"replica/cad/rw/max-token,ack=wait,clients=2,pauses=0,failovers=2,rejoin=3,replicas=2", "WAIT 1 of two through two failures while the first failed primary is still down: the second promotes the replica without the key (story replica-rejoin)"},
	// Redlock
	{"redlock/cad/none/plain,pauses=0", "five nodes, no faults"},
	{"redlock/cad/none/plain", "a pause after the vote"},
	{"redlock/cad/none/plain,check=validity", "a pause after the validity check"},
	{"redlock/cad/none/plain,pauses=0,node-crashes=1", "a node restarts without its keys"},
	{"redlock/cad/none/plain,pauses=0,node-crashes=1,restart=10", "the node restarts after the TTL"},
	{"redlock/cad/none/plain,pauses=0,node-crashes=1,persist=1", "the node keeps its keys on disk"},
	{"redlock/cad/none/plain,node-at=read,pauses=0,node-crashes=1,fault-node=1", "node 1 restarts empty, pinned before its key holder's read: the same verdict in fewer states"},
	{"redlock/cad/none/plain,pauses=0,jumps=1,jump=9", "one node's clock jumps"},
	{"redlock/cad/none/plain,pauses=0,jumps=2,jump=9", "two nodes' clocks jump: the majority is lost"},
	{"redlock/cad/none/plain,check=validity,pauses=0,nodes=3,jumps=1,jump=10", "three nodes, one clock jump, even with the validity check"},
	{"redlock/cad/none/plain,quorum=all,clients=2,nodes=3", "winning every node does not survive a pause"},
	{"redlock/cad/none/cas", "Redlock with a compare-and-set storage"},
	// etcd
	{"etcd/cad/none/plain,renew=3", "lease with keep-alive, a pause"},
	{"etcd/cad/rw/max-token,renew=3", "the revision as fencing token"},
	{"etcd/cad/none/plain,watchdog=session,delay-at=acquire,pauses=0,renew=3,delays=1", "the session's keep-alive renews a key whose acquire reply is held (concurrency.Session): the late reply finds it still held"},
	// etcd's queued Mutex (concurrency.Mutex)
	{"etcd-mutex/del/none/plain", "queued Mutex: the holder's session lease expires in a pause, the next waiter takes the lock"},
	{"etcd-mutex/cad/rw/max-token", "the create revision as fencing token"},
	{"etcd-mutex/del/none/plain,pause-at=acquire", "a waiter's session expires in the queue: Lock's Get answers ErrSessionExpired"},
	{"etcd-mutex/del/none/plain,session-check=none,pause-at=acquire", "a waiter whose session expired in the queue takes the lock without the Get: two holders"},
	{"etcd-mutex/del/none/plain,delay-at=release,clients=2,jobs=2,pauses=0,delays=1,timeout=3", "Unlock deletes by name: a late copy deletes the same session's next lock"},
	{"etcd-mutex/cad/none/plain,delay-at=release,clients=2,jobs=2,pauses=0,delays=1,timeout=3", "a delete fenced on the create revision leaves the next lock alone"},
	// etcd's reader-writer lock (recipe.RWMutex): A reads, B and C write
	{"etcd-mutex/del/none/plain,pause-at=acquire,readers=1", "RWMutex with the Get of its own key: a waiter whose session expired locks again"},
	{"etcd-mutex/del/none/plain,session-check=none,pause-at=acquire,readers=1", "RWMutex as it is (no Get, etcd issue 16221): a waiter whose session expired in the queue goes on without a key"},
	// Kubernetes Lease leader election (client-go's leaderelection)
	{"lease/cad/none/plain,renew=2", "Kubernetes Lease: a pause outlives the lease by another candidate's clock; the cancelled leader's worker writes on"},
	{"lease/cad/rw/max-token,renew=2", "leaseTransitions as fencing token"},
	{"lease/cad/none/plain,pauses=0,slow=1,renew=2,partitions=1,partition-ticks=5,lease-b=5,deadline-b=3", "candidates with other durations, judged by the record's: one leader at a time, but a cancelled worker writes on"},
	{"lease/cad/none/plain,duration=own,pauses=0,slow=1,renew=2,partitions=1,partition-ticks=5,lease-b=5,deadline-b=3", "client-go v0.20: a candidate judges the leader's lease by its own shorter duration: two leaders"},
	{"lease/cad/none/plain,pauses=0,slow=1,renew=2,partitions=1,partition-ticks=5,rate-b=200", "a candidate's clock runs twice as fast: it judges the leader's lease expired in half of it"},
	// ZooKeeper
	{"zookeeper/cad/none/plain", "session expiry during a pause"},
	{"zookeeper/cad/rw/max-token", "the sequence number as fencing token"},
	{"zookeeper/cad/none/plain,lose-at=acquire,pauses=0,losses=1,timeout=3", "a create's reply is lost: protected mode (a GUID in the node's name) finds the node again on the retry"},
	{"zookeeper/cad/none/plain,protect=no,lose-at=acquire,pauses=0,losses=1,timeout=3", "without protected mode the lost create's node stays with its live session, the lowest, unknown to its client: the lock is held for ever by no one"},
	// database row lock
	{"db/cad/none/plain", "work inside the lock's transaction"},
	{"db/cad/none/plain,tx=outside", "work outside the lock's transaction"},
	{"db/cad/none/plain,pauses=0,delays=1", "a held request: the idle session is killed, the work rolled back"},
	// PostgreSQL advisory locks, and PgBouncer in transaction pooling mode
	{"advisory/cad/none/plain", "session-level advisory lock: a pause outlives the idle-session timeout, the work on another connection goes on"},
	{"advisory/cad/none/plain,level=xact", "transaction-level advisory lock, the write inside: the killed session's write is rolled back"},
	{"advisory/cad/none/cas", "session-level, with a compare-and-set storage"},
	{"advisory/cad/none/plain,pool=tx,pauses=0", "session-level through PgBouncer (transaction pooling): a client's lock is a re-entry of another's backend; an unlock on the other backend leaves it held"},
	{"advisory/cad/none/plain,pool=tx-reset,pauses=0", "PgBouncer with DISCARD ALL after each transaction: the lock vanishes as soon as it is granted"},
	{"advisory/cad/none/plain,level=xact,pool=tx", "transaction-level through PgBouncer: the transaction keeps its backend, the pool changes nothing"},
	{"advisory/cad/none/plain,end=keepalive", "sessions ended by TCP keepalive only: a paused client's kernel still answers, the lock outlives the pause"},
	{"advisory/cad/none/plain,end=keepalive,pauses=0,partitions=1", "a partition outlives TCP keepalive: the session ends, another takes the lock, the cut-off write lands after the heal"},
	{"advisory/cad/none/plain,end=keepalive,pauses=0,partitions=1,partition-ticks=5", "a short partition stops the unlock: the session outlives it and keeps the lock for ever"},
	// Consul sessions (api.Lock), model only
	{"consul/cad/none/plain,renew=5", "Consul session renewed every ttl/2: the server invalidates it 2 × ttl after the last renewal, then a lock-delay; a longer pause still loses an update"},
	{"consul/cad/rw/max-token,renew=5", "the key's LockIndex as fencing token: it grows while the key stays"},
	{"consul/cad/rw/max-token,behavior=delete,renew=5", "behavior=delete: the invalidated session's key is deleted and its LockIndex starts again at 1: a token repeats, an update is lost"},
	{"consul/cad/rw/max-token,behavior=delete,index=modify,renew=5", "the key's ModifyIndex (the Raft index) as token: it never repeats"},
	{"consul/cad/none/plain,pauses=0,crashes=1", "a crashed holder's session is invalidated 2 × ttl on and the lock-delay runs out: the others go on"},
	// faults from the field: partitions, lost replies and resends, delays
	// on every request, client clocks, fault placement
	{"redlock/cad/none/plain,partition=minority,clients=2,pauses=0,jumps=1,jump=9,partitions=2", "Redlock split by partitions and a clock jump (Kleppmann's case)"},
	{"replica/cad/none/plain,partition=primary,clients=2,pauses=0,partitions=1", "the primary cut off with its client: split brain"},
	{"replica/cad/rw/max-token,partition=primary,clients=2,pauses=0,partitions=1", "split brain with fencing: each side hands out the same tokens"},
	{"redis/cad/none/plain,partition=storage,pauses=0,partitions=1", "cut off from the storage: the retried write lands late"},
	{"redis/cad/rw/max-token,partition=storage,pauses=0,partitions=1", "cut off from the storage, fenced: the late write is refused"},
	{"redis/cad/none/plain,pauses=0,slow=1,renew=3,partitions=1", "a watchdog cut off from Redis: renewals fail, the worker goes on"},
	{"zookeeper/cad/none/plain,pauses=0,slow=1,partitions=1", "a partition outlives the ZooKeeper session"},
	{"redis/del/none/plain,lose-at=release,pauses=0,losses=1,timeout=3", "a lost reply: the resent DEL deletes the next holder's lock"},
	{"redis/cad/none/plain,lose-at=release,pauses=0,losses=1,timeout=3", "check-and-delete survives a resent release"},
	{"redis/cad/none/plain,delay-at=write,pauses=0,delays=1,timeout=3", "a resent write's first copy arrives late"},
	{"redis/cad/none/plain,delay-at=acquire,pauses=0,delays=1", "an acquire reply held in the network"},
	{"redis/cad/none/plain,check=validity,pause-at=check", "pauses only before the validity check: all caught"},
	{"redis/cad/none/plain,check=validity,pause-at=check,client-jumps=1", "the client's own clock jumps back: the check is fooled"},
	// storage faults: what breaks fencing itself
	{"redis/cad/rw/max-token,clients=2,storage-failovers=1", "the storage fails over to a replica that has not seen the highest token"},
	{"redis/cad/rw/max-token,storage-loses=fence,pause-at=write,ttl=3,clients=2,horizon=16,max-pause=5,storage-failovers=1", "the counter survives a storage failover, the token check's highest token does not"},
	{"redis/cad/rw/max-token,fence-check=two-step", "the token checked, then the write sent as a second request: a write lands in between, an update is lost"},
	{"redis/cad/rw/max-token,pauses=0,stale-reads=1", "a read from a lagging storage replica: every token checks out, an update is lost"},
	{"redis/cad/none/cas,pauses=0,stale-reads=1", "compare-and-set refuses the write after a stale read"},
	// fencing for every service: an external counter beside Redlock and db
	{"redlock/cad/rw/max-token,counter=external,clients=2,nodes=3", "Redlock plus an external fencing counter: lock-unsafe, data-safe"},
	{"redlock/cad/rw/max-token,counter=external,clients=2,nodes=3,counter-crashes=1", "the fencing counter restarts empty: tokens repeat"},
	{"redis/cad/none/plain,pauses=0,renew=3,hangs=1", "a hung worker stops its own watchdog: its lock expires, the others go on"},
	{"redis/cad/none/plain,watchdog=thread,pauses=0,renew=3,hangs=1", "a watchdog thread renews a hung worker's lock for ever: a progress failure, not a safety one"},
	{"redis/cad/none/plain,watchdog=sidecar,renew=3", "a sidecar renews through the worker's pause: the lock outlives it"},
	{"redis/cad/none/plain,watchdog=sidecar,pauses=0,crashes=1,renew=3", "a sidecar renews a crashed worker's lock for ever: a progress failure"},
	// what lock libraries do around the renewal (redsync)
	{"redis/cad/none/plain,extend=setnx,renew=3", "redsync WithSetNXOnExtend: a renewal sets the expired key again and says extended; the stale write holds a key"},
	{"redis/cad/none/plain,renew-fail=stop,renew=3", "a failed renewal stops the worker: a pause after the last good renewal still loses an update"},
	{"redis/cad/none/plain,extend=setnx,watchdog-stop=after-unlock,clients=2,pauses=0,renew=2", "a renewal after the release sets the released key again: the next client waits out a TTL"},
	{"redis/cad/none/plain,check=acquire,delay-at=acquire,work=3,pauses=0,delays=1,max-delay=8", "validity checked once, at the acquire's reply (redsync): a late reply with validity left, and the work outlasts the TTL"},
	// a release that fails: lost before it reaches the service, and the client's choice
	{"zookeeper/cad/none/plain,release-fail=forget,lose=request,lose-at=release,clients=2,pauses=0,losses=1,timeout=3", "a release lost on the way and a client that forgets it held the lock: its node lives on with its session"},
	{"zookeeper/cad/none/plain,lose=request,lose-at=release,clients=2,pauses=0,losses=1,timeout=3", "the lost release sent again after the timeout: the node goes, every job ends"},
	{"redis/cad/none/plain,release-fail=forget,lose=request,lose-at=release,clients=2,pauses=0,losses=1,timeout=3", "a forgotten release on Redis: the key's TTL frees it, the next client waits up to a TTL"},
	// repeated jobs: a late release meets its own client's next lock
	{"redis/cad/none/plain,value=process,delay-at=release,clients=2,jobs=2,pauses=0,delays=1,timeout=3", "one lock value per process: a late release deletes its own client's next lock"},
	{"redis/cad/none/plain,delay-at=release,clients=2,jobs=2,pauses=0,delays=1,timeout=3", "a lock value per job: the late release leaves the next lock alone"},
	// an acquire abandoned by its caller (a deadline) still lands later
	{"redis/cad/none/plain,acquire=set-expire,delay-at=acquire,abandon=retry,pauses=0,delays=1,timeout=3", "an abandoned SET NX lands after its caller's retry began: a key its client does not know it holds, with no expiry"},
	{"redis/cad/none/plain,acquire=set-expire,delay-at=acquire,abandon=fail,clients=4,pauses=0,delays=1,timeout=2", "an abandoned SET NX lands after its caller went on without the lock: an orphan key for ever"},
	{"redis/cad/none/plain,delay-at=acquire,abandon=fail,clients=4,pauses=0,delays=1,timeout=2", "the same with a TTL: the orphan expires, the others wait out a TTL"},
	// a failed attempt's late release meets the same client's retry (check=acquire, redsync's lockContext);
	// with a value per job it deletes the retry's lock (story attempt-release-job: a 42-step schedule with
	// two delays, which the property suite's random schedules do not reach, so it is not a row here)
	{"redis/cad/none/plain,check=acquire,value=acquire,delay-at=acquire,ttl=5,clients=4,pauses=0,drift=2,delays=2,max-delay=6,timeout=3", "a lock value per acquire attempt: the failed attempt's late release leaves the retry's lock alone"},
	// fairness with repeated jobs: who gets the lock next
	{"redis/cad/none/plain,clients=2,jobs=2,pauses=0", "polling: one client takes the lock job after job while another waits (starvation seen)"},
	{"zookeeper/cad/none/plain,clients=2,jobs=2,pauses=0", "ZooKeeper's queue serves the waiter first: no starvation"},
	// bounded bypass (bypass=K, model/fairness.go): how many who asked later are served first
	{"redis/cad/none/plain,clients=2,jobs=2,pauses=0,bypass=0", "polling: a client that asked later is served before the waiting one (bypass 0 violated)"},
	{"zookeeper/cad/none/plain,jobs=2,pauses=0,bypass=0", "ZooKeeper's queue serves in the order of asking: bypass 0 holds"},
	// clients that crash and are restarted at once, running the job again
	{"redis/cad/none/plain,clients=2,pauses=0,restarts=1", "a restarted client runs its job again once its dead process's lock expires"},
	{"redis/cad/none/plain,acquire=set-expire,clients=2,pauses=0,restarts=1", "a restart between SET NX and EXPIRE: the new process waits on its dead process's key for ever"},
	{"redis/cad/none/plain,lock-delay=5", "Chubby's lock-delay shorter than the pause: the update is still lost"},
	{"redis/cad/none/plain,lock-delay=8", "lock-delay covers the longest pause: one holder at a time, no update lost"},
	{"redlock/cad/none/plain,clients=2,pauses=0,slow=1,nodes=3,renew=3", "a watchdog extends Redlock on a quorum: a slow job is saved"},
	{"redlock/cad/none/plain,clients=2,nodes=3,renew=3", "Redlock's watchdog freezes with its paused worker"},
	{"db/cad/rw/max-token,tx=outside,counter=external", "a row lock's work outside its transaction, fenced by an external counter"},
}

// Names lists the entries' names.
func Names() []string {
	out := make([]string, len(Entries))
	for i, e := range Entries {
		out[i] = e.Name
	}
	return out
}

// Designs parses every entry. The catalogue's own tests make sure this
// never fails.
func Designs() []model.Design {
	out := make([]model.Design, len(Entries))
	for i, e := range Entries {
		d, err := model.ParseDesign(e.Name)
		if err != nil {
			panic("catalogue: " + e.Name + ": " + err.Error())
		}
		out[i] = d
	}
	return out
}
