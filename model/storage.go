package model

import "fmt"

// storage.go: the database that holds the counter, and what it checks of
// the fencing tokens (storage=plain, max-token, max-write, cond-update, cas).

// sentToken is the token the client sends with a read or a write, 0 for none.
func sentToken(d *Design, c *Client, read bool) uint16 {
	if d.Fence == FenceRW || (d.Fence == FenceWrite && !read) {
		return c.Token
	}
	return 0
}

// storageRead applies a read with token tok (0: none); false if refused.
func storageRead(d *Design, st *Storage, tok uint16) bool {
	if tok == 0 {
		return true
	}
	switch d.Storage {
	case StorageMaxToken:
		if tok < st.MaxTok && d.Bug != BugNoTokenCheck {
			return false
		}
		if d.Bug != BugReadNoRecord && tok > st.MaxTok {
			st.MaxTok = tok
		}
	case StorageMaxWrite:
		return tok >= st.MaxTok || d.Bug == BugNoTokenCheck
	}
	return true
}

// storageWrite checks a write with token tok (0: none) and the version the
// client read, records what the storage records, and reports acceptance.
// The caller sets the counter.
func storageWrite(d *Design, st *Storage, tok uint16, version uint8) bool {
	switch d.Storage {
	case StorageCAS:
		if st.Version != version {
			return false
		}
		st.Version++
	case StorageMaxToken, StorageMaxWrite:
		if tok != 0 {
			if tok < st.MaxTok && d.Bug != BugNoTokenCheck {
				return false
			}
			if tok > st.MaxTok {
				st.MaxTok = tok
			}
		}
	case StorageCondUpdate:
		if tok != 0 {
			if tok <= st.MaxTok && d.Bug != BugNoTokenCheck {
				return false
			}
			if tok > st.MaxTok {
				st.MaxTok = tok
			}
		}
	}
	return true
}

// Words.

// storageRefusal is why the storage (or the lock's transaction) refused.
func storageRefusal(d *Design, a Action, ev *Event) string {
	switch {
	case inTx(d):
		return "error: the session was killed"
	case d.Storage == StorageCAS:
		return "rejected: version changed"
	case d.Storage == StorageCondUpdate && a.Kind != ActRead:
		return fmt.Sprintf("rejected: last_token %d is not < %d", ev.MaxTok, ev.Token)
	}
	return fmt.Sprintf("rejected: %d < %d", ev.Token, ev.MaxTok)
}

func tokenNote(tok uint16) string {
	if tok == 0 {
		return ""
	}
	return fmt.Sprintf(" (token %d)", tok)
}

func describeRead(d *Design, st *StepRecord, unsafe string) string {
	ev := &st.Event
	s := "read counter" + tokenNote(ev.Token) + " → "
	if inTx(d) {
		s = "SELECT counter (in its transaction) → "
	}
	if ev.Result == ResUnreachable {
		return s + fmt.Sprintf("error: cut off from the storage (a partition); it retries until it gets through (t=%d)", st.After.Clients[st.Action.Client].Ready)
	}
	if ev.Result == ResRejected {
		return s + storageRefusal(d, st.Action, ev) + unsafe
	}
	return s + fmt.Sprint(ev.Value) + unsafe
}

func describeWrite(d *Design, st *StepRecord, unsafe string) string {
	ev := &st.Event
	s := fmt.Sprintf("write counter = %d%s → ", ev.Value, tokenNote(ev.Token))
	if st.Action.Kind == ActArrive {
		s = fmt.Sprintf("its delayed write counter = %d%s arrives → ", ev.Value, tokenNote(ev.Token))
	}
	if ev.Result == ResUnreachable {
		return s + fmt.Sprintf("error: cut off from the storage (a partition); it retries until it gets through (t=%d)", st.After.Clients[st.Action.Client].Ready)
	}
	if inTx(d) {
		s = fmt.Sprintf("UPDATE counter = %d (in its transaction) → ", ev.Value)
		if ev.Result == ResOK {
			return s + "pending until COMMIT" + unsafe
		}
	}
	if ev.Result == ResRejected {
		return s + storageRefusal(d, st.Action, ev) + unsafe
	}
	return s + "accepted" + unsafe
}
