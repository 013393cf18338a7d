// Package model is lockcheck's world: clients that take a distributed lock,
// read a counter, write counter + 1 and release, the lock services they use
// (one Redis node, a primary with a replica, Redlock, etcd, ZooKeeper, a
// database row lock, etcd's queued Mutex, Kubernetes Lease leader
// election, PostgreSQL advisory locks, Consul sessions), the storage that holds the counter, and the faults
// that make a client act on a lock it no longer holds.
//
// The model is a pure, deterministic state machine. It does no I/O, reads
// no clock, draws no random numbers and starts no goroutines; a State is a
// comparable value that a map can key and an assignment copies. Everything
// that can happen is an Action, and time moves only by the tick action.
//
// A driver (the exhaustive search, rapid, a replay, the real-server player)
// has these duties:
//
//  1. Parse or build a Design (ParseDesign, DefaultDesign) and keep it
//     unchanged for the whole run; every function takes it by pointer.
//  2. Start from Init(&d).
//  3. Ask Actions(&d, &s, buf) for the enabled actions. Their order is
//     fixed, so an index into the list names an action reproducibly.
//  4. Take one with Step(&d, s, a): it returns the next state and the Event
//     the step caused. Step must only be given an enabled action; Replay
//     checks that for a whole trace.
//  5. Judge each state reached with every Property's Bad(&d, &next, &ev)
//     (the initial state with a nil event). Always properties are
//     violations when Bad; Sometimes properties are witnesses.
//  6. To merge symmetric states, fingerprint Canonical(&d, s) instead of s
//     (Packing.SymmetricFingerprint is the same classes, faster); keep the
//     state actually reached if its trace must replay as it is.
//  7. To tell a trace to a person, Replay it and Render the Run: the story
//     in the seed's words, the timeline (who believes it holds the lock, who
//     holds the key, ✗), the summary; Run.History feeds the linearizability
//     checker.
//
// Where things live: step.go has the action table, Actions (the fixed
// order) and Step, which dispatches once on the action's kind; client.go is
// the client's own program, pure and per client (Client.Next: what it sends
// next; Client.Take: how the answer changes it), which Step runs on the
// answers the services work out and reality's real client runs on the
// answers of real servers; service.go is
// the only place that dispatches on the lock service, by static calls into
// lock_redis.go, lock_replica.go, lock_redlock.go, lock_etcd.go,
// lock_zookeeper.go, lock_db.go, lock_etcd_mutex.go, lock_lease.go and
// lock_advisory.go and lock_consul.go (what acquire, release, renew and expiry
// mean there, and their words); each fault family has its own file
// (fault_client.go, fault_network.go, fault_node.go: guard, effect, words);
// storage.go is the storage: its checks and its faults (failover to a
// lagging replica, stale reads). A new lock service or fault is one
// file, one story in scenarios/ and one catalogue row.
//
// Scenario files (scenarios/*.txt, ParseScenario) write traces in the same
// words as Action.String: "A acquire", "tick 9", "B pause 14", "failover",
// "node-crash 3", with "expect" lines that CheckExpect tests against a
// replay. The six demos of the seed are presets demo1 … demo6.
package model
