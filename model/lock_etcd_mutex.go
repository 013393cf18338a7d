package model

import "fmt"

// lock_etcd_mutex.go: etcd's queued Mutex (go.etcd.io/etcd/client/v3/
// concurrency, read in v3.6.16). Each client has a Session: a lease of
// session ticks that the session's keep-alive renews from the client's own
// process. Mutex.Lock (tryAcquire) puts the client's key pfx/<lease ID>
// with the lease, in a transaction, if it is absent; the key's create
// revision orders the queue, the lowest holds the lock, and it is the
// fencing token. A waiter waits in waitDeletes until every key created
// before its own is deleted (it watches the last of them for its delete,
// again and again), and then Gets its own key: if its session expired
// while it waited, the key is gone and Lock returns ErrSessionExpired
// (session-check=get); the client opens a new session and locks again.
// session-check=none is a client that takes waitDeletes' return as the lock
// without that Get, as etcd's recipe RWMutex was reported to do (etcd issue
// 16221). Unlock deletes the key by its name (release=del,
// Mutex.Unlock); release=cad deletes it in a transaction fenced on the
// create revision, If(CreateRevision(key) = myRev) (the compare of
// Mutex.IsOwner). The two differ when a late copy of an earlier job's
// Unlock meets a later job's key of the same session: the same name, a new
// revision.
//
// The session lives while its process sends keep-alives: a pause or a
// partition longer than the session ticks, or a crash, lets its lease
// expire and the server deletes the key (ZooKeeper's session rules,
// lock_zookeeper.go: zkPaused, zkResumed, zkCrashed, zkRelease). The
// revision counts puts only: a delete also moves etcd's revision, which
// changes no order.
//
// reality plays it for real with etcd's own blocking Mutex.Lock
// (reality/world_etcd_mutex.go: session=3, release=del, session-check=get).
//
// readers=K is etcd's reader-writer lock on the same queue
// (go.etcd.io/etcd/client/v3/experimental/recipes, rwmutex.go, v3.6.16):
// clients A … K are readers. RLock puts a key pfx/read/<now> under the
// session's lease (newUniqueEphemeralKey) and loops on
// waitOnLastRev(pfx+"write"): a Get of the last write key with a create
// revision below its own (WithLastRev, WithMaxModRev(myRev−1)), and a
// watch for its delete, until none is left. Lock (a writer) puts
// pfx/write/<now> and loops on waitOnLastRev(pfx): until no key at all of
// a lower revision is left. So a writer holds when its key is the first
// (node 0's Owner, zkOwner), a reader when no writer's key is below its
// own (readHolds): readers hold together. RUnlock and Unlock delete the
// key by its name, which is new for each call (a stray late copy deletes
// nothing, whatever release=). The recipe has no Get of its own key once
// the wait returns (session-check=none; etcd issue 16221): a reader
// whose session expired while it waited reads as if it held the lock.
// session-check=get is the recipe with that check added. A reader's job
// reads and releases, with no write. The role costs no state bit:
// MarkReader, set in Init (rwInit).

// etcdMutexService is the queued Mutex's words.
var etcdMutexService = ServiceFacts{
	Noun: "session", Renewer: "keep-alive", Beat: "keep-alive",
	BeatLegend: "keep-alive: x = X is paused and sends no keep-alives: its session's lease runs out",
	Frozen:     " is paused: no keep-alives, its session's lease runs out",
	Node:       "etcd", NodeStory: "the etcd cluster",
	Acquire: "lock", Refused: "wait", Renew: "keep-alive",
	Poll:      "put its key → wait for its predecessor's delete",
	Expiry:    "%s's session lease expires: its key is deleted",
	Contended: "a client's key is not the first by create revision: it waits for its predecessor's delete",
	Bound:     "session", QueueEntry: "key",
}

// FlagKeyGone (etcd-mutex): the client's key was deleted, its session
// expired, while it waited in Lock; waitDeletes still waits for the keys
// created before it, and the Get then finds none. It shares the bit of
// FlagBuffered, which only a database row lock with tx=inside sets.
const FlagKeyGone = FlagBuffered

// SessionCheck is what etcd's Mutex.Lock does once waitDeletes returns.
type SessionCheck uint8

const (
	// SessionCheckGet: Get its own key; none means its session expired
	// while it waited: ErrSessionExpired (Mutex.Lock, v3.6).
	SessionCheckGet SessionCheck = iota
	// SessionCheckNone: take waitDeletes' return as the lock.
	SessionCheckNone
	numSessionChecks
)

var sessionCheckAxis = axis{"session-check", []string{"get", "none"}, []string{
	"etcd-mutex: after waitDeletes, Get its own key; gone: ErrSessionExpired, lock again with a new session (default; Mutex.Lock, v3.6)",
	"etcd-mutex: take waitDeletes' return as the lock, without the Get (etcd's recipe RWMutex, issue 16221)",
}}

func (m SessionCheck) String() string { return word(sessionCheckAxis, int(m)) }

// MarkReader (etcd-mutex, readers=K): the client takes read locks
// (RLock). It is the bit of lease's MarkConfigB: lease and etcd-mutex
// never meet in one design. Canonical and SymmetricFingerprint compare
// Marks, so symmetry keeps readers and writers apart. A client keeps it
// for good: through its jobs, a restart, a crash (its key lives on as a
// read key, zkCrashed) and its end (finishJob).
const MarkReader = MarkConfigB

// readersApply refuses readers=K where the recipe's reader-writer lock
// cannot be stated.
func (d Design) readersApply() error {
	switch {
	case d.Readers == 0:
		return nil
	case d.Readers >= d.Clients:
		return designErr("design parameter readers=%d: want at most clients−1 = %d (clients A … K read, at least one client takes the write lock)", d.Readers, d.Clients-1)
	case d.Release != ReleaseDel:
		return designErr("design parameter readers=K needs release=del: RWMutex's RUnlock and Unlock delete the key by its name (EphemeralKV.Delete), not fenced on its revision")
	case d.Fence == FenceRW:
		return designErr("design parameter readers=K takes fence=none or write: readers hold together, so a read's token below another reader's would be refused by a legitimate holder")
	}
	return nil
}

// rwInit marks clients A … K as readers.
func rwInit(d *Design, s *State) {
	for i := 0; i < d.Readers; i++ {
		s.Clients[i].Marks |= MarkReader
	}
}

// isReader reports whether client i takes read locks (readers=K).
func isReader(d *Design, s *State, i int) bool {
	return d.Readers > 0 && s.Clients[i].Marks&MarkReader != 0
}

// writerBelow reports whether a writer's key with a create revision below
// rev is left: what a reader's waitOnLastRev(pfx+"write") waits for.
func writerBelow(d *Design, s *State, rev uint16) bool {
	for j := 0; j < d.Clients; j++ {
		if c := &s.Clients[j]; c.Flags&FlagZNode != 0 && c.Marks&MarkReader == 0 && c.Token < rev {
			return true
		}
	}
	return false
}

// readHolds reports whether reader i holds a read lock: its key exists and
// no writer's key is below it (HoldsLock's reader case; a writer holds
// only as node 0's Owner, the first key).
func readHolds(d *Design, s *State, i int) bool {
	c := &s.Clients[i]
	return c.Marks&MarkReader != 0 && c.Flags&FlagZNode != 0 && !writerBelow(d, s, c.Token)
}

// readSafe reports whether client i's read is safe although it holds no
// read lock (readers=K): it is a reader and no writer holds the lock.
func readSafe(d *Design, s *State, i int) bool {
	if !isReader(d, s, i) {
		return false
	}
	o := s.Nodes[0].Owner
	return o == 0 || s.Clients[o-1].Marks&MarkReader != 0
}

// SafeRead reports whether client i may read the storage in s: it holds
// the lock, or (readers=K) it is a reader and no writer holds it. The
// storage check (linearizability) names the holder by it.
func SafeRead(d *Design, s *State, i int) bool { return HoldsLock(d, s, i) || readSafe(d, s, i) }

// rwConflict is mutex for readers=K: a writer inside its critical section
// while any other client is inside its own.
func rwConflict(d *Design, s *State) bool {
	n, w := 0, 0
	for i := 0; i < d.Clients; i++ {
		if c := &s.Clients[i]; c.InCriticalSection() {
			n++
			if c.Marks&MarkReader == 0 {
				w++
			}
		}
	}
	return w > 0 && n >= 2
}

// emAcquireEnabled: a client whose key exists waits until it holds (a
// writer: its key is the first; a reader: no writer's key is below it);
// one whose key is gone waits until the keys it waits for are deleted
// (waitDeletes; RWMutex's waitOnLastRev), and then Gets its key.
func emAcquireEnabled(d *Design, s *State, i int) bool {
	c := &s.Clients[i]
	switch {
	case c.Flags&FlagZNode != 0:
		return HoldsLock(d, s, i)
	case c.Flags&FlagKeyGone != 0:
		if isReader(d, s, i) {
			return !writerBelow(d, s, c.Token)
		}
		o := s.Nodes[0].Owner
		return o == 0 || s.Clients[o-1].Token > c.Token
	}
	return true
}

// emAcquire is one step of Mutex.Lock: tryAcquire's transaction (put its key
// if absent, get the first key by create revision), or, once waitDeletes
// returned, the Get of its own key.
func emAcquire(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	key := &s.Nodes[0]
	if !reach(d, s, i, 0) {
		ev.Result = ResUnreachable
		c.Take(d, ActAcquire, Reply{Result: ev.Result}, s.Now)
		return
	}
	ev.Other = key.Owner
	if c.Flags&FlagKeyGone != 0 { // waitDeletes returned; its own key is gone
		c.Flags &^= FlagKeyGone
		if d.SessionCheck == SessionCheckNone {
			ev.Result = ResOK // it goes on without a key
			c.Take(d, ActAcquire, Reply{Result: ev.Result}, s.Now)
			return
		}
		ev.Result = ResNoop // ErrSessionExpired: a new session, Lock again
		c.Token = 0
		if c.Stray != 0 {
			c.Marks |= MarkStrayProc // the new session's key has another name
		}
		c.Take(d, ActAcquire, Reply{Result: ev.Result}, s.Now)
		return
	}
	if c.Flags&FlagZNode == 0 { // tryAcquire: its key, with its create revision
		takeToken(key, c, ev)
		c.Flags |= FlagZNode
		keySet(c)
		if d.Check == CheckValidity {
			c.Since, c.Skew = s.Now, 0
		}
		zkOwner(d, s)
	}
	ev.Result = ResRefused // waitDeletes: it watches its predecessor's key
	if HoldsLock(d, s, i) {
		ev.Result = ResOK
	}
	c.Take(d, ActAcquire, Reply{Result: ev.Result, Token: ev.Token}, s.Now)
}

// emTick: client i's session lease expires when its timer is reached, and
// the server deletes its key; a waiter learns it only from its Get.
func emTick(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	if c.Timer != s.Now || c.Timer == 0 {
		return
	}
	c.Timer = 0
	if c.Flags&FlagZNode != 0 {
		ev.Flags |= EvExpired
		ev.ExpiredMask |= 1 << i
		if HoldsLock(d, s, i) {
			expiredHeld(s, i, ev)
		}
		c.Flags &^= FlagZNode
		if c.Phase == PhaseAcquire && c.Live() {
			c.Flags |= FlagKeyGone
		}
		zkOwner(d, s)
	}
}

// emStrayRelease is the late first copy of an earlier job's Unlock (delays
// with timeout=T, jobs=N): it names the key of its session, which a later
// job of the same session has put again. A delete by name (release=del)
// deletes that later key; one fenced on the create revision (release=cad)
// finds another revision and deletes nothing; after a new session the name
// is another.
func emStrayRelease(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	ev.Other = s.Nodes[0].Owner
	later := c.Flags&FlagZNode != 0 && c.Marks&MarkStrayKey == 0
	sameName := c.Marks&MarkStrayProc == 0 && d.Readers == 0 // RWMutex names each key anew (newUniqueEphemeralKey)
	strayDone(c)
	ev.Result = ResNoop
	if !later || !sameName {
		return
	}
	ev.Flags |= EvOwnLater
	if d.Release == ReleaseCAD {
		return
	}
	ev.Result = ResOK
	c.Flags &^= FlagZNode
	if c.Phase == PhaseAcquire { // it waits, or is about to be told it holds: its Get will find no key
		c.Flags |= FlagKeyGone
	}
	zkOwner(d, s)
}

// Words.

func describeEtcdMutexAcquire(d *Design, st *StepRecord) string {
	if d.Readers > 0 {
		return describeRWAcquire(d, st)
	}
	ev := &st.Event
	i := int(st.Action.Client)
	c := &st.Before.Clients[i]
	if ev.Result == ResUnreachable {
		return fmt.Sprintf("txn put its key → error: cut off (a partition); retry at t=%d", int(ev.Now)+1)
	}
	if c.Flags&FlagKeyGone != 0 {
		s := "waitDeletes returns: the keys before its own are deleted; "
		if ev.Result == ResOK {
			return s + "it takes the lock without looking at its own key (session-check=none), which its expired session lost"
		}
		return s + fmt.Sprintf("get its key → none: ErrSessionExpired (its session's lease expired while it waited); a new session, Lock again at t=%d", int(ev.Now)+1)
	}
	s := "watch fires: its predecessor's key is deleted; get its key → found"
	if c.Flags&FlagZNode == 0 {
		s = fmt.Sprintf("txn: if create_revision(lock/<its lease>) = 0 then put with its session's lease (session %d ticks) → create_revision %d", d.SessionTicks, st.After.Clients[i].Token)
	}
	if ev.Result == ResOK {
		return s + "; first key by create revision: holds the lock" + tokenSuffix(d, ev.Token, "revision")
	}
	return s + "; waits for the delete of its predecessor (" + predecessor(d, &st.After, i) + " key; the lock is " + owner(ev.Other) + ")"
}

// describeRWAcquire is describeEtcdMutexAcquire for readers=K: RLock and
// Lock of etcd's recipe.RWMutex.
func describeRWAcquire(d *Design, st *StepRecord) string {
	ev := &st.Event
	i := int(st.Action.Client)
	c := &st.Before.Clients[i]
	reader := isReader(d, &st.Before, i)
	call, kind, below, watched := "Lock", "write", "no key at all", "key"
	if reader {
		call, kind, below, watched = "RLock", "read", "no write key", "write key"
	}
	if ev.Result == ResUnreachable {
		return fmt.Sprintf("%s: put its key → error: cut off (a partition); retry at t=%d", call, int(ev.Now)+1)
	}
	if c.Flags&FlagKeyGone != 0 {
		s := "waitOnLastRev: " + below + " below its own revision is left; "
		if ev.Result == ResOK {
			return s + call + " returns without looking at its own key (the recipe has no such check: session-check=none), which its expired session lost"
		}
		return s + fmt.Sprintf("get its key → none: its session's lease expired while it waited; a new session, %s again at t=%d", call, int(ev.Now)+1)
	}
	s := "watch fires: the key it waited on is deleted"
	if c.Flags&FlagZNode == 0 {
		s = fmt.Sprintf("%s: put lock/%s/<now> if absent, with its session's lease (session %d ticks) → create_revision %d", call, kind, d.SessionTicks, st.After.Clients[i].Token)
	}
	if ev.Result == ResOK {
		s += "; waitOnLastRev: " + below + " below its own revision"
		if d.SessionCheck == SessionCheckGet && c.Flags&FlagZNode != 0 {
			s += "; get its key → found"
		}
		if reader {
			return s + ": holds a read lock"
		}
		return s + ": holds the write lock" + tokenSuffix(d, ev.Token, "revision")
	}
	return s + "; waitOnLastRev watches the last " + watched + " below its own for its delete (" + predecessor(d, &st.After, i) + " key)"
}

// predecessor is the owner's word ("A's") of the last key created before
// client i's: the one waitDeletes watches (a reader's waitOnLastRev: the
// last write key).
func predecessor(d *Design, s *State, i int) string {
	best, who := uint16(0), uint8(0)
	reader := isReader(d, s, i)
	for j := 0; j < d.Clients; j++ {
		c := &s.Clients[j]
		if reader && c.Marks&MarkReader != 0 {
			continue
		}
		if j != i && c.Flags&FlagZNode != 0 && c.Token < s.Clients[i].Token && c.Token >= best {
			best, who = c.Token, uint8(j+1)
		}
	}
	return owner(who)
}

func describeEtcdMutexPause(d *Design, ev *Event, p uint8) string {
	if int(p) > d.SessionTicks {
		return fmt.Sprintf("; no keep-alives: its session's lease will expire at t=%d", int(ev.Now)+d.SessionTicks)
	}
	return ""
}

func describeEtcdMutexRelease(d *Design, st *StepRecord) string {
	ev := &st.Event
	del := "Unlock: delete its key by name"
	if isReader(d, &st.Before, int(st.Action.Client)) {
		del = "RUnlock: delete its key by name"
	}
	if d.Release == ReleaseCAD {
		del = "txn: if create_revision(its key) = its revision then delete"
	}
	switch ev.Result {
	case ResUnreachable:
		return del + " → error: cut off (a partition); the key lives until its session's lease expires"
	case ResOK:
		return del + " → deleted; the next in line's watch fires"
	}
	return del + " → no key: already deleted (its session's lease expired, or a late delete)"
}

// lateOwnWhy is why the late first copy of an earlier job's release did or
// did not delete the client's later key.
func etcdMutexLateOwn(d *Design, deleted bool) string {
	if deleted {
		return "the same name: its session's lease ID; Unlock deletes by name"
	}
	return "the same name, another create revision: the fenced delete leaves it alone"
}

// readerMark is MarkReader in a readers=K design, else 0: the marks a
// finished job keeps beside the restarts.
func readerMark(d *Design) uint8 {
	if d.Readers > 0 {
		return MarkReader
	}
	return 0
}

// rwDocs are mutex's and exclusive's rules for readers=K.
var rwDocs = map[string]string{
	"mutex":     "no writer believes it holds the lock while another client believes it holds it (readers share it)",
	"exclusive": "no writer reads or writes storage without the write lock, and no reader reads while a writer holds it",
}
