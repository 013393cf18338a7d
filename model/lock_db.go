package model

import "fmt"

// lock_db.go: a database row lock (BEGIN; SELECT … FOR UPDATE) with the
// counter in the same database. A refused client blocks until the row is
// unlocked; the server kills a session idle for ttl ticks, which frees the
// row. With tx=inside the job reads and writes in the lock's transaction and
// its write takes effect at COMMIT; with tx=outside the lock's session only
// holds the lock (node 0's key, lock_redis.go's single-key rules).

// dbService is a database row lock's words: a session the server kills.
var dbService = ServiceFacts{
	Noun: "session", Renewer: "watchdog", Beat: "watchdog",
	BeatLegend: "watchdog: X renewed its key (X! failed); x = due, but frozen with X (paused)",
	Frozen:     "'s watchdog is due but frozen with it: no renewal",
	Node:       "lock table", NodeStory: "the database",
	Acquire: "FOR UPDATE", Refused: "blocks", Renew: "renew",
	Poll:      "SELECT … FOR UPDATE → blocks",
	Expiry:    "%s's idle session is killed: the row lock is free",
	Contended: "a client's SELECT … FOR UPDATE waits on another's row lock",
	Bound:     "idle-session timeout",
}

// txAccess is a read or write inside the lock's transaction: it fails if the
// session was killed, and otherwise keeps the session busy (not idle).
func txAccess(d *Design, s *State, i int) bool {
	if s.Nodes[0].Owner != uint8(i+1) || !reach(d, s, i, 0) {
		return false
	}
	s.Nodes[0].Exp = keyEnd(d, s.Now)
	return true
}

// dbRelease is COMMIT: it applies a buffered write and unlocks the row, or
// fails (and rolls back) if the session was killed.
func dbRelease(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	key := &s.Nodes[0]
	if !reach(d, s, i, 0) { // cut off: COMMIT fails; the idle session will be killed
		if c.Flags&FlagBuffered != 0 {
			ev.Flags |= EvCommit
			ev.Value = c.Read + 1
		}
		ev.Result = ResUnreachable
		ev.Flags |= c.Take(d, ActRelease, Reply{Result: ev.Result}, s.Now).Flags
		return
	}
	if key.Owner == uint8(i+1) {
		if c.Flags&FlagBuffered != 0 {
			ev.Flags |= EvCommit
			ev.Result, ev.Value = ResAccepted, c.Read+1
			s.Store.Counter = c.Read + 1
			accept(d, &s.Store, c)
		} else {
			ev.Result = ResOK
		}
		unlock(d, s, key)
	} else if c.Flags&FlagBuffered != 0 {
		ev.Flags |= EvCommit
		ev.Result, ev.Value = ResRejected, c.Read+1 // rolled back: the session was killed
	} else {
		ev.Result = ResNoop
	}
	ev.Flags |= c.Take(d, ActRelease, Reply{Result: ev.Result}, s.Now).Flags
}

// Words.

func describeDBAcquire(ev *Event) string {
	if ev.Result == ResOK {
		return "BEGIN; SELECT … FOR UPDATE → row locked"
	}
	return "BEGIN; SELECT … FOR UPDATE → blocks: " + owner(ev.Other) + " session holds the row"
}

func describeDBRelease(d *Design, ev *Event) string {
	if ev.Result == ResUnreachable {
		if ev.Flags&EvCommit != 0 {
			return "COMMIT → error: cut off (a partition); the write is not applied"
		}
		return "COMMIT → error: cut off (a partition); the idle session will be killed"
	}
	if d.Tx == TxOutside {
		if ev.Result == ResOK {
			return "COMMIT on the lock session → row unlocked"
		}
		return "COMMIT on the lock session → error: that session was killed"
	}
	switch {
	case ev.Flags&EvCommit != 0 && ev.Result == ResAccepted:
		return fmt.Sprintf("COMMIT → counter = %d applied, row unlocked", ev.Value)
	case ev.Flags&EvCommit != 0:
		return "COMMIT → error: the session was killed, the write is rolled back"
	case ev.Result == ResOK:
		return "COMMIT → row unlocked"
	}
	return "COMMIT → error: the session was killed"
}
