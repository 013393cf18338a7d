// Package reality plays the model's schedules on real servers (Redis, a
// replicated Redis, five Redis nodes for Redlock, etcd, ZooKeeper,
// PostgreSQL), with lockcheck's own client or a lock library, and puts what
// happened next to what the model says.
//
// The real world of a run:
//
//  1. A redis-server of its own (StartServer: a free port on 127.0.0.1, no
//     persistence) or one the caller names. The lock is the real key
//     lock:order-42 (SET NX PX, the value "B:91ab" as in the seed) with its
//     fence counter lock:fence (INCR, in the same Lua script as the SET for
//     acquire=script, a separate request for incr-before and incr-after), in
//     one database; the counter the jobs increment lives in another database
//     of the server, a store of its own that the clients talk to with their
//     own connections. The storage's checks (highest token, recorded by
//     reads or not, the conditional update's strict <, the version
//     compare-and-set) are Lua scripts, atomic on the server. Writes are
//     client-computed: SET counter = read+1, never INCR.
//  2. One goroutine per client, each with its own connections, running its
//     one job as the design says: acquire, read, work, write, release. Its
//     program is the model's own (model.Client's Next and Take, client.go):
//     its next step follows from its own state and the real replies, not
//     from the schedule; the schedule only says when it acts. A refused
//     SET NX leaves it polling: it tries again when next told to act. Each
//     request goes to its real lock, made by the design's world (world.go:
//     world_redis.go, world_replica.go, world_redlock.go, world_etcd.go,
//     world_zookeeper.go, world_postgres.go, each starting and stopping its
//     own servers; newWorld is the only switch on the lock service here).
//  3. A conductor (conductor.go) plays the schedule in order: for a client
//     step it orders that client to act and waits for the reply, so steps
//     within a tick happen in the file's order; for a tick it sleeps until
//     the next tick starts. Faults are injected at the file's steps: a
//     pause freezes the client (it sends nothing until the pause ends), a
//     slow job works slow-work ticks, a crash ends the goroutine for good,
//     a delay holds the client's write in the network until it arrives
//     (on a Redis or etcd lock, delay-at=acquire: the acquire is applied
//     at once and its reply held in the client's proxy until it arrives;
//     on etcd the frames of the Txn's HTTP/2 stream only, h2hold.go), a
//     node crash kills the lock's redis-server (SIGKILL) and restarts it at
//     once or after restart ticks (with persist=1 from its append-only
//     file). An order for a client that is still paused or working is not
//     obeyed: it is reality leaving the model's path, and shows as a
//     difference.
//  4. Expiry is the server's own, against real time: tick t starts at
//     t0 + (t-1)·tick, and every request of a tick is made and answered in
//     the tick's first half. A client sends PX = TTL·tick − tick/2 (see
//     TTL), so a key set at tick t expires in the second half of tick
//     t+TTL−1, between two ticks' requests: the real key exists exactly for
//     the ticks the model says. A run in which some reply came back later
//     than its window is void (Play.Late), not a disagreement.
//  5. An observer connection asks the server who holds the key (GET
//     lock:order-42) right before every storage access and release, after
//     every step, and at the start of every tick: a storage access while the
//     key is not the client's is the seed's ✗, a release that removes
//     another's key breaks own-release, a key gone at a tick start with no
//     step in between has expired.
//
// An etcd design (lock=etcd) keeps all of this but the lock: an etcd
// member embedded in the process (StartEtcd), a lease per attempt and a
// transaction that puts lock/order-42 if its create_revision is 0, the
// put's revision as fencing token, a delete-if-ours transaction to
// release, a keep-alive to renew. Its leases are whole seconds and expire
// up to half a second late, so its ticks are multiples of EtcdTick (2s).
//
// The client can be lockcheck's own (the reference: the design's requests
// as the model sends them) or a lock library called through its public
// API (Options.Client: redsync, redislock, etcd's concurrency.Mutex,
// go-zookeeper's lock recipe; see
// CheckClient and ForClient); each step then also records what the
// library told the caller. Every client talks to the servers through
// loopback proxies of its own (proxy.go), and a pause holds its traffic,
// so that a library's own goroutines are frozen with it.
// RunLibraryTable plays the demos with every client; the README's table
// is its output.
//
// Compare then lays the real history next to model.Replay of the same
// trace: each step's reply, values read and written, tokens, ✗, the key's
// holder after every step and at every tick, the final counter, accepted
// and rejected writes, the properties each world showed, and the
// linearizability verdict of each job history.
package reality
