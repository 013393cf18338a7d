package model

import "fmt"

// lock_advisory.go: PostgreSQL advisory locks (the functions of the
// server's src/backend/utils/adt/lockfuncs.c, as documented for
// PostgreSQL 15), with the counter in the same database.
//
// level=session is pg_try_advisory_lock(42) and pg_advisory_unlock(42):
// the lock belongs to the session (the backend) that took it, and lives
// as long as that session, with no TTL. A refused client polls again next
// tick. The server ends an idle session after ttl ticks
// (idle_session_timeout): the holder's session is idle from its acquire
// to its unlock, since the job reads and writes the counter through
// another connection, so a pause or a slow job that outlives ttl loses
// the lock, and the paused client's write still goes through. Its unlock
// on a killed session fails. A session-level lock is reentrant: a session
// that holds it is granted it again, and holds it until it has unlocked
// it as many times (pg_advisory_unlock returns false, with a WARNING, for
// a lock the session does not hold). A crashed client's connection is
// closed by its kernel: the server ends its session, and its lock, at once.
//
// level=xact is BEGIN; SELECT pg_advisory_xact_lock(42); the read and the
// write in the same transaction; COMMIT, which applies the write and
// releases the lock (there is no unlock function for it). The lock
// blocks a refused client until it is free; the server kills a session
// idle in its transaction for ttl ticks (idle_in_transaction_session_
// timeout), which rolls the write back and frees the lock. These are the
// row lock's rules (lock_db.go, tx=inside) with other words.
//
// end=keepalive (level=session, no pool) is a server that ends a session
// only when TCP keepalive finds its client gone (tcp_keepalives_idle,
// _interval and _count adding up to ttl ticks), not when it is idle: a
// paused client's kernel still answers the probes, so its lock outlives
// any pause; a client cut off from the database (partition=service) stops
// answering them, and its session ends ttl ticks later unless the
// partition heals first. An unlock that a partition stops leaves the
// session holding the lock once the partition heals, for as long as the
// client's process keeps its connection: progress is judged there.
//
// pool=tx puts PgBouncer (1.18, pool_mode=transaction) between the clients
// and the server: each transaction, and each statement outside one, runs
// on whichever server connection (backend) the pooler hands it. With
// level=session the lock then belongs to a pooled backend, not to the
// client: the model's pool has two backends that take statements in
// turn (server_round_robin=1: the backend idle the longest), so a
// client's unlock may land on the other backend (false: the lock stays,
// held for ever by a backend nobody believes in), and a client whose
// pg_try_advisory_lock lands on the backend that holds the lock is
// granted it as a re-entry of that session while another client holds
// it. PgBouncer keeps its backends open, so no session times out, and a
// client's crash leaves the backend, and its lock, in the pool.
// pool=tx-reset adds server_reset_query_always=1: DISCARD ALL, which
// releases every advisory lock of the backend (pg_advisory_unlock_all),
// runs whenever a backend goes back to the pool, so a session-level lock
// vanishes as soon as pg_try_advisory_lock has returned true. With
// level=xact the transaction keeps its one backend from BEGIN to COMMIT,
// and the pool changes nothing.
//
// State: node 0 is the lock, its Owner the client that holds it (pool=tx:
// the client whose grant on the holding backend still stands, the first
// such), its Exp the session's idle deadline (0 under the pool). Under
// pool=tx node slot 1 is the pool, no lock node (see poolNode); a
// client's Votes is the backend its lock was granted on.

// advisoryService is the advisory lock's words.
var advisoryService = ServiceFacts{
	Noun: "session", Renewer: "watchdog", Beat: "watchdog",
	BeatLegend: "watchdog: X renewed its key (X! failed); x = due, but frozen with X (paused)",
	Frozen:     "'s watchdog is due but frozen with it: no renewal",
	Node:       "PostgreSQL", NodeStory: "the database",
	Acquire: "lock", Refused: "false", Renew: "renew",
	Poll:      "SELECT pg_try_advisory_lock(42) → false",
	Expiry:    "%s's idle session is ended by the server: its advisory lock is released",
	Contended: "a client's advisory lock request is refused (or blocks) because another session holds the lock",
	Bound:     "idle-session timeout",
}

// SessionEnd is what ends a session-level lock's idle session.
type SessionEnd uint8

const (
	EndIdle      SessionEnd = iota // idle_session_timeout = ttl
	EndKeepalive                   // TCP keepalive: only a client gone (cut off) for ttl ticks
	numSessionEnds
)

var endAxis = axis{"end", []string{"idle", "keepalive"}, []string{
	"advisory: the server ends a session idle for ttl ticks (idle_session_timeout; default)",
	"advisory: the server ends a session only when TCP keepalive finds its client gone for ttl ticks (cut off by a partition); a paused client's kernel still answers",
}}

func (m SessionEnd) String() string { return word(endAxis, int(m)) }

// keepalive reports whether d's sessions end by TCP keepalive only.
func keepalive(d *Design) bool { return d.Lock == LockAdvisory && d.End == EndKeepalive }

// advisoryCut: client i can no longer answer the server's keepalive
// probes (a partition from the database): its session, if it holds the
// lock, ends ttl ticks from now unless the partition heals first.
func advisoryCut(d *Design, s *State, i int) {
	c := &s.Clients[i]
	if key := &s.Nodes[0]; keepalive(d) && c.Cut != 0 && key.Owner == uint8(i+1) && key.Exp == 0 {
		key.Exp = keyEnd(d, s.Now)
	}
}

// advisoryHealed: client i answers the probes again; a session still
// alive no longer ends.
func advisoryHealed(d *Design, s *State, i int) {
	if key := &s.Nodes[0]; keepalive(d) && s.Clients[i].Cut == 0 && key.Owner == uint8(i+1) {
		key.Exp = 0
	}
}

// AdvisoryLevel is which advisory lock a design takes.
type AdvisoryLevel uint8

const (
	LevelSession AdvisoryLevel = iota // pg_try_advisory_lock / pg_advisory_unlock
	LevelXact                         // BEGIN; pg_advisory_xact_lock; … COMMIT
	numAdvisoryLevels
)

var levelAxis = axis{"level", []string{"session", "xact"}, []string{
	"advisory: pg_try_advisory_lock(42), held by the session until pg_advisory_unlock(42); the work uses another connection (default)",
	"advisory: BEGIN; pg_advisory_xact_lock(42) (blocks); read and write in the transaction; COMMIT applies the write and releases",
}}

func (m AdvisoryLevel) String() string { return word(levelAxis, int(m)) }

// PoolMode is what stands between an advisory lock's clients and the server.
type PoolMode uint8

const (
	PoolNone    PoolMode = iota // each client has its own session
	PoolTx                      // PgBouncer pool_mode=transaction, two backends in turn
	PoolTxReset                 // the same, with DISCARD ALL whenever a backend goes back to the pool
	numPoolModes
)

var poolAxis = axis{"pool", []string{"none", "tx", "tx-reset"}, []string{
	"advisory: each client talks to the server in a session of its own (default)",
	"advisory: through PgBouncer, pool_mode=transaction: each transaction (or statement) runs on one of two pooled backends, in turn (server_round_robin=1)",
	"advisory: pool=tx with server_reset_query_always=1: DISCARD ALL releases the backend's advisory locks when it goes back to the pool",
}}

func (m PoolMode) String() string { return word(poolAxis, int(m)) }

// advisoryXact reports whether d is a transaction-level advisory lock.
func advisoryXact(d *Design) bool { return d.Lock == LockAdvisory && d.Level == LevelXact }

// pooledSession reports whether d's session-level lock belongs to pooled
// backends that statements take in turn (pool=tx): the designs that keep
// the pool's state (poolNode).
func pooledSession(d *Design) bool {
	return d.Lock == LockAdvisory && d.Level == LevelSession && d.Pool == PoolTx
}

// poolNode is the pool of pool=tx, kept in node slot 1: Exp is the backend
// (1, 2) that holds the lock, 0 none; Fence how many times it holds it
// (re-entries); Hold the backend the next statement lands on, less one.
// Tick, expiry and the symmetry's owner renaming read node slots only
// below lockNodes (1) or their Owner, which the pool leaves 0.
func poolNode(s *State) *Node { return &s.Nodes[1] }

// nextBackend is the backend the pool hands the next statement (1 or 2),
// and the turn moves on.
func nextBackend(s *State) uint8 {
	p := poolNode(s)
	b := p.Hold + 1
	p.Hold ^= 1
	return b
}

// advisoryAcquire is client i's lock request.
func advisoryAcquire(d *Design, s *State, i int, ev *Event) {
	if d.Level == LevelXact { // BEGIN; pg_advisory_xact_lock: the row lock's rules, it blocks
		keyAcquire(d, s, i, ev)
		return
	}
	c := &s.Clients[i]
	key := &s.Nodes[0]
	me := uint8(i + 1)
	if !reach(d, s, i, 0) {
		ev.Result = ResUnreachable
		c.Take(d, ActAcquire, Reply{Result: ev.Result}, s.Now)
		return
	}
	switch d.Pool {
	case PoolNone:
		ev.Result = ResRefused
		if key.Owner == 0 {
			ev.Result = ResOK
			key.Owner, key.Exp = me, keyEnd(d, s.Now)
			if keepalive(d) {
				key.Exp = 0 // the session is not timed while its client answers
			}
		}
	case PoolTx:
		p := poolNode(s)
		b := nextBackend(s)
		ev.Node = b
		ev.Result = ResRefused
		if p.Exp == 0 || p.Exp == b {
			ev.Result = ResOK
			if p.Exp == 0 {
				key.Owner = me
			}
			p.Exp = b
			p.Fence++
			c.Votes = b
		}
	case PoolTxReset: // granted; DISCARD ALL releases it when the backend goes back to the pool
		ev.Result = ResOK
	}
	c.Take(d, ActAcquire, Reply{Result: ev.Result}, s.Now)
	switch d.Pool {
	case PoolTx:
		settleOwner(d, s)
	case PoolTxReset:
		expiredHeld(s, i, ev)
	}
}

// settleOwner names, under pool=tx, the lock's holder: the first client
// that believes in a grant on the backend that holds the lock; with none,
// the holder stays whoever it was (the backend keeps the lock for ever).
func settleOwner(d *Design, s *State) {
	b, key := poolNode(s).Exp, &s.Nodes[0]
	if b == 0 || grantedOn(s, int(key.Owner)-1, b) {
		return
	}
	for o := 0; o < d.Clients; o++ {
		if grantedOn(s, o, b) {
			key.Owner = uint8(o + 1)
			return
		}
	}
}

// grantedOn reports whether client o (or -1) believes in a grant on
// backend b.
func grantedOn(s *State, o int, b uint8) bool {
	return o >= 0 && s.Clients[o].Believes() && s.Clients[o].Votes == b
}

// poolLeaked is the backend (1, 2) that holds the lock for ever under
// pool=tx: it holds it, and no client believes in a grant on it (or has
// one's reply on its way); -1 when none does. Nothing frees it then: each
// later grant on that backend is a re-entry, which its client's unlock
// undoes at most once, and PgBouncer keeps the backend open.
func poolLeaked(d *Design, s *State) int {
	b := poolNode(s).Exp
	if b == 0 {
		return -1
	}
	for o := 0; o < d.Clients; o++ {
		if c := &s.Clients[o]; c.Votes == b && c.Flags&(FlagBelieves|FlagReply) != 0 {
			return -1
		}
	}
	return int(b)
}

// describePoolLeaked says that backend b holds the lock for ever.
func describePoolLeaked(d *Design, s *State, b int) string {
	return fmt.Sprintf("backend %d holds the advisory lock (%d time(s)) and no client believes in a grant on it: PgBouncer keeps the backend open, so it holds it for ever, and a client gets in only as a re-entry of that backend's lock", b, poolNode(s).Fence)
}

// advisoryRelease is pg_advisory_unlock(42) (level=session) or COMMIT
// (level=xact).
func advisoryRelease(d *Design, s *State, i int, ev *Event) {
	if d.Level == LevelXact {
		dbRelease(d, s, i, ev)
		return
	}
	c := &s.Clients[i]
	key := &s.Nodes[0]
	me := uint8(i + 1)
	ev.Result = ResNoop
	switch {
	case !reach(d, s, i, 0):
		ev.Result = ResUnreachable
		if keepalive(d) && key.Owner == me && c.Cut != 0 && c.Cut < key.Exp {
			// the partition heals before keepalive gives the client up:
			// its session lives on, holding the lock, with the connection
			// of a process whose job is over
			key.Exp = 0
		}
	case d.Pool == PoolNone:
		if key.Owner == me { // its session, alive, holds it
			ev.Result = ResOK
			unlock(d, s, key)
		}
	case d.Pool == PoolTx:
		p := poolNode(s)
		b := nextBackend(s)
		ev.Node = b
		if p.Exp == b { // the backend holds it: one hold fewer
			ev.Result = ResOK
			p.Fence--
			if p.Fence == 0 {
				p.Exp = 0
				unlock(d, s, key)
			}
		}
	}
	c.Votes = 0
	r := ev.Result
	if r == ResUnreachable {
		r = ResNoop // it gives the unlock up
	}
	ev.Flags |= c.Take(d, ActRelease, Reply{Result: r}, s.Now).Flags
	if d.Pool == PoolTx {
		settleOwner(d, s)
	}
}

// advisoryCrashed: a crashed client's kernel closes its connection, and
// the server ends its session at once (its lock, its open transaction).
// Under the pool the backend stays in the pool with what it holds.
func advisoryCrashed(d *Design, s *State, i int) {
	c := &s.Clients[i]
	c.Votes = 0
	if d.Pool != PoolNone && d.Level == LevelSession {
		if d.Pool == PoolTx {
			settleOwner(d, s)
		}
		return
	}
	if key := &s.Nodes[0]; key.Owner == uint8(i+1) {
		unlock(d, s, key)
	}
}

// advisoryApplies refuses advisory designs that could not act.
func (d Design) advisoryApplies() error {
	if d.Lock != LockAdvisory {
		return nil
	}
	if d.Fence != FenceNone {
		return designErr("fence %s is not available for lock advisory: an advisory lock hands out no fencing token (want fence=none; storage=cas checks a version without one)", d.Fence)
	}
	if d.TimeoutTicks > 0 {
		return designErr("design parameter timeout does not apply to lock advisory: a PostgreSQL client does not resend a statement")
	}
	if d.End == EndKeepalive && (d.Level != LevelSession || d.Pool != PoolNone) {
		return designErr("design parameter end=keepalive applies only to level=session with pool=none (a transaction is ended by idle_in_transaction_session_timeout; PgBouncer keeps the pooled backends' connections)")
	}
	return nil
}

// Words.

func describeAdvisoryAcquire(d *Design, st *StepRecord) string {
	ev := &st.Event
	if d.Level == LevelXact {
		cmd := "BEGIN; SELECT pg_advisory_xact_lock(42)"
		switch ev.Result {
		case ResOK:
			return cmd + " → locked"
		case ResUnreachable:
			return cmd + fmt.Sprintf(" → error: cut off (a partition); retry at t=%d", int(ev.Now)+1)
		}
		return cmd + " → blocks: " + owner(ev.Other) + " transaction holds the lock"
	}
	cmd := "SELECT pg_try_advisory_lock(42)"
	on := ""
	if ev.Node != 0 {
		on = fmt.Sprintf(" on backend %d", ev.Node)
	}
	switch {
	case ev.Result == ResUnreachable:
		return cmd + fmt.Sprintf(" → error: cut off (a partition); retry at t=%d", int(ev.Now)+1)
	case ev.Result == ResRefused && ev.Node != 0:
		return fmt.Sprintf("%s%s → false: backend %d holds the lock; retry at t=%d", cmd, on, 3-ev.Node, int(ev.Now)+1)
	case ev.Result == ResRefused:
		return fmt.Sprintf("%s → false: %s session holds the lock; retry at t=%d", cmd, owner(ev.Other), int(ev.Now)+1)
	case d.Pool == PoolTxReset:
		return cmd + " → true; the backend goes back to the pool and DISCARD ALL releases the lock"
	case ev.Node != 0 && st.Before.Nodes[1].Exp == ev.Node:
		return fmt.Sprintf("%s%s → true: that backend already holds the lock (%s grant), and a session re-enters its own lock", cmd, on, owner(ev.Other))
	}
	return cmd + on + " → true"
}

func describeAdvisoryRelease(d *Design, st *StepRecord) string {
	ev := &st.Event
	if d.Level == LevelXact {
		switch {
		case ev.Result == ResUnreachable && ev.Flags&EvCommit != 0:
			return "COMMIT → error: cut off (a partition); the write is not applied"
		case ev.Result == ResUnreachable:
			return "COMMIT → error: cut off (a partition); the idle session will be killed"
		case ev.Flags&EvCommit != 0 && ev.Result == ResAccepted:
			return fmt.Sprintf("COMMIT → counter = %d applied, advisory lock released", ev.Value)
		case ev.Flags&EvCommit != 0:
			return "COMMIT → error: the session was killed, the write is rolled back"
		case ev.Result == ResOK:
			return "COMMIT → advisory lock released"
		}
		return "COMMIT → error: the session was killed"
	}
	cmd := "SELECT pg_advisory_unlock(42)"
	switch {
	case ev.Result == ResUnreachable && keepalive(d) && st.After.Nodes[0].Owner == st.Action.Client+1 && st.After.Nodes[0].Exp == 0:
		return cmd + fmt.Sprintf(" → error: cut off (a partition); it gives the unlock up, and the partition heals at t=%d, before TCP keepalive gives it up: its session keeps the lock", st.Before.Clients[st.Action.Client].Cut)
	case ev.Result == ResUnreachable:
		return cmd + " → error: cut off (a partition); it gives the unlock up"
	case ev.Node != 0 && ev.Result == ResOK && st.After.Nodes[1].Exp != 0:
		return fmt.Sprintf("%s on backend %d → true; the backend still holds the lock %d more time(s)", cmd, ev.Node, st.After.Nodes[1].Fence)
	case ev.Node != 0 && ev.Result == ResOK:
		return fmt.Sprintf("%s on backend %d → true", cmd, ev.Node)
	case ev.Node != 0 && st.After.Nodes[1].Exp != 0:
		return fmt.Sprintf("%s on backend %d → false (WARNING: you don't own a lock of type ExclusiveLock); backend %d keeps the lock", cmd, ev.Node, st.After.Nodes[1].Exp)
	case ev.Node != 0:
		return fmt.Sprintf("%s on backend %d → false (WARNING: you don't own a lock of type ExclusiveLock)", cmd, ev.Node)
	case d.Pool == PoolTxReset:
		return cmd + " → false (WARNING: you don't own a lock of type ExclusiveLock): DISCARD ALL released it long ago"
	case ev.Result == ResOK:
		return cmd + " → true"
	}
	return cmd + " → error: the session was ended by the server"
}
