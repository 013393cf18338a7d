package model

import (
	"encoding/binary"
	"unsafe"
)

// Phase is where a client is in its one job. The next step it takes is named
// by the phase (PhaseRead: its next step is the read).
type Phase uint8

const (
	PhaseIncr    Phase = iota // next: INCR lock:fence (acquire=incr-before, incr-after)
	PhaseAcquire              // next: SET NX (polls while refused); redlock: ask node Asked
	PhaseExpire               // next: EXPIRE (acquire=set-expire)
	PhaseRead                 // next: read the counter
	PhaseWrite                // next: write read+1
	PhaseArrive               // its write is held in the network: next, it arrives at the storage
	PhaseRelease              // next: release (DEL, check-and-delete, or the GET of get-del; db: COMMIT)
	PhaseDel                  // next: the DEL of get-del
	PhaseReenter              // next: the nested acquire before the write (reenter=nx|owner)
	PhaseAck                  // next: WAIT for the replica (ack=wait); the acquire has not returned yet
	PhaseApply                // next: the write, its token check passed (fence-check=two-step)
	PhaseDone                 // job finished
	PhaseCrashed              // crashed for good
	numPhases
)

// Client flags.
const (
	FlagBelieves uint16 = 1 << iota // believes it holds the lock (acquire reply .. release)
	FlagStarted                     // has taken a step (pauses and crashes fall between steps)
	FlagPaused                      // frozen until Ready
	FlagSlow                        // its job is slow: work takes SlowWorkTicks
	FlagSawMine                     // get-del: the GET said the key was ours
	FlagWaiting                     // wait=notify, db: asleep until a release wakes it
	FlagZNode                       // zookeeper: its ephemeral sequential node exists
	FlagBuffered                    // db tx=inside: its write waits for COMMIT
	FlagChecked                     // check=validity: checked for the next access
	FlagLost                        // crashed with its write in flight (outcome unknown)
	FlagInFlight                    // a request other than a write is in the network until Ready; next, it arrives
	FlagWrote                       // a copy of this job's write was accepted (a resent copy is not a second job)
	FlagStrayDel                    // its stray copy (Stray) is a release, not a write
	FlagOldSide                     // replica split brain: it talks to the old primary (node 1), cut off with it
	FlagReply                       // its acquire was applied; the reply is held in the network until Ready
	FlagHung                        // hangs=N: its worker hung for good (PhaseCrashed); counts the hangs used
)

// Client marks (Client.Marks): what a client with repeated jobs or restarts
// knows about the late first copy of its release (its Stray), so that the
// copy is matched against the lock value it carries. Designs with one job
// per client and no restarts leave them zero.
const (
	MarkStrayKey  uint8 = 1 << iota // the key it set last was set by the job that sent its stray release
	MarkStrayOld                    // it has moved on since its stray was sent (a next job, a restart)
	MarkStrayProc                   // it has restarted since its stray was sent: a new process, a new value
	MarkRestarted                   // restarts=N: the times it restarted (two bits, counts the restarts used)
	MarkRestarts  = 3 * MarkRestarted
)

// Client is one client process and its job. All fields are bytes or
// uint16s, laid out so that State has no padding and hashes as raw memory.
type Client struct {
	Token   uint16 // fencing token it holds; 0 = none (zookeeper: its node's sequence)
	Flags   uint16 // FlagBelieves, FlagStarted, …
	Phase   Phase  // what its next step is
	Ready   uint8  // its main thread takes no step before this tick; 0 once reached
	Read    uint8  // the counter value it read
	Version uint8  // the version it read (storage=cas)
	Votes   uint8  // redlock: nodes that granted this attempt (get-del: nodes seen ours)
	Asked   uint8  // redlock: nodes asked so far in this attempt
	Since   uint8  // tick its current lock was requested (validity = Since+TTL−drift−now)
	Timer   uint8  // next watchdog renewal (renew=k); zookeeper: session expiry; 0 none
	Cut     uint8  // partition: cut off from Group until this tick; 0 connected
	Group   uint8  // partition: what it is cut off from (1-based group of the design's partition=)
	Skew    int8   // its own clock's error gained since Since was read (client clock jumps)
	Stray   uint8  // timeout: tick at which the first copy of a resent write or release arrives; 0 none
	Job     uint8  // jobs=N: the jobs it has finished (its current job is Job+1)
	Marks   uint8  // MarkStrayKey, …: repeated jobs and restarts only
}

// Node is one lock-service node: a Redis instance (redis: node 0; replica:
// 0 primary, 1 replica; redlock: 0 … N−1), the etcd cluster, the ZooKeeper
// ensemble or the database's lock table (node 0).
type Node struct {
	Fence uint16 // INCR lock:fence (etcd: revision; zookeeper: sequence counter)
	Owner uint8  // who holds lock:order-42: 0 nobody, i+1 client i
	Exp   uint8  // tick at which the key is gone; 0 = no expiry (db: idle deadline)
	Back  uint8  // a crashed node is down until this tick; 0 = up
	Hold  uint8  // lock-delay: after its holder's key expired, nobody may take it before this tick; 0 none
}

// Storage is the database that holds the counter.
type Storage struct {
	MaxTok   uint16 // highest token seen (last_token for cond-update)
	Counter  uint8  // the counter
	Version  uint8  // version column (storage=cas)
	Accepted uint8  // writes the storage accepted
	Reserved uint8  // reserved (keeps State free of padding)
}

// StorageReplica is the storage's asynchronous replica (storage-failovers,
// stale-reads): what it has received of the primary's row. Designs without
// those faults leave it zero, so their states stay as many as before.
type StorageReplica struct {
	MaxTok     uint16 // the highest token it has seen
	Counter    uint8  // the counter it has
	Version    uint8  // the version it has (storage=cas)
	FailedOver uint8  // storage failovers used
	StaleReads uint8  // stale reads used
}

// State is the whole world: a comparable value, usable as a map key, copied
// by assignment. Unused client and node slots stay zero.
type State struct {
	Clients      [MaxClients]Client
	Nodes        [MaxNodes]Node
	Store        Storage
	StoreCopy    StorageReplica // the storage's lagging replica (storage faults only)
	CounterFence uint16         // counter=external: the external fencing counter (0 for other designs)
	Now          uint8          // the current tick
	// Used counts the faults used of each budget counted here, by Fault
	// (FaultPause … FaultCounterCrash, faults.go); the others count theirs
	// by client (restarts, hangs) or in the storage's replica.
	Used [numUsed]uint8
}

// stateSize is the size of State in bytes; State has no padding (a test
// checks that the fields add up to it).
const stateSize = int(unsafe.Sizeof(State{}))

// Init is the state before anything happens: tick 1, no key, counter 0,
// every client about to start its job.
func Init(d *Design) State {
	var s State
	s.Now = 1
	s.Nodes[0].Fence = uint16(d.FirstToken - 1)
	first := firstPhase(d)
	for i := 0; i < d.Clients; i++ {
		s.Clients[i].Phase = first
	}
	if d.Lock == LockReplica {
		replicaResync(d, &s)
	}
	if k := diskNode(d); k >= 0 {
		fsync(s.Nodes[0], &s.Nodes[k])
	}
	if externalCounter(d) {
		s.CounterFence = uint16(d.FirstToken - 1)
	}
	if d.Lock == LockLease {
		leaseInit(d, &s)
	}
	if d.Readers > 0 {
		rwInit(d, &s) // lock_etcd_mutex.go
	}
	return s
}

// bytes views the state's memory; State is all bytes and uint16s, no padding.
func (s *State) bytes() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(s)), stateSize)
}

// Fingerprint is a 64-bit hash of the state, the same on every run and
// machine of the same byte order: Hash.
func (s *State) Fingerprint() uint64 { return Hash(s) }

// mix is the 64-bit finalizer of MurmurHash3.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Live reports whether client i still has work to do (not done, not crashed).
func (c *Client) Live() bool { return c.Phase < PhaseDone }

// Believes reports whether the client believes it holds the lock.
func (c *Client) Believes() bool { return c.Flags&FlagBelieves != 0 }

// KeyOwner is the client holding the lock key on node n, or -1.
func (s *State) KeyOwner(n int) int { return int(s.Nodes[n].Owner) - 1 }

// LockHolder is the client that really holds the lock, or -1: the owner of
// the key on node 0 (the primary), or (redlock) of a majority of nodes.
func LockHolder(d *Design, s *State) int {
	if d.Lock != LockRedlock {
		return s.KeyOwner(0)
	}
	for i := 0; i < d.Clients; i++ {
		if HoldsLock(d, s, i) {
			return i
		}
	}
	return -1
}

// Finished reports whether every client is done or crashed.
func (s *State) Finished(d *Design) bool {
	for i := 0; i < d.Clients; i++ {
		if s.Clients[i].Live() {
			return false
		}
	}
	return true
}

// Canonical is the state with its interchangeable clients sorted, and every
// reference to a client (key owners) renamed to match: the representative
// of the state's symmetry class. All clients run the same program, so two
// states that differ only in client names behave alike. (Sorting packed
// byte keys instead of comparing fields measured no faster: 35 ns against
// 33 ns when states were 140 bytes; the two copies dominate.)
func Canonical(d *Design, s State) State {
	n := d.Clients
	var perm [MaxClients]uint8 // perm[new] = old
	var owns [MaxClients]uint8 // owns[i]: nodes whose key client i holds
	for i := 0; i < n; i++ {
		perm[i] = uint8(i)
	}
	for k := range s.Nodes {
		if o := s.Nodes[k].Owner; o != 0 {
			owns[o-1] |= 1 << k
		}
	}
	less := func(a, b uint8) bool {
		if !sameClient(&s.Clients[a], &s.Clients[b]) {
			return clientLess(&s.Clients[a], &s.Clients[b])
		}
		return owns[a] < owns[b]
	}
	for i := 1; i < n; i++ { // insertion sort: n is at most 8
		for j := i; j > 0 && less(perm[j], perm[j-1]); j-- {
			perm[j], perm[j-1] = perm[j-1], perm[j]
		}
	}
	var inv [MaxClients]uint8 // inv[old] = new
	moved := false
	for i := 0; i < n; i++ {
		inv[perm[i]] = uint8(i)
		moved = moved || perm[i] != uint8(i)
	}
	if !moved {
		return s
	}
	out := s
	for i := 0; i < n; i++ {
		out.Clients[i] = s.Clients[perm[i]]
	}
	for k := range out.Nodes {
		if o := out.Nodes[k].Owner; o != 0 {
			out.Nodes[k].Owner = inv[o-1] + 1
		}
	}
	return out
}

// sameClient is a == b, in two 8-byte loads and the bytes past them: the
// compiler calls memequal for an 18-byte struct, and Canonical compares
// clients on every step of a symmetric search.
func sameClient(a, b *Client) bool {
	x := (*[clientBytes]byte)(unsafe.Pointer(a))
	y := (*[clientBytes]byte)(unsafe.Pointer(b))
	if binary.LittleEndian.Uint64(x[:8]) != binary.LittleEndian.Uint64(y[:8]) ||
		binary.LittleEndian.Uint64(x[8:16]) != binary.LittleEndian.Uint64(y[8:16]) {
		return false
	}
	for k := 16; k < clientBytes; k++ {
		if x[k] != y[k] {
			return false
		}
	}
	return true
}

func clientLess(a, b *Client) bool {
	if a.Phase != b.Phase {
		return a.Phase < b.Phase
	}
	if a.Ready != b.Ready {
		return a.Ready < b.Ready
	}
	if a.Token != b.Token {
		return a.Token < b.Token
	}
	if a.Read != b.Read {
		return a.Read < b.Read
	}
	if a.Version != b.Version {
		return a.Version < b.Version
	}
	if a.Flags != b.Flags {
		return a.Flags < b.Flags
	}
	if a.Votes != b.Votes {
		return a.Votes < b.Votes
	}
	if a.Asked != b.Asked {
		return a.Asked < b.Asked
	}
	if a.Since != b.Since {
		return a.Since < b.Since
	}
	if a.Timer != b.Timer {
		return a.Timer < b.Timer
	}
	if a.Cut != b.Cut {
		return a.Cut < b.Cut
	}
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	if a.Skew != b.Skew {
		return a.Skew < b.Skew
	}
	if a.Stray != b.Stray {
		return a.Stray < b.Stray
	}
	if a.Job != b.Job {
		return a.Job < b.Job
	}
	return a.Marks < b.Marks
}
