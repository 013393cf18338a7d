package reality

import (
	"fmt"

	"lockcheck/model"
)

// view is one step reduced to what both worlds can say about it; the model
// and reality agree on a step when their views are equal.
type view struct {
	Took         model.ActionKind
	Skipped      bool
	Why          string // why a real client took no step
	Result       model.Result
	Value        int
	Token        int
	MaxTok       int
	Unsafe       bool
	RemovedOther bool
	After        int              // key holder after the step (Redlock: the majority's)
	NoExpiry     bool             // the key exists and has no expiry (acquire=set-expire)
	Held         model.ActionKind // a delay's request, or an arrive's (acquire or write)
	// Redlock: the node an acquire step asked, whether the attempt won,
	// and every node's holder after the step
	Node  int
	Won   bool
	Nodes string
}

func modelView(d *model.Design, st *model.StepRecord) view {
	ev := &st.Event
	v := view{
		Took:         st.Action.Kind,
		Result:       ev.Result,
		Value:        int(ev.Value),
		Token:        int(ev.Token),
		Unsafe:       ev.Flags&model.EvUnsafe != 0,
		RemovedOther: ev.Flags&model.EvRemovedOther != 0,
		After:        st.After.KeyOwner(0),
	}
	if ev.Result == model.ResRejected {
		v.MaxTok = int(ev.MaxTok)
	}
	if k := st.Action.Kind; k == model.ActDelay || k == model.ActArrive {
		v.Held = model.RequestKind(d, st)
		if k == model.ActDelay && v.Held == model.ActAcquire {
			// applied, its reply held: the client is told nothing yet (what
			// the server did shows in the key's holder after the step)
			v.Result, v.Value, v.Token = model.ResNone, 0, 0
		}
		if k == model.ActArrive && v.Held == model.ActAcquire {
			v.Token = 0 // the token came with the reply, and shows on its reads and writes
		}
	}
	if st.Action.Kind == model.ActTick {
		v.Result, v.Value, v.Token = model.ResNone, 0, 0
	}
	switch st.Action.Kind { // what the storage's replica has after the step, or the promoted one
	case model.ActStorageSync:
		v.Value, v.Token = int(st.After.StoreCopy.Counter), int(st.After.StoreCopy.MaxTok)
	case model.ActStorageFailover:
		v.Value, v.Token = int(st.After.Store.Counter), int(st.After.Store.MaxTok)
	}
	v.NoExpiry = v.After >= 0 && st.After.Nodes[0].Exp == 0
	if d.Lock == model.LockEtcdMutex { // the keys live by their sessions' leases, never without expiry
		v.NoExpiry = false
	}
	if st.After.Nodes[0].Back != 0 { // the node is down: nobody can see its key
		v.After, v.NoExpiry = HolderDown, false
	}
	if d.Lock == model.LockRedlock {
		v.Nodes, v.After = modelNodes(d, &st.After)
		v.NoExpiry = false
		if st.Action.Kind == model.ActAcquire {
			v.Node, v.Won = int(ev.Node), ev.Flags&model.EvWon != 0
		}
	}
	return v
}

func realView(ob *Obs) view {
	return view{
		Took:         ob.Took,
		Skipped:      ob.Skipped,
		Why:          ob.Why,
		Result:       ob.Result,
		Value:        ob.Value,
		Token:        ob.Token,
		MaxTok:       ob.MaxTok,
		Unsafe:       ob.Unsafe,
		RemovedOther: ob.RemovedOther,
		After:        ob.After,
		Held:         ob.Held,
		NoExpiry:     ob.After >= 0 && (ob.AfterPTTL == -1 || ob.Kept),
		Node:         ob.Node,
		Won:          ob.Won,
		Nodes:        ob.Nodes,
	}
}

func holderName(h int) string {
	switch {
	case h == HolderNone:
		return "nobody"
	case h == HolderUnknown:
		return "a stranger"
	case h == HolderDown:
		return "unseen: the lock node is down"
	case h < 0:
		return "?"
	}
	return model.ClientName(h) + "'s"
}

// describe says what a step did, in the seed's words, short enough for a
// column. Equal views give equal text.
func describe(d *model.Design, v view) string {
	if v.Skipped {
		return "no step: " + v.Why
	}
	tok := func(t int) string {
		if t == 0 {
			return ""
		}
		return fmt.Sprintf(" (token %d)", t)
	}
	refused := func() string {
		if d.Storage == model.StorageCAS {
			return "rejected: version changed"
		}
		return fmt.Sprintf("rejected: %d < %d", v.Token, v.MaxTok)
	}
	if d.Storage == model.StorageCondUpdate && v.Result == model.ResRejected {
		refused = func() string { return fmt.Sprintf("rejected: last_token %d ≥ %d", v.MaxTok, v.Token) }
	}
	var s string
	switch v.Took {
	case model.ActTick:
		if v.Nodes != "" {
			return "nodes " + v.Nodes
		}
		s = "key: " + holderName(v.After)
		if v.NoExpiry {
			s += " (no expiry)"
		}
		return s
	case model.ActDelay:
		if v.Held == model.ActAcquire {
			return "acquire sent, its reply held in the network; key: " + holderName(v.After)
		}
		if v.Held == model.ActRelease || v.Held == model.ActDel {
			return "release held in the network; key: " + holderName(v.After)
		}
		return fmt.Sprintf("write %d%s held in the network", v.Value, tok(v.Token))
	case model.ActPause, model.ActSlow, model.ActCrash:
		return "(fault, no request)"
	case model.ActStorageSync:
		return fmt.Sprintf("storage replica caught up: counter %d, highest token %d", v.Value, v.Token)
	case model.ActStorageFailover:
		return fmt.Sprintf("storage primary killed, replica promoted: counter %d, highest token %d", v.Value, v.Token)
	case model.ActLose:
		if d.Lock == model.LockZooKeeper && d.Lose == model.LoseReply && d.LoseAt == model.PlaceAcquire { // a create (zookeeper_lost.go)
			at := "waits"
			if v.Result == model.ResOK {
				at = "the lowest"
			}
			return fmt.Sprintf("create node %d applied (%s), its reply lost; key: %s", v.Token, at, holderName(v.After))
		}
		if d.Lock == model.LockZooKeeper && d.LoseAt == model.PlaceAcquire { // a create lost on its way (zookeeper_lost.go)
			return "create lost on the way, nothing applied; key: " + holderName(v.After)
		}
		if d.Lose == model.LoseReply {
			done := "nothing deleted"
			if v.Result == model.ResOK {
				done = "deleted"
			}
			return "release applied (" + done + "), its reply lost; key: " + holderName(v.After)
		}
		return "release lost on the way, nothing applied; key: " + holderName(v.After)
	case model.ActNodeCrash:
		if v.Nodes != "" {
			return "lock node killed; nodes " + v.Nodes
		}
		return "lock node killed; key: " + holderName(v.After)
	case model.ActCheck:
		if v.Result == model.ResOK {
			s = fmt.Sprintf("validity left: %d ticks", v.Value)
		} else {
			s = "no validity left: gives up"
		}
	case model.ActRenew:
		s = "renew → 0 (not ours)"
		if v.Result == model.ResOK {
			s = "renew → 1"
		}
		if d.Lock == model.LockEtcd {
			s = "keep-alive → lease gone"
			if v.Result == model.ResOK {
				s = "keep-alive → OK"
			}
		}
	case model.ActIncr:
		s = fmt.Sprintf("INCR → %d", v.Token)
		if v.Result == model.ResRefused {
			s = "INCR → error (node down)"
		}
	case model.ActAcquire:
		if d.Lock == model.LockRedlock {
			s = fmt.Sprintf("SET NX on node %d → ", v.Node+1)
			if v.Result == model.ResOK {
				s += "OK"
			} else {
				s += "(nil) or down"
			}
			s += fmt.Sprintf(" [%d of %d]", v.Value, d.Nodes)
			if v.Node == d.Nodes-1 {
				if v.Won {
					s += ", won"
				} else {
					s += ", lost"
				}
			}
			break
		}
		if d.Lock == model.LockAdvisory {
			s = "advisory lock → refused"
			if v.Result == model.ResOK {
				s = "advisory lock → granted"
			}
			break
		}
		if d.Lock == model.LockDB {
			s = "SELECT … FOR UPDATE → blocks"
			if v.Result == model.ResOK {
				s = "SELECT … FOR UPDATE → row locked"
			}
			break
		}
		if d.Lock == model.LockZooKeeper {
			s = "its node"
			if v.Token != 0 {
				s = fmt.Sprintf("create node %d", v.Token)
			}
			if v.Result == model.ResOK {
				s += ": lowest, holds"
			} else {
				s += ": waits"
			}
			break
		}
		if d.Lock == model.LockEtcdMutex {
			switch {
			case v.Result == model.ResOK && v.Token != 0:
				s = fmt.Sprintf("Lock: key put (token %d), the first → holds", v.Token)
			case v.Result == model.ResOK:
				s = "Lock returns: its predecessor's key deleted → holds"
			case v.Result == model.ResNoop:
				s = "Lock → ErrSessionExpired: its key is gone; a new session"
			case v.Token != 0:
				s = fmt.Sprintf("Lock: key put (token %d), not the first → waits", v.Token)
			default:
				s = "Lock still waits"
			}
			break
		}
		if d.Lock == model.LockEtcd {
			s = "txn put if absent → refused"
			if v.Result == model.ResOK {
				s = "txn put if absent → OK" + tok(v.Token)
			}
			break
		}
		switch v.Result {
		case model.ResRefused:
			s = "SET NX → (nil)"
		case model.ResOK:
			s = "SET NX → OK" + tok(v.Token)
		}
	case model.ActAck:
		s = fmt.Sprintf("WAIT → %d", v.Value)
		if v.Result != model.ResOK {
			s += " (timed out)"
		}
	case model.ActExpire:
		s = "EXPIRE → 0 (no key)"
		if v.Result == model.ResOK {
			s = "EXPIRE → 1"
		}
	case model.ActRead:
		s = "read" + tok(v.Token) + " → "
		if v.Result == model.ResRejected {
			s += refused()
		} else {
			s += fmt.Sprint(v.Value)
		}
	case model.ActStaleRead:
		s = "read" + tok(v.Token) + " from the storage's replica → "
		if v.Result == model.ResRejected {
			s += fmt.Sprintf("rejected: %d < %d (the replica's highest token)", v.Token, v.MaxTok)
		} else {
			s += fmt.Sprint(v.Value)
		}
	case model.ActArrive, model.ActWrite:
		if v.Held == model.ActAcquire {
			s = "held acquire reply arrives → refused"
			if v.Result == model.ResOK {
				s = "held acquire reply arrives → OK"
			}
			break
		}
		if v.Held == model.ActRelease || v.Held == model.ActDel {
			s = "held release arrives → 0"
			if v.Result == model.ResOK {
				s = "held release arrives → 1 (deleted)"
			}
			break
		}
		s = fmt.Sprintf("write %d%s → ", v.Value, tok(v.Token))
		if v.Took == model.ActArrive {
			s = fmt.Sprintf("held write %d%s arrives → ", v.Value, tok(v.Token))
		}
		switch {
		case v.Result == model.ResRejected:
			s += refused()
		case d.FenceCheck == model.FenceCheckTwoStep && v.Result == model.ResOK:
			s = fmt.Sprintf("token check for write %d%s → passed", v.Value, tok(v.Token))
		default:
			s += "accepted"
		}
	case model.ActApply:
		s = fmt.Sprintf("apply write %d%s, unchecked → ", v.Value, tok(v.Token))
		if v.Result == model.ResRejected {
			s += refused()
		} else {
			s += "accepted"
		}
	case model.ActRelease, model.ActDel:
		switch {
		case d.Lock == model.LockAdvisory && !model.InTx(d) && v.Result == model.ResOK:
			s = "pg_advisory_unlock → true"
		case d.Lock == model.LockAdvisory && !model.InTx(d):
			s = "pg_advisory_unlock → false or error"
		case model.InTx(d) && v.Result == model.ResAccepted:
			s = fmt.Sprintf("COMMIT → counter = %d applied", v.Value)
		case model.InTx(d) && v.Result == model.ResRejected:
			s = "COMMIT → error: session killed, rolled back"
		case d.Lock == model.LockDB && v.Result == model.ResOK:
			s = "COMMIT → row unlocked"
		case model.InTx(d) && v.Result == model.ResOK:
			s = "COMMIT → unlocked"
		case model.SameDatabase(d):
			s = "COMMIT → error: the session was killed"
		case v.Took == model.ActRelease && d.Release == model.ReleaseGetDel:
			s = "GET → " + holderName(v.Value-1)
		case v.Took == model.ActDel && v.Result == model.ResNoop && !v.RemovedOther && d.Release == model.ReleaseGetDel:
			s = "DEL → 0 or not ours"
		case d.Lock == model.LockEtcdMutex && v.Result == model.ResOK:
			s = "Unlock → its key deleted"
		case d.Lock == model.LockEtcdMutex:
			s = "Unlock → no key of its own to delete"
		case d.Lock == model.LockEtcd && v.Result == model.ResOK:
			s = "txn delete if ours → deleted"
		case d.Lock == model.LockEtcd:
			s = "txn delete if ours → not ours"
		case v.Result == model.ResOK:
			s = "release → 1 (deleted)"
		default:
			s = "release → 0"
		}
	default:
		s = v.Took.String()
	}
	if v.Unsafe {
		s += " ✗"
	}
	if v.RemovedOther {
		s += " ✗del"
	}
	return s
}
