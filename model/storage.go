package model

import "fmt"

// storage.go: the database that holds the counter, and what it checks of
// the fencing tokens (storage=plain, max-token, max-write, cond-update, cas);
// and the storage's own faults, each drawn from its budget: a failover to
// its asynchronous replica, which has only what it received (the highest
// token too: fencing state lost), and reads served by that lagging replica
// while fenced writes go to the primary (storage-failovers, stale-reads).

// twoStep reports whether the storage checks a write's token in one
// request and applies the write in a second (fence-check=two-step).
func twoStep(d *Design) bool { return d.FenceCheck == FenceCheckTwoStep }

// fenceCheckApplies refuses fence-check=two-step where there is no
// separate check to split from the write, or where the model cannot play
// the gap between them.
func (d Design) fenceCheckApplies() error {
	if !twoStep(&d) {
		return nil
	}
	switch {
	case d.Storage != StorageMaxToken && d.Storage != StorageMaxWrite:
		return designErr("design parameter fence-check=two-step applies only to storage max-token or max-write (allowed for %s: atomic): plain checks no token, and cond-update's UPDATE … WHERE and cas's compare-and-set check and write in one statement", d.Storage)
	case d.Fence == FenceNone:
		return designErr("design parameter fence-check=two-step needs fence=write or rw: with fence=none no token is sent, so there is no check to split from the write")
	case d.TimeoutTicks > 0:
		return designErr("design parameter fence-check=two-step does not apply with timeout=%d: a resent check or apply (losses, delays past the timeout) is not modelled; set timeout=0", d.TimeoutTicks)
	case d.Delays > 0 && (d.DelayAt == PlaceAny || d.DelayAt == PlaceWrite):
		return designErr("design parameter fence-check=two-step does not apply with delays at the write (delay-at=%s): a check or apply held in the network is not modelled; want delay-at acquire, read or release", d.DelayAt)
	}
	return nil
}

// storageFaults reports whether the design has a storage replica at all.
func storageFaults(d *Design) bool { return d.StorageFailovers > 0 || d.StaleReads > 0 }

// replicaLags reports whether the storage's replica differs from its
// primary (storage-loses=fence: in the fencing state kept apart from the
// row, all it holds; a storage whose check lives in the row has none).
func replicaLags(d *Design, s *State) bool {
	r := &s.StoreCopy
	if d.StorageLoses == LossFence {
		return fenceApart(d) && r.MaxTok != s.Store.MaxTok
	}
	return r.MaxTok != s.Store.MaxTok || r.Counter != s.Store.Counter || r.Version != s.Store.Version
}

// storageActions are the storage replica's catching up and the storage
// failover, offered while a storage fault is left in the budget and the
// replica lags (a failover to an equal replica changes nothing).
func storageActions(d *Design, s *State, buf []Action) []Action {
	r := &s.StoreCopy
	failLeft := int(r.FailedOver) < d.StorageFailovers
	if !failLeft && int(r.StaleReads) >= d.StaleReads || !replicaLags(d, s) {
		return buf
	}
	buf = append(buf, Action{Kind: ActStorageSync})
	if failLeft {
		buf = append(buf, Action{Kind: ActStorageFailover})
	}
	return buf
}

// staleReadActions: client i's read, due now, is served by the lagging replica.
func staleReadActions(d *Design, s *State, i int, buf []Action) []Action {
	if int(s.StoreCopy.StaleReads) >= d.StaleReads || !replicaLags(d, s) || !reachStorage(d, s, i) {
		return buf
	}
	if k, ok := mainStep(d, s, i); ok && k == ActRead {
		buf = append(buf, Action{Kind: ActStaleRead, Client: uint8(i)})
	}
	return buf
}

// fenceApart reports whether the storage keeps its fencing state apart
// from the counter's row: max-token and max-write record the highest
// token in a check of their own (a proxy, a side table); cond-update's
// last_token and cas's version are columns of the row.
func fenceApart(d *Design) bool {
	return d.Storage == StorageMaxToken || d.Storage == StorageMaxWrite
}

// storageSync: the storage's replica catches up with the primary
// (storage-loses=fence: the replica of its fencing state does).
func storageSync(d *Design, s *State, ev *Event) {
	r := &s.StoreCopy
	r.MaxTok = s.Store.MaxTok
	if d.StorageLoses != LossFence {
		r.Counter, r.Version = s.Store.Counter, s.Store.Version
	}
	ev.Result, ev.Value, ev.Token = ResOK, s.Store.Counter, r.MaxTok
}

// storageFailover: the storage's primary dies and its replica is promoted
// with what it had: accepted writes and the highest token it had not
// received are gone (storage-loses=fence: only the highest token). A new
// replica starts from the new primary.
func storageFailover(d *Design, s *State, ev *Event) {
	r := &s.StoreCopy
	r.FailedOver++
	ev.Value, ev.Token = s.Store.Counter, s.Store.MaxTok
	s.Store.MaxTok = r.MaxTok
	if d.StorageLoses != LossFence {
		s.Store.Counter, s.Store.Version = r.Counter, r.Version
	}
	ev.Result = ResOK
	storageReplicaDone(d, s)
}

// storageReplicaDone forgets the replica once no storage fault is left, so
// that states differing only in it merge.
func storageReplicaDone(d *Design, s *State) {
	r := &s.StoreCopy
	if int(r.FailedOver) >= d.StorageFailovers && int(r.StaleReads) >= d.StaleReads {
		r.MaxTok, r.Counter, r.Version = 0, 0, 0
	}
}

// replicaRead checks a read with token tok (0: none) at the replica: it
// refuses a token below the highest it has seen but records nothing (a
// replica takes no writes).
func replicaRead(d *Design, r *StorageReplica, tok uint16) bool {
	if tok == 0 || d.Bug == BugNoTokenCheck {
		return true
	}
	switch d.Storage {
	case StorageMaxToken, StorageMaxWrite:
		return tok >= r.MaxTok
	}
	return true
}

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

// storeCheck is fence-check=two-step's first request: the storage checks
// client i's token tok (and records it) as storageWrite does, but writes
// nothing; the write is the client's next step (apply).
func storeCheck(d *Design, s *State, tok uint16, ev *Event) {
	if !storageWrite(d, &s.Store, tok, 0) {
		ev.Result, ev.MaxTok = ResRejected, s.Store.MaxTok
		return
	}
	ev.Result = ResOK // passed: the client sends the write next
}

// apply is fence-check=two-step's second request: client i's write of
// read+1, applied without a check (its token passed one step before,
// whatever has landed since).
func apply(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	if !HoldsLock(d, s, i) {
		ev.Flags |= EvUnsafe
	}
	ev.Held = uint8(heldNodes(d, s, i))
	ev.Token, ev.Value = sentToken(d, c, false), c.Read+1
	if !reachStorage(d, s, i) { // cut off: its retries fail until the partition heals
		ev.Flags &^= EvUnsafe
		ev.Result = ResUnreachable
	} else {
		ev.Result, ev.MaxTok = ResAccepted, s.Store.MaxTok
		s.Store.Counter = c.Read + 1
		accept(d, &s.Store, c)
	}
	c.Take(d, ActApply, Reply{Result: ev.Result}, s.Now)
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
	if st.Action.Kind == ActStaleRead {
		s = "read counter" + tokenNote(ev.Token) + " from the storage's lagging replica → "
		if ev.Result == ResRejected {
			return s + fmt.Sprintf("rejected: %d < %d (the replica's highest token)", ev.Token, ev.MaxTok) + unsafe
		}
		return s + fmt.Sprintf("%d (the primary has %d)", ev.Value, st.After.Store.Counter) + unsafe
	}
	if ev.Result == ResRejected {
		return s + storageRefusal(d, st.Action, ev) + unsafe
	}
	return s + fmt.Sprint(ev.Value) + unsafe
}

func describeStorageSync(d *Design, st *StepRecord) string {
	if d.StorageLoses == LossFence {
		return fmt.Sprintf("storage: the token check's replica catches up (highest token %d; the counter is replicated synchronously)", st.Event.Token)
	}
	return fmt.Sprintf("storage replica: catches up with the primary (counter %d, highest token %d)", st.Event.Value, st.Event.Token)
}

func describeStorageFailover(d *Design, st *StepRecord) string {
	ev, b, a := &st.Event, &st.Before.Store, &st.After.Store
	s := fmt.Sprintf("storage failover: the primary dies, its replica is promoted with counter %d", a.Counter)
	if d.StorageLoses == LossFence {
		s += " (replicated synchronously: no write is lost)"
	}
	if b.Counter != a.Counter {
		s += fmt.Sprintf(" (the primary had %d: an accepted write is lost)", ev.Value)
	}
	if b.MaxTok != a.MaxTok {
		s += fmt.Sprintf(" and highest token %d (the primary had seen %d: fencing state lost)", a.MaxTok, ev.Token)
	}
	return s
}

// describeCheck is fence-check=two-step's token check for a write.
func describeCheck(d *Design, st *StepRecord, unsafe string) string {
	ev := &st.Event
	s := fmt.Sprintf("token check for write counter = %d%s → ", ev.Value, tokenNote(ev.Token))
	switch ev.Result {
	case ResUnreachable:
		return s + fmt.Sprintf("error: cut off from the storage (a partition); it retries until it gets through (t=%d)", st.After.Clients[st.Action.Client].Ready)
	case ResRejected:
		return s + storageRefusal(d, st.Action, ev) + unsafe
	}
	return s + fmt.Sprintf("passed (highest token %d); the write follows as a second request", st.After.Store.MaxTok) + unsafe
}

// describeApply is fence-check=two-step's write, after its check passed.
func describeApply(st *StepRecord, unsafe string) string {
	ev := &st.Event
	s := fmt.Sprintf("write counter = %d%s, its token check passed earlier, applied unchecked → ", ev.Value, tokenNote(ev.Token))
	if ev.Result == ResUnreachable {
		return s + fmt.Sprintf("error: cut off from the storage (a partition); it retries until it gets through (t=%d)", st.After.Clients[st.Action.Client].Ready)
	}
	s += "accepted"
	if ev.MaxTok > ev.Token {
		s += fmt.Sprintf(", though the storage has seen token %d since", ev.MaxTok)
	}
	return s + unsafe
}

func describeWrite(d *Design, st *StepRecord, unsafe string) string {
	ev := &st.Event
	if twoStep(d) && st.Action.Kind == ActWrite {
		return describeCheck(d, st, unsafe)
	}
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
