package model

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// LockKey is the Redis key of the lock, as in the seed.
const LockKey = "lock:order-42"

// lockValues are the random values clients write into the key (the seed's
// B:91ab), fixed so that output is the same on every run.
var lockValues = [MaxClients]string{"7c2e", "91ab", "3f5d", "a4e0", "5b19", "e86c", "2d73", "c0f4"}

// LockValue is client i's value in the lock key, e.g. "B:91ab".
func LockValue(i int) string { return ClientName(i) + ":" + lockValues[i] }

// Describe tells one step in words, the way the seed does:
// "t=11 B: SET lock:order-42 B:91ab NX PX 10000 → OK, INCR lock:fence → 34".
func Describe(d *Design, st *StepRecord) string {
	ev := &st.Event
	a := st.Action
	at := fmt.Sprintf("t=%d ", ev.Now)
	switch a.Kind {
	case ActTick:
		return describeTick(d, st)
	case ActReplicate:
		return at + fmt.Sprintf("replica: catches up with the primary (key %s, fence %d)", owner(ev.Other), st.After.Nodes[1].Fence)
	case ActFailover:
		return at + fmt.Sprintf("failover: the primary dies, the replica is promoted (key %s there, fence %d)", owner(ev.Value), st.After.Nodes[0].Fence)
	case ActNodeCrash:
		s := at + nodeName(d, int(a.Arg)) + " crashes"
		if d.Persist == 0 {
			s += " and loses its keys"
			if d.Lock != LockRedlock {
				s += " and its fence counter"
			}
		} else {
			s += ", its keys kept on disk"
		}
		if d.RestartTicks > 0 {
			s += fmt.Sprintf("; back at t=%d", int(ev.Now)+d.RestartTicks)
		} else {
			s += "; restarts at once"
		}
		return s
	case ActClockJump:
		return at + fmt.Sprintf("%s's clock jumps %d ticks forward (key %s)", nodeName(d, int(a.Arg)), d.JumpTicks, owner(ev.Other))
	}
	return at + ClientName(int(a.Client)) + ": " + describeClientStep(d, st)
}

func describeTick(d *Design, st *StepRecord) string {
	ev := &st.Event
	var notes []string
	for i := 0; i < d.Clients; i++ {
		if ev.ExpiredMask&(1<<i) == 0 {
			continue
		}
		var n string
		switch d.Lock {
		case LockZooKeeper:
			n = ClientName(i) + "'s session expires: its node vanishes"
		case LockDB:
			n = ClientName(i) + "'s idle session is killed: the row lock is free"
		case LockEtcd:
			n = ClientName(i) + "'s lease expires: its key is deleted"
		default:
			n = "key " + LockKey + " (" + ClientName(i) + "'s) expires"
		}
		if st.Before.Clients[i].Believes() {
			n += " while " + ClientName(i) + " still believes it holds the lock"
		}
		notes = append(notes, n)
	}
	if ev.Flags&EvNodeBack != 0 {
		notes = append(notes, "a crashed node is back")
	}
	for i := 0; i < d.Clients; i++ {
		if ev.ResumedMask&(1<<i) != 0 {
			notes = append(notes, ClientName(i)+" resumes")
		}
	}
	s := fmt.Sprintf("t=%d", ev.Now)
	if len(notes) > 0 {
		s += "  " + strings.Join(notes, "; ")
	}
	return s
}

func nodeName(d *Design, k int) string {
	switch d.Lock {
	case LockReplica:
		if k == 0 {
			return "the primary"
		}
		return "the replica"
	case LockRedlock:
		return fmt.Sprintf("node %d", k+1)
	}
	return "the Redis node"
}

func owner(o uint8) string {
	if o == 0 {
		return "nobody"
	}
	return ClientName(int(o-1)) + "'s"
}

func tokenNote(tok uint16) string {
	if tok == 0 {
		return ""
	}
	return fmt.Sprintf(" (token %d)", tok)
}

func describeClientStep(d *Design, st *StepRecord) string {
	ev := &st.Event
	a := st.Action
	i := int(a.Client)
	c := &st.Before.Clients[i]
	unsafe := ""
	if ev.Flags&EvUnsafe != 0 {
		switch {
		case d.Lock == LockRedlock:
			unsafe = fmt.Sprintf("  ✗ it holds %d of %d nodes", ev.Held, d.Nodes)
		case ev.Other == 0 && (d.Lock == LockRedis || d.Lock == LockReplica):
			unsafe = "  ✗ no key: its lock has expired"
		case ev.Other == 0:
			unsafe = "  ✗ nobody holds the lock"
		case d.Lock == LockRedis || d.Lock == LockReplica || d.Lock == LockEtcd:
			unsafe = fmt.Sprintf("  ✗ the key is %s", owner(ev.Other))
		default:
			unsafe = fmt.Sprintf("  ✗ the lock is %s", owner(ev.Other))
		}
	}
	refusal := func() string {
		switch {
		case d.Lock == LockDB && d.Tx == TxInside:
			return "error: the session was killed"
		case d.Storage == StorageCAS:
			return "rejected: version changed"
		case d.Storage == StorageCondUpdate && a.Kind != ActRead:
			return fmt.Sprintf("rejected: last_token %d is not < %d", ev.MaxTok, ev.Token)
		}
		return fmt.Sprintf("rejected: %d < %d", ev.Token, ev.MaxTok)
	}
	switch a.Kind {
	case ActPause:
		s := fmt.Sprintf("pauses for %d ticks (GC, VM migration), frozen until t=%d", a.Arg, int(ev.Now)+int(a.Arg))
		if d.Lock == LockZooKeeper && int(a.Arg) > d.SessionTicks {
			s += fmt.Sprintf("; no heartbeats: its session will expire at t=%d", int(ev.Now)+d.SessionTicks)
		}
		return s
	case ActSlow:
		return fmt.Sprintf("its job is slow: the work will take %d ticks (TTL %d)", d.SlowWorkTicks, d.TTLTicks)
	case ActCrash:
		if c.Phase == PhaseArrive {
			return "crashes while its write is on the way"
		}
		return "crashes"
	case ActDelay:
		return fmt.Sprintf("sends write counter = %d%s; the network holds it until t=%d", ev.Value, tokenNote(ev.Token), int(ev.Now)+int(a.Arg))
	case ActIncr:
		if ev.Result == ResRefused {
			return fmt.Sprintf("INCR lock:fence → error (node down); retry at t=%d", int(ev.Now)+1)
		}
		return fmt.Sprintf("INCR lock:fence → %d", ev.Token)
	case ActCheck:
		if ev.Flags&EvGiveUp != 0 {
			return "checks its lock: no validity left, gives the job up"
		}
		return fmt.Sprintf("checks its lock: %d ticks of validity left", ev.Value)
	case ActRenew:
		if d.Lock == LockEtcd {
			if ev.Result == ResOK {
				return fmt.Sprintf("keep-alive: lease renewed (valid until t=%d)", int(ev.Now)+d.TTLTicks)
			}
			return "keep-alive: fails, the lease is gone; the worker goes on"
		}
		if ev.Result == ResOK {
			return fmt.Sprintf("watchdog: PEXPIRE %s %d → 1 (valid until t=%d)", LockKey, d.TTLTicks*1000, int(ev.Now)+d.TTLTicks)
		}
		if ev.Other == 0 {
			return "watchdog: renewal fails, there is no key; the worker goes on"
		}
		return fmt.Sprintf("watchdog: renewal fails, the key is %s; the worker goes on", owner(ev.Other))
	case ActAcquire:
		return describeAcquire(d, st)
	case ActExpire:
		if ev.Result == ResNoop {
			return fmt.Sprintf("EXPIRE %s %d → 0 (no key)", LockKey, d.TTLTicks)
		}
		return fmt.Sprintf("EXPIRE %s %d → 1", LockKey, d.TTLTicks)
	case ActRead:
		s := "read counter" + tokenNote(ev.Token) + " → "
		if d.Lock == LockDB && d.Tx == TxInside {
			s = "SELECT counter (in its transaction) → "
		}
		if ev.Result == ResRejected {
			return s + refusal() + unsafe
		}
		return s + fmt.Sprint(ev.Value) + unsafe
	case ActWrite, ActArrive:
		s := fmt.Sprintf("write counter = %d%s → ", ev.Value, tokenNote(ev.Token))
		if a.Kind == ActArrive {
			s = fmt.Sprintf("its delayed write counter = %d%s arrives → ", ev.Value, tokenNote(ev.Token))
		}
		if d.Lock == LockDB && d.Tx == TxInside {
			s = fmt.Sprintf("UPDATE counter = %d (in its transaction) → ", ev.Value)
			if ev.Result == ResOK {
				return s + "pending until COMMIT" + unsafe
			}
		}
		if ev.Result == ResRejected {
			return s + refusal() + unsafe
		}
		return s + "accepted" + unsafe
	case ActRelease, ActDel:
		return describeRelease(d, st)
	}
	return a.Kind.String()
}

func describeAcquire(d *Design, st *StepRecord) string {
	ev := &st.Event
	i := int(st.Action.Client)
	switch d.Lock {
	case LockRedlock:
		s := fmt.Sprintf("SET %s %s NX PX %d on node %d → ", LockKey, LockValue(i), d.TTLTicks*1000, ev.Node+1)
		switch {
		case ev.Result == ResOK:
			s += "OK"
		case st.Before.Nodes[ev.Node].Back != 0:
			s += "error (node down)"
		default:
			s += "(nil), the key there is " + owner(ev.Other)
		}
		s += fmt.Sprintf(" [%d of %d votes]", ev.Value, d.Nodes)
		if int(ev.Node)+1 == d.Nodes {
			c := &st.Before.Clients[i]
			left := int(c.Since) + d.TTLTicks - d.DriftTicks - int(ev.Now)
			if ev.Flags&EvWon != 0 {
				s += fmt.Sprintf("; lock won, validity %d ticks", left)
			} else {
				s += fmt.Sprintf("; lost (validity %d), unlocks its nodes, retry at t=%d", left, int(ev.Now)+1)
			}
		}
		return s
	case LockZooKeeper:
		c := &st.Before.Clients[i]
		s := "watch fires: its predecessor is gone"
		if c.Flags&FlagZNode == 0 {
			s = fmt.Sprintf("create /lock/n-%010d (ephemeral, sequential)", st.After.Clients[i].Token)
		}
		if ev.Result == ResOK {
			return s + "; lowest node: holds the lock" + tokenSuffix(d, ev.Token, "sequence")
		}
		return s + "; waits on its predecessor (" + owner(ev.Other) + " node)"
	case LockDB:
		if ev.Result == ResOK {
			return "BEGIN; SELECT … FOR UPDATE → row locked"
		}
		return "BEGIN; SELECT … FOR UPDATE → blocks: " + owner(ev.Other) + " session holds the row"
	case LockEtcd:
		s := fmt.Sprintf("txn: if create_revision(lock/order-42) = 0 then put with lease (TTL %d)", d.TTLTicks)
		if ev.Result == ResOK {
			return s + " → OK" + tokenSuffix(d, ev.Token, "revision")
		}
		return s + fmt.Sprintf(" → the key is %s; retry at t=%d", owner(ev.Other), int(ev.Now)+1)
	}
	cmd := fmt.Sprintf("SET %s %s NX PX %d", LockKey, LockValue(i), d.TTLTicks*1000)
	if d.Acquire == AcquireSetExpire {
		cmd = fmt.Sprintf("SET %s %s NX", LockKey, LockValue(i))
	}
	if st.Before.Clients[i].Phase == PhaseReenter {
		cmd = fmt.Sprintf("nested acquire: SET %s %s NX PX %d", LockKey, LockValue(i), d.TTLTicks*1000)
		if d.Reenter == ReenterOwner {
			cmd = fmt.Sprintf("nested acquire: reentrant lock, owner %s, count+1, PX %d", LockValue(i), d.TTLTicks*1000)
		}
	}
	if ev.Result == ResRefused {
		switch {
		case st.Before.Nodes[0].Back != 0:
			return cmd + fmt.Sprintf(" → error (node down); retry at t=%d", int(ev.Now)+1)
		case d.Wait == WaitNotify:
			return cmd + " → (nil), the key is " + owner(ev.Other) + "; sleeps until a release notice"
		}
		return fmt.Sprintf("%s → (nil), the key is %s; retry at t=%d", cmd, owner(ev.Other), int(ev.Now)+1)
	}
	s := cmd + " → OK"
	if ev.Token != 0 {
		s += fmt.Sprintf(", INCR lock:fence → %d", ev.Token)
	}
	return s
}

func tokenSuffix(d *Design, tok uint16, name string) string {
	if d.Fence == FenceNone || tok == 0 {
		return ""
	}
	return fmt.Sprintf(", token (%s) %d", name, tok)
}

func describeRelease(d *Design, st *StepRecord) string {
	ev := &st.Event
	a := st.Action
	c := &st.Before.Clients[a.Client]
	var s string
	switch {
	case d.Lock == LockDB && d.Tx == TxOutside:
		if ev.Result == ResOK {
			return "COMMIT on the lock session → row unlocked"
		}
		return "COMMIT on the lock session → error: that session was killed"
	case d.Lock == LockDB:
		switch {
		case ev.Flags&EvCommit != 0 && ev.Result == ResAccepted:
			return fmt.Sprintf("COMMIT → counter = %d applied, row unlocked", ev.Value)
		case ev.Flags&EvCommit != 0:
			return "COMMIT → error: the session was killed, the write is rolled back"
		case ev.Result == ResOK:
			return "COMMIT → row unlocked"
		}
		return "COMMIT → error: the session was killed"
	case d.Lock == LockZooKeeper:
		if ev.Result == ResOK {
			return "delete its node → the next in line is notified"
		}
		return "delete its node → no node (its session expired)"
	case d.Lock == LockEtcd:
		if ev.Result == ResOK {
			return "delete its key (revoke the lease) → deleted"
		}
		return "delete its key → nothing: its lease has expired"
	case d.Lock == LockRedlock && a.Kind == ActRelease && d.Release == ReleaseGetDel:
		return fmt.Sprintf("GET %s on every node → its own on %d", LockKey, popcount(ev.Value))
	case d.Lock == LockRedlock:
		s = "release on every node → nothing to delete"
		if ev.Result == ResOK {
			s = "release on every node → deleted"
		}
	case st.Before.Nodes[0].Back != 0:
		return "release → error (node down)"
	case a.Kind == ActRelease && d.Release == ReleaseGetDel:
		v := "(nil)"
		if ev.Value != 0 {
			v = LockValue(int(ev.Value - 1))
		}
		return fmt.Sprintf("GET %s → %s", LockKey, v)
	case a.Kind == ActRelease && d.Release == ReleaseCAD:
		s = "release: check-and-delete script → "
		switch {
		case ev.Result == ResOK:
			s += "1 (deleted)"
		case ev.Other == 0:
			s += "0 (no key)"
		default:
			s += "0 (the key is " + owner(ev.Other) + ")"
		}
	case a.Kind == ActDel && c.Flags&FlagSawMine == 0:
		s = "GET said the key is not ours: no DEL"
	default:
		s = "DEL " + LockKey + " → 0"
		if ev.Result == ResOK {
			s = "DEL " + LockKey + " → 1"
		}
	}
	if ev.Flags&EvRemovedOther != 0 {
		s += "  ✗ deleted " + owner(ev.Other) + " lock"
	}
	return s
}

func popcount(x uint8) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// RenderSteps is the story, one line per step. Quiet ticks (nothing
// expires, nobody resumes) say nothing: the next line's t= shows time moved.
// Runs of ticks in which the same clients only poll a key held by the same
// client fold into one line.
func RenderSteps(r *Run) string {
	var b strings.Builder
	d := &r.Design
	steps := r.Steps
	for k := 0; k < len(steps); {
		if from, to, who, holder, next := pollRun(steps, k); next > k {
			fmt.Fprintf(&b, "t=%d..%d %s: %s every tick, the key is %s\n", from, to, who, pollWords(d), owner(holder))
			k = next
			continue
		}
		st := &steps[k]
		k++
		if st.Action.Kind == ActTick && st.Event.ExpiredMask == 0 && st.Event.ResumedMask == 0 {
			continue
		}
		b.WriteString(Describe(d, st))
		b.WriteByte('\n')
	}
	return b.String()
}

// pollWords is a refused acquire in a folded line.
func pollWords(d *Design) string {
	switch d.Lock {
	case LockRedlock:
		return "SET " + LockKey + " … NX on every node → lost the vote"
	case LockEtcd:
		return "txn put-if-absent → not put"
	}
	return "SET " + LockKey + " … NX → (nil)"
}

// pollRun finds, from step k, a run of at least two ticks in which the only
// steps are quiet ticks and refused acquires by the same clients against the
// same holder. It returns the run's first and last tick and the index after
// it; next == k when there is no such run.
func pollRun(steps []StepRecord, k int) (from, to int, who string, holder uint8, next int) {
	next = k
	ticks := 0
	var mask uint8
	j := k
	for j < len(steps) {
		// one tick's worth: refused acquires, then a quiet tick (or the end)
		var m uint8
		h := uint8(0)
		start := j
		for j < len(steps) && steps[j].Action.Kind == ActAcquire && steps[j].Event.Result == ResRefused {
			m |= 1 << steps[j].Action.Client
			h = steps[j].Event.Other
			j++
		}
		if j == start || (ticks > 0 && (m != mask || h != holder)) {
			break
		}
		if ticks == 0 {
			from, mask, holder = int(steps[start].Event.Now), m, h
		}
		ticks++
		to = int(steps[start].Event.Now)
		next = j
		if j < len(steps) && steps[j].Action.Kind == ActTick && steps[j].Event.ExpiredMask == 0 && steps[j].Event.ResumedMask == 0 {
			j++
			continue
		}
		break
	}
	if ticks < 2 {
		return 0, 0, "", 0, k
	}
	var names []string
	for i := 0; i < MaxClients; i++ {
		if mask&(1<<i) != 0 {
			names = append(names, ClientName(i))
		}
	}
	return from, to, strings.Join(names, ", "), holder, next
}

// RenderTimeline draws the seed's timeline: one column per tick, a row for
// who believes they hold the lock, one for who holds the key, and ✗ where a
// client acted on storage without the key.
func RenderTimeline(r *Run) string {
	d := &r.Design
	rows := [4][]string{}
	labels := [4]string{"tick", "believes", "key", "unsafe"}
	for _, tr := range r.Timeline {
		rows[0] = append(rows[0], fmt.Sprint(tr.Tick))
		rows[1] = append(rows[1], letters(d, tr.Believes, "·"))
		var h strings.Builder
		for _, o := range tr.Holders {
			if o < 0 {
				if len(tr.Holders) == 1 {
					h.WriteString("·")
				}
				continue
			}
			h.WriteString(ClientName(o))
		}
		if h.Len() == 0 {
			h.WriteString("·")
		}
		rows[2] = append(rows[2], h.String())
		u := ""
		if tr.Unsafe != 0 {
			u = "✗" + letters(d, tr.Unsafe, "")
		}
		rows[3] = append(rows[3], u)
	}
	var b strings.Builder
	for k, row := range rows {
		fmt.Fprintf(&b, "%-9s", labels[k])
		for col, cell := range row {
			w := 0
			for _, rr := range rows {
				if n := utf8.RuneCountInString(rr[col]); n > w {
					w = n
				}
			}
			b.WriteString(" ")
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", w-utf8.RuneCountInString(cell)))
		}
		b.WriteString("\n")
	}
	return strings.ReplaceAll(b.String(), " \n", "\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func letters(d *Design, mask uint8, none string) string {
	var s string
	for i := 0; i < d.Clients; i++ {
		if mask&(1<<i) != 0 {
			s += ClientName(i)
		}
	}
	if s == "" {
		return none
	}
	return s
}

// RenderSummary is the ending: the counter against accepted writes, and the
// properties the run shows.
func RenderSummary(r *Run) string {
	var b strings.Builder
	ok, failed := r.Outcomes()
	others := r.Design.Clients - ok - failed
	fmt.Fprintf(&b, "counter %d; %s accepted by the storage; of %d jobs: %d ok, %d failed", r.Final.Store.Counter,
		plural(int(r.Final.Store.Accepted), "write", "writes"), r.Design.Clients, ok, failed)
	if others > 0 {
		fmt.Fprintf(&b, ", %d unknown or unfinished", others)
	}
	b.WriteString("\n")
	if r.Final.Finished(&r.Design) && int(r.Final.Store.Counter) != int(r.Final.Store.Accepted) {
		fmt.Fprintf(&b, "lost update: counter %d ≠ %d accepted writes\n", r.Final.Store.Counter, r.Final.Store.Accepted)
	}
	for _, v := range r.Found {
		p, _ := PropertyByName(v.Property)
		verb := "violated"
		if p.Expect == Sometimes {
			verb = "seen"
		}
		fmt.Fprintf(&b, "%-19s %s at step %d: %s\n", v.Property, verb, v.Seq, p.Doc)
	}
	return b.String()
}

// Render is steps, timeline and summary together.
func Render(r *Run) string {
	return RenderSteps(r) + "\n" + RenderTimeline(r) + "\n" + RenderSummary(r)
}
